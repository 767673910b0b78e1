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
from .batching import batch_size, front, materialize, ndim, pad, sample_dim
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
