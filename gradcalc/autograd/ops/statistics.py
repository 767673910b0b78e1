"""Statistical reductions: `nansum`, `nanmean`, `count_nonzero`, `median`, `kthvalue`, `mode`, `aminmax`,
`var_mean`, `std_mean`.

Loaded at first use (ops/lazy.py). They follow ops/reductions.py's shapes: a `dim` (one, several or none) and
`keepdim`; the ones that select an element (median, kthvalue, mode along a dim) return PyTorch's named
(values, indices) pairs, and their nodes are max's along a dim (the gradient goes to the element at the returned
index: value_selecting_reduction_backward); median over all elements splits its gradient among the elements equal
to it, as max over all does (evenly_distribute_backward). var_mean, std_mean and aminmax are nodes with two
outputs, as in PyTorch: one node, a gradient for each output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import NOTHING, Node, SavedOutput
from ..tensor import Tensor
from .arithmetic import div
from .binary import div_scalar, mul_scalar
from .core import record, result
from .elementwise import masked_fill
from .reductions import (
    _MAX_DIM,
    MaxBackward0,
    MaxBackward1,
    _var_args,
    _var_backward,
    mean,
    reduced_jvp,
)
from .reductions import sum as sum_dims
from .return_types import named_tuple
from .shape import dim_index
from .sums import _NO_DIM, _axis, _cast_input, _count, _expand, _keep, _restore, expand_back, normalize_dims
from .unary import _const

_MEDIAN, _KTHVALUE, _MODE = (named_tuple(name, ("values", "indices")) for name in ("median", "kthvalue", "mode"))
_AMINMAX = named_tuple("aminmax", ("min", "max"))


def _tensor(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _outputs(datas: tuple, node: Node | None) -> tuple[Tensor, ...]:
    """The tensors of a node with several outputs, each with its output number."""
    outs = []
    for i, d in enumerate(datas):
        t = result(np.asarray(d), node)
        t._output_nr = i
        outs.append(t)
    return tuple(outs)


# -- vmap's rules ---------------------------------------------------------------------------------------------------
def _batching() -> Any:
    return spec.RULES  # batching.py (loaded when vmap first runs, which is the only caller of these rules)


def count_nonzero_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    B = _batching()
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    x, rank = B.front(x, d)
    over = tuple(range(1, rank + 1)) if _dims_given(dim) is None else B.dims_arg(dim, rank)
    if not over:
        return B.bind("ne", x, 0).long(), 0
    return B.bind("count_nonzero", x, over), 0


def _along_rule(name: str, default: Any, k: bool = False) -> Any:
    """vmap of median/kthvalue/mode along one dim: the batch dim first, the sample's dim after it."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        B = _batching()
        (x, *rest), d = args, dims[0]
        head = [rest.pop(0)] if k else []
        dim = rest[0] if rest else params.pop("dim", default)
        keepdim = rest[1] if len(rest) > 1 else params.pop("keepdim", False)
        x, rank = B.front(x, d)
        if dim is None:  # median of all of each sample's elements
            flat = B.bind("reshape", x, (B.shape_of(x)[0], -1))
            return B.bind(name, flat, 1).values, 0
        if rank == 0:
            x = B.bind("unsqueeze", x, 1)
            out = B.bind(name, x, *head, 1, keepdim)
        else:
            out = B.bind(name, x, *head, B.sample_dim(dim, rank), keepdim)
        return out, (0, 0)

    return rule


def aminmax_rule(args: tuple, dims: tuple, dim: Any = None, keepdim: bool = False) -> tuple[Any, Any]:
    B = _batching()
    x, rank = B.front(args[0], dims[0])
    if dim is None:
        flat = B.bind("reshape", x, (B.shape_of(x)[0], -1))
        lo, hi = B.bind("aminmax", flat, dim=1, keepdim=False)
        if keepdim:
            lo, hi = (B.bind("reshape", t, (B.shape_of(x)[0], *(1,) * rank)) for t in (lo, hi))
        return _AMINMAX((lo, hi)), (0, 0)
    if rank == 0:
        return B.bind("aminmax", B.bind("unsqueeze", x, 1), dim=1, keepdim=keepdim), (0, 0)
    return B.bind("aminmax", x, dim=B.sample_dim(dim, rank), keepdim=keepdim), (0, 0)


def spread_mean_rule(name: str) -> Any:
    def rule(args: tuple, dims: tuple, dim: Any = None, unbiased: Any = None, keepdim: bool = False,
             correction: Any = None) -> tuple[Any, Any]:
        B = _batching()
        (x, *rest), d = args, dims[0]
        names = ["dim", "unbiased", "keepdim"]
        given = dict(zip(names, rest, strict=False))
        dim, unbiased, keepdim = given.get("dim", dim), given.get("unbiased", unbiased), given.get("keepdim", keepdim)
        if isinstance(dim, bool):
            dim, unbiased = None, dim
        x, rank = B.front(x, d)
        over = tuple(range(1, rank + 1)) if _dims_given(dim) is None else B.dims_arg(dim, rank)
        if not over:
            x, over = B.bind("unsqueeze", x, 1), (1,)
        return B.bind(name, x, over, unbiased, keepdim, correction=correction), (0, 0)

    return rule


# -- nansum, nanmean, count_nonzero ---------------------------------------------------------------------------
@spec.node(
    formula={"self": "nansum_backward(grad.to(self.scalar_type()), self, dim, keepdim)"},
    saved={"dim": SV.field("given", lambda d: None if d is None else tuple(int(i) % 2**64 for i in d)),
           "keepdim": SV.field("keepdim"), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="at::where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)",
)
class NansumBackward0(Node):
    """The gradient reaches every element but the nans."""

    __slots__ = ("given", "dims", "keepdim", "in_dtype")

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        if g._data.dtype != self.in_dtype:
            g = g.to(self.in_dtype)
        shape = x._data.shape
        if self.given is None and not self.keepdim:  # sum_backward over no given dims: one expand of the 0-d
            spread = _expand(g, shape)
        else:
            spread = expand_back(g, shape, self.dims, self.keepdim) if shape else g
        return (spread * _const(~np.isnan(x._data)),)


def _dims_given(dim: Any) -> Any:
    """`dim` as PyTorch saves it: None for all dims, else a tuple."""
    if dim is None or dim is _NO_DIM or (isinstance(dim, (tuple, list)) and not dim):
        return None
    return (int(dim),) if isinstance(dim, (int, np.integer)) else tuple(int(d) for d in dim)


@spec.op("nansum", nodes=(NansumBackward0,), vmap=spec.rule("reduction", "nansum"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.nansum(a) + L.nansum(a * a, 1).sum()
                            + a.nansum((0, 1), keepdim=True).sum()))
def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The sum of the elements, nans counted as zero: of all elements, or over `dim`."""
    x = _tensor("nansum", input)
    d, _ = _cast_input(x, dtype)
    if d.dtype.kind in "biu":
        d = d.astype(np.int64)
    dims = normalize_dims(_dims_given(dim), d.ndim)
    data = np.nansum(d, axis=_axis(dims, d.ndim), keepdims=keepdim and d.ndim > 0) if d.ndim else \
        np.where(np.isnan(d), 0, d) if d.dtype.kind == "f" else d.copy()
    node = record(NansumBackward0, x)
    if node is not None:
        node.given, node.keepdim, node.in_dtype = _dims_given(dim), keepdim, x._data.dtype
        node.dims = dims if _dims_given(dim) is not None else tuple(range(d.ndim))
        if _dims_given(dim) is None and not keepdim:
            node.keepdim = False
        node.save(x)
    return result(np.asarray(data, dtype=d.dtype), node)


@spec.op("nanmean", vmap=spec.rule("reduction", "nanmean"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.nanmean(a) + L.nanmean(a * a, 1).sum() + a.nanmean(0).sum()))
def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The mean of the elements that are not nan: of all elements, or over `dim` (PyTorch's nansum divided by
    the count of non-nan elements: a DivBackward0)."""
    x = _tensor("nanmean", input)
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_torch_name(x._data.dtype)}")
    d = x._data
    dims = normalize_dims(_dims_given(dim), d.ndim)
    kept = (~np.isnan(d)).sum(axis=_axis(dims, d.ndim), keepdims=keepdim and d.ndim > 0)
    count = Tensor._make(np.asarray(kept, dtype=np.int64), False, None)
    return div(nansum(x, dim, keepdim, dtype=dtype), count)


def _torch_name(dtype: np.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float32": "Float", "float64": "Double"}.get(dtype.name, dtype.name)


@spec.op("count_nonzero", vmap=count_nonzero_rule,
         sample=spec.Sample(((2, 3),), lambda L, a: a * L.count_nonzero(a > 0.3, 1).unsqueeze(1) + a.count_nonzero()))
def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The number of elements that are not zero (int64): of all elements, or over `dim` (an int or several)."""
    x = _tensor("count_nonzero", input)
    d = x._data
    dims = normalize_dims(_dims_given(dim), d.ndim)
    return Tensor._make(np.asarray(np.count_nonzero(d, axis=_axis(dims, d.ndim)), dtype=np.int64), False, None)


# -- median, kthvalue, mode -------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "evenly_distribute_backward(grad, self, result)"},
    saved={"result": SV.array("value"), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="evenly_read_jvp(self_t, self_p, result)",
)
class MedianBackward0(MaxBackward1):
    """median over all elements: the gradient split among the elements equal to it."""

    __slots__ = ()


@spec.node(
    formula={"self": "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"},
    saved=_MAX_DIM, jvp=reduced_jvp, tangent="gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
)
class MedianBackward1(MaxBackward0):
    __slots__ = ()


@spec.node(
    formula={"self": "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"},
    saved=_MAX_DIM, jvp=reduced_jvp, tangent="gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
)
class KthvalueBackward0(MaxBackward0):
    __slots__ = ()


@spec.node(
    formula={"self": "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"},
    saved=_MAX_DIM, jvp=reduced_jvp, tangent="gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
)
class ModeBackward0(MaxBackward0):
    __slots__ = ()


def _selected(cls: type[Node], pair: type, x: Tensor, axis: int, idx: np.ndarray, keepdim: bool) -> Any:
    """(values, indices) of the elements at `idx` (kept dims) along `axis`, recorded as `cls`."""
    d = x._data
    values = np.take_along_axis(d, idx, axis) if d.ndim else d.copy()
    if not keepdim and d.ndim:
        values, idx = np.squeeze(values, axis), np.squeeze(idx, axis)
    node = record(cls, x)
    if node is not None:
        node.indices, node.in_shape, node.dim, node.keepdim = idx, d.shape, axis, keepdim
        node._saved = NOTHING  # the indices are a saved tensor in PyTorch: freed by a plain backward
    return pair((result(np.asarray(values), node), Tensor._make(np.asarray(idx, dtype=np.int64), False, None)))


def _along(name: str, x: Tensor, dim: Any) -> int:
    """The one dim `name` works along, checked as PyTorch checks it (a 0-d tensor takes 0 and -1)."""
    d = x._data
    axis = dim_index(dim, d.ndim) if d.ndim else dim_index(dim, 1)
    if d.ndim and not d.shape[axis]:
        raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
    return axis if d.ndim else 0


def _kth_index(d: np.ndarray, axis: int, k: int) -> np.ndarray:
    """The index (kept dim) of the k-th smallest (0-based) along `axis`: nans sort last, ties in index order."""
    order = np.argsort(d, axis=axis, kind="stable")
    return np.take(order, [k], axis=axis)


def _first_nan(d: np.ndarray, axis: int, idx: np.ndarray) -> np.ndarray:
    """`idx`, but the first nan's index along `axis` where a slice holds one (PyTorch's median there)."""
    nan = np.isnan(d) if d.dtype.kind == "f" else np.zeros(d.shape, bool)
    has = nan.any(axis=axis, keepdims=True)
    return np.where(has, np.argmax(nan, axis=axis, keepdims=True), idx)


@spec.op("median", nodes=(MedianBackward0, MedianBackward1), vmap=_along_rule("median", None),
         sample=spec.Sample(((3, 5),), lambda L, a: L.median(a) + L.median(a, 1).values.sum()
                            + a.median(0, keepdim=True)[0].sum(), spec.DISTINCT))
def median(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median (the middle element of the sorted values; of an even count, the lower of the two middle
    ones): of all elements as a 0-d tensor, or along `dim` as (values, indices). A nan makes the median nan."""
    x = _tensor("median", input)
    d = x._data
    if dim is None:
        flat = d.reshape(-1)
        if not flat.size:
            data = np.asarray(np.nan, d.dtype)
        elif d.dtype.kind == "f" and np.isnan(flat).any():
            data = np.asarray(np.nan, d.dtype)
        else:
            data = np.asarray(np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2])
        node = record(MedianBackward0, x)
        if node is not None:
            node.value = data
            node.save(x)
        return result(data, node)
    axis = _along("median", x, dim)
    if not d.ndim:
        return _selected(MedianBackward1, _MEDIAN, x, 0, np.asarray(0), keepdim)
    idx = _first_nan(d, axis, _kth_index(d, axis, (d.shape[axis] - 1) // 2))
    return _selected(MedianBackward1, _MEDIAN, x, axis, idx, keepdim)


@spec.op("kthvalue", nodes=(KthvalueBackward0,), vmap=_along_rule("kthvalue", -1, k=True),
         sample=spec.Sample(((3, 5),), lambda L, a: L.kthvalue(a, 2).values.sum() + a.kthvalue(3, 0, True)[0].sum(),
                            spec.DISTINCT))
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The k-th smallest element along `dim` (k from 1), as (values, indices)."""
    x = _tensor("kthvalue", input)
    d = x._data
    axis = dim_index(dim, d.ndim) if d.ndim else dim_index(dim, 1)
    size = d.shape[axis] if d.ndim else 1
    if not 1 <= int(k) <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    if not d.ndim:
        return _selected(KthvalueBackward0, _KTHVALUE, x, 0, np.asarray(0), keepdim)
    return _selected(KthvalueBackward0, _KTHVALUE, x, axis, _kth_index(d, axis, int(k) - 1), keepdim)


def _mode_index(d: np.ndarray, axis: int) -> np.ndarray:
    """The index (kept dim) of the most frequent value along `axis`: of equally frequent ones the smallest, and
    of its occurrences the last (PyTorch's choices)."""
    moved = np.moveaxis(d, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    n = rows.shape[1]
    s = np.sort(rows, axis=1)
    pos = np.broadcast_to(np.arange(n), s.shape)
    starts = np.ones(s.shape, bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)  # where each element's run begins
    ends = np.ones(s.shape, bool)
    ends[:, :-1] = starts[:, 1:]
    end = np.minimum.accumulate(np.where(ends, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    best = np.argmax(end - start, axis=1)  # the first longest run: the smallest of the most frequent values
    value = s[np.arange(len(s)), best]
    last = np.where(rows == value[:, None], pos, -1).max(axis=1)
    idx = last.reshape(moved.shape[:-1])
    return np.expand_dims(idx, axis)


@spec.op("mode", nodes=(ModeBackward0,), vmap=_along_rule("mode", -1),
         sample=spec.Sample(((3, 5),), lambda L, a: L.mode(a.round()).values.sum() + a.mode(0, True)[0].sum()))
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The most frequent value along `dim` and the index of its last occurrence, as (values, indices); of values
    equally frequent, the smallest."""
    x = _tensor("mode", input)
    d = x._data
    axis = _along("mode", x, dim)
    if not d.ndim:
        return _selected(ModeBackward0, _MODE, x, 0, np.asarray(0), keepdim)
    return _selected(ModeBackward0, _MODE, x, axis, _mode_index(d, axis), keepdim)


# -- aminmax ---------------------------------------------------------------------------------------------------
def _scale_by_count(g: Tensor, mask: np.ndarray, dims: tuple[int, ...]) -> Tensor:
    """PyTorch's scale_grad_by_count: (grad / mask.sum(dims, keepdim)) * mask."""
    count = Tensor._make(np.asarray(mask.sum(axis=dims, keepdims=True), dtype=g._data.dtype), False, None)
    return div(g, count) * _const(mask)


def _aminmax_backward(node: Node, grads: list, x: Tensor) -> Tensor | None:
    total = None
    dims = node.dims
    for g, extreme in zip(grads, (node.lo, node.hi), strict=True):
        if g is None:
            continue
        kept = _restore(g, x._data.shape, dims, node.keepdim) if x._data.ndim else g  # (PyTorch's reshape)
        mask = x._data == np.asarray(_keep(extreme, x._data.shape, dims, node.keepdim) if x._data.ndim else extreme)
        term = _scale_by_count(kept, mask, dims if x._data.ndim else ())
        total = term if total is None else total + term
    return total


def _aminmax_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """aminmax_jvp: the tangent averaged over the elements equal to the output (min or max)."""
    x, t = inputs[0], tangents[0]
    grads = [None, None]
    grads[out._output_nr] = Tensor._make(np.ones(out._data.shape, out._data.dtype), False, None)
    weights = _aminmax_backward(node, grads, x)
    if not x._data.ndim:
        return t * weights
    return sum_dims(t * weights, node.dims, node.keepdim)


@spec.node(
    formula={"self": "aminmax_backward(self, dim, keepdim, grad_min, grad_max, min, max)"},
    saved={"dim": SV.field("given"), "keepdim": SV.field("keepdim"), "max": SV.array("hi"),
           "min": SV.array("lo"), "self": SV.tensor(0)},
    jvp=_aminmax_jvp, tangent="aminmax_jvp(self_p, self_t, min, dim, keepdim); aminmax_jvp(self_p, self_t, max, "
                              "dim, keepdim)",
)
class AminmaxBackward0(Node):
    __slots__ = ("given", "dims", "keepdim", "lo", "hi")
    num_outputs = 2

    def apply(self, grads: Any) -> tuple:
        (x,) = self.saved_tensors
        grads = grads if type(grads) is list else [grads, None]
        return (_aminmax_backward(self, grads, x),)


@spec.op("aminmax", nodes=(AminmaxBackward0,), vmap=aminmax_rule,
         sample=spec.Sample(((3, 4),), lambda L, a: L.aminmax(a).min + L.aminmax(a, dim=1).max.sum()
                            + a.aminmax(dim=0, keepdim=True)[0].sum() * 2.0, spec.DISTINCT))
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The smallest and the largest element, of all elements or along `dim`, as (min, max)."""
    x = _tensor("aminmax", input)
    d = x._data
    if dim is None:
        if not d.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = tuple(range(d.ndim))
    else:
        axis = dim_index(dim, d.ndim) if d.ndim else dim_index(dim, 1)
        if d.ndim and not d.shape[axis]:
            raise IndexError(f"aminmax(): Expected reduction dim {axis} to have non-zero size.")
        dims = (axis,) if d.ndim else ()
    axis_arg = dims if d.ndim else None
    keep = keepdim and d.ndim > 0
    lo, hi = np.min(d, axis=axis_arg, keepdims=keep), np.max(d, axis=axis_arg, keepdims=keep)
    if keepdim and dim is None and d.ndim:  # PyTorch keeps every dim as size 1
        lo, hi = lo.reshape((1,) * d.ndim), hi.reshape((1,) * d.ndim)
    node = record(AminmaxBackward0, x)
    outs = _outputs((lo, hi), node)
    if node is not None:
        node.given, node.dims, node.keepdim = None if dim is None else int(dim), dims, keep
        node.lo, node.hi = np.asarray(lo), np.asarray(hi)
        node.save(x)
    return _AMINMAX(outs)


# -- var_mean, std_mean ------------------------------------------------------------------------------------------
def _mean_backward(node: Node, g: Tensor, x: Tensor) -> Tensor:
    shape = x._data.shape
    dims = node.dims if node.dims is not None else tuple(range(len(shape)))
    if node.dims is None:  # PyTorch's sum_backward over no given dims: one expand of the 0-d gradient
        spread = _expand(_keep(g, shape, dims, True) if node.keepdim else g, shape)
    else:
        spread = expand_back(g, shape, dims, node.keepdim) if shape else g
    return div_scalar(spread, float(_count(shape, dims)))


def _spread_backward(node: Node, grads: list, std: bool) -> Any:
    x, out = node.unpack_saved(False)
    g_spread, g_mean = grads
    total = None
    if g_spread is not None:
        if std:
            g_spread = masked_fill(g_spread / mul_scalar(out, 2.0), out._data == 0, 0.0)
        total = _var_backward(g_spread, x, node.dims, node.correction, node.keepdim)
    if g_mean is not None:
        term = _mean_backward(node, g_mean, x)
        total = term if total is None else total + term
    return total


def _spread_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    x, t = inputs[0], tangents[0]
    dims = node.dims if node.dims is not None else tuple(range(x._data.ndim))
    if out._output_nr == 1:
        return mean(t, dims, node.keepdim) if x._data.ndim else t
    dof = _count(x._data.shape, dims) - node.correction
    centered = x - mean(x, dims, keepdim=True) if x._data.ndim else x - x
    var_t = mul_scalar(sum_dims(centered * t, dims, node.keepdim) if x._data.ndim else centered * t,
                       2.0 / dof if dof > 0 else float("inf"))
    if type(node) is VarMeanBackward0:
        return var_t
    return masked_fill(var_t / mul_scalar(out, 2.0), out._data == 0, 0.0)


_SPREAD_SAVED = {"correction": SV.correction, "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim")}


@spec.node(
    formula={"self": "var_mean_backward(grads[0], grads[1], self, dim, correction, keepdim)"},
    saved={**_SPREAD_SAVED, "self": SV.tensor(0)},
    jvp=_spread_jvp, tangent="var_jvp(self_t, self_p, result0, dim, correction, keepdim); "
                             "mean(self_t, dim, keepdim)",
)
class VarMeanBackward0(Node):
    __slots__ = ("dims", "correction", "keepdim")
    num_outputs = 2

    def apply(self, grads: Any) -> tuple:
        return (_spread_backward(self, grads if type(grads) is list else [grads, None], False),)


@spec.node(
    formula={"self": "std_mean_backward(grads[0], grads[1], self, result0, dim, correction, keepdim)"},
    saved={**_SPREAD_SAVED, "result0": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_spread_jvp, tangent="std_jvp(self_t, self_p, result0, dim, correction, keepdim); "
                             "mean(self_t, dim, keepdim)",
)
class StdMeanBackward0(VarMeanBackward0):
    __slots__ = ()

    def apply(self, grads: Any) -> tuple:
        return (_spread_backward(self, grads if type(grads) is list else [grads, None], True),)


def _spread_mean(name: str, x: Any, dim: Any, unbiased: Any, keepdim: bool, correction: Any) -> tuple:
    x = _tensor(name, x)
    dim, corr = _var_args(name, dim, unbiased, correction)
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dims = normalize_dims(_dims_given(dim), d.ndim)
    axis = _axis(dims, d.ndim)
    keep = keepdim and d.ndim > 0
    m = d.mean(axis=axis, keepdims=True) if d.size else np.full((1,) * d.ndim, np.nan, d.dtype)
    dev = d - m
    dof = _count(d.shape, dims) - corr
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.asarray(np.sum(dev * dev, axis=axis, keepdims=keep) / max(dof, 0), dtype=d.dtype)
    if name == "std_mean":
        spread = np.sqrt(spread)
    m = m if keep else (m.reshape(spread.shape))
    cls = StdMeanBackward0 if name == "std_mean" else VarMeanBackward0
    node = record(cls, x)
    outs = _outputs((spread, np.asarray(m, d.dtype)), node)
    if node is not None:
        node.dims, node.correction, node.keepdim = None if _dims_given(dim) is None else dims, corr, keepdim
        node.save(x, SavedOutput(outs[0]) if name == "std_mean" else None)
    return outs


@spec.op("var_mean", nodes=(VarMeanBackward0,), method=False, vmap=spread_mean_rule("var_mean"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.var_mean(a)[0] + L.var_mean(a, 1, correction=0)[1].sum()
                            + L.var_mean(a, 0, keepdim=True)[0].sum()))
def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple:
    """The variance (divided by n - correction, correction 1 by default) and the mean, over all elements or
    `dim`, as a pair."""
    return _spread_mean("var_mean", input, dim, unbiased, keepdim, correction)


@spec.op("std_mean", nodes=(StdMeanBackward0,), method=False, vmap=spread_mean_rule("std_mean"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.std_mean(a)[0] * L.std_mean(a)[1]
                            + L.std_mean(a, 1, unbiased=False)[0].sum() + L.std_mean(a, (0, 1))[1]))
def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple:
    """The standard deviation (the square root of var_mean's variance) and the mean, as a pair."""
    return _spread_mean("std_mean", input, dim, unbiased, keepdim, correction)


