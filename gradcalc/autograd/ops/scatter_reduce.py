"""`scatter_reduce` (`scatter_reduce_`): the values of `src` reduced ('sum', 'prod', 'mean', 'amax', 'amin') into
`input` at the places an index holds along a dim, with or without what `input` held there (`include_self`).

A deferred family (ops/lazy.py). Its gradient is PyTorch's `scatter_reduce_backward`, written with the engine's
operations (gather, scatter, scatter_add, masked_fill, where and scatter_reduce itself), so that a gradient
recorded under create_graph can be differentiated again; its forward rule is the transpose of that gradient
(forward_ad's double_vjp), exact since the gradient is linear in `grad`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import elementwise as E
from . import indexing as I
from . import inplace as IP
from .core import needs, record, result
from .scatter import _index_tensor, _places, _prepare, _unsigned, gather, scatter, scatter_add

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype) -> Any:
    """What a place holds before the first value is reduced into it (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:
        return reduce == "amin"
    return info.min if reduce == "amax" else info.max


def scatter_reduce_array(x: np.ndarray, axis: int, idx: np.ndarray, src: np.ndarray, reduce: str,
                         include_self: bool) -> np.ndarray:
    """The forward computation on arrays (x at least 1-d when idx is, the index checked)."""
    out = x.copy()
    view = out.reshape(out.shape or (1,))
    places = _places(idx.reshape(idx.shape or (1,)), axis)
    values = src.reshape(src.shape or (1,))[tuple(slice(0, n) for n in (idx.shape or (1,)))].astype(out.dtype)
    if not include_self:
        view[places] = _identity(reduce, out.dtype)
    _UFUNC[reduce].at(view, places, values)
    if reduce == "mean":
        counts = np.zeros(view.shape, dtype=np.int64)
        np.add.at(counts, places, 1)
        if include_self:
            counts += 1
        counts = np.maximum(counts, 1)
        view[...] = view // counts if out.dtype.kind in "iub" else view / counts
    return out


def _zeros(shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    return Tensor._make(np.zeros(shape, dtype), False, None)


def _ones(shape: tuple[int, ...], dtype: np.dtype) -> Tensor:
    return Tensor._make(np.ones(shape, dtype), False, None)


_TWO_ZEROS = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src are scattered to the "
              "same position in self")


@spec.node(formula={"self": "not differentiable"},
           no_jvp="PyTorch's Error node: scatter_reduce's 'prod' gradient of src where two zeros meet has none")
class ScatterReduceDoubleBackwardError(Node):
    """The gradient of src of a 'prod' where two zeros of src meet in one place, recorded under create_graph:
    PyTorch's formula has no derivative there, and differentiating it is its error."""

    __slots__ = ()

    @classmethod
    def name(cls) -> str:
        return "torch::autograd::Error"  # (PyTorch names its Error node so)

    def apply(self, g: Tensor) -> tuple:
        raise RuntimeError(_TWO_ZEROS)


@spec.node(
    formula={"self": "scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)",
             "src": "scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result)"},
    saved={"dim": SV.field("given", _unsigned), "include_self": SV.field("include_self"),
           "index": SV.Spec(_index_tensor, True), "reduce": SV.field("reduce"), "result": SV.tensor(2),
           "self": SV.tensor(0), "src": SV.tensor(1)},
    jvp=spec.DOUBLE_VJP, tangent="scatter_reduce_jvp(self_p, self_t, dim, index, src_p, src_t, reduce, "
    "include_self, result)",
)
class ScatterReduceBackward0(Node):
    """PyTorch's scatter_reduce_backward: 'sum' passes the gradient through (a gather for src), 'mean' divides it
    by the counts, 'prod' multiplies by the product of the others, 'amax'/'amin' share it among the elements
    equal to the result; without include_self, the places written give `self` nothing."""

    __slots__ = ("dim", "given", "index", "reduce", "include_self", "src_shape")

    def apply(self, g: Tensor) -> tuple:
        x, src, out = self.unpack_saved(False)
        dim, index, reduce = self.dim, _index_tensor(self), self.reduce
        gx = gs = None
        if reduce == "sum":
            gx, gs = g, gather(g, dim, index)
        elif reduce == "prod":
            masked_self = E.masked_fill(x, x == 0, 1)
            masked_self_result = scatter_reduce(masked_self, dim, index, src, reduce, include_self=self.include_self)
            gx = g * masked_self_result / masked_self
            src_zero = src == 0
            src_num_zeros = gather(scatter_add(_zeros(x._data.shape, x._data.dtype), dim, index,
                                               src_zero.to(x.dtype)), dim, index)
            src_single_zero = src_zero & (src_num_zeros == 1)
            masked_src = E.masked_fill(src, src_single_zero, 1)
            masked_src_result = scatter_reduce(x, dim, index, masked_src, reduce, include_self=self.include_self)
            gs = E.where(src_single_zero, gather(g * masked_src_result, dim, index),
                         gather(g * out, dim, index) / E.masked_fill(src, src_zero, 1))
            if gs._requires_grad and bool((src_num_zeros._data > 1).any()):  # PyTorch's Error node
                gs = result(gs._data, record(ScatterReduceDoubleBackwardError, gs))
        elif reduce == "mean":
            shape, dtype = g._data.shape, g._data.dtype
            start = _ones(shape, dtype) if self.include_self else _zeros(shape, dtype)
            n = scatter_add(start, dim, index, _ones(index._data.shape, dtype))
            n = E.masked_fill(n, n == 0, 1)
            gx = g / n
            gs = gather(g, dim, index) / gather(n, dim, index)
        else:  # amax, amin: the gradient shared evenly among the elements equal to the result
            value = gather(out, dim, index)
            self_is_result = (x == out).to(x.dtype)
            src_is_result = (src == value).to(x.dtype)
            n_to_distribute = scatter_add(self_is_result, dim, index, src_is_result)
            grad_distributed = g / n_to_distribute
            gx = self_is_result * grad_distributed
            gs = src_is_result * gather(grad_distributed, dim, index)
        if not self.include_self:
            gx = scatter(gx, dim, index, 0.0)
        if gs._data.shape != self.src_shape:  # src larger than the index: its other elements were not read
            gs = I.index_put_zeros(gs, tuple(slice(0, n) for n in gs._data.shape), self.src_shape)
        return (gx if needs(self, 0) else None, gs if needs(self, 1) else None)


def _scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                     include_self: bool = True) -> Tensor:
    """In-place scatter_reduce: writes the result into this tensor."""
    return IP.apply_inplace(self, lambda t: scatter_reduce(t, dim, index, src, reduce, include_self=include_self),
                            "scatter_reduce_", src)


# 'prod' is left out of the sample: PyTorch's forward rule for it (scatter_reduce_jvp) disagrees with its own
# gradient and with finite differences where an index repeats; tests/engine/test_ops_selection.py checks it
@spec.op("scatter_reduce", inplace=_scatter_reduce_, vmap=spec.rule("scatter_reduce_rule"),
         nodes=(ScatterReduceBackward0,),
         sample=spec.Sample(((3, 4), (2, 3)), lambda L, a, s: L.scatter_reduce(a, 1, L.tensor([[0, 3, 0], [2, 2, 1]]),
                                                                               s, "sum")
                            + a.scatter_reduce(0, L.tensor([[2, 0, 2]]), s[:1], "sum", include_self=False)
                            + a.scatter_reduce(1, L.tensor([[1, 1, 1], [0, 3, 0]]), s, "mean")
                            + a.scatter_reduce(1, L.tensor([[1, 1, 1], [0, 3, 0]]), s, "amax")
                            + (a * 1.0).scatter_reduce_(0, L.tensor([[1, 0, 1]]), s[1:], "amin", include_self=False)))
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,  # noqa: A002
                   include_self: bool = True) -> Tensor:
    """`input` with the values of `src` reduced into the places `index` holds along `dim` (as scatter_add places
    them) by `reduce`, one of 'sum', 'prod', 'mean', 'amax', 'amin'; `include_self`: whether what `input`
    held there takes part."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if isinstance(index, Tensor) and max(index._data.ndim, 1) != max(input._data.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    axis, idx, _ = _prepare("scatter", input, dim, index, src._data)
    out = scatter_reduce_array(input._data, axis, idx, src._data, reduce, bool(include_self))
    node = record(ScatterReduceBackward0, input, src)
    res = result(out, node)
    if node is not None:
        node.dim, node.given, node.index = axis, int(dim), idx
        node.reduce, node.include_self, node.src_shape = reduce, bool(include_self), src._data.shape
        node.save(input, src, SavedOutput(res))
    return res
