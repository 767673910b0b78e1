"""Elementwise functions beyond the rows of unary.py: softplus, clamp, maximum/minimum, where and masked_fill.

Each backward formula runs on tensors (recorded, under create_graph) and on bare NumPy arrays (a plain backward),
where `_select(mask, g)` is the masked gradient of both.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .binary import _Binary, _binary, _shape, div_scalar, plus
from .core import _CATEGORY, binary_operands, broadcast_error, needs, record, result
from .logarithms import sigmoid
from .rounding import abs
from .sums import sum_to
from .unary import _const, _sigmoid, _zeros_like


def _select(mask: Any, g: Any) -> Any:
    """`g` where `mask` holds, else 0 (PyTorch's `where(mask, grad, 0)`): differentiable in `g`."""
    if type(g) is not Tensor:
        return np.where(mask, g, 0.0)
    return where(_const(mask), g, 0.0)


def _deselect(mask: Any, g: Any) -> Any:
    """0 where `mask` holds, else `g` (PyTorch's `where(mask, 0, grad)`, the condition saved as it is)."""
    if type(g) is not Tensor:
        return np.where(mask, 0.0, g)
    return where(_const(mask), 0.0, g)


# -- softplus ----------------------------------------------------------------------------------------------
_SOFTPLUS = {"beta": SV.field("beta"), "self": SV.tensor(0), "threshold": SV.field("threshold")}


@spec.node(
    formula={"self": "softplus_backward(grad, self, beta, threshold)"},
    saved=_SOFTPLUS,
    jvp=lambda node, inputs, out, tangents: softplus_backward(tangents[0], inputs[0], node.beta, node.threshold),
    tangent="softplus_backward(self_t, self_p, beta, threshold)",
)
class SoftplusBackward0(Node):
    __slots__ = ("beta", "threshold")

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        return (softplus_backward(g, x, self.beta, self.threshold),)


def _softplus_backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (g, x), (tg, tx) = inputs, tangents
    beta, threshold = node.beta, node.threshold
    first = None if tg is None else softplus_backward(tg, x, beta, threshold)
    second = None
    if tx is not None:  # d/dx of g sigmoid(beta x), zero from beta x >= threshold on (as its backward)
        s = sigmoid(x * beta)
        second = tx * g * (s * (1.0 - s)) * _const((x._data * beta) < threshold) * beta
    return plus(first, second)


@spec.node(
    formula={"grad_output": "softplus_backward(grad, self, beta, threshold)",
             "self": "softplus_double_backward(grad * grad_output, self, beta, threshold)"},
    saved={"beta": SV.field("beta"), "grad_output": SV.tensor(0), "self": SV.tensor(1),
           "threshold": SV.field("threshold")},
    jvp=_softplus_backward_jvp,
    tangent="softplus_backward(grad_output_t, self_p, beta, threshold) + "
            "softplus_double_backward(grad_output_p * self_t, self_p, beta, threshold)",
)
class SoftplusBackwardBackward0(Node):
    """The node of softplus's gradient under create_graph, with PyTorch's softplus_double_backward: its
    derivative in x is zero from beta x >= threshold on (the first order switches at > threshold)."""

    __slots__ = ("beta", "threshold")

    def apply(self, gg: Tensor) -> tuple:
        g, x = self.saved_tensors
        beta, threshold = self.beta, self.threshold
        gg_g = gg if needs(self, 0) else None
        gx = None
        if needs(self, 1):
            s = sigmoid(x * beta)
            below = _const((x._data * beta) < threshold)
            gx = gg * g * (s * (1.0 - s)) * below * beta
        return (softplus_backward(gg, x, beta, threshold) if gg_g is not None else None, gx)


def softplus_backward(g: Tensor, x: Tensor, beta: float, threshold: float) -> Tensor:
    """softplus's gradient: g where beta x > threshold, else g sigmoid(beta x)."""
    bx = x._data * beta
    data = np.where(bx > threshold, g._data, g._data * _sigmoid(bx))
    node = record(SoftplusBackwardBackward0, g, x)
    if node is not None:
        node.beta, node.threshold = beta, threshold
        node.save(g, x)
    return result(data, node)


@spec.op("softplus", vmap=spec.rule("pointwise_unary", "softplus"), nodes=(SoftplusBackward0,),
         sample=spec.Sample(((5,),), lambda L, a: L.nn.functional.softplus(a * 3.0, beta=2.0, threshold=4.0)))
def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (PyTorch's `softplus`)."""
    d = x._data
    bx = d * beta if beta != 1 else d
    data = np.where(bx > threshold, d, np.logaddexp(0, bx) / beta if beta != 1 else np.logaddexp(0, bx))
    node = record(SoftplusBackward0, x)
    if node is not None:
        node.beta, node.threshold = beta, threshold
        node.save(x)
    return result(data, node)


# -- clamp -------------------------------------------------------------------------------------------------
def _clamp_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    return _select(_inside(inputs[0], node.lo, node.hi), tangents[0])


@spec.node(
    formula={"self": "clamp_backward(grad, self, min, max)"},
    saved={"max": SV.field("hi"), "min": SV.field("lo"), "self": SV.tensor(0)},
    jvp=_clamp_jvp, tangent="where(self_p >= min and self_p <= max, self_t, 0)", batched=spec.BROADCASTS,
)
class ClampBackward1(Node):
    """clamp with number bounds: the gradient passes where min <= x <= max (bounds included)."""

    __slots__ = ("lo", "hi")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        return (_select(_inside(x, self.lo, self.hi), g),)


@spec.node(
    formula={"self": "where(self >= min, grad, 0)"},
    saved={"min": SV.field("lo"), "self": SV.tensor(0)},
    jvp=_clamp_jvp, tangent="where(self_p >= min, self_t, 0)", batched=spec.BROADCASTS,
)
class ClampMinBackward0(ClampBackward1):
    __slots__ = ()


@spec.node(
    formula={"self": "where(self <= max, grad, 0)"},
    saved={"max": SV.field("hi"), "self": SV.tensor(0)},
    jvp=_clamp_jvp, tangent="where(self_p <= max, self_t, 0)", batched=spec.BROADCASTS,
)
class ClampMaxBackward0(ClampBackward1):
    __slots__ = ()


def _data(v: Any) -> Any:
    return v._data if isinstance(v, Tensor) else v


def _inside(x: Any, lo: Any, hi: Any) -> np.ndarray:
    """The mask min <= x <= max, on arrays or numbers (a missing bound is no constraint)."""
    xd = _data(x)
    if lo is None:
        return xd <= _data(hi)
    if hi is None:
        return xd >= _data(lo)
    return (xd >= _data(lo)) & (xd <= _data(hi))


def _clamp_masks(x: Any, lo: Any, hi: Any) -> tuple[Any, Any, Any]:
    """Where the gradient goes, as PyTorch's clamp_backward_min_max: to x inside the bounds, to min below it
    (unless min > max, where max wins), to max above it."""
    xd, lod, hid = _data(x), _data(lo), _data(hi)
    below = None if lo is None else (xd < lod) if hi is None else (xd < lod) & (lod < hid)
    above = None if hi is None else (xd > hid) if lo is None else (xd > hid) | (hid < lod)
    return _inside(x, lo, hi), below, above


def _clamp_tensors_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    full, tfull = [inputs[0], None, None], [tangents[0], None, None]  # (x, min, max), from the node's edges
    for edge, k in enumerate(type(node).bounds, start=1):
        full[k], tfull[k] = inputs[edge], tangents[edge]
    masks = _clamp_masks(*full)
    parts = [None if t is None else _select(m, t) for m, t in zip(masks, tfull, strict=True)]
    return plus(plus(parts[0], parts[1]), parts[2])


_CLAMP_TENSORS = {"max": SV.tensor(2), "min": SV.tensor(1), "self": SV.tensor(0)}


@spec.node(
    formula={"self": "clamp_backward_min_max(grad, self, min, max)[0]",
             "min": "clamp_backward_min_max(grad, self, min, max)[1]",
             "max": "clamp_backward_min_max(grad, self, min, max)[2]"},
    saved=_CLAMP_TENSORS, jvp=_clamp_tensors_jvp, tangent="clamp_jvp(self_p, self_t, min_p, min_t, max_p, max_t)",
)
class ClampBackward0(Node):
    """clamp with tensor bounds: gradients to x and to each bound, as PyTorch's clamp_backward_min_max."""

    __slots__ = ("shapes",)
    bounds = (1, 2)  # the bounds that have an edge after x's: 1 min, 2 max (clamp_min's and clamp_max's one)

    def apply(self, g: Tensor) -> tuple:
        x, lo, hi = self.saved_tensors
        masks = _clamp_masks(x, lo, hi)
        grads = [sum_to(_select(masks[0], g), self.shapes[0]) if needs(self, 0) else None]
        for edge, k in enumerate(type(self).bounds, start=1):
            grads.append(sum_to(_select(masks[k], g), self.shapes[k]) if needs(self, edge) else None)
        return tuple(grads)


@spec.node(
    formula={"self": "where(self >= min, grad, 0)", "min": "where(self < min, grad, 0)"},
    saved={"min": SV.tensor(1), "self": SV.tensor(0)}, jvp=_clamp_tensors_jvp,
    tangent="where(self_p >= min_p, self_t, min_t)",
)
class ClampMinBackward1(ClampBackward0):
    __slots__ = ()
    bounds = (1,)


@spec.node(
    formula={"self": "where(self <= max, grad, 0)", "max": "where(self > max, grad, 0)"},
    saved={"max": SV.tensor(2), "self": SV.tensor(0)}, jvp=_clamp_tensors_jvp,
    tangent="where(self_p <= max_p, self_t, max_t)",
)
class ClampMaxBackward1(ClampBackward0):
    __slots__ = ()
    bounds = (2,)


def _bound(v: Any) -> Any:
    """A bound of the number form of clamp: a number, or a 0-d tensor that does not require grad."""
    if isinstance(v, Tensor):
        if v._data.ndim or v._requires_grad:
            raise TypeError(
                "clamp: give both bounds as tensors, or both as numbers (a number bound and a tensor "
                f"bound{' that requires grad' if v._requires_grad else ' with dimensions'} cannot be mixed)"
            )
        return v._data.item()
    if v is not None and not isinstance(v, (int, float, np.number)):
        raise TypeError(f"clamp: a bound must be a number or a tensor, not {type(v).__name__}")
    return v


def _clamp_data(d: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    # the bound first: NumPy then keeps x where they are equal, so signed zeros come out as in PyTorch
    r = d if lo is None else np.asarray(np.maximum(lo, d))
    if hi is not None:
        # into the first result when that is ours and a number bound changes neither its dtype nor shape
        fits = r is not d and type(hi) is not np.ndarray and np.result_type(r, hi) == r.dtype
        r = np.minimum(hi, r, out=r) if fits else np.minimum(hi, r)
    return r if type(r) is np.ndarray else np.asarray(r)


@spec.op("clamp", aliases=("clip",), nodes=(ClampBackward1, ClampBackward0), inplace=True,
         vmap=spec.rule("pointwise", "clamp", 3),
         sample=spec.Sample(((6,), (6,), (6,)), lambda L, a, lo, hi: L.clamp(a, -0.5, 0.5) + L.clip(a, min=-0.3)
                            + L.clamp(a, lo, lo + hi.abs()) + L.clamp(a, max=hi)))
def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002 - PyTorch's names
    """Limit the values of `x` to [min, max]; either bound may be None, a number, or a tensor."""
    return _clamp(x, min, max, ClampBackward1, ClampBackward0)


def _clamp(x: Tensor, lo: Any, hi: Any, scalar_node: type[Node], tensor_node: type[Node]) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"clamp() takes a tensor, not {type(x).__name__}")
    if lo is None and hi is None:
        raise RuntimeError("clamp: give at least one of min and max")
    lo_t, hi_t = isinstance(lo, Tensor), isinstance(hi, Tensor)
    # PyTorch has two forms: tensor bounds (each a tensor or None), and number bounds
    if not ((lo_t or hi_t) and (lo_t or lo is None) and (hi_t or hi is None)):
        lo, hi = _bound(lo), _bound(hi)
        data = _clamp_data(x._data, lo, hi)
        node = record(scalar_node, x)
        if node is not None:
            node.lo, node.hi = lo, hi
            node.save(x)
        return result(data, node)
    # tensor bounds: PyTorch's type promotion over the three, then broadcasting
    dtype = promoted(*(t._data for t in (x, lo, hi) if t is not None))
    xd, lod, hid = (None if t is None else t._data.astype(dtype, copy=False) for t in (x, lo, hi))
    try:
        data = _clamp_data(xd, lod, hid)
    except ValueError as exc:
        raise broadcast_error(exc, *(t for t in (x, lo, hi) if t is not None)) from None
    node = record(tensor_node, x, *((lo, hi)[k - 1] for k in tensor_node.bounds))
    if node is not None:
        node.shapes = (xd.shape, None if lo is None else lod.shape, None if hi is None else hid.shape)
        node.save(x, lo, hi)
    return result(data, node)


def promoted(*arrays: np.ndarray) -> np.dtype:
    """PyTorch's result dtype over several tensors: the dimensioned ones decide, unless a 0-d one is of a
    higher category (bool < int < float)."""
    dims = [a.dtype for a in arrays if a.ndim]
    zero = [a.dtype for a in arrays if not a.ndim]
    if not dims or not zero:
        return functools.reduce(np.promote_types, dims or zero)
    dtype, z = functools.reduce(np.promote_types, dims), functools.reduce(np.promote_types, zero)
    return z if _CATEGORY[z.kind] > _CATEGORY[dtype.kind] else dtype


@spec.op("clamp_min", vmap=spec.rule("pointwise", "clamp_min"), nodes=(ClampMinBackward0, ClampMinBackward1),
         sample=spec.Sample(((6,), (6,)), lambda L, a, b: L.clamp_min(a, 0.1) + a.clamp_min(b)))
def clamp_min(x: Tensor, min: Any) -> Tensor:  # noqa: A002
    """max(x, min) elementwise (`clamp(x, min=min)`, with its own node names)."""
    return _clamp(x, min, None, ClampMinBackward0, ClampMinBackward1)


@spec.op("clamp_max", vmap=spec.rule("pointwise", "clamp_max"), nodes=(ClampMaxBackward0, ClampMaxBackward1),
         sample=spec.Sample(((6,), (6,)), lambda L, a, b: L.clamp_max(a, 0.1) + a.clamp_max(b)))
def clamp_max(x: Tensor, max: Any) -> Tensor:  # noqa: A002
    """min(x, max) elementwise (`clamp(x, max=max)`, with its own node names)."""
    return _clamp(x, None, max, ClampMaxBackward0, ClampMaxBackward1)


# -- maximum, minimum --------------------------------------------------------------------------------------
def _extremum_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # PyTorch's other_t + where(a == b, 0.5, a > b) * (self_t - other_t): half of each where equal
    (a, b), (ta, tb) = inputs, tangents
    ad, bd = a._data, b._data
    w = np.where(ad == bd, 0.5, type(node).wins(ad, bd).astype(out._data.dtype))
    first = None if ta is None else ta * _const(w)
    second = None if tb is None else tb * _const(1.0 - w)
    return plus(first, second)


@spec.node(
    formula={"self": "at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)",
             "other": "at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_extremum_jvp, tangent="other_t + at::where(self_p == other_p, 0.5, self_p > other_p) * (self_t - other_t)",
    batched=spec.BROADCASTS,
)
class MaximumBackward0(_Binary):
    """Where the two are equal each gets half the gradient; nan passes the gradient to both."""

    __slots__ = ()
    raw_ok = True
    keep = np.less  # the input masked out where keep(self, other): the smaller one, for maximum
    wins = np.greater  # where the first input is the result, for the forward rule

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        ad, bd = (a, b) if raw else (a._data, b._data)
        half = np.where(ad == bd, g * 0.5, g) if raw else where(_const(ad == bd), div_scalar(g, 2.0), g)
        keep = type(self).keep  # PyTorch's where(a == b, grad / 2, grad).masked_fill_(a < b, 0), for maximum
        ga = masked_fill(half, keep(ad, bd), 0.0) if needs(self, 0) else None
        gb = masked_fill(half, keep(bd, ad), 0.0) if needs(self, 1) else None
        return self.grads(ga, gb)


@spec.node(
    formula={"self": "at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)",
             "other": "at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_extremum_jvp, tangent="other_t + at::where(self_p == other_p, 0.5, self_p < other_p) * (self_t - other_t)",
    batched=spec.BROADCASTS,
)
class MinimumBackward0(MaximumBackward0):
    __slots__ = ()
    keep = np.greater
    wins = np.less


def _pairwise(a: Any, b: Any, ufunc: np.ufunc, cls: type[_Binary], name: str) -> Tensor:
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError(f"{name}() takes two tensors: for a number bound use clamp (or wrap it in tensor())")
    ad, bd = binary_operands(a, b)
    # the second operand first: NumPy then keeps the first where they are equal (signed zeros as PyTorch)
    try:
        data = ufunc(bd, ad)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return _binary(cls, a, b, data, (a, b), None)


@spec.op("maximum", nodes=(MaximumBackward0,), vmap=spec.rule("pointwise_binary", "maximum"),
         sample=spec.Sample(((5,), (5,)), lambda L, a, b: L.maximum(a, b)))
def maximum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise maximum of two tensors (nan wins)."""
    return _pairwise(a, b, np.maximum, MaximumBackward0, "maximum")


@spec.op("minimum", nodes=(MinimumBackward0,), vmap=spec.rule("pointwise_binary", "minimum"),
         sample=spec.Sample(((5,), (5,)), lambda L, a, b: L.minimum(a, b)))
def minimum(a: Tensor, b: Tensor) -> Tensor:
    """The elementwise minimum of two tensors (nan wins)."""
    return _pairwise(a, b, np.minimum, MinimumBackward0, "minimum")


# -- where -------------------------------------------------------------------------------------------------
def _where_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (c,) = node.unpack_saved(True)
    like = next(t for t in tangents if t is not None)
    ta, tb = (t if t is not None else _zeros_like(like) for t in tangents)
    return where(_const(c), ta, tb)


@spec.node(
    formula={"self": "where(condition, grad, 0)", "other": "where(condition, 0, grad)"},
    saved={"condition": SV.tensor(0)},
    jvp=_where_jvp, tangent="where(condition, self_t, other_t)", batched=spec.BROADCASTS,
)
class WhereBackward0(Node):
    """Edges to the two branches; the condition is saved (version-checked, freed), as PyTorch's."""

    __slots__ = ("shapes",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (c,) = self.unpack_saved(True)  # the condition as a bool array, whatever the gradients are
        sa, sb = self.shapes
        ga = sum_to(_select(c, g), sa) if needs(self, 0) else None
        gb = sum_to(_deselect(c, g), sb) if needs(self, 1) else None
        return (ga, gb)


@spec.node(
    formula={"self": "grad.masked_fill(mask, 0)"},
    saved={"mask": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: masked_fill(tangents[0], node.unpack_saved(True)[0], 0.0),
    tangent="self_t.masked_fill(mask, 0)", batched=lambda node, g: _masked_batched(node, g, 0),
)
class MaskedFillBackward0(Node):
    """The gradient passes where the mask does not hold; the mask is saved, as PyTorch's. `in_shape`: the
    input's shape when the mask broadcast it to a larger one (its gradient is summed back), else None."""

    __slots__ = ("in_shape",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (mask,) = self.unpack_saved(True)
        out = masked_fill(g, mask, 0.0)
        return (out if self.in_shape is None else sum_to(out, self.in_shape),)


def _masked_batched(node: Node, g: np.ndarray, i: int) -> tuple:
    """The batched backward of the masked_fill nodes (rows of gradients, the batch dim first)."""
    (mask,) = node.unpack_saved(True)
    if i == 1 and node._next[0] is None:
        return (None, np.where(mask, g, 0.0).reshape(g.shape[0], -1).sum(1))
    out = np.where(mask, 0.0, g).astype(g.dtype, copy=False)
    if node.in_shape is not None:
        rank = out.ndim - 1
        padded = (g.shape[0],) + (1,) * (rank - len(node.in_shape)) + tuple(node.in_shape)
        out = sum_to(out, padded).reshape((g.shape[0],) + tuple(node.in_shape))
    if i == 0:
        return (out,)
    value = None if node._next[1] is None else np.where(mask, g, 0.0).reshape(g.shape[0], -1).sum(1)
    return (out, value)


def masked_fill(x: Any, mask: np.ndarray, value: float) -> Any:
    """`x` with `value` where `mask` holds (PyTorch's masked_fill, used by backward formulas)."""
    if type(x) is not Tensor:
        return np.where(mask, value, x)
    node = record(MaskedFillBackward0, x)
    if node is not None:
        node.in_shape = None
        node.save(Tensor._make(np.asarray(mask), False, None))
    return result(np.where(mask, value, x._data).astype(x._data.dtype, copy=False), node)


@spec.node(
    formula={"self": "grad.masked_fill(mask, 0)", "value": "masked_fill_backward(grad, mask)"},
    saved={"mask": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _masked_fill1_jvp(node, tangents),
    tangent="self_t.masked_fill(mask, value_t)", batched=lambda node, g: _masked_batched(node, g, 1),
)
class MaskedFillBackward1(Node):
    """A tensor filled with a 0-d tensor `value` where the mask holds: the tensor's gradient passes elsewhere,
    the value's is the sum of the incoming gradient there. Edges to the tensor (none for the zeros backward
    formulas fill) and to the value, as PyTorch's masked_fill.Tensor. `in_shape` as MaskedFillBackward0's."""

    __slots__ = ("in_shape",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (mask,) = self.unpack_saved(True)
        gx = None
        if needs(self, 0):
            gx = masked_fill(g, mask, 0.0)
            if self.in_shape is not None:
                gx = sum_to(gx, self.in_shape)
        if not needs(self, 1):
            return (gx, None)
        if type(g) is not Tensor:
            return (gx, np.sum(np.where(mask, g, 0.0)))
        return (gx, masked_fill(g, ~mask, 0.0).sum())


def _masked_fill1_jvp(node: Node, tangents: tuple) -> Any:
    (mask,) = node.unpack_saved(True)
    tx, tv = tangents
    filled = None if tv is None else filled_where(mask, tv)
    if tx is None:
        return filled
    kept = masked_fill(tx, mask, 0.0)
    return kept if filled is None else kept + filled


def filled_where(mask: np.ndarray, value: Any) -> Any:
    """Zeros of the mask's shape, with the 0-d `value` where it holds (PyTorch's
    `zeros.masked_fill_(mask, value)`, used by backward formulas)."""
    if type(value) is not Tensor:
        return np.where(mask, value, 0.0)
    node = record(MaskedFillBackward1, None, value)
    if node is not None:
        node.in_shape = None
        node.save(Tensor._make(np.asarray(mask), False, None))
    return result(np.where(mask, value._data, 0.0).astype(value._data.dtype, copy=False), node)


@spec.op("where", nodes=(WhereBackward0,), method=lambda x, cond, other: where(cond, x, other),
         vmap=spec.rule("pointwise", "where", 3),
         sample=spec.Sample(((5,), (5,)), lambda L, a, b: L.where(a > b, a * b, b.exp()) + a.where(b > 0, 1.5)))
def where(cond: Any, a: Any, b: Any) -> Tensor:
    """Elements of `a` where `cond` holds, else of `b` (either may be a number)."""
    c = cond._data if isinstance(cond, Tensor) else np.asarray(cond)
    if c.dtype != np.bool_:
        c = c.astype(bool)
    ad, bd = binary_operands(a, b)
    try:
        data = np.where(c, ad, bd)
    except ValueError as exc:
        raise broadcast_error(exc, c, a, b) from None
    node = record(WhereBackward0, a, b)
    if node is not None:
        node.save(cond if isinstance(cond, Tensor) and cond._data is c else Tensor._make(c, False, None))
        node.shapes = (_shape(a), _shape(b))
    return result(data, node)


METHODS: dict[str, Callable] = {"__abs__": abs}
