"""Shape operations: views of the same data in another shape; their backward reshapes the gradient back.

A result that shares its input's memory (a NumPy view) shares its version counter too, as PyTorch's
views do, so an in-place change through either is seen by both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..node import Node
from ..tensor import Tensor
from . import reductions as R
from .core import record, view_result


def _shape_arg(shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


class ViewBackward0(Node):
    __slots__ = ("in_shape",)

    def apply(self, g: Tensor) -> tuple:
        return (reshape(g, self.in_shape),)


def reshape(x: Tensor, *shape: Any) -> Tensor:
    """The same elements in another shape (one dimension may be -1)."""
    target = _shape_arg(shape)
    try:
        data = x._data.reshape(target)
    except ValueError:
        raise RuntimeError(
            f"shape {list(target)} is invalid for a tensor of {x._data.size} elements "
            f"(shape {list(x._data.shape)})"
        ) from None
    node = record(ViewBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
    return view_result(data, x, node)


view = reshape


class ExpandBackward0(Node):
    __slots__ = ("in_shape",)

    def apply(self, g: Tensor) -> tuple:
        from .arithmetic import sum_to

        return (sum_to(g, self.in_shape),)


def expand(x: Tensor, *shape: Any) -> Tensor:
    """Broadcast to a larger shape without copying (-1 keeps a dimension)."""
    target = _shape_arg(shape)
    lead = len(target) - x._data.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the target shape {list(target)} has fewer dimensions than the tensor")
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
    return view_result(data, x, node)


class TransposeBackward0(Node):
    __slots__ = ("dims",)

    def apply(self, g: Tensor) -> tuple:
        return (transpose(g, *self.dims),)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions."""
    nd = max(x._data.ndim, 1)
    d0, d1 = R.normalize_dims(dim0, nd)[0], R.normalize_dims(dim1, nd)[0]
    data = np.swapaxes(x._data, d0, d1) if x._data.ndim else x._data
    node = record(TransposeBackward0, x)
    if node is not None:
        node.dims = (d0, d1)
    return view_result(data, x, node)


class PermuteBackward0(Node):
    __slots__ = ("dims",)

    def apply(self, g: Tensor) -> tuple:
        return (permute(g, *np.argsort(self.dims)),)


def permute(x: Tensor, *dims: Any) -> Tensor:
    """Reorder dimensions."""
    order = _shape_arg(dims)
    if sorted(d % max(x._data.ndim, 1) for d in order) != list(range(x._data.ndim)):
        raise RuntimeError(f"permute: {list(order)} is not an ordering of the {x._data.ndim} dimensions")
    order = tuple(d % x._data.ndim for d in order)
    node = record(PermuteBackward0, x)
    if node is not None:
        node.dims = order
    return view_result(np.transpose(x._data, order), x, node)


def T(x: Tensor) -> Tensor:
    """Reversed dimensions (the transpose of a matrix)."""
    if x._data.ndim == 2:
        return transpose(x, 0, 1)
    if x._data.ndim < 2:
        return x
    return permute(x, *reversed(range(x._data.ndim)))


METHODS = {
    "reshape": reshape,
    "view": view,
    "expand": expand,
    "transpose": transpose,
    "permute": permute,
}
PROPERTIES = {"T": T}
FUNCTIONS = {"reshape": reshape, "transpose": transpose, "permute": permute}
