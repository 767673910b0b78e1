"""`expand` and `sum`, each the other's adjoint, and `sum_to`: a broadcast gradient summed back to a shape.

They are together because each one's backward is the other: expand's gradient is a sum (`sum_to`), sum's an
expand. Every operation that broadcasts (arithmetic, clamp, where...) sums its gradients back with `sum_to`,
and every reduction puts its reduced dims back with `_keep` and `expand_back` (PyTorch's
`unsqueeze_multiple` and `expand`). A `dim` is an int, or a tuple where PyTorch takes one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..grad_mode import state
from ..node import Node
from ..tensor import Tensor
from .basic import to_dtype
from .core import record, result
from .shape import _shape_arg, _view, reshape, unsqueeze

_py_max = max
# sum(x) and mean(x) are PyTorch's overloads without a dim (SumBackward0); sum(x, None) has one (SumBackward1)
_NO_DIM: Any = type("_NoDim", (), {"__repr__": lambda self: "None", "__slots__": ()})()


# -- dims ------------------------------------------------------------------------------------------------
def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """`dim` (None or () for all, an int, or a sequence) as a sorted tuple of non-negative axes.

    A 0-d tensor takes dim 0 or -1, as in PyTorch, and reduces over its one element: `(0,)`."""
    if dim is None or dim is _NO_DIM:
        return tuple(range(ndim)) if ndim else (0,)
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if not dims:
        return tuple(range(ndim)) if ndim else (0,)
    n = _py_max(ndim, 1)
    out = []
    for d in dims:
        d = int(d)
        if not -n <= d < n:
            raise IndexError(f"dimension {d} is out of range: a tensor of {ndim} dimensions takes -{n} to {n - 1}")
        d %= n
        if d in out:
            raise RuntimeError(f"dim {d} is given more than once in {list(dims)}: name each dim once")
        out.append(d)
    return tuple(sorted(out))


def _axis(dims: tuple[int, ...], ndim: int) -> Any:
    """The NumPy axis argument for `dims` (None for a 0-d tensor, which NumPy has no axis for)."""
    return dims if ndim else None


def _count(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    return math.prod(shape[i] for i in dims) if shape else 1


def _keep(g: Any, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Any:
    """A reduced result with its reduced dims back as size 1, to broadcast against the input."""
    if keepdim or not in_shape:
        return g
    kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
    if type(g) is not Tensor:
        return np.reshape(g, kept)
    if g._data.shape == kept:
        return g
    for d in sorted(dims):  # PyTorch's unsqueeze_multiple: one UnsqueezeBackward0 per dim, as its graph records
        g = unsqueeze(g, d)
    return g


def _restore(g: Any, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Any:
    """`_keep` by a reshape, as PyTorch's restore_reduced_dims (amax's and amin's formulas) records it."""
    if keepdim or not in_shape:
        return g
    kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
    return np.reshape(g, kept) if type(g) is not Tensor else reshape(g, kept)


def expand_back(g: Tensor, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """Undo a reduction's shape change: restore the reduced dims as size 1, then broadcast to `in_shape`."""
    return _expand(_keep(g, in_shape, dims, keepdim), in_shape)


def _expand(g: Any, shape: tuple[int, ...]) -> Any:
    """Broadcast a gradient back over an input's shape: a view, for tensors and bare arrays alike (a tensor is
    expanded even to its own shape, as PyTorch's formulas record it)."""
    if type(g) is not Tensor:
        return np.broadcast_to(g, shape)
    return expand(g, shape)


def _batched_expand(g: np.ndarray, in_shape: tuple[int, ...], dims: Any, keepdim: bool) -> np.ndarray:
    """`expand_back` of a gradient array with a leading batch dim (a batched backward): the reduced dims
    (all of them when `dims` is None) put back as size 1 after the batch dim, then broadcast."""
    b = g.shape[0]
    if dims is None:
        g = g.reshape((b,) + (1,) * len(in_shape))
    elif not keepdim:
        g = np.expand_dims(g, tuple(d + 1 for d in dims))
    return np.broadcast_to(g, (b,) + tuple(in_shape))


def _np_dtype(dtype: Any) -> np.dtype | None:
    return None if dtype is None else np.dtype(getattr(dtype, "np", dtype))


def _cast_input(x: Tensor, dtype: Any) -> tuple[np.ndarray, np.dtype | None]:
    """The data to reduce, converted to `dtype=` first as PyTorch does; and the dtype to give gradients back."""
    target = _np_dtype(dtype)
    d = x._data
    if target is None or target == d.dtype:
        return d, None
    if target.kind != "f" and x._requires_grad:
        raise RuntimeError(f"dtype={target} cannot carry a gradient: reduce to a floating dtype, or .detach() first")
    return d.astype(target), d.dtype


def _back_to(g: Any, dtype: np.dtype | None) -> Any:
    """A gradient given back in the input's dtype, after a reduction that computed in `dtype=`."""
    if dtype is None:
        return g
    if type(g) is not Tensor:
        return np.asarray(g, dtype=dtype)
    return to_dtype(g, dtype)


# -- sum_to: a broadcast gradient summed back ---------------------------------------------------------------
def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back down to `shape` (differentiable; also on bare arrays)."""
    raw = type(g) is not Tensor
    gshape = np.shape(g) if raw else g._data.shape
    if gshape == shape:
        return g
    if raw and state.batch:  # a batched backward (never equal shapes): the leading batch dim is kept
        return batched_sum_to(g, shape)
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    if raw:
        return np.sum(g, axis=dims, keepdims=True).reshape(shape)
    if not shape:  # as PyTorch's at::sum_to
        return sum(g)
    out = sum(g, dim=dims, keepdim=True) if dims else g
    return reshape(out, shape) if out._data.shape != shape else out


def batched_sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`sum_to` for a gradient array with a leading batch dim: each row summed down to `shape`."""
    gshape = g.shape
    lead = len(gshape) - 1 - len(shape)
    dims = tuple(range(1, 1 + lead)) + tuple(
        i + 1 + lead for i, n in enumerate(shape) if n == 1 and gshape[i + 1 + lead] != 1)
    if dims and dims[-1] != len(gshape) - 1 and g.dtype.kind == "f":
        # the last dim kept: NumPy's sum adds along the other dims in a loop over that one, slow when it is
        # short ((rows, 100, 4) to (rows, 4) runs at a quarter of the speed); einsum adds in the same order
        keep = [i for i in range(len(gshape)) if i not in dims]
        return np.einsum(g, list(range(len(gshape))), keep).reshape(gshape[:1] + shape)
    return np.sum(g, axis=dims, keepdims=True).reshape(gshape[:1] + shape)


# -- expand ------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "at::sum_to(grad, self.sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: expand(tangents[0], out._data.shape),
    tangent="self_t.expand(sizes)",
    batched=spec.BROADCASTS,  # sum_to keeps the batch dim
)
class ExpandBackward0(Node):
    __slots__ = ("in_shape",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        return (sum_to(g, self.in_shape),)


@spec.op("expand", nodes=(ExpandBackward0,), top_level=False, vmap=spec.rule("expand_rule"),
         sample=spec.Sample(((3, 1),), lambda L, a: a.expand(2, 3, 4)))
def expand(x: Tensor, *shape: Any) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a dimension)."""
    target = _shape_arg(shape)
    lead = len(target) - x._data.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the target shape {list(target)} has fewer dimensions than the tensor "
            f"({list(x._data.shape)})"
        )
    if any(n == -1 for n in target[:lead]):
        raise RuntimeError(f"expand: -1 cannot stand for a new leading dimension in {list(target)}")
    target = tuple(x._data.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(target))
    try:
        data = np.broadcast_to(x._data, target)
    except ValueError:
        raise RuntimeError(
            f"cannot expand a tensor of shape {list(x._data.shape)} to {list(target)}: only dimensions "
            "of size 1 can grow"
        ) from None
    node = record(ExpandBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
    return _view(data, x, node)


@spec.op("expand_as", vmap=spec.rule("expand_as_rule"), nodes=(ExpandBackward0,), top_level=False,
         sample=spec.Sample(((3, 1), (2, 3, 4)), lambda L, a, b: a.expand_as(b)))
def expand_as(x: Tensor, other: Tensor) -> Tensor:
    """`x.expand(other.shape)`."""
    return expand(x, other._data.shape)


# -- sum -------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.expand(self.sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: sum(tangents[0]),
    tangent="self_t.sum()",
    batched=lambda self, g: (_batched_expand(_back_to(g, self.in_dtype), self.in_shape, None, False),),
)
class SumBackward0(Node):
    __slots__ = ("in_shape", "in_dtype")
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        return (_expand(_back_to(g, self.in_dtype), self.in_shape),)


@spec.node(
    formula={"self": "sum_backward(grad, self.sizes(), dim, keepdim)"},
    saved={
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "self_sym_sizes": SV.field("in_shape", tuple),
    },
    jvp=lambda node, inputs, out, tangents: sum(tangents[0], node.dims, node.keepdim),
    tangent="self_t.sum(dim, keepdim)",
    batched=lambda self, g: (_batched_expand(_back_to(g, self.in_dtype), self.in_shape, self.dims, self.keepdim),),
)
class SumBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim", "in_dtype")
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        return (expand_back(_back_to(g, self.in_dtype), self.in_shape, self.dims, self.keepdim),)


def _acc_dtype(d: np.ndarray) -> Any:
    return np.int64 if d.dtype.kind in "bi" else None


@spec.op("sum", nodes=(SumBackward0, SumBackward1), vmap=spec.rule("reduction", "sum"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.sum(a, 0, keepdim=True) + L.sum(a) + a.sum((0, 1))))
def sum(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over `dim` (bools and ints sum as int64)."""
    d, in_dtype = (x._data, None) if dtype is None else _cast_input(x, dtype)
    if dim is _NO_DIM and not keepdim:
        node = record(SumBackward0, x)
        if node is not None:
            node.in_shape, node.in_dtype = d.shape, in_dtype
        return result(d.sum(dtype=_acc_dtype(d)), node)
    dims = normalize_dims(dim, d.ndim)
    node = record(SumBackward1, x)
    if node is not None:
        node.in_shape, node.dims, node.keepdim, node.in_dtype = d.shape, dims, keepdim, in_dtype
    return result(d.sum(axis=_axis(dims, d.ndim), keepdims=keepdim, dtype=_acc_dtype(d)), node)
