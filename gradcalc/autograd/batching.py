"""Batching rules: how one operation runs over a batch dimension, the slot a batched vmap is built on.

An operation's batching rule is registered in its spec (`@spec.op(..., vmap=rule)`; the rules of this module by
name, `vmap=spec.rule("pointwise_binary", "add")`, so that this module loads only when vmap first runs), as
functorch's batch rules and JAX's `primitive_batchers` are: `rule(args, dims, **params) -> (result, dim)`.
`args` are the operation's arguments at one vmap level, `dims[i]` the position of that level's batch dimension
in `args[i]` (None for an argument that is the same for every sample: a number, a tensor not mapped), `params`
the operation's other parameters, in the sample's terms (`dim=` counts the sample's dimensions, not the batch);
the rule returns the result with its batch dimension at `dim` (None: the same for every sample).

A rule is written with `bind(name, *args, **params)` for the operations it uses, never with the functions
themselves: `bind` calls the operation on plain tensors, and its rule when an argument is batched at an outer
level. So a rule written once runs at any level, and levels nest: `vmap(vmap(f))` peels the inner level first
(its rule's own calls then meet the outer level's batched values, and peel that one), as JAX's tracers do.

`BatchedValue` and `vmap` below are the reference interpreter for these rules (the tests run the rules through
it, against `torch.vmap`): a function written with `bind` is mapped over its inputs' batch dimension by one
call of each rule, not one call per sample. gradcalc.func's `vmap` is still the per-sample loop; a batched one
makes tensors carry their level and dimension and dispatches to these same rules.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from typing import Any

from . import spec as S

_levels = itertools.count(1)


class BatchedValue:
    """A value batched at one vmap level: `value` holds every sample, along its dimension `dim`."""

    __slots__ = ("value", "dim", "level")

    def __init__(self, value: Any, dim: int, level: int) -> None:
        self.value, self.dim, self.level = value, dim, level

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of one sample."""
        full = shape_of(self.value)
        return full[: self.dim] + full[self.dim + 1:]

    def __repr__(self) -> str:
        return f"BatchedValue(level={self.level}, dim={self.dim}, value={self.value!r})"


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of one sample of `x` at the level being computed (a number's is ())."""
    if isinstance(x, BatchedValue):
        return x.shape
    shape = getattr(x, "shape", None)
    return tuple(shape) if shape is not None else ()


def bind(name: str, *args: Any, **params: Any) -> Any:
    """Operation `name` on `args`: itself on plain values, else its batching rule at the innermost level among
    the arguments, whose result is batched again at that level."""
    level = max((a.level for a in args if isinstance(a, BatchedValue)), default=0)
    op = S.op_of(name)
    if op is None:
        raise LookupError(f"no operation {name!r} is registered")
    if not level:
        return op.function(*args, **params)
    if op.vmap is None:
        raise NotImplementedError(f"{name} has no batching rule")
    values = tuple(a.value if isinstance(a, BatchedValue) and a.level == level else a for a in args)
    dims = tuple(a.dim if isinstance(a, BatchedValue) and a.level == level else None for a in args)
    out, dim = op.vmap(values, dims, **params)
    if isinstance(out, tuple):
        return tuple(_wrap(o, d, level) for o, d in zip(out, dim, strict=True))
    return _wrap(out, dim, level)


def _wrap(value: Any, dim: int | None, level: int) -> Any:
    return value if dim is None else BatchedValue(value, dim, level)


# -- helpers for rules ------------------------------------------------------------------------------------------
def ndim(x: Any) -> int:
    """The number of dimensions of one sample of `x`."""
    return len(shape_of(x))


def to_front(x: Any, dim: int | None) -> Any:
    """`x` with its batch dimension `dim` moved first (unchanged when it is first, or has none)."""
    return x if not dim else bind("movedim", x, dim, 0)


def sample_dim(d: int, rank: int) -> int:
    """A dimension `d` of a sample of `rank` dimensions, counted in the batch that has its batch dimension first."""
    return (d % max(rank, 1)) + 1 if rank else 1


def pad(x: Any, rank: int) -> Any:
    """A batch (batch dimension first) of samples with fewer than `rank` dimensions, given leading dimensions of
    size 1 after the batch, so that it broadcasts against samples of `rank` dimensions."""
    for _ in range(rank - ndim_batched(x)):
        x = bind("unsqueeze", x, 1)
    return x


def ndim_batched(x: Any) -> int:
    """The number of dimensions of one sample of a batch whose batch dimension is first."""
    return len(shape_of(x)) - 1


# -- rules written once for families of operations ----------------------------------------------------------------
def pointwise_unary(name: str) -> S.BatchRule:
    """The rule of an elementwise function of one tensor: applied to the whole batch, the dimension kept."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        return bind(name, args[0], **params), dims[0]

    return rule


def pointwise_binary(name: str) -> S.BatchRule:
    """The rule of an elementwise operation of two operands (either may be unbatched, or a number): both batch
    dimensions first, the batched operands padded to the larger sample rank so that broadcasting lines up."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        (a, b), (da, db) = args, dims
        rank = max(ndim(a) - (da is not None), ndim(b) - (db is not None))
        if da is not None:
            a = pad(to_front(a, da), rank)
        if db is not None:
            b = pad(to_front(b, db), rank)
        return bind(name, a, b, **params), 0

    return rule


def movedim_rule(args: tuple, dims: tuple, source: Any = None, destination: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    if rest:  # movedim(x, source, destination) by position
        source, destination = rest
    rank = ndim(x) - 1
    x = to_front(x, d)
    if isinstance(source, int):
        return bind("movedim", x, sample_dim(source, rank), sample_dim(destination, rank)), 0
    source, destination = (tuple(sample_dim(i, rank) for i in v) for v in (source, destination))
    return bind("movedim", x, source, destination), 0


def _positions(x: Any, d: int | None) -> tuple[Any, int]:
    """`x` with its batch dimension first, and the rank of one sample."""
    rank = ndim(x) - (d is not None)
    return to_front(x, d), rank


def unsqueeze_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    x, rank = _positions(x, d)
    return bind("unsqueeze", x, dim + 1 if dim >= 0 else dim), 0  # a negative dim counts from the end alike


def squeeze_rule(args: tuple, dims: tuple, dim: Any = None) -> tuple[Any, Any]:
    (x, *rest), (d, *_) = args, dims
    dim = rest[0] if rest else dim
    x, rank = _positions(x, d)
    if dim is None:  # every dimension of size 1 of the sample, never the batch's
        shape = shape_of(x)[1:]
        dim = tuple(i + 1 for i, n in enumerate(shape) if n == 1)
        return (bind("squeeze", x, dim) if dim else x), 0
    return bind("squeeze", x, sample_dim(dim, rank)), 0


_NO_DIM: Any = object()


def reduction(name: str) -> S.BatchRule:
    """The rule of a reduction `name(x, dim=None, keepdim=False)` (sum, mean, amax...): the sample's dims moved
    past the batch dimension, which stays first; no `dim` reduces all of the sample's dims."""

    def rule(args: tuple, dims: tuple, dim: Any = _NO_DIM, keepdim: bool = False, **params: Any) -> tuple[Any, Any]:
        (x, *rest), (d, *_) = args, dims
        if rest:
            dim = rest[0]
            if len(rest) > 1:
                keepdim = rest[1]
        x, rank = _positions(x, d)
        if dim is _NO_DIM or dim is None:
            over: Any = tuple(range(1, rank + 1)) if rank else ()
            if not over:  # a sample of 0 dims: its reduction over all of them is itself
                return x, 0
            return bind(name, x, over, keepdim=keepdim, **params), 0
        over = sample_dim(dim, rank) if isinstance(dim, int) else tuple(sample_dim(i, rank) for i in dim)
        return bind(name, x, over, keepdim=keepdim, **params), 0

    return rule


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
    x = to_front(x, d)
    size = shape_of(x)[0]
    return bind("expand", pad(x, len(target)), (size, *target)), 0


def matmul_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    """`matmul` over a batch: the batch dimensions first; a vector becomes a matrix of one row (or column) so
    that its samples stay apart, and a sample of fewer dimensions is padded after the batch dimension."""
    (a, b), (da, db) = args, dims
    ra, rb = ndim(a) - (da is not None), ndim(b) - (db is not None)
    if da is not None and db is not None and ra == 1 and rb == 1:  # a dot per sample
        return bind("sum", bind("mul", to_front(a, da), to_front(b, db)), -1), 0
    if da is not None:
        a = to_front(a, da)
        if ra == 1:  # (B, m) -> (B, 1.., 1, m): a row per sample, batched alongside b's batch dims
            a = pad(bind("unsqueeze", a, 1), max(rb, 2))
            out = bind("matmul", a, to_front(b, db) if db is not None else b)
            return bind("squeeze", out, -2 if rb >= 2 else -1), 0
        if db is not None:
            b = to_front(b, db)
            if rb == 1:  # (B, m) -> (B, 1.., m, 1): a column per sample
                b = pad(bind("unsqueeze", b, 2), ra)
                return bind("squeeze", bind("matmul", a, b), -1), 0
            rank = max(ra, rb)
            return bind("matmul", pad(a, rank), pad(b, rank)), 0
        if rb > 2:
            a = pad(a, rb)
        return bind("matmul", a, b), 0
    b = to_front(b, db)
    if rb == 1:  # a @ v for each v: a column per sample
        b = pad(bind("unsqueeze", b, 2), max(ra, 2))
        out = bind("matmul", a, b)
        return bind("squeeze", out, -1), 0
    if ra > 2:
        b = pad(b, ra)
    return bind("matmul", a, b), 0


# -- the reference interpreter ------------------------------------------------------------------------------------
def vmap(f: Callable[..., Any], in_dims: Any = 0, out_dims: int = 0) -> Callable[..., Any]:
    """`f` mapped over a batch dimension of its arguments (`in_dims`: one for all, or one per argument, None
    for an argument not mapped), with one call of `f` whose operations run their batching rules; `f` calls its
    operations through `bind`. Nests: `vmap(vmap(f))`."""

    def mapped(*args: Any) -> Any:
        level = next(_levels)
        per_arg = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        size = None
        wrapped = []
        for a, d in zip(args, per_arg, strict=True):
            if d is None:
                wrapped.append(a)
                continue
            d = d % len(shape_of(a) if not isinstance(a, BatchedValue) else a.shape)
            n = (shape_of(a) if not isinstance(a, BatchedValue) else a.shape)[d]
            if size is not None and n != size:
                raise ValueError(f"vmap: the mapped dimensions have different sizes ({size} and {n})")
            size = n
            if isinstance(a, BatchedValue):  # an outer level's value: its sample's dim `d` is this level's
                a = bind("movedim", a, d, 0)
                d = 0
            wrapped.append(BatchedValue(a, d, level))
        out = f(*wrapped)
        return _unwrap(out, level, size, out_dims)

    return mapped


def _unwrap(out: Any, level: int, size: int | None, out_dim: int) -> Any:
    if isinstance(out, tuple):
        return tuple(_unwrap(o, level, size, out_dim) for o in out)
    if isinstance(out, BatchedValue) and out.level == level:
        return bind("movedim", out.value, out.dim, out_dim) if out.dim != out_dim else out.value
    # the same for every sample: repeated along a new batch dimension
    stacked = bind("unsqueeze", out, out_dim)
    shape = list(shape_of(stacked))
    shape[out_dim] = size
    return bind("expand", stacked, tuple(shape))


S.RULES = sys.modules[__name__]  # the specs' named rules are this module's (spec.LazyRule)
