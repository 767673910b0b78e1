"""Differentiation with batched tensors: reverse and forward mode where vmap's levels meet autograd's.

Autograd is below vmap (batched_tensor.py): the graph is recorded on the plain tensors a batched tensor holds,
its "physical" tensor, on which each vmap level owns one dimension (`layout`). So:

- a vector-Jacobian product whose outputs and inputs are batched at the same levels is one plain backward of
  the physical tensors, the cotangents laid out as the outputs (`aligned`): the samples are independent, so
  the gradient of one sample's output reaches only that sample's input;
- a cotangent batched at a level the outputs are not (PyTorch's `vmap(lambda v: autograd.grad(y, x, v))`, a
  Jacobian's rows) is a batch of cotangents, "rows": one batched backward pass (batched.py's walk, rows of
  cotangents through a graph recorded once) when the graph allows it, else one pass per row; the gradients get
  those levels' dimensions in front;
- gradcalc.func's reverse transforms under vmap make the tensors they differentiate physical leaves batched at
  every open level (`lift`), so that each sample's gradient is its own, as torch.func's grad level gives it;
- forward mode puts a primal and its tangent in one layout (`common`) and the tangent on the physical tensor.

`grad` is `autograd.grad` for batched `grad_outputs` (differentiate.py hands the call here when vmap is open), and
`is_grads_batched=True`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import batched as batched_walk
from . import forward_ad, grad_mode
from .batched_tensor import BatchedTensor, batched, find_level, pop_level, push_level
from .engine import run_backward
from .node import FREED, release_saved
from .ops.joins import stack
from .plan import reach, roots_of, unused_error
from .tensor import Tensor

__all__ = ["aligned", "common", "grad", "layout", "lift", "rebuild", "rows", "vjp"]

Dims = dict  # level -> the physical dimension of that level's batch


# -- layouts ----------------------------------------------------------------------------------------------------
def layout(x: Any) -> tuple[Any, Dims]:
    """The physical tensor of `x` and, per level it is batched at, the dimension of that level's batch in it."""
    chain = []
    while type(x) is BatchedTensor:
        chain.append((x._level, x._bdim))
        x = x._value
    dims: Dims = {}
    if chain:
        remaining = list(range(len(x._data.shape)))
        for level, bdim in reversed(chain):
            dims[level] = remaining.pop(bdim)
    return x, dims


def rebuild(phys: Any, dims: Dims) -> Any:
    """The tensor whose `layout` is (phys, dims): batched tensors nested, the innermost level outermost."""
    if not dims:
        return phys
    remaining = list(range(len(phys._data.shape)))
    out = phys
    for level in sorted(dims):
        pd = dims[level]
        bdim = remaining.index(pd)
        remaining.remove(pd)
        out = batched(out, bdim, level)
    return out


def lift(x: Tensor, lvls: Sequence[Any]) -> tuple[Tensor, Dims]:
    """`x`'s physical tensor expanded to be batched at every level of `lvls` (the new ones in front)."""
    phys, dims = layout(x)
    missing = [lv for lv in lvls if lv.id not in dims]
    if not missing:
        return phys, dims
    k = len(missing)
    shape = tuple(lv.size for lv in missing) + tuple(phys._data.shape)
    phys = phys.expand(shape)  # (expand puts the new dims in front)
    dims = {level: d + k for level, d in dims.items()}
    dims.update({lv.id: i for i, lv in enumerate(missing)})
    return phys, dims


def aligned(ct: Tensor, ct_dims: Dims, out_shape: tuple[int, ...], out_dims: Dims, row_levels: Sequence[int]) -> Tensor:
    """Cotangent `ct` (physical, batched per `ct_dims`) laid out as an output of physical shape `out_shape`
    batched per `out_dims`: each level's batch on the output's dim (repeated where the cotangent is the same for
    every sample), the levels of `row_levels` (the cotangent's only) in front."""
    nd = len(ct._data.shape)
    batch_of = {pd: level for level, pd in ct_dims.items()}
    logical = [i for i in range(nd) if i not in batch_of]
    out_batch = {pd: level for level, pd in out_dims.items()}
    order: list[int | None] = [ct_dims[level] for level in row_levels]
    k = 0
    for i in range(len(out_shape)):
        if i in out_batch:
            order.append(ct_dims.get(out_batch[i]))
        else:
            order.append(logical[k])
            k += 1
    present = [o for o in order if o is not None]
    x = ct if present == list(range(nd)) else ct.permute(present)
    sizes = iter(x._data.shape)
    shape = tuple(next(sizes) if o is not None else 1 for o in order)
    if shape != tuple(x._data.shape):
        x = x.reshape(shape)
    target = tuple(ct._data.shape[ct_dims[level]] for level in row_levels) + tuple(out_shape)
    return x if shape == target else x.expand(target)


def _logical_shape(phys: Tensor, dims: Dims) -> tuple[int, ...]:
    batch = set(dims.values())
    return tuple(n for i, n in enumerate(phys._data.shape) if i not in batch)


# -- reverse mode -----------------------------------------------------------------------------------------------
def vjp(outputs: Sequence[Any], inputs: Sequence[Any], cotangents: Sequence[Any], retain_graph: bool = False,
        create_graph: bool = False) -> list[Any]:
    """Per input, the vector-Jacobian product of `outputs` (any of them batched) with `cotangents` (batched or
    not; None: ones, for an output of one element per sample), None where none arrived: batched as the input,
    and at the levels the cotangents are batched at and the outputs are not (rows)."""
    outs = [layout(o) for o in outputs]
    ins = [layout(x) for x in inputs]
    cts = [layout(c) if c is not None else None for c in cotangents]
    out_levels = {level for _, d in outs for level in d}
    row_levels = sorted({level for c in cts if c is not None for level in c[1]} - out_levels)
    sizes = []
    for level in row_levels:
        for c in cts:
            if c is not None and level in c[1]:
                sizes.append(c[0]._data.shape[c[1][level]])
                break
    seeds = []
    for i, ((po, do), c) in enumerate(zip(outs, cts, strict=True)):
        if c is None:
            seeds.append(_ones(po, do, i, sizes))
            continue
        pc, dc = c
        if _logical_shape(pc, dc) != _logical_shape(po, do):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of torch.Size({list(_logical_shape(pc, dc))}) "
                f"and output[{i}] has a shape of torch.Size({list(_logical_shape(po, do))}).")
        seeds.append(aligned(pc, dc, tuple(po._data.shape), do, row_levels))
    phys_outs = [po for po, _ in outs]
    phys_ins = [px for px, _ in ins]
    if not row_levels:
        found = list(engine_grad(phys_outs, phys_ins, seeds, retain_graph=retain_graph, create_graph=create_graph,
                                 allow_unused=True))
    else:
        n = math.prod(sizes)
        flat = [s.reshape((n, *s._data.shape[len(sizes):])) for s in seeds]
        found = rows(phys_outs, phys_ins, flat, retain_graph, create_graph)
        found = [None if g is None else g.reshape((*sizes, *g._data.shape[1:])) for g in found]
    shift = len(row_levels)
    result = []
    for g, (_, dx) in zip(found, ins, strict=True):
        if g is None:
            result.append(None)
            continue
        dims = {level: d + shift for level, d in dx.items()}
        dims.update({level: i for i, level in enumerate(row_levels)})
        result.append(rebuild(g, dims))
    return result


def _ones(po: Tensor, do: Dims, i: int, sizes: list[int]) -> Tensor:
    if math.prod(_logical_shape(po, do)) != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    ones = Tensor._make(np.ones(po._data.shape, dtype=po._data.dtype), False, None)
    return ones.expand((*sizes, *po._data.shape)) if sizes else ones


def rows(outputs: list[Tensor], inputs: list[Tensor], seeds: list[Tensor], retain_graph: bool,
         create_graph: bool, chunk_size: int | None = None) -> list[Any]:
    """Per input, the products with `n` rows of cotangents (`seeds[i]`: shape (n,) + output i's): a tensor of
    shape (n,) + the input's, or None where nothing arrived. One batched backward pass when the graph allows it
    (plain tensors, no graph to keep), else one `autograd.grad` per row."""
    n = seeds[0]._data.shape[0]
    if not create_graph and not any(s._requires_grad for s in seeds):
        found = _batched_rows(outputs, inputs, seeds, chunk_size, retain_graph)
        if found is not None:
            return found
    per_row: list[list[Any]] = [[] for _ in inputs]
    for r in range(n):
        keep = retain_graph or r < n - 1
        got = engine_grad(outputs, inputs, [s[r] for s in seeds], retain_graph=keep, create_graph=create_graph,
                          allow_unused=True)
        for k, g in enumerate(got):
            per_row[k].append(g)
    result = []
    for k, (gs, x) in enumerate(zip(per_row, inputs, strict=True)):
        if all(g is None for g in gs):
            result.append(None)
            continue
        full = [g if g is not None else Tensor._make(np.zeros(x._data.shape, x._data.dtype), False, None) for g in gs]
        if any(g._requires_grad or forward_ad.carries(g) for g in full):
            result.append(stack(full, 0))
        else:
            result.append(Tensor._make(np.stack([g._data for g in full]), False, None))
        per_row[k] = []
    return result


def _batched_rows(outputs: list[Tensor], inputs: list[Tensor], seeds: list[Tensor], chunk_size: int | None,
                  retain_graph: bool) -> list[Any] | None:
    """`rows` by batched.py's walk (one pass for all rows), or None when it cannot run it exactly."""
    if not all(x._requires_grad and x.grad_fn is None for x in inputs):
        return None
    n = seeds[0]._data.shape[0]
    total: list[Any] = [None] * len(inputs)
    for o, s in zip(outputs, seeds, strict=True):
        if not o._requires_grad:
            continue
        data = np.ascontiguousarray(s._data)
        found = batched_walk.rows(o, inputs, chunk_size, seeds=(n, lambda a, b, data=data: data[a:b].copy()))
        if found is None:
            return None
        total = [f if t is None else t + f for t, f in zip(total, found, strict=True)]
    if not retain_graph:  # as the loop's last pass: the graph's saved values let go
        roots = [o.grad_fn for o in outputs if o.grad_fn is not None]
        deps: dict = dict.fromkeys(roots, 0)
        reach(roots, deps)
        for node in deps:
            if node._saved and node._saved is not FREED:
                release_saved(node)
    return [None if t is None else Tensor._make(t, False, None) for t in total]


def engine_grad(outputs: list[Tensor], inputs: list[Tensor], grad_outputs: list[Any], retain_graph: bool = False,
                create_graph: bool = False, allow_unused: bool = True) -> tuple:
    """`autograd.grad` of plain tensors, by the engine itself (differentiate.py, whose `grad` is PyTorch's entry
    point, stands above this module and hands it the calls vmap's tensors make)."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    if grad_mode.forward_seen and forward_ad._pending:
        forward_ad.force_pending()
    roots = roots_of([o for o, _ in pairs], [g for _, g in pairs], "grad")
    found = run_backward(roots, retain_graph=retain_graph, create_graph=create_graph, inputs=list(inputs),
                         accumulate=False, allow_unused=allow_unused)
    return tuple(g.detach() if g is not None and not create_graph and g._requires_grad else g for g in found)


def grad(outputs: list[Any], inputs: list[Any], grad_outputs: list[Any], retain_graph: Any, create_graph: bool,
         allow_unused: bool, materialize_grads: bool, is_grads_batched: bool = False) -> tuple:
    """`autograd.grad` where a `grad_outputs` is batched (differentiate.py hands such calls here) or
    `is_grads_batched`: the outputs and inputs must be plain tensors, as PyTorch's (a batched tensor does not
    require grad at autograd's level)."""
    for i, o in enumerate(outputs):
        if type(o) is BatchedTensor:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    for x in inputs:
        if type(x) is BatchedTensor:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:  # the first dim of every grad_output: a batch of cotangents, a level of their own
        size = next(g.shape[0] for g in grad_outputs if g is not None)
        lvl = push_level(size, "error")
        try:
            found = vjp(outputs, inputs, [None if g is None else batched(g, 0, lvl.id) for g in grad_outputs],
                        retain_graph, create_graph)
        finally:
            pop_level(lvl)
        found = [None if g is None else layout(g)[0] for g in found]
    else:
        found = vjp(outputs, inputs, grad_outputs, retain_graph, create_graph)
    result = []
    for k, (g, x) in enumerate(zip(found, inputs, strict=True)):
        if g is None:
            if not allow_unused:
                raise unused_error(k, x)
            if materialize_grads:
                g = Tensor._make(np.zeros(x._data.shape, x._data.dtype), False, None)
        result.append(g)
    return tuple(result)


# -- forward mode -----------------------------------------------------------------------------------------------
def common(primal: Tensor, tangent: Tensor) -> tuple[Tensor, Tensor, Dims]:
    """A primal and its tangent (either batched, at any levels) as physical tensors of one layout (each repeated
    along the levels only the other has), and that layout."""
    lvls = [find_level(level) for level in sorted(set(layout(primal)[1]) | set(layout(tangent)[1]))]
    p, dp = lift(primal, lvls)
    t, dt = lift(tangent, lvls)
    order = sorted(dp)
    if [dp[level] for level in order] != [dt[level] for level in order]:
        t = aligned(t, dt, tuple(p._data.shape), dp, [])
    return p, t, dp
