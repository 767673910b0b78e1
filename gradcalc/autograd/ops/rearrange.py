"""Operations that rearrange or repeat a tensor's elements: `flip` (`fliplr`, `flipud`), `roll`, `repeat`,
`tile`, `repeat_interleave`, `tril`/`triu`, `trace`, and the compositions PyTorch writes with views and joins:
`broadcast_to`, `hstack`, `vstack`, `meshgrid`.

Each backward formula is the inverse rearrangement of the gradient (flip it back, roll it back, sum the
repeats, keep the same triangle), written with the engine's operations so that it can be differentiated again.
The dims PyTorch saves are kept as given (a negative one shows as its int64 read back unsigned, as PyTorch's).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor
from . import indexing as I
from . import joins as J
from . import shape as S
from .core import record, result
from .scatter import index_select
from .sums import expand
from .sums import sum as sum_dims


def _unsigned_all(dims: tuple) -> tuple:
    return tuple(int(d) % 2**64 for d in dims)


def _int_tuple(value: Any, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints (a list, a tuple, a Size) as a tuple."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, Tensor) and value._data.ndim == 0 and value._data.dtype.kind in "iu":
        return (int(value._data),)
    try:
        return tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{what} must be an int or a tuple of ints, not {type(value).__name__}") from None


# -- flip ----------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.flip(dims)"},
    saved={"dims": SV.field("given", _unsigned_all)},
    jvp=lambda node, inputs, out, tangents: flip(tangents[0], node.axes), tangent="self_t.flip(dims)",
    batched=lambda node, g: (np.flip(g, tuple(a + 1 for a in node.axes)),),
)
class FlipBackward0(Node):
    """Flipping is its own inverse: the gradient flipped back."""

    __slots__ = ("axes", "given")

    def apply(self, g: Tensor) -> tuple:
        return (flip(g, self.axes),)


def _flip(x: Tensor, axes: tuple[int, ...], given: tuple[int, ...]) -> Tensor:
    node = record(FlipBackward0, x)
    if node is not None:
        node.axes, node.given = axes, given
    return result(np.flip(x._data, axes).copy() if x._data.ndim else x._data.copy(), node)


@spec.op("flip", vmap=spec.rule("dims_rule", "flip"), nodes=(FlipBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.flip(a, [0]) * a + a.flip((0, -1)).exp()))
def flip(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """`input` with the order of its elements reversed along each of `dims` (a copy)."""
    given = _int_tuple(dims, "flip(): dims")
    axes = tuple(S.dim_index(d, input._data.ndim) for d in given)
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return _flip(input, axes, given)


@spec.op("fliplr", vmap=spec.rule("flip_side_rule", "fliplr", 1, 2), nodes=(FlipBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.fliplr(a) * a))
def fliplr(input: Tensor) -> Tensor:  # noqa: A002
    """`input` with its columns (dimension 1) in reverse order; the input has at least 2 dimensions."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,), (1,))


@spec.op("flipud", vmap=spec.rule("flip_side_rule", "flipud", 0, 1), nodes=(FlipBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: a.flipud() * a))
def flipud(input: Tensor) -> Tensor:  # noqa: A002
    """`input` with its rows (dimension 0) in reverse order; the input has at least 1 dimension."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,), (0,))


# -- roll ----------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.roll(fmap(reverse_integers(shifts), [](c10::SymInt i){return -i;}), "
                     "reverse_integers(dims))"},
    saved={"dims": SV.field("given_dims", _unsigned_all), "shifts": SV.field("shifts", _unsigned_all)},
    jvp=lambda node, inputs, out, tangents: _roll(tangents[0], node.shifts, node.axes, node.given_dims),
    tangent="self_t.roll(shifts, dims)",
)
class RollBackward0(Node):
    """The gradient rolled back by the opposite shifts."""

    __slots__ = ("shifts", "axes", "given_dims")

    def apply(self, g: Tensor) -> tuple:
        # PyTorch's formula reverses the order of the shifts and dims (its saved values show it)
        axes = None if self.axes is None else self.axes[::-1]
        return (_roll(g, tuple(-s for s in self.shifts[::-1]), axes, self.given_dims[::-1]),)


def _roll(x: Tensor, shifts: tuple[int, ...], axes: tuple[int, ...] | None, given: tuple[int, ...]) -> Tensor:
    d = x._data
    out = np.roll(d.reshape(-1), shifts[0]).reshape(d.shape) if axes is None else np.roll(d, shifts, axes)
    node = record(RollBackward0, x)
    if node is not None:
        node.shifts, node.axes, node.given_dims = shifts, axes, given
    return result(np.ascontiguousarray(out) if d.ndim else out.copy(), node)


@spec.op("roll", vmap=spec.rule("roll_rule"), nodes=(RollBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.roll(a, 1) * a + a.roll((1, -2), (0, 1)).exp()
                            + L.roll(a, -5, -1)))
def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """`input` with its elements shifted by `shifts` places along `dims` (those pushed past the end come back
    at the start); without `dims`, along the flattened tensor, its shape kept."""
    s = _int_tuple(shifts, "roll(): shifts")
    if dims is None:
        if len(s) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:0")
        return _roll(input, s, None, ())
    given = _int_tuple(dims, "roll(): dims")
    if len(s) != len(given):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(s)}, dims:{len(given)}")
    if not input._data.ndim:
        raise IndexError(f"Dimension specified as {given[0]} but tensor has no dimensions")
    axes = tuple(S.dim_index(d, input._data.ndim) for d in given)
    return _roll(input, s, axes, given)


# -- repeat and tile -----------------------------------------------------------------------------------------
def _repeat_backward(g: Tensor, repeats: tuple[int, ...], in_shape: tuple[int, ...]) -> Tensor:
    """The gradient of each element: the sum of the gradients of its copies (PyTorch's repeat_backward: the
    leading dims repeat added summed one by one, then one reshape to (repeat, size) pairs and one sum)."""
    if 0 in repeats:
        return Tensor._make(np.zeros(in_shape, g._data.dtype), False, None)
    lead = len(repeats) - len(in_shape)
    for _ in range(lead):
        g = sum_dims(g, 0)
    split: list[int] = []
    summed: list[int] = []
    for r, n in zip(repeats[lead:], in_shape, strict=True):
        if r != 1:
            split.append(r)
            summed.append(len(split) - 1)
        split.append(n)
    if not summed:
        return g
    return sum_dims(S.reshape(g, tuple(split)), tuple(summed))


@spec.node(
    formula={"self": "repeat_backward(grad, repeats, self.sym_sizes())"},
    saved={"repeats": SV.field("repeats", tuple), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: repeat(tangents[0], node.repeats), tangent="self_t.repeat(repeats)",
)
class RepeatBackward0(Node):
    """Each element's gradient is the sum of its copies' gradients."""

    __slots__ = ("repeats", "in_shape")

    def apply(self, g: Tensor) -> tuple:
        return (_repeat_backward(g, self.repeats, self.in_shape),)


def _repeat(x: Tensor, repeats: tuple[int, ...]) -> Tensor:
    d = x._data
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(repeats)}: "
                           f"{[r * n for r, n in zip(repeats, (1,) * (len(repeats) - d.ndim) + d.shape, strict=True)]}")
    out = np.tile(d.reshape((1,) * (len(repeats) - d.ndim) + d.shape), repeats)
    node = record(RepeatBackward0, x)
    if node is not None:
        node.repeats, node.in_shape = repeats, d.shape
    return result(out, node)


@spec.op("repeat", top_level=False, vmap=spec.rule("repeat_rule", "repeat"), nodes=(RepeatBackward0,),
         sample=spec.Sample(((2, 3),), lambda L, a: a.repeat(2, 1, 3).exp() + a.repeat((1, 1, 3)) * a.repeat(1, 3)))
def repeat(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    """The tensor repeated `sizes[i]` times along each dimension i (more sizes than dimensions add leading
    dimensions): a new tensor."""
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    repeats = _int_tuple(sizes[0] if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes, "repeat(): sizes")
    if len(repeats) < input._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    return _repeat(input, repeats)


@spec.op("tile", vmap=spec.rule("repeat_rule", "tile"), nodes=(RepeatBackward0,),
         sample=spec.Sample(((2, 3),), lambda L, a: L.tile(a, (2,)) * a.repeat(1, 2) + a.tile((2, 1, 2)).sum(0)))
def tile(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """The tensor repeated `dims[i]` times along each dimension i; fewer `dims` than dimensions repeat the last
    dimensions (the others once)."""
    reps = _int_tuple(dims, "tile(): dims")
    reps = (1,) * (input._data.ndim - len(reps)) + reps
    return _repeat(input, reps)


# -- repeat_interleave ---------------------------------------------------------------------------------------
@spec.op("repeat_interleave", vmap=spec.rule("repeat_interleave_rule"),
         sample=spec.Sample(((2, 3),), lambda L, a: L.repeat_interleave(a, 2).exp() + a.repeat_interleave(
             L.tensor([1, 0, 2]), dim=1).sum() + a.repeat_interleave(3, dim=0).sum(0).sum()))
def repeat_interleave(input: Any, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times, the copies next to each other; `repeats`
    an int or a tensor of counts, one per element along `dim`. Without `dim`, of the flattened tensor. With
    only a tensor of counts, the indices repeated by the counts."""
    if repeats is None:  # repeat_interleave(counts): 0, 1, ... each repeated by its count
        counts = _counts(input)
        return Tensor._make(np.repeat(np.arange(counts.size, dtype=np.int64), counts), False, None)
    x = input
    if dim is None:
        x, dim = S.reshape(x, (-1,)), 0
    axis = S.dim_index(dim, x._data.ndim)
    if x._data.ndim == 0:
        x = S.reshape(x, (1,))
    n = x._data.shape[axis]
    if isinstance(repeats, Tensor) and repeats._data.ndim:
        counts = _counts(repeats)
        if counts.size == 1:
            counts = np.repeat(counts, n)
        if counts.size != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({axis}) = {n}")
        return index_select(x, axis, Tensor._make(np.repeat(np.arange(n, dtype=np.int64), counts), False, None))
    r = int(repeats._data) if isinstance(repeats, Tensor) else int(repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative" if not isinstance(repeats, Tensor) else
                           "repeats can not be negative")
    if isinstance(repeats, Tensor):  # a 0-d tensor of counts: PyTorch selects by index
        return index_select(x, axis, Tensor._make(np.repeat(np.arange(n, dtype=np.int64), r), False, None))
    shape = x._data.shape
    y = expand(S.unsqueeze(x, axis + 1), *shape[:axis + 1], r, *shape[axis + 1:])
    return S.reshape(y.clone(), (*shape[:axis], n * r, *shape[axis + 1:]))


def _counts(repeats: Any) -> np.ndarray:
    if not isinstance(repeats, Tensor) or repeats._data.dtype.kind not in "iu":
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    counts = repeats._data.reshape(-1).astype(np.int64)
    if repeats._data.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.size and counts.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return counts


# -- tril and triu -------------------------------------------------------------------------------------------
def _triangle(d: np.ndarray, k: int, lower: bool) -> np.ndarray:
    rows, cols = d.shape[-2:]
    keep = np.tri(rows, cols, k, dtype=bool) if lower else ~np.tri(rows, cols, k - 1, dtype=bool)
    return np.where(keep, d, np.zeros((), d.dtype))


def _triangle_node(lower: bool) -> type[Node]:
    name = "tril" if lower else "triu"

    def apply(self: Node, g: Tensor) -> tuple:
        return ((tril if lower else triu)(g, self.diagonal),)

    cls = type(f"{name.capitalize()}Backward0", (Node,), {
        "__slots__": ("diagonal",), "apply": apply, "__module__": __name__,
        "__doc__": f"The gradient's {'lower' if lower else 'upper'} triangle: the elements {name} kept.",
    })
    return spec.node(
        formula={"self": f"grad.{name}(diagonal)"},
        saved={"diagonal": SV.field("diagonal", lambda k: int(k) % 2**64)},
        jvp=lambda node, inputs, out, tangents: (tril if lower else triu)(tangents[0], node.diagonal),
        tangent=f"self_t.{name}(diagonal)",
        batched=lambda node, g: (_triangle(g, node.diagonal, lower),),
    )(cls)


TrilBackward0 = _triangle_node(True)
TriuBackward0 = _triangle_node(False)


def _tri(x: Tensor, diagonal: int, lower: bool) -> Tensor:
    d = x._data
    if d.ndim < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    node = record(TrilBackward0 if lower else TriuBackward0, x)
    if node is not None:
        node.diagonal = int(diagonal)
    return result(_triangle(d, int(diagonal), lower), node)


@spec.op("tril", inplace=True, vmap=spec.rule("matrix_rule", "tril"), nodes=(TrilBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.tril(a) * a + a.tril(-1).exp() + (a * 1.0).tril_(2)))
def tril(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The lower triangle of each matrix (the last two dims): the elements on and below diagonal `diagonal`
    (above the main one for positive, below for negative), zeros elsewhere."""
    return _tri(input, diagonal, True)


@spec.op("triu", inplace=True, vmap=spec.rule("matrix_rule", "triu"), nodes=(TriuBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.triu(a) * a + a.triu(1).exp() + (a * 1.0).triu_(-1)))
def triu(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The upper triangle of each matrix (the last two dims): the elements on and above diagonal `diagonal`,
    zeros elsewhere."""
    return _tri(input, diagonal, False)


# -- trace ---------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "trace_backward_symint(grad, self.sym_sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: trace(tangents[0]), tangent="trace(self_t)",
)
class TraceBackward0(Node):
    """The gradient goes to each element of the main diagonal."""

    __slots__ = ("in_shape",)

    def apply(self, g: Tensor) -> tuple:
        rows, cols = self.in_shape
        n = min(rows, cols)
        diagonal = (np.arange(n), np.arange(n))
        return (I.index_put_zeros(expand(g, n), diagonal, self.in_shape),)


@spec.op("trace", vmap=spec.rule("trace_rule"), nodes=(TraceBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.trace(a * a)))
def trace(input: Tensor) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of a matrix."""
    d = input._data
    if d.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {d.ndim}")
    if d.dtype == np.bool_:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    node = record(TraceBackward0, input)
    if node is not None:
        node.in_shape = d.shape
    # integers and booleans sum to int64, as PyTorch's sums do
    return result(np.asarray(np.trace(d), dtype=d.dtype if d.dtype.kind == "f" else np.int64), node)


# -- compositions ----------------------------------------------------------------------------------------------
@spec.op("broadcast_to", vmap=spec.rule("broadcast_to_rule"),
         sample=spec.Sample(((3, 1),), lambda L, a: L.broadcast_to(a, (2, 3, 4)) * 2.0))
def broadcast_to(input: Tensor, size: Any) -> Tensor:  # noqa: A002
    """`input` broadcast to shape `size` (a view; -1 keeps a dimension's size), as `input.expand(size)`."""
    return expand(input, tuple(_int_tuple(size, "broadcast_to(): size")))


def _at_least(x: Tensor, ndim: int) -> Tensor:
    d = x._data.ndim
    if d >= ndim:
        return x
    if ndim == 1 or d == 0:
        return S.reshape(x, (1,) * ndim)
    return S.unsqueeze(x, 0)


@spec.op("hstack", method=False, vmap=spec.rule("hvstack_rule", "hstack"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.hstack([a, a * 2]) * 1.5 + L.hstack((b, b[0])).sum()))
def hstack(tensors: Any) -> Tensor:
    """The tensors joined horizontally: along dimension 1, or 0 for vectors (numbers count as vectors)."""
    items = [_at_least(t, 1) for t in J._tensor_list(tensors, "hstack")]
    return J.cat(items, 0 if items[0]._data.ndim == 1 else 1)


@spec.op("vstack", method=False, vmap=spec.rule("hvstack_rule", "vstack"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.vstack([a, b]) * 1.5 + L.vstack((b, b)).sum()))
def vstack(tensors: Any) -> Tensor:
    """The tensors joined vertically, along dimension 0 (vectors count as rows)."""
    return J.cat([_at_least(t, 2) for t in J._tensor_list(tensors, "vstack")], 0)


@spec.op("meshgrid", method=False, vmap=spec.rule("meshgrid_rule"),
         sample=spec.Sample(((3,), (2,)), lambda L, a, b: sum(t.exp().sum() * (i + 1) for i, t in enumerate(
             L.meshgrid(a, b, indexing="ij") + L.meshgrid(a, b, a[:2], indexing="xy")))))
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of the vectors (or numbers) `tensors`: the i-th result holds tensor i's values along its
    own dimension, repeated along the others. `indexing='ij'` (matrix order) or `'xy'` (the first two swapped)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        # PyTorch's warning, without its module's name (which the language does not have)
        warnings.warn("meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise worded(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}",
                     f"meshgrid: indexing must be \"ij\" or \"xy\", not \"{indexing}\"")
    items = list(J._tensor_list(tensors, "meshgrid"))
    for t in items:
        if t._data.ndim > 1:
            raise worded(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}",
                         f"meshgrid: each tensor must be a vector or a number, not a tensor of {t._data.ndim} "
                         "dimensions")
    if len({t._data.dtype for t in items}) > 1:
        raise worded("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype",
                     "meshgrid: the tensors must all have the same dtype")
    # where each tensor's values run: its own dimension, the first two swapped for 'xy'
    order = list(range(len(items)))
    if indexing == "xy" and len(items) >= 2:
        order[0], order[1] = 1, 0
    sizes = [0] * len(items)
    for t, at in zip(items, order, strict=True):
        sizes[at] = t._data.size
    out = []
    for t, at in zip(items, order, strict=True):
        shape = [1] * len(items)
        shape[at] = -1
        out.append(expand(S.view(t, tuple(shape)), tuple(sizes)))
    return tuple(out)
