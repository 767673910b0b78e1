"""The batching rules of the operations that move elements by an index or along a dimension (ops/scatter.py,
ops/rearrange.py, ops/cumulative.py): `rule(args, dims, **params) -> (result, dim)` as batching.py describes,
named by their specs (`vmap=spec.rule("gather_rule")`); batching_ops.py's `_Rules` finds them here.

Most put the batch dimension first and shift the sample's dims by one. A rule raises `NoRule` (vmap then runs
the operation once per sample) where the batched call would mean something else: a 0-d sample, whose
dimension 0 is no dimension of the batch, or a batched index where the operation takes one index for all.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .batched_tensor import shape_of
from .batching import batch_size, dims_arg, front, materialize, ndim, pad, sample_dim
from .dispatch import NoRule, bind, to_front
from .tensor import Tensor


def gather_rule(args: tuple, dims: tuple, *, sparse_grad: bool = False) -> tuple[Any, Any]:
    """gather of a batch: input and index both with the batch dim first (one shared by all, expanded)."""
    (x, dim, index), (dx, _, di) = args, dims
    size = batch_size(args, dims)
    x, i = materialize(x, dx, size), materialize(index, di, size)
    rank = ndim(x) - 1
    if rank == 0 or ndim(i) - 1 != rank:
        raise NoRule
    return bind("gather", x, sample_dim(dim, rank), i), 0


def scatter_rule(name: str) -> Any:
    """scatter or scatter_add of a batch: input, index and src with the batch dim first."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        x, dim, index, *rest = args
        dx, _, di, *drest = dims
        size = batch_size(args, dims)
        x, i = materialize(x, dx, size), materialize(index, di, size)
        rank = ndim(x) - 1
        if rank == 0 or ndim(i) - 1 != rank:
            raise NoRule
        if rest and drest[0] is not None or (rest and hasattr(rest[0], "shape") and ndim(rest[0]) == rank):
            rest = [materialize(rest[0], drest[0], size)]
        elif rest and hasattr(rest[0], "shape") and ndim(rest[0]) != 0:
            raise NoRule
        return bind(name, x, sample_dim(dim, rank), i, *rest, **params), 0

    return rule


def index_select_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """index_select of a batch by one index: the same selection one dimension further."""
    (x, dim, index), (dx, _, di) = args, dims
    if di is not None:
        raise NoRule
    x, rank = front(x, dx)
    if rank == 0:
        raise NoRule
    return bind("index_select", x, sample_dim(dim, rank), index), 0


def masked_fill_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """masked_fill of a batch: input and mask lined up as an elementwise operation's operands."""
    (x, mask, value), (dx, dm, dv) = args, dims
    rank = max(ndim(x) - (dx is not None), ndim(mask) - (dm is not None))
    if dx is not None:
        x = pad(front(x, dx)[0], rank)
    if dm is not None:
        mask = pad(front(mask, dm)[0], rank)
    if dv is None:
        return bind("masked_fill", x, mask, value), 0
    # a 0-d value per sample: each sample's where the mask holds, the input elsewhere
    value = bind("reshape", to_front(value, dv), (shape_of(value)[dv],) + (1,) * rank)
    if dx is None and dm is None:
        mask = bind("unsqueeze", mask, 0)
    return bind("where", mask, value, x), 0


def take_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """take of a batch: each sample's elements, flattened, gathered at the (wrapped) positions."""
    (x, index), (dx, di) = args, dims
    size = batch_size(args, dims)
    x = materialize(x, dx, size)
    n = 1
    for s in shape_of(x)[1:]:
        n *= s
    if di is None:
        i = Tensor._make(np.asarray(index._data) % max(n, 1), False, None)  # the same positions for every sample
        shape = tuple(i._data.shape)
        i = bind("expand", bind("reshape", i, (1, -1)), (size, i._data.size))
    else:
        i = bind("remainder", to_front(index, di), max(n, 1))
        shape = tuple(shape_of(i)[1:])
        i = bind("reshape", i, (size, -1))
    out = bind("gather", bind("reshape", x, (size, n)), 1, i)
    return bind("reshape", out, (size, *shape)), 0


def dims_rule(name: str) -> Any:
    """An operation of one tensor and its `dims` (flip): the same on the batch, the dims shifted by one."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        x, rank = front(x, d)
        if rank == 0:
            raise NoRule
        given = rest[0] if rest else params.pop("dims")
        return bind(name, x, dims_arg(given if not isinstance(given, int) else (given,), rank)), 0

    return rule


def roll_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """roll of a batch: along the sample's dims shifted by one; without dims, each sample's flattened elements."""
    (x, shifts, *rest), (d, *_) = args, dims
    on = rest[0] if rest else params.get("dims")
    x, rank = front(x, d)
    if on is None:
        size = shape_of(x)[0]
        flat = bind("roll", bind("reshape", x, (size, -1)), shifts, 1)
        return bind("reshape", flat, shape_of(x)), 0
    if rank == 0:
        raise NoRule
    return bind("roll", x, shifts, dims_arg(on if not isinstance(on, int) else (on,), rank)), 0


def matrix_rule(name: str) -> Any:
    """An operation on the last two dims (tril, triu): the same on the batch, its other params as given."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        x, rank = front(x, d)
        if rank < 2:
            raise NoRule  # each sample's own error
        return bind(name, x, *rest, **params), 0

    return rule


def cumulative_rule(name: str) -> Any:
    """cumsum, cumprod, logcumsumexp, cummax, cummin of a batch: along the sample's dim shifted by one (cummax's
    and cummin's (values, indices) both batched first)."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        (x, dim), (d, _) = args, dims
        x, rank = front(x, d)
        if rank == 0:
            raise NoRule
        out = bind(name, x, sample_dim(dim, rank), **params)
        return out, ((0, 0) if isinstance(out, tuple) else 0)

    return rule


def flip_side_rule(name: str, axis: int, least: int) -> Any:
    """fliplr (dim 1 of a sample of at least 2 dims), flipud (dim 0 of one of at least 1): a flip of the batch."""

    def rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
        x, rank = front(args[0], dims[0])
        if rank < least:
            raise NoRule  # each sample's own error
        return bind("flip", x, (axis + 1,)), 0

    return rule


def broadcast_to_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """broadcast_to of a batch: the samples padded to the target's rank, expanded after the batch dim."""
    (x, size), (d, _) = args, dims
    x, rank = front(x, d)
    target = tuple(int(s) for s in size)
    if len(target) < rank:
        raise NoRule
    return bind("expand", pad(x, len(target)), (shape_of(x)[0], *target)), 0


def _at_least(x: Any, rank: int, want: int) -> Any:
    """A batch (batch dim first) of samples of `rank` dims as samples of at least `want` (atleast_1d/2d)."""
    if rank >= want:
        return x
    size = shape_of(x)[0]
    if want == 1 or rank == 0:
        return bind("reshape", x, (size,) + (1,) * want)
    return bind("unsqueeze", x, 1)


def hvstack_rule(name: str) -> Any:
    """hstack, vstack of a list of tensors (each batched or not): each made a batch of at least 1 (2) dims, then
    joined one dim further."""
    want = 1 if name == "hstack" else 2

    def rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
        (tensors,), (tdims,) = args, dims
        size = batch_size(args, dims)
        items = []
        for t, d in zip(tensors, tdims or (None,) * len(tensors), strict=True):
            rank = ndim(t) - (d is not None)
            items.append(_at_least(materialize(t, d, size), rank, want))
        on = 1 if want == 2 or ndim(items[0]) == 2 else 2
        return bind("cat", items, on), 0

    return rule


def meshgrid_rule(args: tuple, dims: tuple, *, indexing: str | None = None) -> tuple[Any, Any]:
    """meshgrid of batched vectors: each grid made for the whole batch, the batch dim first."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args, dims = tuple(args[0]), tuple(dims[0])
    size = batch_size(args, dims)
    rows = [bind("reshape", materialize(t, d, size), (size, -1)) for t, d in zip(args, dims, strict=True)]
    order = list(range(len(rows)))
    if indexing == "xy" and len(rows) >= 2:
        order[0], order[1] = 1, 0
    sizes = [0] * len(rows)
    for r, at in zip(rows, order, strict=True):
        sizes[at] = shape_of(r)[1]
    out = []
    for r, at in zip(rows, order, strict=True):
        shape = [1] * len(rows)
        shape[at] = -1
        out.append(bind("expand", bind("reshape", r, (size, *shape)), (size, *sizes)))
    return tuple(out), (0,) * len(out)


def repeat_rule(name: str) -> Any:
    """repeat, tile of a batch: the batch dim repeated once, each sample's dims as asked."""

    def rule(args: tuple, dims: tuple, *rest: Any) -> tuple[Any, Any]:
        (x, *sizes), (d, *_) = args, dims
        x, rank = front(x, d)
        given = sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
        reps = tuple(int(s) for s in (given if not isinstance(given, int) else (given,)))
        if name == "tile":
            reps = (1,) * (rank - len(reps)) + reps
        if len(reps) < rank:
            raise NoRule  # each sample's own error
        size = shape_of(x)[0]
        x = bind("reshape", x, (size,) + (1,) * (len(reps) - rank) + tuple(shape_of(x)[1:]))
        return bind("repeat", x, (1, *reps)), 0

    return rule


def repeat_interleave_rule(args: tuple, dims: tuple, dim: Any = None, **params: Any) -> tuple[Any, Any]:
    """repeat_interleave of a batch by counts the same for all: along the sample's dim shifted by one, or along
    each sample's flattened elements."""
    x, *rest = args
    d, *drest = dims
    if not rest or any(e is not None for e in drest) or d is None:
        raise NoRule
    if len(rest) > 1:
        dim = rest[1]
    x, rank = front(x, d)
    size = shape_of(x)[0]
    if dim is None:
        x, rank, dim = bind("reshape", x, (size, -1)), 1, 0
    if rank == 0:
        x, rank = bind("reshape", x, (size, 1)), 1
    return bind("repeat_interleave", x, rest[0], sample_dim(dim, rank), **params), 0


def trace_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """trace of a batch of matrices: each one's diagonal summed."""
    x, rank = front(args[0], dims[0])
    if rank != 2:
        raise NoRule  # each sample's own error
    return bind("sum", bind("diagonal", x, 0, 1, 2), -1), 0


def diff_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """diff of a batch: along the sample's dim shifted by one, prepend and append made batches too."""
    names = ("input", "n", "dim", "prepend", "append")
    given = dict(zip(names, args, strict=False))
    at = dict(zip(names, dims, strict=False))
    given.update(params)
    size = batch_size(args, dims)
    x = materialize(given["input"], at.get("input"), size)
    rank = ndim(x) - 1
    if rank == 0:
        raise NoRule  # each sample's own error
    extra = {k: materialize(given[k], at.get(k), size) for k in ("prepend", "append") if given.get(k) is not None}
    return bind("diff", x, given.get("n", 1), sample_dim(given.get("dim", -1), rank), **extra), 0


def argsort_rule(args: tuple, dims: tuple, dim: int = -1, descending: bool = False,
                 stable: bool = False) -> tuple[Any, Any]:
    """argsort of a batch: along the sample's dim shifted by one."""
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    descending = rest[1] if len(rest) > 1 else descending
    x, rank = front(x, d)
    if rank == 0:
        raise NoRule
    return bind("argsort", x, sample_dim(dim, rank), descending), 0


def topk_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """topk of a batch: along the sample's dim shifted by one."""
    (x, k, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else params.pop("dim", -1)
    x, rank = front(x, d)
    if rank == 0:
        raise NoRule
    return bind("topk", x, k, sample_dim(dim, rank), *rest[1:], **params), (0, 0)


def nonzero_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """PyTorch's error: how many indices each sample has differs, which no batch can hold."""
    raise RuntimeError("vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap "
                       "over aten::nonzero. Please file an issue at https://github.com/pytorch/pytorch/issues if you "
                       "need this feature.")


# -- ops/selection.py, ops/scatter_reduce.py -----------------------------------------------------------------
MASKED_SELECT_MASK = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this "
                      "because for each batch this would return a differently shaped Tensor. Please file an issue at "
                      "https://github.com/pytorch/pytorch/issues if you need this feature.")


def masked_select_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """masked_select of a batch by one mask: each sample's selected elements, the same positions in every
    sample (a mask per sample would give samples of different lengths: PyTorch's error)."""
    (x, mask), (dx, dm) = args, dims
    if dm is not None:
        raise RuntimeError(MASKED_SELECT_MASK)
    x, rank = front(x, dx)
    sample = tuple(shape_of(x)[1:])
    shape = np.broadcast_shapes(sample, mask._data.shape)
    positions = np.flatnonzero(np.broadcast_to(mask._data, shape))
    size = shape_of(x)[0]
    x = bind("reshape", bind("expand", pad(x, len(shape)), (size, *shape)), (size, -1))
    return bind("index_select", x, 1, Tensor._make(positions, False, None)), 0


def take_along_dim_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    """take_along_dim of a batch: input and indices with the batch dim first, the dim shifted by one; without
    a dim, each sample flattened."""
    (x, indices, *rest), (dx, di, *_) = args, dims
    if rest:
        dim = rest[0]
    size = batch_size(args, dims)
    x, i = materialize(x, dx, size), materialize(indices, di, size)
    if dim is None:
        return bind("take_along_dim", bind("reshape", x, (size, -1)), bind("reshape", i, (size, -1)), 1), 0
    rank = ndim(x) - 1
    if rank == 0 or ndim(i) - 1 != rank:
        raise NoRule
    return bind("take_along_dim", x, i, sample_dim(dim, rank)), 0


def index_put_rule(args: tuple, dims: tuple, accumulate: bool = False) -> tuple[Any, Any]:
    """index_put of a batch by one index: the batch dim moved last, where the index (of the leading dims) does
    not reach it, and the values' batch dim with it; a batched index runs per sample."""
    (x, indices, values, *rest), (dx, di, dv, *_) = args, dims
    if rest:
        accumulate = rest[0]
    if any(d is not None for d in (di if isinstance(di, tuple) else (di,))):
        raise NoRule
    size = batch_size(args, dims)
    x = bind("movedim", materialize(x, dx, size), 0, -1)
    target = np.empty(tuple(shape_of(x)[:-1]), dtype=np.bool_)[tuple(np.asarray(i._data) for i in indices)].shape
    if dv is not None:
        values = to_front(values, dv)
        if ndim(values) - 1 > len(target):
            raise NoRule
        values = bind("movedim", pad(values, len(target)), 0, -1)
    else:
        values = bind("unsqueeze", values, -1)
    return bind("index_put", x, tuple(indices), values, accumulate), ndim(x) - 1


def put_rule(args: tuple, dims: tuple, accumulate: bool = False) -> tuple[Any, Any]:
    """put of a batch: each sample's elements, flattened, written (or added) at the (wrapped) positions."""
    (x, index, source, *rest), (dx, di, ds, *_) = args, dims
    if rest:
        accumulate = rest[0]
    size = batch_size(args, dims)
    x = materialize(x, dx, size)
    shape = tuple(shape_of(x)[1:])
    n = int(np.prod(shape, dtype=np.int64))
    if di is None:
        i = Tensor._make(np.asarray(index._data).reshape(1, -1) % max(n, 1), False, None)
        i = bind("expand", i, (size, i._data.size))
    else:
        i = bind("reshape", bind("remainder", to_front(index, di), max(n, 1)), (size, -1))
    s = bind("reshape", materialize(source, ds, size), (size, -1))
    out = bind("scatter_add" if accumulate else "scatter", bind("reshape", x, (size, n)), 1, i, s)
    return bind("reshape", out, (size, *shape)), 0


def scatter_reduce_rule(args: tuple, dims: tuple, reduce: Any = None, include_self: bool = True) -> tuple[Any, Any]:
    """scatter_reduce of a batch: input, index and src with the batch dim first, the dim shifted by one."""
    (x, dim, index, src, *rest), (dx, _, di, ds, *_) = args, dims
    if rest:
        reduce = rest[0]
    size = batch_size(args, dims)
    x, i, s = materialize(x, dx, size), materialize(index, di, size), materialize(src, ds, size)
    rank = ndim(x) - 1
    if rank == 0 or ndim(i) - 1 != rank or ndim(s) - 1 != rank:
        raise NoRule
    return bind("scatter_reduce", x, sample_dim(dim, rank), i, s, reduce, include_self=include_self), 0


# -- ops/blocks.py, ops/integrals.py -------------------------------------------------------------------------
def unflatten_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """unflatten of a batch: the sample's dim, shifted by one, split alike."""
    (x, *rest), (d, *_) = args, dims
    dim, sizes = (rest + [params.get("dim"), params.get("sizes")][len(rest):])[:2]
    x, rank = front(x, d)
    return bind("unflatten", x, sample_dim(dim, rank), sizes), 0


def rot90_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """rot90 of a batch: the same turns in the sample's plane, its dims shifted by one."""
    (x, *rest), (d, *_) = args, dims
    k, on = (rest + [params.get("k", 1), params.get("dims", (0, 1))][len(rest):])[:2]
    x, rank = front(x, d)
    if rank < 2:
        raise NoRule
    return bind("rot90", x, k, dims_arg(tuple(on), rank)), 0


def integral_rule(name: str) -> Any:
    """trapezoid, trapz or cumulative_trapezoid of a batch of samples `y` spaced by a number: along the sample's
    dim shifted by one (sample points `x` run per sample)."""

    def rule(args: tuple, dims: tuple, dx: Any = None, dim: int = -1) -> tuple[Any, Any]:
        (y, *rest), (d, *_) = args, dims
        if rest and rest[0] is not None or d is None:  # sample points: per sample
            return per_sample_rule(name)(args, dims, dx=dx, dim=dim)
        y, rank = front(y, d)
        if rank == 0:
            raise NoRule
        return bind(name, y, dx=dx, dim=sample_dim(dim, rank)), 0

    return rule


def vander_rule(args: tuple, dims: tuple, N: Any = None, increasing: bool = False) -> tuple[Any, Any]:  # noqa: N803
    """vander of a batch of vectors: the powers as vander makes them, one matrix per sample."""
    (x, *rest), (d, *_) = args, dims
    if rest:
        N = rest[0]  # noqa: N806
        increasing = rest[1] if len(rest) > 1 else increasing
    x, rank = front(x, d)
    if rank != 1:
        raise NoRule
    size, rows = shape_of(x)[0], shape_of(x)[1]
    N = rows if N is None else N  # noqa: N806 - (each sample's default: its own length)
    out = bind("reshape", bind("vander", bind("reshape", x, (-1,)), N, increasing), (size, rows, N))
    return out, 0


# -- ops/counting.py -----------------------------------------------------------------------------------------
def dynamic_shape_rule(aten: str) -> Any:
    """unique and unique_consecutive: each sample's result has its own length, which PyTorch's vmap refuses."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        raise RuntimeError(f"vmap: We do not support batching operators that can output dynamic shape. Attempted to "
                           f"vmap over aten::{aten}. Please file an issue at https://github.com/pytorch/pytorch/issues "
                           "if you need this feature.")

    return rule


def bincount_rule(args: tuple, dims: tuple, weights: Any = None, minlength: int = 0) -> tuple[Any, Any]:
    """bincount of a batch of vectors: as many bins for every sample as the batch needs (PyTorch's vmap), each
    sample's values counted in its own block of one bincount."""
    (x, *rest), (d, *drest) = args, dims
    dw = None
    if rest:
        weights, dw = rest[0], drest[0]
        minlength = rest[1] if len(rest) > 1 else minlength
    if d is None:  # the weights batched: one length for all, sample by sample
        return per_sample_rule("bincount")(args, dims, **({} if rest else {"weights": weights}),
                                           **({} if len(rest) > 1 else {"minlength": minlength}))
    x = to_front(x, d)
    if type(x) is not Tensor or x._data.ndim != 2:  # a batch of an outer level, or not vectors: one at a time
        raise NoRule
    data = x._data
    size = data.shape[0]
    if data.size and data.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    bins = max(int(minlength), int(data.max()) + 1 if data.size else 0)
    offsets = (np.arange(size, dtype=np.int64) * bins)[:, None]
    flat = Tensor._make((data.astype(np.int64) + offsets).reshape(-1), False, None)
    if weights is not None:
        weights = bind("reshape", materialize(weights, dw, size), (-1,))
    out = bind("bincount", flat, weights, size * bins)
    return bind("reshape", out, (size, bins)), 0


def bucketize_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """bucketize of a batch by one set of boundaries: elementwise, the batch dim where it was."""
    (x, boundaries), (dx, db) = args, dims
    if db is not None:
        raise NoRule
    return bind("bucketize", x, boundaries, **params), dx


def searchsorted_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """searchsorted of a batch of values in one vector: elementwise, the batch dim where it was."""
    (seq, values), (ds, dv) = args, dims
    if ds is not None or ndim(seq) != 1 or params.get("sorter") is not None:
        return per_sample_rule("searchsorted")(args, dims, **params)
    return bind("searchsorted", seq, values, **params), dv


def per_sample_rule(name: str) -> Any:
    """An operation whose batched form is no other operation (block_diag, cartesian_prod, histc, trapezoid at
    sample points, searchsorted in batched sequences): the operation on each sample (selected at its batch dim),
    the results stacked, at any level and differentiably; PyTorch has rules, or a loop, for these."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        size = batch_size(args, dims)

        def sample(a: Any, d: Any, i: int) -> Any:
            if d is None:
                return a
            if isinstance(d, tuple):
                return type(a)(sample(x, dd, i) for x, dd in zip(a, d, strict=True))
            return bind("select", a, d, i)

        outs = [bind(name, *[sample(a, d, i) for a, d in zip(args, dims, strict=True)], **params)
                for i in range(size)]
        if isinstance(outs[0], (tuple, list)):
            return tuple(bind("stack", list(col)) for col in zip(*outs, strict=True)), (0,) * len(outs[0])
        return bind("stack", outs), 0

    return rule
