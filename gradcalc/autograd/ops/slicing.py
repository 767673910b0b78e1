"""The views indexing is made of: `select` (one index of a dim, the dim removed), `narrow` and `slice_dim` (a range
of a dim, with a step), and `alias` (a new view of everything, `x[...]`), with their nodes (SelectBackward0,
SliceBackward0, AliasBackward0) and the create_graph nodes of select's and slice's gradients.

A family loaded at first use (ops/lazy.py): indexing, joins and the other families that take parts of tensors
load it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .core import record, result
from .shape import _ALL, _is_tensor, _view, dim_index


def _batched_select(self: Node, g: Any) -> tuple:
    out = np.zeros(g.shape[:1] + self.in_shape, dtype=g.dtype)
    out[(_ALL,) * (self.dim + 1) + (self.index,)] = g
    return (out,)


@spec.node(
    formula={"self": "select_backward(grad, self.sizes(), dim, index)"},
    saved={"dim": SV.field("dim"), "index": SV.field("index"), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: select(tangents[0], node.dim, node.index),
    tangent="self_t.select(dim, index)", batched=_batched_select,
)
class SelectBackward0(Node):
    __slots__ = ("in_shape", "dim", "index")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if _is_tensor(g):
            return (select_backward(g, self.in_shape, self.dim, self.index),)
        out = np.zeros(self.in_shape, dtype=g.dtype)
        out[(_ALL,) * self.dim + (self.index,)] = g
        return (out,)


@spec.node(
    formula={"grad_output": "grad.select(dim, index)"},
    saved={"dim": SV.field("dim"), "index": SV.field("index")},
    jvp=lambda node, inputs, out, tangents: select_backward(tangents[0], out._data.shape, node.dim, node.index),
    tangent="select_backward(grad_output_t, input_sizes, dim, index)",
)
class SelectBackwardBackward0(Node):
    __slots__ = ("dim", "index")

    def apply(self, g: Tensor) -> tuple:
        return (select(g, self.dim, self.index),)


def select_backward(g: Tensor, shape: tuple[int, ...], dim: int, index: int) -> Tensor:
    """Zeros of `shape` with `g` at `index` along `dim` (select's adjoint)."""
    out = np.zeros(shape, dtype=g._data.dtype)
    out[(_ALL,) * dim + (index,)] = g._data
    node = record(SelectBackwardBackward0, g)
    if node is not None:
        node.dim, node.index = dim, index
    return result(out, node)


@spec.op("select", vmap=spec.rule("select_rule"), nodes=(SelectBackward0,),
         sample=spec.Sample(((2, 3),), lambda L, a: L.select(a, 1, 2) + a.select(0, -1)[:2]))
def select(x: Tensor, dim: int, index: int) -> Tensor:
    """The slice at `index` along `dim`, that dimension removed (a view)."""
    shape = x._data.shape
    if not shape:
        raise IndexError("select: a 0-d tensor has no dimension to select from")
    d = dim_index(dim, len(shape))
    i = int(index)
    if not -shape[d] <= i < shape[d]:
        raise IndexError(f"index {i} is out of range for dimension {d} of size {shape[d]}")
    i %= shape[d]
    node = record(SelectBackward0, x)
    if node is not None:
        node.in_shape, node.dim, node.index = shape, d, i
    # the trailing `...` makes NumPy return a 0-d view rather than a scalar copy when no dimension is left
    return _view(x._data[(_ALL,) * d + (i, Ellipsis)], x, node)


def _batched_slice(self: Node, g: Any) -> tuple:
    out = np.zeros(g.shape[:1] + self.in_shape, dtype=g.dtype)
    out[(_ALL,) * (self.dim + 1) + (slice(*self.bounds),)] = g
    return (out,)


@spec.node(
    formula={"self": "slice_backward_wrapper(grad, self.sizes(), dim, start, end, step)"},
    saved={
        "dim": SV.field("dim"), "end": SV.field("bounds", lambda b: b[1]),
        "self_sym_sizes": SV.field("in_shape", tuple), "start": SV.field("bounds", lambda b: b[0]),
        "step": SV.field("bounds", lambda b: b[2]),
    },
    jvp=lambda node, inputs, out, tangents: slice_dim(tangents[0], node.dim, *node.bounds),
    tangent="self_t.slice(dim, start, end, step)", batched=_batched_slice,
)
class SliceBackward0(Node):
    __slots__ = ("in_shape", "dim", "bounds")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if _is_tensor(g):
            return (slice_backward(g, self.in_shape, self.dim, self.bounds),)
        out = np.zeros(self.in_shape, dtype=g.dtype)
        out[(_ALL,) * self.dim + (slice(*self.bounds),)] = g
        return (out,)


@spec.node(
    formula={"grad_output": "grad.slice(dim, start, end, step)"},
    saved={
        "dim": SV.field("dim"), "end": SV.field("bounds", lambda b: b[1]), "start": SV.field("bounds", lambda b: b[0]),
        "step": SV.field("bounds", lambda b: b[2]),
    },
    jvp=lambda node, inputs, out, tangents: slice_backward(tangents[0], out._data.shape, node.dim, node.bounds),
    tangent="slice_backward(grad_output_t, input_sizes, dim, start, end, step)",
)
class SliceBackwardBackward0(Node):
    __slots__ = ("dim", "bounds")

    def apply(self, g: Tensor) -> tuple:
        return (slice_dim(g, self.dim, *self.bounds),)


def slice_backward(g: Tensor, shape: tuple[int, ...], dim: int, bounds: tuple[int, int, int]) -> Tensor:
    """Zeros of `shape` with `g` in the slice `bounds` of `dim` (slice's adjoint)."""
    out = np.zeros(shape, dtype=g._data.dtype)
    out[(_ALL,) * dim + (slice(*bounds),)] = g._data
    node = record(SliceBackwardBackward0, g)
    if node is not None:
        node.dim, node.bounds = dim, bounds
    return result(out, node)


def slice_dim(x: Tensor, dim: int, start: int, stop: int, step: int = 1) -> Tensor:
    """`x[..., start:stop:step, ...]` along `dim`, with bounds already made non-negative (a view)."""
    d = dim_index(dim, x._data.ndim)
    node = record(SliceBackward0, x)
    if node is not None:
        node.in_shape, node.dim, node.bounds = x._data.shape, d, (start, stop, step)
    return _view(x._data[(_ALL,) * d + (slice(start, stop, step),)], x, node)


@spec.op("narrow", vmap=spec.rule("narrow_rule"), nodes=(SliceBackward0,),
         sample=spec.Sample(((4, 3),), lambda L, a: L.narrow(a, 0, 1, 2) + a.narrow(-2, -3, 2)))
def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`length` elements of `dim` from `start` (a view)."""
    d = dim_index(dim, x._data.ndim)
    n = x._data.shape[d]
    s = int(start) + n if int(start) < 0 else int(start)
    if not (0 <= s <= n and 0 <= length and s + length <= n):
        raise IndexError(f"narrow: elements {s} to {s + length} are outside dimension {d} of size {n}")
    return slice_dim(x, d, s, s + int(length), 1)


@spec.node(
    formula={"self": "grad"},
    jvp=lambda node, inputs, out, tangents: alias(tangents[0]), tangent="self_t", batched=spec.BROADCASTS,
)
class AliasBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        return (g,)


def alias(x: Tensor) -> Tensor:
    """A new view of the whole tensor (what `x[...]` is)."""
    return _view(x._data.view(), x, record(AliasBackward0, x))
