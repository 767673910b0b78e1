"""A batched backward: the rows of a Jacobian in one reverse pass instead of one pass per row (for
`func.jacrev` and `autograd.functional.jacobian(..., vectorize=True)`).

PyTorch's `jacrev` maps its vector-Jacobian product over the one-hot cotangents (vmap): one backward pass
whose gradients all carry a leading batch dim. This walk does the same, on bare arrays, for graphs whose
every node says its formula can (`Node.batchable`, set beside each operation that was checked: elementwise
ones, arithmetic with broadcasting, sum/mean, views and transposes, matrix products). Each node runs
`apply_batched`; `sum_to` keeps the batch dim while `state.batch` is set.

It is only an acceleration: `rows` answers None whenever it cannot give exactly what the loop of
`autograd.grad` calls would (a node not marked, a hook, retain_grad or custom code anywhere in the graph,
saved values freed or changed in place, anomaly mode, a backward observer, packed saved values, a target
that is not a leaf), and the caller then runs that loop, which also raises the loop's errors. Callers
use it only when no graph is to be recorded (`create_graph`) and no forward-mode level is open.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import grad_mode, listen, provenance, temporaries
from .grad_mode import set_walk, state
from .node import STAMP, AccumulateGrad, Node
from .plan import check, reach
from .saved import is_packed
from .tensor import Tensor

# The most elements one gradient array may hold (rows × elements of the largest gradient of one row): the
# rows go through in chunks below this, so that memory stays that of a few ordinary arrays.
BUDGET = 1 << 22


def rows(o: Tensor, inside: list[Tensor], chunk_size: int | None = None,
         seeds: Any = None) -> list[np.ndarray] | None:
    """The blocks d o / d x (arrays of shape `o.shape + x.shape`, zeros where o does not depend on x) for
    each x of `inside` (leaves that require grad), by batched reverse passes; None when the graph has
    something the batched walk cannot run exactly as `autograd.grad` would. With `seeds`, `(n, make)`: the
    products with `n` cotangents instead of the one-hot ones, `make(start, stop)` giving rows start:stop (an
    array of shape `(stop - start,) + o.shape`), and blocks of shape `(n,) + x.shape` (vmap's batched
    cotangents)."""
    n = o._data.size if seeds is None else seeds[0]
    if n == 0 or not o._requires_grad:
        return None
    if (grad_mode.anomaly_seen and state.anomaly) or listen.current() is not None:
        return None
    where: dict[int, int] = {}
    for k, t in enumerate(inside):
        if t.grad_fn is not None:
            return None
        where[id(t)] = k
    root = o.grad_fn if o.grad_fn is not None else o._accumulate_node()
    deps = _graph(root, where)
    if deps is None:
        return None
    origin = STAMP.origin
    if origin is not None:
        provenance.touched.clear()
    out_shape = o._data.shape
    blocks: list[Any] = [None] * len(inside)  # made on the first row that reaches them, in its dtype
    limit = chunk_size or n
    start, step = 0, 1  # one row first: it measures the largest gradient a row makes, for the chunks
    while start < n:
        stop = min(n, start + step)
        try:
            # the seed made in the call: nothing but the walk holds it (its first node may write into it)
            found, largest = _walk(root, dict(deps), _one_hot(start, stop, o._data) if seeds is None else
                                   seeds[1](start, stop), where, len(inside))
        except (RuntimeError, ValueError):
            # any formula failing: the walk changed nothing, and the loop raises the error autograd.grad gives
            return None
        for k, g in enumerate(found):
            if g is not None:
                if g.shape != (stop - start,) + inside[k]._data.shape:
                    return None  # never expected (the marked formulas keep the batch dim): the loop decides
                if blocks[k] is None:
                    blocks[k] = np.zeros((n,) + inside[k]._data.shape, dtype=g.dtype)
                blocks[k][start:stop] = g
        step = max(1, min(limit, BUDGET // max(1, largest // (stop - start))))
        start = stop
    if origin is not None:  # a front end's record of the call, as `autograd.grad` keeps one
        provenance.ran(origin, [root], False, True, False, inside)
    # an input no gradient reached: zeros in its own dtype, as the loop's rows of zeros
    lead = out_shape if seeds is None else (n,)
    return [(np.zeros((n,) + t._data.shape, dtype=t._data.dtype) if b is None else b).reshape(lead + t._data.shape)
            for b, t in zip(blocks, inside, strict=True)]


def _one_hot(start: int, stop: int, out: np.ndarray) -> np.ndarray:
    """The one-hot cotangents of the rows `start:stop` of a Jacobian of `out`."""
    seed = np.zeros((stop - start,) + out.shape, dtype=out.dtype)
    seed.reshape(stop - start, out.size)[np.arange(stop - start), np.arange(start, stop)] = 1
    return seed


def _graph(root: Node, where: dict[int, int]) -> dict[Node, int] | None:
    """Per node below `root`, how many edges lead into it (plan.reach); None when a node cannot run batched
    or a check before the walk fails (the loop of autograd.grad calls then raises it)."""
    deps: dict[Node, int] = {root: 0}
    suspects = reach([root], deps)
    for node in deps:
        if node._extras is not None:  # a hook, a prehook or retain_grad: the loop runs them
            return None
        if type(node) is AccumulateGrad:
            leaf = node.variable
            if leaf is None or id(leaf) not in where:
                return None
        elif not node.batchable or node.num_outputs != 1 or node.user_code:
            return None
        if STAMP.packing and is_packed(node):  # its unpack hook runs once per backward: the loop runs them
            return None
    try:
        check(suspects, None)
    except RuntimeError:
        return None
    return deps


def _walk(root: Node, deps: dict[Node, int], seed: np.ndarray, where: dict[int, int],
          count: int) -> tuple[list[Any], int]:
    """One batched reverse pass from `root` with the cotangents `seed` (one row each, made for this walk: nothing
    but it holds the array, so the first node may write into it): the gradient arriving at each target leaf
    (None where none did), and the size of the largest array seen."""
    found: list[Any] = [None] * count
    buffers: dict[Node, Any] = {root: seed}
    largest = seed.size
    seed = None
    ready = [root]
    reuse = temporaries.REUSE_TEMPORARIES and _SOLE > 0
    pool: list[np.ndarray] = []
    recording, releasing, wanted, batch = state.grad_enabled, state.releasing, state.wanted, state.batch
    set_walk(False, False, None)
    state.batch = 1
    if reuse:
        state.pool = pool
    try:
        while ready:
            node = ready.pop()
            g = buffers.pop(node, None)
            if type(node) is AccumulateGrad:
                if g is not None:
                    found[where[id(node.variable)]] = g
                continue
            if g is None:
                outs = ()
            else:
                # nothing but this variable holds `g` (nor, for a view, its base), and no two of its elements
                # share memory (a broadcast's do): the node may write into it
                if reuse and sys.getrefcount(g) <= _SOLE and g.flags.writeable and (g.base is None or (
                        type(g.base) is np.ndarray and sys.getrefcount(g.base) <= _SOLE_BASE
                        and (g.flags.c_contiguous or g.flags.f_contiguous))):
                    state.spare = g
                outs = node.apply_batched(g)
                state.spare = g = None
            k = 0
            for child in node._next:
                if child is not None:
                    c = outs[k] if outs else None
                    if c is not None:
                        old = buffers.get(child)
                        if old is not None:
                            # a sum into the earlier gradient when only the buffer holds it (and it owns its
                            # memory), which keeps the arrays of a walk in the cache
                            if (reuse and sys.getrefcount(old) <= _SOLE + 1 and old.base is None
                                    and old.shape == c.shape and old.dtype == c.dtype and old.flags.writeable):
                                np.add(old, c, out=old)
                                # `c` too, when only the node's tuple held it: into the pool, for a later product
                                if (sys.getrefcount(c) <= _SOLE + 1 and c.base is None and c.flags.writeable
                                        and c.flags.c_contiguous):
                                    pool.append(c)
                                c = old
                            else:
                                s = temporaries.take(c) if old.shape == c.shape and old.dtype == c.dtype else None
                                c = old + c if s is None else np.add(old, c, out=s)
                                s = None
                        old = None
                        buffers[child] = c
                        if c.size > largest:
                            largest = c.size
                        c = None
                    left = deps[child] - 1
                    deps[child] = left
                    if left == 0:
                        ready.append(child)
                k += 1
            outs = None  # else the tuple would hold the gradients it gave, and none would ever be spare
    finally:
        set_walk(recording, releasing, wanted)
        state.batch = batch
        state.spare = state.pool = None
    return found, largest


# -- the counts of an array that nothing but the walk holds ------------------------------------------------
# Read at import, as temporaries.py reads its own: how many references `sys.getrefcount` shows, in `_walk`,
# for a gradient held by one local variable only (`_SOLE`), and for the base of a view that nothing but the
# view holds (`_SOLE_BASE`); 0 (no reuse) unless one more holder always shows as one more.


def _probe(held: bool) -> tuple[int, int]:
    """The two counts, read as `_walk` reads them: a gradient popped from a dict into a variable, and the
    base of a view so popped; with `held`, each has one more holder."""
    buffers = {0: np.zeros(4), 1: np.zeros(4).reshape(2, 2)}
    g = buffers.pop(0)
    v = buffers.pop(1)
    other = (g, v.base) if held else None  # noqa: F841 (one more holder of each)
    return sys.getrefcount(g), sys.getrefcount(v.base)


def _calibrate() -> tuple[int, int]:
    sole = {_probe(False) for _ in range(8)}
    held = {_probe(True) for _ in range(8)}
    if len(sole) != 1 or len(held) != 1:
        return 0, 0
    (s,), (h,) = sole, held
    if h != (s[0] + 1, s[1] + 1):
        return 0, 0
    return s


_SOLE, _SOLE_BASE = _calibrate()
