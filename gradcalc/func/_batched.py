"""The differentiation transforms inside vmap: what _transforms.py does differently while a vmap level is open
in this thread (autograd/batched_ad.py has the mechanics).

torch.func's grad level sits above vmap's: a gradient inside `vmap(grad(f))` is each sample's own, also with
respect to a tensor that is the same for every sample (the parameters, in the per-sample-gradients recipe). Here
autograd is below vmap, so the transforms make each tensor they differentiate a leaf batched at every open level
(`fresh`: one that is the same for every sample is repeated, as a view), run the function on it, and
differentiate the physical tensors: one plain backward per vector-Jacobian product, the rows of a Jacobian in
one batched pass. Forward mode puts each tangent beside its primal on the physical tensor.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import batched_ad, forward_ad
from ..autograd.batched_tensor import BatchedTensor, levels
from ..autograd.tensor import Tensor, version_of

__all__ = ["active", "fresh", "jacobian_rows", "physical", "vjp", "zeros_like"]


def active() -> bool:
    """Whether a vmap level is open in this thread (the transforms then take this module's paths)."""
    return bool(levels())


def physical(t: Any) -> Any:
    """The plain tensor a (batched) tensor holds."""
    while type(t) is BatchedTensor:
        t = t._value
    return t


def fresh(t: Tensor) -> Tensor:
    """A tensor to differentiate with respect to, inside vmap: a leaf (or, when `t` requires grad, a view that
    keeps it connected) batched at every open level, its samples `t`'s."""
    if t.dtype.np.kind != "f":
        raise TypeError("only floating-point tensors can be differentiated; convert with .double()")
    phys, dims = batched_ad.lift(t, levels())
    if phys._requires_grad:
        leaf = phys.view_as(phys)
    else:
        leaf = Tensor._make(phys._data, False, None, version_of(phys))
        leaf._requires_grad = True
        if getattr(phys, "_fw", None) is not None and forward_ad.carries(phys):
            leaf._fw = forward_ad._forced(phys)
    return batched_ad.rebuild(leaf, dims)


def on_physical(t: Any, fn: Any) -> Any:
    """`fn` applied to a batched tensor's physical tensor, batched again as it was."""
    phys, dims = batched_ad.layout(t)
    return batched_ad.rebuild(fn(phys), dims)


def zeros_like(t: Any) -> Any:
    """Zeros of `t`'s samples' shape, batched as `t` (a gradient that nothing reached)."""
    phys, dims = batched_ad.layout(t)
    return batched_ad.rebuild(Tensor._make(np.zeros(phys._data.shape, phys._data.dtype), False, None), dims)


def vjp(outputs: list[Any], inputs: list[Any], cotangents: list[Any], create_graph: bool,
        retain_graph: bool | None = None) -> list[Any]:
    """Per input, the vector-Jacobian product (batched as the input; None where nothing arrived)."""
    return batched_ad.vjp(outputs, inputs, cotangents, create_graph if retain_graph is None else retain_graph,
                          create_graph)


def jacobian_rows(o: Any, inside: list[Any], keep: bool, chunk_size: int | None) -> list[Any]:
    """The blocks d o / d x for each x of `inside` (batched tensors), each sample's: one row per element of a
    sample of `o`, every sample's at once (batched.py's walk when it can, else one backward per row)."""
    po, do = batched_ad.layout(o)
    shape = tuple(o.shape)
    m = math.prod(shape)
    ins = [batched_ad.layout(x) for x in inside]
    if not po._requires_grad or m == 0:
        return [_zeros_block(shape, px, dx) for px, dx in ins]
    # per element of the output's physical tensor, which element of a sample it is
    index = np.arange(m).reshape(shape) if shape else np.array(0)
    batch = sorted(do.items(), key=lambda kv: kv[1])
    for _, pd in batch:
        index = np.expand_dims(index, pd)
    index = np.broadcast_to(index, po._data.shape)
    seeds = (np.arange(m).reshape((m,) + (1,) * index.ndim) == index).astype(po._data.dtype)
    found = batched_ad.rows([po], [px for px, _ in ins], [Tensor._make(seeds, False, None)], True, keep,
                            chunk_size)
    blocks = []
    for g, (px, dx) in zip(found, ins, strict=True):
        if g is None:
            blocks.append(_zeros_block(shape, px, dx))
            continue
        g = g.reshape(shape + tuple(px._data.shape))
        blocks.append(batched_ad.rebuild(g, {level: d + len(shape) for level, d in dx.items()}))
    return blocks


def _zeros_block(shape: tuple[int, ...], px: Tensor, dx: dict) -> Any:
    zeros = Tensor._make(np.zeros(shape + tuple(px._data.shape), px._data.dtype), False, None)
    return batched_ad.rebuild(zeros, {level: d + len(shape) for level, d in dx.items()})


def make_dual(primal: Tensor, tangent: Tensor, level: int) -> Any:
    """`forward_ad.make_dual` of a primal and tangent either of which may be batched: the dual is made on the
    physical tensor, both laid out alike."""
    p, t, dims = batched_ad.common(primal, tangent)
    return batched_ad.rebuild(forward_ad.make_dual(p, t, level=level), dims)


def unpack_dual(out: Any, level: int) -> tuple[Any, Any]:
    """`forward_ad.unpack_dual` of a (batched) output: its primal and tangent, batched as it is."""
    phys, dims = batched_ad.layout(out)
    primal, tangent = forward_ad.unpack_dual(phys, level=level)
    return batched_ad.rebuild(primal, dims), None if tangent is None else batched_ad.rebuild(tangent, dims)
