"""Batching rules: how one operation runs over a batch dimension, the rules vmap runs (dispatch.py).

An operation's batching rule is registered in its spec (`@spec.op(..., vmap=rule)`; the rules of this module by
name, `vmap=spec.rule("pointwise_binary", "add")`, so that this module loads only when vmap first runs), as
functorch's batch rules and JAX's `primitive_batchers` are: `rule(args, dims, **params) -> (result, dim)`.
`args` are the operation's positional arguments at one vmap level, `dims[i]` the position of that level's batch
dimension in `args[i]` (None for an argument that is the same for every sample: a number, a tensor not mapped; a
tuple of them for a list of tensors), `params` its keyword arguments, in the sample's terms (`dim=` counts the
sample's dimensions, not the batch); the rule returns the result with its batch dimension at `dim` (None: the
same for every sample; a tuple of them for a tuple of results).

A rule is written with `bind(name, *args, **params)` for the operations it uses: the operation itself on plain
tensors, its own rule when an argument is batched at an outer level. So a rule written once runs at any level,
and levels nest: `vmap(vmap(f))` peels the inner level first (its rule's own calls meet the outer level's
batched values, and peel that one). Families share one rule (`pointwise_unary`, `pointwise`, `reduction`); the
rules of particular operations are in batching_ops.py. `spec.rule("random")` marks a random operation (dropout):
dispatch.py then applies the levels' `randomness=` to it (a batch of draws for "different", one for "same").
"""

from __future__ import annotations

import sys
from typing import Any

from . import dispatch as D
from . import spec as S
from .batched_tensor import BatchedTensor, shape_of
from .dispatch import bind, to_front
from .tensor import Tensor

__all__ = ["bind", "matrices", "pointwise", "pointwise_binary", "pointwise_unary", "reduction", "vmap"]

vmap = D.vmap  # the core of vmap (gradcalc.func.vmap is PyTorch's API on it)


# -- helpers for rules --------------------------------------------------------------------------------------------
def ndim(x: Any) -> int:
    """The number of dimensions of `x` at the level being computed (a batched value's batch dim included)."""
    return len(shape_of(x))


def sample_dim(d: int, rank: int) -> int:
    """A dimension `d` of a sample of `rank` dimensions, counted in the batch that has its batch dimension first."""
    return (d % max(rank, 1)) + 1 if rank else 1


def pad(x: Any, rank: int) -> Any:
    """A batch (batch dimension first) of samples with fewer than `rank` dimensions, given leading dimensions of
    size 1 after the batch, so that it broadcasts against samples of `rank` dimensions."""
    n = ndim(x) - 1
    if n < rank:
        x = bind("reshape", x, (shape_of(x)[0],) + (1,) * (rank - n) + shape_of(x)[1:])
    return x


def front(x: Any, d: int | None) -> tuple[Any, int]:
    """`x` with its batch dimension first, and the rank of one sample."""
    return to_front(x, d), ndim(x) - (d is not None)


def dtype_of(x: Any) -> Any:
    """The NumPy dtype of a tensor (batched or not)."""
    return x._dtype if type(x) is BatchedTensor else x._data.dtype


def batch_size(values: tuple, dims: tuple) -> int:
    """The batch size, read off the first batched argument."""
    for v, d in zip(values, dims, strict=False):
        if type(d) is int:
            return shape_of(v)[d]
        if type(d) is tuple:
            for x, dd in zip(v, d, strict=True):
                if dd is not None:
                    return shape_of(x)[dd]
    raise RuntimeError("vmap: no argument is batched")  # never: dispatch runs a rule only for a batched one


def materialize(x: Any, d: int | None, size: int) -> Any:
    """`x` with its batch dimension first, a value the same for every sample repeated (expanded) along it."""
    if d is not None:
        return to_front(x, d)
    return bind("expand", bind("unsqueeze", x, 0), (size, *shape_of(x)))


_NO_DIM: Any = object()


def dims_arg(dim: Any, rank: int) -> Any:
    """`dim` (an int or a sequence of them, of a sample of `rank` dims) in the batch's terms."""
    if isinstance(dim, int):
        return sample_dim(dim, rank)
    return tuple(sample_dim(i, rank) for i in dim)


# -- rules written once for families of operations ------------------------------------------------------------
def pointwise_unary(name: str) -> S.BatchRule:
    """The rule of an elementwise function of one tensor (with options): applied to the whole batch."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        return bind(name, *args, **params), dims[0]

    return rule


def pointwise(name: str, tensors: int = 2) -> S.BatchRule:
    """The rule of an elementwise operation of `tensors` operands that broadcast together (any may be the same
    for every sample, or a number), then options: the batched operands' batch dims first, each padded to the
    largest sample rank so that broadcasting lines up."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        k = min(tensors, len(args))
        ops, ds = args[:k], dims[:k]
        if sum(d is not None for d in ds) == 1 and ds[0] is not None:  # only the first: one move at most
            a, d = ops[0], ds[0]
            rank = max(ndim(a) - 1, *(ndim(o) for o in ops[1:])) if k > 1 else ndim(a) - 1
            if ndim(a) - 1 == rank:
                if d == 0 or all(not isinstance(o, Tensor) for o in ops[1:]):
                    return bind(name, *args, **params), d
        rank = max(ndim(o) - (d is not None) for o, d in zip(ops, ds, strict=True))
        moved = tuple(pad(to_front(o, d), rank) if d is not None else o for o, d in zip(ops, ds, strict=True))
        return bind(name, *moved, *args[k:], **params), 0

    return rule


def pointwise_binary(name: str) -> S.BatchRule:
    """The rule of an elementwise operation of two operands (either may be unbatched, or a number)."""
    return pointwise(name, 2)


def reduction(name: str) -> S.BatchRule:
    """The rule of a reduction `name(x, dim=None, keepdim=False, ...)` (sum, mean, amax...): the sample's dims moved
    past the batch dimension, which stays first; no `dim` reduces all of the sample's dims."""

    def rule(args: tuple, dims: tuple, dim: Any = _NO_DIM, keepdim: bool = False, **params: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        if rest:
            dim = rest[0]
            if len(rest) > 1:
                keepdim = rest[1]
        x, rank = front(x, d)
        if dim is _NO_DIM or dim is None or (isinstance(dim, (tuple, list)) and not dim):
            over: Any = tuple(range(1, rank + 1))
            if not over:  # a sample of 0 dims: reduced over a dim of size 1 made for it
                return bind(name, bind("unsqueeze", x, 1), 1, keepdim=False, **params), 0
            return bind(name, x, over, keepdim=keepdim, **params), 0
        return bind(name, x, dims_arg(dim, rank), keepdim=keepdim, **params), 0

    return rule


def matrices(name: str) -> S.BatchRule:
    """The rule of an operation on the last two dims of one tensor that takes any leading dims as a batch of
    matrices (det, inverse): the batch dimension first."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        return bind(name, to_front(args[0], dims[0]), *args[1:], **params), 0

    return rule


def movedim_rule(args: tuple, dims: tuple, source: Any = None, destination: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    if rest:
        source, destination = rest
    x, rank = front(x, d)
    return bind("movedim", x, dims_arg(source, rank), dims_arg(destination, rank)), 0


def unsqueeze_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    rank = ndim(x) - 1
    dim = dim if dim >= 0 else dim + rank + 1  # in the sample's terms, counted from the front
    if dim <= d:  # the new dim lands before the batch dim, which moves one on
        return bind("unsqueeze", x, dim), d + 1
    return bind("unsqueeze", x, dim + 1), d


def squeeze_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    x, rank = front(x, d)
    if dim is None:  # every dimension of size 1 of the sample, never the batch's
        shape = shape_of(x)[1:]
        dim = tuple(i + 1 for i, n in enumerate(shape) if n == 1)
        return (bind("squeeze", x, dim) if dim else x), 0
    return bind("squeeze", x, dims_arg(dim, rank)), 0


def _shape_arg(shape: tuple) -> tuple[int, ...]:
    """`f(2, 3)`, `f((2, 3))` and `f([2, 3])` all name the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


def reshaping(name: str) -> S.BatchRule:
    """The rule of `reshape` and `view`: the batch dimension first, the sample's new shape after it."""

    def rule(args: tuple, dims: tuple, *shape: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        x = to_front(x, d)
        return bind(name, x, (shape_of(x)[0], *_shape_arg(tuple(rest) or shape))), 0

    return rule


def expand_rule(args: tuple, dims: tuple, *shape: Any) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    target = _shape_arg(tuple(rest) or shape)
    x, rank = front(x, d)
    size = shape_of(x)[0]
    if rank < len(target):
        x = pad(x, len(target))
    return bind("expand", x, (size, *target)), 0




def random(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """The marker of a random operation (`vmap=spec.rule("random")`): dispatch.py applies the levels'
    `randomness=` to it before any rule runs, so this is never called."""
    raise AssertionError("random operations are dispatched by their levels' randomness=")


# -- the rules of the functions and methods that are not an OpSpec's ------------------------------------------------
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "isclose"):
    D.NAMED[_name] = pointwise(_name)
for _name in ("logical_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
              "detach", "float", "double", "long", "int", "bool", "half", "to", "type",
              "type_as", "cpu", "contiguous", "zeros_like", "ones_like", "full_like", "empty_like", "square"):
    D.NAMED[_name] = pointwise_unary(_name)


S.RULES = sys.modules[__name__]  # the specs' named rules: this module's, and batching_ops.py's once it is loaded
