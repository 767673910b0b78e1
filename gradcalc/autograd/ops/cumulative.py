"""Running sums, products, log-sum-exps and extremes along a dimension, and differences: `cumsum`, `cumprod`,
`logcumsumexp`, `cummax`, `cummin`, `diff`.

cumsum's gradient is the reversed running sum of the incoming one (flip, cumsum, flip, as PyTorch's
cumsum_backward). cumprod's is PyTorch's formula: where the input has no zero, the reversed running sum of
grad * result divided by the input; where a slice has a zero, that division is undefined, and the gradient is
computed as PyTorch's zero-safe formula defines it: for each position k, the sum over j >= k of grad[j] times the
product of the inputs up to j without the k-th. Both are written with the engine's operations (a second
derivative differentiates them again). logcumsumexp's gradient is PyTorch's stable form (the positive and negative
parts of the gradient through reversed logcumsumexps); cummax's and cummin's put each gradient back at the index of
the running extreme (a scatter_add, as PyTorch's cummaxmin_backward). `diff` is PyTorch's composition of narrow and
sub.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import joins as J
from . import shape as S
from . import slicing as SL
from .arithmetic import div, mul, sub
from .core import needs, record, result
from .elementwise import where
from .logarithms import exp
from .rearrange import flip
from .reductions import amax
from .reorder import movedim
from .return_types import named_tuple
from .rounding import abs
from .scatter import gather, scatter_add
from .sums import _np_dtype, expand
from .sums import sum as sum_dims
from .unary import log


def _cumulative_input(x: Tensor, dtype: Any) -> np.ndarray:
    """The values to accumulate: in `dtype=` when given, integers and booleans as int64 (PyTorch's promotion)."""
    target = _np_dtype(dtype)
    d = x._data
    if target is not None:
        return d.astype(target, copy=False)
    return d.astype(np.int64) if d.dtype.kind in "iub" else d


def _reversed_cumsum(g: Tensor, axis: int) -> Tensor:
    """g summed from each position to the end of `axis` (PyTorch's flip, cumsum, flip)."""
    return flip(cumsum(flip(g, (axis,)), axis), (axis,))


@spec.node(
    formula={"self": "cumsum_backward(grad.to(self.scalar_type()), dim)"},
    saved={"dim": SV.field("given", lambda d: int(d) % 2**64)},
    jvp=lambda node, inputs, out, tangents: cumsum(tangents[0], node.axis), tangent="self_t.cumsum(dim)",
)
class CumsumBackward0(Node):
    """Each input element adds to every later running sum: its gradient is the sum of theirs."""

    __slots__ = ("axis", "given", "in_dtype")

    def apply(self, g: Tensor) -> tuple:
        if g._data.dtype != self.in_dtype:
            g = g.to(self.in_dtype)
        return (_reversed_cumsum(g, self.axis) if g._data.ndim else g,)


@spec.op("cumsum", inplace=True, vmap=spec.rule("cumulative_rule", "cumsum"), nodes=(CumsumBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.cumsum(a, 1) * a + a.cumsum(-2).exp() + (a * 1.0).cumsum_(0)))
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The running sums of `input` along `dim`: out[i] = input[0] + ... + input[i]. Integers and booleans sum
    to int64 unless `dtype=` says otherwise."""
    d = _cumulative_input(input, dtype)
    axis = S.dim_index(dim, input._data.ndim)
    node = record(CumsumBackward0, input)
    if node is not None:
        node.axis, node.given, node.in_dtype = axis, int(dim), input._data.dtype
    return result(np.cumsum(d, axis=axis, dtype=d.dtype) if d.ndim else d.copy(), node)


def _cumprod_backward(g: Tensor, x: Tensor, out: Tensor, axis: int) -> Tensor:
    """PyTorch's cumprod_backward: the reversed running sum of grad * result over the input where no slice
    along `axis` holds a zero, else the zero-safe form (see the module docstring)."""
    if not x._data.size:
        return g
    if np.all(x._data != 0):
        return div(_reversed_cumsum(mul(out, g), axis), x)
    n = x._data.shape[axis]
    xt, gt = movedim(x, axis, -1), movedim(g, axis, -1)
    rows = expand(S.unsqueeze(xt, -2), *xt._data.shape[:-1], n, n)  # rows[..., k, i] = x[i]
    eye = Tensor._make(np.eye(n, dtype=bool), False, None)
    without = cumprod(where(eye, 1.0, rows), -1)  # [k, j]: product of x[i] for i <= j, i != k
    later = Tensor._make(np.triu(np.ones((n, n), dtype=x._data.dtype)), False, None)  # j >= k
    terms = mul(mul(without, S.unsqueeze(gt, -2)), later)
    return movedim(sum_dims(terms, -1), -1, axis)


@spec.node(
    formula={"self": "cumprod_backward(grad.to(self.scalar_type()), self, dim, result)"},
    saved={"dim": SV.field("given", lambda d: int(d) % 2**64), "result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _cumprod_jvp(node, tangents[0]),
    tangent="cumprod_jvp(self_t, self_p, result, dim)",
)
class CumprodBackward0(Node):
    """Each input element multiplies every later running product."""

    __slots__ = ("axis", "given")

    def apply(self, g: Tensor) -> tuple:
        if not needs(self, 0):
            return (None,)
        x, out = self.unpack_saved(False)
        if g._data.dtype != x._data.dtype:
            g = g.to(x._data.dtype)
        return (_cumprod_backward(g, x, out, self.axis) if x._data.ndim else g,)


def _cumprod_jvp(node: Node, t: Tensor) -> Tensor:
    """The tangent of the running products: the transpose of the backward formula, written out as the
    running sum of t[i] times the product of the other inputs up to each position."""
    x, out = node.unpack_saved(False)
    if not x._data.ndim:
        return t
    axis = node.axis
    if np.all(x._data != 0):
        return mul(cumsum(div(t, x), axis), out)
    n = x._data.shape[axis]
    xt, tt = movedim(x, axis, -1), movedim(t, axis, -1)
    rows = expand(S.unsqueeze(xt, -2), *xt._data.shape[:-1], n, n)
    eye = Tensor._make(np.eye(n, dtype=bool), False, None)
    without = cumprod(where(eye, 1.0, rows), -1)  # [k, j]
    later = Tensor._make(np.triu(np.ones((n, n), dtype=x._data.dtype)), False, None)
    terms = mul(mul(without, S.unsqueeze(tt, -1)), later)  # t[k] * prod_{i <= j, i != k} x[i], for j >= k
    return movedim(sum_dims(terms, -2), -1, axis)


@spec.op("cumprod", inplace=True, vmap=spec.rule("cumulative_rule", "cumprod"), nodes=(CumprodBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.cumprod(a, 1) * a + a.cumprod(-2).sin()
                            + (a * 1.0).cumprod_(0) + L.cumprod(L.where(a > 0.8, 0.0, a), 1)))
def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The running products of `input` along `dim`: out[i] = input[0] * ... * input[i]. Integers and
    booleans multiply as int64 unless `dtype=` says otherwise."""
    d = _cumulative_input(input, dtype)
    axis = S.dim_index(dim, input._data.ndim)
    node = record(CumprodBackward0, input)
    out = result(np.cumprod(d, axis=axis, dtype=d.dtype) if d.ndim else d.copy(), node)
    if node is not None:
        node.axis, node.given = axis, int(dim)
        node.save(input, SavedOutput(out))
    return out


# -- logcumsumexp ----------------------------------------------------------------------------------------------
def _reverse_logcumsumexp(x: Tensor, axis: int) -> Tensor:
    return flip(logcumsumexp(flip(x, (axis,)), axis), (axis,))


def _logcumsumexp_backward(g: Tensor, x: Tensor, out: Tensor, axis: int) -> Tensor:
    """PyTorch's logcumsumexp_backward: sum over i >= j of g[i] exp(x[j] - result[i]), with the gradient's positive
    and negative parts taken through logs (each a reversed logcumsumexp: no overflow)."""
    lowest = Tensor._make(np.asarray(np.finfo(g._data.dtype).min, g._data.dtype), False, None)
    log_abs = log(abs(g))
    positive = where(Tensor._make(g._data > 0, False, None), log_abs, lowest)
    negative = where(Tensor._make(g._data < 0, False, None), log_abs, lowest)
    out_pos = exp(_reverse_logcumsumexp(positive - out, axis) + x)
    out_neg = exp(_reverse_logcumsumexp(negative - out, axis) + x)
    return out_pos - out_neg


def _logcumsumexp_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """PyTorch's logcumsumexp_jvp: with e = exp(x - max x), cumsum(e t) / cumsum(e), and 0 where cumsum(e) < 1e-13."""
    x, t = inputs[0], tangents[0]
    if not x._data.ndim:
        return t
    top = np.nan_to_num(amax(x.detach(), node.axis, True)._data, neginf=0.0, posinf=0.0)
    e = exp(x - Tensor._make(top, False, None))
    total = cumsum(e, node.axis)
    small = Tensor._make(total._data < 1e-13, False, None)
    return where(small, 0.0, div(cumsum(mul(e, t), node.axis), total))


@spec.node(
    formula={"self": "logcumsumexp_backward(grad, self, result, dim)"},
    saved={"dim": SV.field("given", lambda d: int(d) % 2**64), "result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_logcumsumexp_jvp, tangent="logcumsumexp_jvp(self_p, self_t, dim)",
)
class LogcumsumexpBackward0(Node):
    __slots__ = ("axis", "given")

    def apply(self, g: Tensor) -> tuple:
        x, out = self.unpack_saved(False)
        if not x._data.ndim or not x._data.size:  # PyTorch's: the gradient itself
            return (g,)
        return (_logcumsumexp_backward(g, x, out, self.axis),)


@spec.op("logcumsumexp", nodes=(LogcumsumexpBackward0,), vmap=spec.rule("cumulative_rule", "logcumsumexp"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.logcumsumexp(a, 1) * a + a.logcumsumexp(-2).sin()))
def logcumsumexp(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    """The running log(sum(exp(...))) along `dim`: out[i] = log(exp(input[0]) + ... + exp(input[i])), without
    overflow."""
    d = input._data
    if d.dtype.kind != "f":
        kind = {"b": "Bool", "u": "Byte"}.get(d.dtype.kind, "Long" if d.dtype.itemsize == 8 else "Int")
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{kind}\'')
    axis = S.dim_index(dim, d.ndim)
    node = record(LogcumsumexpBackward0, input)
    with np.errstate(invalid="ignore"):
        data = np.logaddexp.accumulate(d, axis=axis) if d.ndim and d.size else d.copy()
    out = result(np.asarray(data), node)
    if node is not None:
        node.axis, node.given = axis, int(dim)
        node.save(input, SavedOutput(out))
    return out


# -- cummax, cummin ----------------------------------------------------------------------------------------------
_CUMMAX, _CUMMIN = named_tuple("cummax", ("values", "indices")), named_tuple("cummin", ("values", "indices"))


@spec.base
class _RunningExtremeNode(Node):
    """The gradient of each running extreme goes back to the element it came from (PyTorch's cummaxmin_backward:
    zeros, scatter_add of the gradient at the indices)."""

    __slots__ = ("axis", "given", "indices")

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        if not x._data.ndim:
            return (g,)
        if not x._data.size:  # PyTorch's cummaxmin_backward gives the (empty) input itself
            return (x,)
        idx = Tensor._make(self.indices, False, None)
        return (scatter_add(Tensor._make(np.zeros(x._data.shape, g._data.dtype), False, None), self.axis, idx, g),)


def _running_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    if not inputs[0]._data.ndim:
        return tangents[0]
    return gather(tangents[0], node.axis, Tensor._make(node.indices, False, None))


_RUNNING_SAVED = {"dim": SV.field("given", lambda d: int(d) % 2**64), "indices": SV.array("indices"),
                  "self": SV.tensor(0)}


@spec.node(formula={"self": "cummaxmin_backward(grad, self, indices, dim)"}, saved=_RUNNING_SAVED,
           jvp=_running_jvp, tangent="self_t.gather(dim, indices)")
class CummaxBackward0(_RunningExtremeNode):
    __slots__ = ()


@spec.node(formula={"self": "cummaxmin_backward(grad, self, indices, dim)"}, saved=_RUNNING_SAVED,
           jvp=_running_jvp, tangent="self_t.gather(dim, indices)")
class CumminBackward0(_RunningExtremeNode):
    __slots__ = ()


def _running_extreme(name: str, x: Tensor, dim: Any) -> Any:
    d = x._data
    axis = S.dim_index(dim, d.ndim)
    cls, pair = (CummaxBackward0, _CUMMAX) if name == "cummax" else (CumminBackward0, _CUMMIN)
    if not d.ndim or not d.size:
        values, idx = d.copy(), np.zeros(d.shape, np.int64)
    else:
        ufunc = np.maximum if name == "cummax" else np.minimum  # both carry a nan on, as PyTorch's
        values = ufunc.accumulate(d, axis=axis)
        # the index of the latest element that set the running value (>= and <= as PyTorch: ties take the later
        # one, and so does each nan)
        marked = (d == values) | (np.isnan(d) if d.dtype.kind == "f" else False)
        shape = [1] * d.ndim
        shape[axis] = d.shape[axis]
        positions = np.arange(d.shape[axis]).reshape(shape)
        idx = np.maximum.accumulate(np.where(marked, positions, 0), axis=axis).astype(np.int64)
    node = record(cls, x)
    if node is not None:
        node.axis, node.given, node.indices = axis, int(dim), idx
        node.save(x)
    return pair((result(np.asarray(values), node), Tensor._make(idx, False, None)))


@spec.op("cummax", nodes=(CummaxBackward0,), vmap=spec.rule("cumulative_rule", "cummax"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.cummax(a, 1).values * a + a.cummax(0)[0].exp(), spec.DISTINCT))
def cummax(input: Tensor, dim: int) -> Any:  # noqa: A002
    """The running maximum along `dim` and the index where each was found, as (values, indices)."""
    return _running_extreme("cummax", input, dim)


@spec.op("cummin", nodes=(CumminBackward0,), vmap=spec.rule("cumulative_rule", "cummin"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.cummin(a, 1).values * a + a.cummin(0)[0].exp(), spec.DISTINCT))
def cummin(input: Tensor, dim: int) -> Any:  # noqa: A002
    """The running minimum along `dim` and the index where each was found, as (values, indices)."""
    return _running_extreme("cummin", input, dim)


# -- diff ----------------------------------------------------------------------------------------------------
@spec.op("diff", vmap=spec.rule("diff_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.diff(a) * a[:, 1:] + a.diff(n=2, dim=0).exp().sum()
                            + L.diff(a, dim=0, prepend=a[:1], append=a * 2).sum()))
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along `dim`: out[i] = input[i + 1] - input[i], `n` times (booleans: whether
    neighbours differ). `prepend` and `append` are joined to the input along `dim` first."""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if int(n) < 0:
        raise RuntimeError(f"order must be non-negative but got {int(n)}")
    axis = S.dim_index(dim, input._data.ndim)
    x = input
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        for p in parts:
            if not isinstance(p, Tensor):
                raise TypeError(f"diff(): argument 'prepend' and 'append' must be tensors, not {type(p).__name__}")
            if p._data.ndim != x._data.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        x = J.cat(parts, axis)
    if int(n) == 0:  # PyTorch copies the input into a new tensor (CopyBackwards)
        return Tensor._make(np.empty_like(x._data), False, None).copy_(x)
    for _ in range(int(n)):
        size = x._data.shape[axis]
        if size == 0:
            break
        later, earlier = SL.narrow(x, axis, 1, size - 1), SL.narrow(x, axis, 0, size - 1)
        if x._data.dtype == np.bool_:  # booleans: whether neighbours differ (PyTorch's logical_xor)
            x = Tensor._make(later._data != earlier._data, False, None)
        else:
            x = sub(later, earlier)
    return x
