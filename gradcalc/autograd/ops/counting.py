"""Counting and locating values: `unique`, `unique_consecutive`, `bincount`, `histc`, `bucketize`, `searchsorted`.

A deferred family (ops/lazy.py). Their results are integers (positions, counts) or, for unique's values, what
PyTorch records without a derivative: a float input that requires grad gives values with PyTorch's node
(Unique2Backward0, UniqueDimBackward0, UniqueConsecutiveBackward0), and a backward or a tangent through it is
PyTorch's NotImplementedError; bincount with weights that require grad records NotImplemented, as PyTorch does.
histc, bucketize and searchsorted record nothing (their results never require grad).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import arithmetic as A
from . import shape as S
from .core import record, result

_INT64 = np.dtype("int64")
_KERNEL_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
                "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _plain(data: Any, dtype: Any = None) -> Tensor:
    return Tensor._make(np.asarray(data, dtype=dtype), False, None)


# -- unique, unique_consecutive --------------------------------------------------------------------------------
@spec.base
class _NoDerivative(Node):
    """unique's values: recorded as PyTorch records them, with no derivative (`aten` names the operation)."""

    __slots__ = ()
    aten = ""

    def apply(self, g: Tensor) -> tuple:
        raise NotImplementedError(f"the derivative for '{self.aten}' is not implemented.")


_NO_DERIVATIVE = "PyTorch has no derivative of unique's values (not_implemented in derivatives.yaml)"


@spec.node(formula={"self": 'not_implemented("_unique2")'}, no_jvp=_NO_DERIVATIVE)
class Unique2Backward0(_NoDerivative):
    __slots__ = ()
    aten = "_unique2"


@spec.node(formula={"self": 'not_implemented("unique_dim")'}, no_jvp=_NO_DERIVATIVE)
class UniqueDimBackward0(_NoDerivative):
    __slots__ = ()
    aten = "unique_dim"


@spec.node(formula={"self": 'not_implemented("unique_consecutive")'}, no_jvp=_NO_DERIVATIVE)
class UniqueConsecutiveBackward0(_NoDerivative):
    __slots__ = ()
    aten = "unique_consecutive"


def _results(x: Tensor, cls: type[Node], values: np.ndarray, inverse: np.ndarray, counts: np.ndarray,
             return_inverse: bool, return_counts: bool) -> Any:
    """The values (recorded with `cls` when the input requires grad), then the asked-for integer results."""
    out = result(values, record(cls, x))
    extra = []
    if return_inverse:
        extra.append(_plain(inverse, _INT64))
    if return_counts:
        extra.append(_plain(counts, _INT64))
    return (out, *extra) if extra else out


def _rows(d: np.ndarray, axis: int) -> np.ndarray:
    """The slices of `d` along `axis` as the rows of a matrix."""
    moved = np.moveaxis(d, axis, 0)
    return moved.reshape(moved.shape[0], -1)


def _from_rows(rows: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    moved = (rows.shape[0],) + shape[:axis] + shape[axis + 1:]
    return np.moveaxis(rows.reshape(moved), 0, axis)


# (the samples read unique's integer results, and its values of a detached input: there is no derivative)
@spec.op("unique", vmap=spec.rule("dynamic_shape_rule", "_unique2"), nodes=(Unique2Backward0, UniqueDimBackward0),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.unique((a.detach() > 0).double(), return_inverse=True)[1]
                            + L.unique(a.detach().round(), sorted=True, return_counts=True)[1].sum()
                            + a * L.unique((a.detach() > 0).long(), dim=1, return_inverse=True)[1]))
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values of `input` in ascending order (without `dim`, of all its elements; with it, the
    distinct slices along `dim`); `return_inverse` adds where each element (slice) went, `return_counts` how
    often each value occurs."""
    d = input._data
    if dim is None:
        flat = d.reshape(-1)
        values, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True, equal_nan=False)
        return _results(input, Unique2Backward0, values, inverse.reshape(d.shape), counts, return_inverse,
                        return_counts)
    axis = S.dim_index(dim, d.ndim)
    if d.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    rows = _rows(d, axis)
    if rows.shape[0] == 0 or rows.shape[1] == 0:
        keep = np.arange(min(rows.shape[0], 1 if rows.shape[0] else 0))
        values, inverse, counts = rows[keep], np.zeros(rows.shape[0], _INT64), np.array([rows.shape[0]] * keep.size)
    else:
        values, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return _results(input, UniqueDimBackward0, _from_rows(values, d.shape, axis), inverse.reshape(-1), counts,
                    return_inverse, return_counts)


@spec.op("unique_consecutive", vmap=spec.rule("dynamic_shape_rule", "unique_consecutive"),
         nodes=(UniqueConsecutiveBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.unique_consecutive((a.detach() > 0).long(),
                                                                             return_inverse=True)[1]
                            + L.unique_consecutive(a.detach() > 0, dim=0, return_counts=True)[1].sum()))
def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None) -> Any:
    """`input` with each run of equal consecutive values (without `dim`, of its elements in order; with it, of
    its slices along `dim`) kept once; `return_inverse` adds which run each element is in, `return_counts` the
    runs' lengths."""
    d = input._data
    if dim is None:
        rows = d.reshape(-1, 1)
    else:
        if d.ndim == 0:
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        rows = _rows(d, S.dim_index(dim, d.ndim))
    n = rows.shape[0]
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = np.any(rows[1:] != rows[:-1], axis=1) if rows.shape[1] else False
    starts = np.flatnonzero(change)
    inverse = np.cumsum(change) - 1
    counts = np.diff(np.append(starts, n))
    picked = rows[starts]
    if dim is None:
        values = picked.reshape(-1)
        inverse = inverse.reshape(d.shape)
    else:
        values = _from_rows(picked, d.shape, S.dim_index(dim, d.ndim))
    return _results(input, UniqueConsecutiveBackward0, values, inverse, counts, return_inverse, return_counts)


# -- bincount, histc -----------------------------------------------------------------------------------------
@spec.op("bincount", vmap=spec.rule("bincount_rule"), nodes=(A.NotImplemented_,),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.bincount(L.tensor([0, 2, 2, 3]))
                            + a * L.bincount(L.tensor([1, 1]), a[0, :2].detach(), minlength=4)))
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each non-negative integer 0, 1, ... occurs in the vector `input` (at least `minlength` of
    them); with `weights`, the sum of the weights at each value's places instead (float64 unless the weights
    are float32)."""
    d = input._data
    if d.dtype.kind not in "iub":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_KERNEL_TYPE.get(d.dtype.name, d.dtype)}'")
    if d.ndim != 1 or (d.size and d.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if int(minlength) < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights._data.ndim != 1 or weights._data.shape[0] != d.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None or not d.size:  # (no values: PyTorch's zeros are int64, weights or not)
        return _plain(np.bincount(d.astype(_INT64), minlength=int(minlength)), _INT64)
    w = weights._data
    dtype = w.dtype if w.dtype.kind == "f" else np.dtype(np.float64)
    out = np.zeros(max(int(minlength), int(d.max()) + 1), dtype=dtype)
    np.add.at(out, d, w.astype(dtype))  # added in order, in the weights' precision, as PyTorch's kernel adds
    node = record(A.NotImplemented_, weights)
    if node is not None:
        node.op = "bincount"
    return result(out, node)


@spec.op("histc", vmap=spec.rule("per_sample_rule", "histc"),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.histc(a.detach(), bins=4)
                            + a * L.histc(a.detach(), 4, -0.5, 0.5)))
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """The histogram of `input`'s elements: `bins` equal bins from `min` to `max` (both 0: the elements' own
    least and greatest), elements outside left out; in the input's float dtype."""
    d = input._data
    if d.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_KERNEL_TYPE.get(d.dtype.name, d.dtype)}'")
    bins = int(bins)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = d.dtype.type(min), d.dtype.type(max)
    if lo == hi and d.size:
        lo, hi = d.min(), d.max()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    flat = d.reshape(-1)
    inside = flat[(flat >= lo) & (flat <= hi)]
    pos = ((inside - lo) * d.dtype.type(bins) / (hi - lo)).astype(_INT64)
    pos = np.minimum(pos, bins - 1)  # the greatest value counts in the last bin
    return _plain(np.bincount(pos, minlength=bins).astype(d.dtype))


# -- bucketize, searchsorted ---------------------------------------------------------------------------------
def _values(value: Any) -> np.ndarray:
    return value._data if isinstance(value, Tensor) else np.asarray(value)


@spec.op("bucketize", method=False, vmap=spec.rule("bucketize_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.bucketize(a.detach(), L.tensor([-0.5, 0.0, 0.5]))
                            + a * L.bucketize(a.detach(), L.tensor([-0.5, 0.5]), right=True)))
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False, right: bool = False) -> Tensor:  # noqa: A002
    """For each element of `input`, the index of the bucket of the ascending vector `boundaries` it falls in:
    the first boundary >= it (> it with `right`)."""
    b = boundaries._data
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    out = np.searchsorted(b, _values(input), side="right" if right else "left")
    return _plain(out, np.int32 if out_int32 else _INT64)


@spec.op("searchsorted", method=False, vmap=spec.rule("searchsorted_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: a * L.searchsorted(L.tensor([-0.5, 0.0, 0.5]), a.detach())
                            + a * L.searchsorted(a.detach().sort().values, a.detach(), side="right")))
def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False, right: bool = False,  # noqa: A002
                 side: str | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each value of `input` would go in `sorted_sequence` (ascending along its last dim; its leading dims
    match the input's) to keep it sorted: the first place with a value >= it (> it with `right` or
    side='right'); `sorter` sorts an unsorted sequence (the indices that would)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq, values = sorted_sequence._data, _values(input)
    if sorter is not None:
        s = sorter._data
        if s.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got "
                               f"boundary tensor {list(seq.shape)}and got sorter tensor {list(s.shape)}")
        seq = np.take_along_axis(seq, s.astype(_INT64), axis=-1)
    where = "right" if right else "left"
    dtype = np.int32 if out_int32 else _INT64
    if seq.ndim == 1:
        return _plain(np.searchsorted(seq, values, side=where), dtype)
    if values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(seq.shape)} and input value tensor {list(values.shape)}")
    rows, vals = seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1])
    out = np.empty(vals.shape, dtype=_INT64)
    for r in range(rows.shape[0]):  # one search per row of the sequence (rows, not elements)
        out[r] = np.searchsorted(rows[r], vals[r], side=where)
    return _plain(out.reshape(values.shape), dtype)
