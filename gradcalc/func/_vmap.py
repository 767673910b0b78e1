"""`vmap`: a function mapped over a dimension of its arguments, as `torch.func.vmap`.

gradcalc runs the function once per index of the mapped dimension and stacks the results (PyTorch
batches each operation instead). The results are the same, and everything composes as a plain call does:
`vmap(grad(f))` gives per-sample gradients, a function calling `autograd.grad` may be mapped, and `vmap`
nests. The cost is one call of the function per sample; the stacking is a differentiable `stack`, so the
result can be differentiated (and carries tangents) like any other.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..autograd.tensor import Tensor
from ._pytree import flatten, unflatten

__all__ = ["vmap"]


def _dims_per_leaf(dims: Any, arg: Any, what: str) -> list[Any]:
    """`dims` (an int, None, or a structure like `arg`'s) as one entry per leaf of `arg`."""
    leaves, spec = flatten(arg)
    if dims is None or isinstance(dims, int):
        return [dims] * len(leaves)
    d_leaves, d_spec = flatten(dims)
    if d_spec != spec:
        raise ValueError(f"vmap: {what} must be an int, None, or have the structure of the argument")
    return d_leaves


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its arguments (an int for all, or a tuple with one entry
    per positional argument: an int, or None for an argument that is not mapped); the results are stacked
    along `out_dims`. Keyword arguments are passed unmapped."""
    if randomness not in ("error", "different", "same"):
        raise ValueError(f'vmap: randomness must be "error", "different" or "same", not {randomness!r}')
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size must be a positive int or None, not {chunk_size}")
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(f"vmap: in_dims must be an int, None or a tuple, not a {type(in_dims).__name__}")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_dims, tuple):
            if len(in_dims) != len(args):
                raise ValueError(f"vmap: in_dims has {len(in_dims)} entries but the function was called with "
                                 f"{len(args)} positional arguments; give one per argument (None: not mapped)")
            per_arg = list(in_dims)
        else:
            per_arg = [in_dims] * len(args)
        leaves, spec = flatten(list(args))
        dims: list[Any] = []
        for i, (a, d) in enumerate(zip(args, per_arg, strict=True)):
            dims.extend(_dims_per_leaf(d, a, f"in_dims[{i}]"))
        size, where = None, None
        for k, (leaf, d) in enumerate(zip(leaves, dims, strict=True)):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError(f"vmap: an entry of in_dims must be an int or None, not {type(d).__name__}")
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap: in_dims maps input {k} over dimension {d}, but it is a "
                                 f"{type(leaf).__name__}, not a tensor; give None for it in in_dims")
            nd = leaf._data.ndim
            if not -nd <= d < nd:
                raise ValueError(f"vmap: in_dims maps input {k} over dimension {d}, but it has only {nd} "
                                 "dimension(s)")
            n = leaf._data.shape[d]
            if size is None:
                size, where = n, k
            elif n != size:
                raise ValueError(f"vmap: the mapped dimensions have different sizes: input {where} has {size}, "
                                 f"input {k} has {n}; they must all be the same (the batch size)")
        if size is None:
            raise ValueError("vmap: no input is mapped (in_dims is None for all of them, or there are no tensor "
                             "arguments); map at least one")
        from ..autograd.ops.shape import select

        results = []
        for b in range(size):
            sample = [leaf if d is None else select(leaf, d, b) for leaf, d in zip(leaves, dims, strict=True)]
            results.append(func(*unflatten(sample, spec), **kwargs))
        return _stack_results(results, out_dims)

    return wrapped


def _stack_results(results: list[Any], out_dims: Any) -> Any:
    from ..autograd.ops.joins import stack

    if not results:
        raise ValueError("vmap: the mapped dimension has size 0; there is nothing to call the function on")
    flat = [flatten(r) for r in results]
    leaves0, spec = flat[0]
    for i, leaf in enumerate(leaves0):
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap: the function must return tensors (or tuples/lists/dicts of them), but "
                             f"output {i} is a {type(leaf).__name__}")
    if isinstance(out_dims, int) or out_dims is None:
        odims = [out_dims] * len(leaves0)
    else:
        odims = _dims_per_leaf(out_dims, results[0], "out_dims")
    out = []
    for i, d in enumerate(odims):
        column = [f[0][i] for f in flat]
        if d is None:
            out.append(column[0])
            continue
        nd = column[0]._data.ndim + 1
        if not -nd <= d < nd:
            raise ValueError(f"vmap: out_dims={d} is out of range for output {i}, which has {nd - 1} dimension(s)")
        out.append(stack(column, d % nd))
    return unflatten(out, spec)
