"""`vmap`: a function mapped over a dimension of its arguments, as `torch.func.vmap`.

The function runs once, on batched tensors (autograd/batched_tensor.py) that stand for one sample each while
they carry the whole batch; each operation runs its batching rule (autograd/batching.py), or once per sample
where it has none (with PyTorch's performance warning). `in_dims` and `out_dims` are trees as PyTorch's
(`in_dims=(None, {"x": 0})`), `randomness=` and `chunk_size=` mean what they mean there, and every check is
PyTorch's, with its message. vmap nests, and composes with the other transforms in any order (see
_transforms.py and _batched_ad.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..autograd import batching_ops, dispatch  # noqa: F401 - batching_ops: the rules the specs name, loaded
from ..autograd.batched_tensor import BatchedTensor, pop_level, push_level
from ..autograd.ops import random as _random
from ..autograd.tensor import Tensor
from ._pytree import Spec, flatten, unflatten

__all__ = ["vmap"]


def _name(func: Any) -> str:
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def _structure(spec: Spec, indent: int = 0) -> str:
    """A tree's structure as PyTorch prints its TreeSpec (`TreeSpec(tuple, None, [*,\n  *])`), for the
    messages."""
    if spec[0] == "leaf":
        return "*"
    if spec[0] == "dict":
        kind, context, children = "dict", repr(list(spec[1])), spec[2]
    else:
        kind, context, children = spec[0].__name__, "None", spec[1]
    inner = [_structure(s, indent + 2) for s in children]
    joined = (",\n" + " " * (indent + 2)).join(inner)
    return f"TreeSpec({kind}, {context}, [{joined}])"


def broadcast_to_leaves(prefix: Any, spec: Spec) -> list[Any] | None:
    """`prefix` (an int or None for a whole subtree, or a tree of them shaped as the top of `spec`) as one
    entry per leaf of `spec`; None when it does not fit (PyTorch's `_broadcast_to_and_flatten`)."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * _count(spec)
    if spec[0] == "leaf":
        return None
    if spec[0] == "dict":
        if not isinstance(prefix, dict) or set(prefix) != set(spec[1]):
            return None
        out: list[Any] = []
        for k, s in zip(spec[1], spec[2], strict=True):
            part = broadcast_to_leaves(prefix[k], s)
            if part is None:
                return None
            out.extend(part)
        return out
    kind, children = spec
    if type(prefix) is not kind or len(prefix) != len(children):
        return None
    out = []
    for p, s in zip(prefix, children, strict=True):
        part = broadcast_to_leaves(p, s)
        if part is None:
            return None
        out.extend(part)
    return out


def _count(spec: Spec) -> int:
    if spec[0] == "leaf":
        return 1
    children = spec[2] if spec[0] == "dict" else spec[1]
    return sum(_count(s) for s in children)


def _check_out_dims(out_dims: Any, func: Any) -> None:
    leaves, _ = flatten(out_dims)
    for x in leaves:
        if not (x is None or (isinstance(x, int) and not isinstance(x, bool))):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                "collection of ints representing where in the outputs the vmapped dimension should appear.")


def _process_inputs(in_dims: Any, args: tuple, func: Any) -> tuple[int, list[Any], list[Any], Spec]:
    """The batch size, and per leaf of the arguments its in_dim (normalized) and itself; PyTorch's checks."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = flatten(args)
    flat_dims = broadcast_to_leaves(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
            f"`inputs`. in_dims has structure {_structure(flatten(in_dims)[1])} but inputs has structure "
            f"{_structure(spec)}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims, strict=True)):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             "use None as the respective in_dim")
        if d is not None:
            n = arg.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but that input "
                    f"is a Tensor of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            flat_dims[i] = d % n
    return _batch_size(flat_dims, flat_args), flat_dims, flat_args, spec


def _batch_size(flat_dims: list[Any], flat_args: list[Any]) -> int:
    sizes = [a.size(d) for d, a in zip(flat_dims, flat_args, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0]


def _flat_vmap(func: Callable[..., Any], size: int, flat_dims: list[Any], flat_args: list[Any], spec: Spec,
               out_dims: Any, randomness: str, kwargs: dict) -> Any:
    lvl = push_level(size, randomness)
    try:
        inputs = [a if d is None else dispatch.add_batch_dim(a, d, lvl) for a, d in zip(flat_args, flat_dims,
                                                                                         strict=True)]
        out = func(*unflatten(inputs, spec), **kwargs)
        return _unwrap_outputs(out, out_dims, lvl, func)
    finally:
        pop_level(lvl)


def _unwrap_outputs(out: Any, out_dims: Any, lvl: Any, func: Any) -> Any:
    name = _name(func)
    flat_out, out_spec = flatten(out)
    if isinstance(out, Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            flat_dims: list[Any] | None = [out_dims]
        elif isinstance(out_dims, tuple) and len(out_dims) == 1:
            flat_dims = list(out_dims)
        else:
            flat_dims = None
    else:
        flat_dims = broadcast_to_leaves(out_dims, out_spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the structure of "
            f"`outputs`. out_dims has structure {_structure(flatten(out_dims)[1])} but outputs has structure "
            f"{_structure(out_spec)}.")
    results = []
    for x, d in zip(flat_out, flat_dims, strict=True):
        if d is None:
            if isinstance(x, BatchedTensor) and x._level == lvl.id:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            results.append(x)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did you "
                             "mean to set out_dims= to None for output?")
        results.append(dispatch.remove_batch_dim(x, lvl, d))
    return unflatten(results, out_spec)


def _chunks(flat_args: list[Any], flat_dims: list[Any], size: int, chunk_size: int) -> list[list[Any]]:
    sizes = [chunk_size] * (size // chunk_size) + ([size % chunk_size] if size % chunk_size else [])
    per_arg = [list(a.split(sizes, d)) if d is not None else [a] * len(sizes)
               for a, d in zip(flat_args, flat_dims, strict=True)]
    return [list(chunk) for chunk in zip(*per_arg, strict=True)]


def _concat(outputs: list[Any], out_dims: Any) -> Any:
    from ..autograd.ops.joins import cat

    flats = [flatten(o) for o in outputs]
    spec = flats[0][1]
    leaves0 = flats[0][0]
    if isinstance(outputs[0], Tensor):
        dims = [out_dims if not isinstance(out_dims, tuple) else out_dims[0]]
    else:
        dims = broadcast_to_leaves(out_dims, spec) or [out_dims] * len(leaves0)
    joined = []
    for i, d in enumerate(dims):
        column = [f[0][i] for f in flats]
        joined.append(column[0] if d is None else cat(column, d))
    return unflatten(joined, spec)


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """`func` mapped over dimension `in_dims` of its inputs: one call of `func`, on tensors that stand for one
    sample each; the outputs get the mapped dimension at `out_dims`.

    `in_dims`: an int for every input, or a tree like the inputs' (a tuple with one entry per positional argument,
    dicts and lists inside), None for an input that is not mapped. `out_dims`: an int, or one per output. Keyword
    arguments are passed as they are. `randomness`: "error" (random operations inside are an error), "same" (the
    same random values for every sample) or "different" (each its own). `chunk_size`: map that many samples at a
    time (1 is a loop)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_out_dims(out_dims, func)
        size, flat_dims, flat_args, spec = _process_inputs(in_dims, args, func)
        if chunk_size is None:
            return _flat_vmap(func, size, flat_dims, flat_args, spec, out_dims, randomness, kwargs)
        start = _random.default_generator.get_state() if randomness == "same" else None
        outputs = []
        for chunk in _chunks(flat_args, flat_dims, size, chunk_size):
            if start is not None:
                _random.default_generator.set_state(start)
            outputs.append(_flat_vmap(func, _batch_size(flat_dims, chunk), flat_dims, chunk, spec, out_dims,
                                      randomness, kwargs))
        return _concat(outputs, out_dims)

    return wrapped
