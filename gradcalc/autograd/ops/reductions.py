"""Reductions: sum and mean over all elements or over `dim`, with `keepdim`.

A reduction's gradient is the incoming gradient expanded back over the reduced dimensions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..node import Node
from ..tensor import Tensor
from . import arithmetic as A
from . import shape as S
from .core import record, result


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """`dim` (None, an int, or a sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    out = []
    for d in dims:
        d = int(d)
        lo = -max(ndim, 1)
        if not lo <= d < max(ndim, 1):
            raise IndexError(
                f"dimension {d} is out of range for a tensor with {ndim} dimension{'s' if ndim != 1 else ''}"
            )
        out.append(d % max(ndim, 1) if ndim else 0)
    return tuple(sorted(set(out)))


def expand_back(g: Tensor, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """Undo a reduction's shape change: restore the reduced dims as size 1, then broadcast to `in_shape`."""
    if not keepdim and dims and len(in_shape) > 0:
        kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
        g = reshape_to(g, kept)
    return S.expand(g, in_shape) if g._data.shape != in_shape else g


class SumBackward0(Node):
    __slots__ = ("in_shape",)

    def apply(self, g: Tensor) -> tuple:
        return (S.expand(g, self.in_shape) if g._data.shape != self.in_shape else g,)


class SumBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim")

    def apply(self, g: Tensor) -> tuple:
        return (expand_back(g, self.in_shape, self.dims, self.keepdim),)


def sum(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Sum of all elements, or over `dim`."""
    d = x._data
    if dim is None:
        node = record(SumBackward0, x)
        if node is not None:
            node.in_shape = d.shape
        return result(d.sum(dtype=_acc_dtype(d)), node)
    dims = normalize_dims(dim, d.ndim)
    node = record(SumBackward1, x)
    if node is not None:
        node.in_shape, node.dims, node.keepdim = d.shape, dims, keepdim
    return result(d.sum(axis=dims if d.ndim else None, keepdims=keepdim, dtype=_acc_dtype(d)), node)


def _acc_dtype(d: np.ndarray) -> Any:
    return np.int64 if d.dtype.kind in "bi" else None


class MeanBackward0(Node):
    __slots__ = ("in_shape", "count")

    def apply(self, g: Tensor) -> tuple:
        return (S.expand(A.div(g, self.count), self.in_shape),)


class MeanBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim", "count")

    def apply(self, g: Tensor) -> tuple:
        return (expand_back(A.div(g, self.count), self.in_shape, self.dims, self.keepdim),)


def mean(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Mean of all elements, or over `dim`."""
    d = x._data
    if d.dtype.kind not in "f":
        raise RuntimeError(f"mean() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    with np.errstate(invalid="ignore", divide="ignore"):
        if dim is None:
            node = record(MeanBackward0, x)
            if node is not None:
                node.in_shape, node.count = d.shape, float(d.size)
            return result(d.mean() if d.size else np.nan, node)
        dims = normalize_dims(dim, d.ndim)
        node = record(MeanBackward1, x)
        if node is not None:
            node.in_shape, node.dims, node.keepdim = d.shape, dims, keepdim
            node.count = float(np.prod([d.shape[i] for i in dims])) if d.ndim else 1.0
        return result(d.mean(axis=dims if d.ndim else None, keepdims=keepdim), node)


def reshape_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Reshape used inside backward formulas."""
    return S.reshape(x, shape)


METHODS = {"sum": sum, "mean": mean}
FUNCTIONS = {"sum": sum, "mean": mean}
