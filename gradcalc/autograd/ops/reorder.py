"""Operations that move elements to other places: `sort`, `argsort`, `topk`, `nonzero`, `movedim`, `diag`,
`index_add`.

Their backward formulas are written with advanced indexing (`indexing.index`, `indexing.index_put_zeros`),
which is differentiable, so each can be differentiated again; their forward rules are the same movements of the
tangent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import indexing as I
from . import shape as S
from .binary import mul_scalar
from .core import needs, record, result
from .inplace import apply_inplace
from .return_types import named_tuple


# -- sort ----------------------------------------------------------------------------------------------------
def _sort_indices(node: Node) -> Tensor:
    """The indices along the sorted dim, as PyTorch saves them."""
    return Tensor._make(np.asarray(node.index[node.dim] if node.index != () else np.zeros((), np.int64)), False, None)


@spec.node(
    formula={"self": "value_selecting_reduction_backward(grad, dim, indices, self.sizes(), true)"},
    saved={"dim": SV.field("dim"), "indices": SV.Spec(_sort_indices, True),
           "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: I.index(tangents[0], node.index) if node.index != () else tangents[0],
    tangent="gather_with_keepdimed_indices(self_t, dim, indices, true)",
)
class SortBackward0(Node):
    """The gradient goes back to where each value came from."""

    __slots__ = ("in_shape", "index", "dim")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if type(g) is Tensor:
            return (I.index_put_zeros(g, self.index, self.in_shape),)
        return (I._scatter_add(g, self.index, self.in_shape),)


_SORT = named_tuple("sort", ("values", "indices"))


def _full_index(shape: tuple[int, ...], d: int, idx: np.ndarray) -> tuple[np.ndarray, ...]:
    """The advanced index that picks, along dimension `d`, the positions `idx` (of `shape`)."""
    grids = list(np.indices(shape, sparse=True))
    grids[d] = idx
    return tuple(grids)


@spec.op("sort", vmap=spec.rule("sort_rule"), nodes=(SortBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.sort(a, 1)[0] + a.sort(0, descending=True).values, spec.DISTINCT))
def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """The values of `x` sorted along `dim` and the indices they came from (`(values, indices)`, as
    `torch.return_types.sort`). NaN sorts as the largest value, as in PyTorch."""
    d = x._data
    if d.ndim == 0:
        node = record(SortBackward0, x)
        if node is not None:
            node.in_shape, node.index, node.dim = (), (), 0
        return _SORT((result(d.copy(), node), Tensor._make(np.zeros((), np.int64), False, None)))
    axis = S.dim_index(dim, d.ndim)
    idx = _order(d, axis, descending)
    index = _full_index(d.shape, axis, idx)
    node = record(SortBackward0, x)
    if node is not None:
        node.in_shape, node.index, node.dim = d.shape, index, axis
    return _SORT((result(d[index], node), Tensor._make(idx.astype(np.int64), False, None)))


def _order(d: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable order along `axis` that sorts `d` (NaN as the largest value, as in PyTorch)."""
    key = d
    if descending:
        key = -d.astype(np.float64) if d.dtype.kind != "f" else -d
        if d.dtype.kind == "f":
            key = np.where(np.isnan(d), -np.inf, key)  # NaN first when descending
    elif d.dtype.kind == "b":
        key = d.astype(np.int8)
    return np.argsort(key, axis=axis, kind="stable")


@spec.op("argsort", vmap=spec.rule("argsort_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: (a * L.argsort(a, 1) + a.argsort(0, descending=True)).sin(),
                            spec.DISTINCT))
def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:  # noqa: A002
    """The indices that sort `input` along `dim` (`sort`'s indices; equal values keep their order). An integer
    result: no gradient."""
    d = input._data
    if d.ndim == 0:
        return Tensor._make(np.zeros((), np.int64), False, None)
    return Tensor._make(_order(d, S.dim_index(dim, d.ndim), descending).astype(np.int64), False, None)


# -- topk ----------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), true)"},
    saved={"dim": SV.field("given", lambda d: int(d) % 2**64), "indices": SV.Spec(_sort_indices, True),
           "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: I.index(tangents[0], node.index) if node.index != () else tangents[0],
    tangent="gather(self_t, dim, indices)",
)
class TopkBackward0(Node):
    """The gradient goes back to where each of the k values came from."""

    __slots__ = ("in_shape", "index", "dim", "given")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if self.index == ():
            return (g,)
        if type(g) is Tensor:
            return (I.index_put_zeros(g, self.index, self.in_shape),)
        return (I._scatter_add(g, self.index, self.in_shape),)


_TOPK = named_tuple("topk", ("values", "indices"))


@spec.op("topk", vmap=spec.rule("topk_rule"), nodes=(TopkBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.topk(a, 2)[0].exp() + a.topk(2, 0, largest=False).values.sum(),
                            spec.DISTINCT))
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
    """The `k` largest values of `input` along `dim` (the smallest with `largest=False`) and their indices, as
    `(values, indices)` (`torch.return_types.topk`), largest first (smallest first); NaN counts as the largest.
    The values come sorted whatever `sorted` says (PyTorch leaves their order open then)."""
    d = input._data
    k = int(k)
    n = d.shape[S.dim_index(dim, d.ndim)] if d.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    node = record(TopkBackward0, input)
    if d.ndim == 0:
        if node is not None:
            node.in_shape, node.index, node.dim, node.given = (), (), 0, int(dim)
        # (PyTorch gives the 0-d value for k = 0 too)
        return _TOPK((result(d.copy(), node), Tensor._make(np.zeros((), np.int64), False, None)))
    axis = S.dim_index(dim, d.ndim)
    idx = np.take(_order(d, axis, largest), np.arange(k), axis=axis)
    index = _full_index(idx.shape, axis, idx)
    if node is not None:
        node.in_shape, node.index, node.dim, node.given = d.shape, index, axis, int(dim)
    return _TOPK((result(d[index], node), Tensor._make(idx.astype(np.int64), False, None)))


# -- nonzero -------------------------------------------------------------------------------------------------
@spec.op("nonzero", vmap=spec.rule("nonzero_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: a[L.nonzero(a > 0, as_tuple=True)].sum()
                            + (a * (a > 0).nonzero().sum()).sum()))
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the elements that are not zero: a tensor with one row per element and one column per
    dimension, or with `as_tuple=True` a tuple of one index vector per dimension. Integer results: no gradient."""
    d = input._data
    if as_tuple:
        found = np.nonzero(d.reshape(1) if d.ndim == 0 else d)
        return tuple(Tensor._make(i.astype(np.int64), False, None) for i in found)
    if d.ndim == 0:
        return Tensor._make(np.zeros((int(d != 0), 0), np.int64), False, None)
    return Tensor._make(np.argwhere(d).astype(np.int64), False, None)


# -- movedim -------------------------------------------------------------------------------------------------
@spec.op("movedim", aliases=("moveaxis",), vmap=spec.rule("movedim_rule"),
         sample=spec.Sample(((2, 3, 4),), lambda L, a: L.movedim(a, 0, 2) + L.moveaxis(a, (0, 1), (1, 2)).permute(
             2, 0, 1)))
def movedim(x: Tensor, source: Any, destination: Any) -> Tensor:
    """`x` with dimensions `source` (an int or a tuple) moved to positions `destination`; the others keep
    their order (a view, recorded as PyTorch's permute)."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: source has {len(src)} dimensions but destination has {len(dst)}; "
                           "they must name as many")
    n = x._data.ndim
    src = tuple(S.dim_index(s, n) for s in src)
    dst = tuple(S.dim_index(s, n) for s in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: a dimension is repeated in source or destination")
    order = [i for i in range(n) if i not in src]
    perm = [0] * n
    for s, t in zip(src, dst, strict=True):
        perm[t] = s
    rest = iter(order)
    for i in range(n):
        if i not in dst:
            perm[i] = next(rest)
    return S.permute(x, perm)


# -- diag ----------------------------------------------------------------------------------------------------
def _diagonal_index(rows: int, cols: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) positions of diagonal `k` of a rows × cols matrix."""
    start_r, start_c = (0, k) if k >= 0 else (-k, 0)
    n = max(0, min(rows - start_r, cols - start_c))
    r = np.arange(n)
    return r + start_r, r + start_c


# PyTorch's diag_embed keeps its dims as C++ int64 read back unsigned: -2 and -1 show as 2**64 - 2 and - 1
@spec.node(
    formula={"self": "grad.diagonal(offset, dim1, dim2)"},
    saved={"dim1": SV.const(2**64 - 2), "dim2": SV.const(2**64 - 1), "offset": SV.field("offset", lambda k: k % 2**64)},
    jvp=lambda node, inputs, out, tangents: I.index_put_zeros(tangents[0], node.index, out._data.shape),
    tangent="self_t.diag_embed(offset, dim1, dim2)",
)
class DiagEmbedBackward0(Node):
    """diag of a vector: the gradient is the diagonal of the incoming one."""

    __slots__ = ("index", "offset")

    def apply(self, g: Tensor) -> tuple:
        return (I.index(g, self.index),)


@spec.node(
    formula={"self": "diagonal_backward(grad, self.sizes(), offset, dim1, dim2)"},
    saved={"dim1": SV.const(0), "dim2": SV.const(1), "offset": SV.field("offset", lambda k: k % 2**64),
           "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: I.index(tangents[0], node.index),
    tangent="self_t.diagonal(offset, dim1, dim2)",
)
class DiagonalBackward0_copy(Node):  # noqa: N801 - PyTorch's name (its diag of a matrix is diagonal_copy)
    """diag of a matrix: the gradient goes back onto the diagonal."""

    __slots__ = ("in_shape", "index", "offset")

    def apply(self, g: Tensor) -> tuple:
        return (I.index_put_zeros(g, self.index, self.in_shape),)


@spec.op("diag", vmap=spec.rule("diag_rule"), nodes=(DiagEmbedBackward0, DiagonalBackward0_copy),
         sample=spec.Sample(((3,),), lambda L, a: L.diag(a, 1)[:3, 1:] + L.diag(L.diag(a))
                            + L.diag(L.outer(a, a), -1)[0]))
def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's square matrix with the vector on diagonal `diagonal`, or a matrix's diagonal `diagonal`
    as a vector (above the main one for positive, below for negative)."""
    d, k = x._data, int(diagonal)
    if d.ndim == 1:
        n = d.shape[0] + abs(k)
        index = _diagonal_index(n, n, k)
        out = np.zeros((n, n), dtype=d.dtype)
        out[index] = d
        node = record(DiagEmbedBackward0, x)
        if node is not None:
            node.index, node.offset = index, k
        return result(out, node)
    if d.ndim != 2:
        raise RuntimeError(f"diag: the input must be a vector or a matrix, not a tensor of {d.ndim} dimensions")
    index = _diagonal_index(d.shape[0], d.shape[1], k)
    node = record(DiagonalBackward0_copy, x)
    if node is not None:
        node.in_shape, node.index, node.offset = d.shape, index, k
    return result(d[index].copy(), node)


# -- index_add -----------------------------------------------------------------------------------------------
def _index_add_index(node: Node) -> Tensor | None:
    if node._next[1] is None:
        return None
    return Tensor._make(np.asarray(node.picker[-1]), False, None)


def _index_add_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    tx, ts = tangents
    added = None
    if ts is not None:
        added = I.index_put_zeros(ts * node.alpha if node.alpha != 1 else ts, node.picker, out._data.shape)
    return added if tx is None else (tx if added is None else tx + added)


@spec.node(
    formula={"self": "grad", "source": "maybe_multiply(grad.index_select(dim, index), alpha)"},
    # PyTorch saves the index and source for source's gradient only (None when source needs none)
    saved={"alpha": SV.field("alpha"), "dim": SV.field("dim"), "index": SV.Spec(_index_add_index, True),
           "source": SV.tensor(0), "source_dim": SV.field("source_dim")},
    jvp=_index_add_jvp, tangent="self_t.index_add(dim, index, source_t, alpha)",
)
class IndexAddBackward0(Node):
    """x + source added at `index` along `dim`: x gets the gradient, source the rows it was added to."""

    __slots__ = ("picker", "alpha", "dim", "source_dim")

    def apply(self, g: Tensor) -> tuple:
        gx = g if needs(self, 0) else None
        gs = None
        if needs(self, 1):
            # a 0-d input's gradient is the one row of the source (of one element)
            gs = I.index(g, self.picker) if g._data.ndim else S.reshape(g, (1,) * self.source_dim)
            if self.alpha != 1:
                gs = mul_scalar(gs, self.alpha)
        return (gx, gs)


@spec.op("index_add", vmap=spec.rule("index_add_rule"), nodes=(IndexAddBackward0,),
         sample=spec.Sample(((3, 2), (2, 2)), lambda L, a, s: L.index_add(a, 0, L.tensor([2, 2]), s, alpha=0.5)
                            + (a * 1.0).index_add_(0, L.tensor([0, 2]), s)))
def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """`x` with `alpha * source` added at the positions `index` (a 1-D integer tensor) along `dim`;
    repeated positions add up."""
    d = S.dim_index(dim, max(x._data.ndim, 1))
    idx = np.asarray(index._data if isinstance(index, Tensor) else index)
    if idx.ndim > 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise RuntimeError("index_add: index must be a 1-D tensor of integers")
    idx = idx.reshape(-1).astype(np.int64)
    src = source._data if isinstance(source, Tensor) else np.asarray(source)
    n = x._data.shape[d] if x._data.ndim else 1
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index_add: an index is out of range for dimension {d} of size {n}")
    expected = x._data.shape[:d] + (idx.size,) + x._data.shape[d + 1:] if x._data.ndim else (idx.size,)
    if src.shape != expected and not (x._data.ndim == 0 and src.size == idx.size):
        raise RuntimeError(f"index_add: source has shape {tuple(src.shape)}, but it must have shape "
                           f"{tuple(expected)} (the input's, with {idx.size} along dimension {d})")
    picker = (slice(None),) * d + (idx,)
    out = x._data.copy()
    np.add.at(out, picker if x._data.ndim else (), src * alpha if alpha != 1 else src)
    node = record(IndexAddBackward0, x, source)
    if node is not None:
        node.picker, node.alpha, node.dim, node.source_dim = picker, alpha, d, src.ndim
        if node._next[1] is not None:
            node.save(source)
    return result(out, node)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:
    """In-place `index_add`: adds `alpha * source` into this tensor at `index` along `dim`."""
    return apply_inplace(self, lambda t: index_add(t, dim, index, source, alpha=alpha), "index_add_", source)


# index_add_ keeps the tensor's dtype whatever the source's (not the specs' checked in-place form)
METHODS = {"index_add_": index_add_}
