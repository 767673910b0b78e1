"""Joins and splits: `cat`, `stack`, and `split`, `chunk`, `unbind`, whose one node has an output per piece.

Each piece of a split is a view of its input (shape.py's views are what each backward puts gradients back
with: `select`, `slice_dim`), and each join's backward gives each input its slice of the gradient.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .core import record, result, result_dtype
from .shape import _ALL, _view, dim_index
from .slicing import select, slice_dim


# -- joining ---------------------------------------------------------------------------------------------
def _tensor_list(tensors: Any, what: str) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{what} takes a list or tuple of tensors, not a tensor")
    items = list(tensors)
    if not items:
        raise ValueError(f"{what} needs a non-empty list of tensors")
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            raise TypeError(f"{what}: element {i} is a {type(item).__name__}, not a tensor")
    return items


def _common_dtype(items: list[Tensor]) -> np.dtype:
    """PyTorch's promotion over all the tensors joined (a higher category wins, else the wider type)."""
    dtype = items[0]._data.dtype
    for t in items[1:]:
        if t._data.dtype != dtype:
            dtype = result_dtype(np.empty(0, dtype), np.empty(0, t._data.dtype))
    return dtype


def _legacy_empty(t: Tensor) -> bool:
    """PyTorch's cat still skips 1-d tensors of shape (0,), whatever the other tensors' shapes."""
    return t._data.shape == (0,)


def _joined(join: Any) -> Any:
    """cat's and stack's forward rule: the tangents joined the same way (zeros for an input without one)."""

    def jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        like = next(t for t in tangents if t is not None)
        parts = [t if t is not None else Tensor._make(np.zeros(x._data.shape, dtype=like._data.dtype), False, None)
                 for x, t in zip(inputs, tangents, strict=True)]
        return join(parts, node.dim)

    return jvp


@spec.node(
    formula={"tensors": "cat_tensors_backward(grad, to_args_sizes(tensors), dim)"},
    saved={"dim": SV.field("dim")},
    jvp=_joined(lambda parts, dim: cat(parts, dim)), tangent="cat(tensors_t, dim)",
)
class CatBackward0(Node):
    __slots__ = ("dim", "sizes", "shapes")

    def apply(self, g: Tensor) -> tuple:
        out, offset = [], 0
        for i, size in enumerate(self.sizes):
            if size is None:  # a skipped empty tensor: its gradient is empty too
                out.append(Tensor._make(np.zeros(self.shapes[i], dtype=g._data.dtype), False, None)
                           if self._next[i] is not None else None)
                continue
            wanted = self._next[i] is not None
            out.append(slice_dim(g, self.dim, offset, offset + size, 1) if wanted else None)
            offset += size
        return tuple(out)


@spec.op("cat", vmap=spec.rule("cat_rule"), aliases=("concat", "concatenate"), nodes=(CatBackward0,), method=False,
         sample=spec.Sample(((2, 3), (1, 3)), lambda L, a, b: L.cat([a, b], 0) + L.concat([b, a], -2)
                            + L.concatenate([a, b])))
def cat(tensors: Any, dim: int = 0) -> Tensor:
    """The tensors joined along an existing dimension `dim` (their other dimensions must agree)."""
    items = _tensor_list(tensors, "cat")
    skipped = [_legacy_empty(t) for t in items]
    if all(skipped):
        skipped = [False] * len(items)
    used = [t for t, skip in zip(items, skipped, strict=True) if not skip]
    ref = used[0]._data
    if ref.ndim == 0:
        raise RuntimeError("cat: a 0-d tensor cannot be concatenated; use stack, or unsqueeze it first")
    d = dim_index(dim, ref.ndim)
    for i, t in enumerate(items):
        s = t._data.shape
        others, expected = s[:d] + s[d + 1 :], ref.shape[:d] + ref.shape[d + 1 :]
        if not skipped[i] and (len(s) != ref.ndim or others != expected):
            raise RuntimeError(
                f"cat along dimension {d}: tensor {i} has shape {list(s)}, which does not match "
                f"{list(ref.shape)} outside that dimension"
            )
    dtype = _common_dtype(items)
    data = np.concatenate([t._data for t in used], axis=d, dtype=dtype)
    node = record(CatBackward0, *items)
    if node is not None:
        node.dim = d
        node.sizes = [None if skip else t._data.shape[d] for t, skip in zip(items, skipped, strict=True)]
        node.shapes = [t._data.shape for t in items]
    return result(data, node)


@spec.node(
    formula={"tensors": "stack_tensors_backward(grad, dim)"},
    saved={"dim": SV.field("dim")},
    jvp=_joined(lambda parts, dim: stack(parts, dim)), tangent="stack(tensors_t, dim)",
)
class StackBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, g: Tensor) -> tuple:
        return tuple(select(g, self.dim, i) if nxt is not None else None for i, nxt in enumerate(self._next))


@spec.op("stack", vmap=spec.rule("stack_rule"), nodes=(StackBackward0,), method=False,
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.stack([a, b], 1)))
def stack(tensors: Any, dim: int = 0) -> Tensor:
    """The tensors (all of one shape) joined along a new dimension `dim`."""
    items = _tensor_list(tensors, "stack")
    shape = items[0]._data.shape
    for i, t in enumerate(items):
        if t._data.shape != shape:
            raise RuntimeError(
                f"stack needs tensors of one shape: tensor 0 has shape {list(shape)}, tensor {i} has "
                f"{list(t._data.shape)}"
            )
    d = dim_index(dim, len(shape) + 1)
    data = np.stack([t._data for t in items], axis=d, dtype=_common_dtype(items))
    node = record(StackBackward0, *items)
    if node is not None:
        node.dim = d
    return result(data, node)


# -- splitting: one node with several outputs ---------------------------------------------------------------
@spec.base
class _MultiOutput(Node):
    """A node with one output per piece; `num_outputs` differs per call, so it is a slot here."""

    __slots__ = ("num_outputs", "in_shape", "dim")

    def zeros_for(self, i: int, like: Tensor) -> Tensor:
        raise NotImplementedError

    def filled(self, grads: Any) -> list[Tensor]:
        """The per-output gradients, zeros for an output that received none."""
        if type(grads) is not list:  # the engine passes a lone gradient bare when there is one output
            grads = [grads]
        like = next(g for g in grads if g is not None)
        return [g if g is not None else self.zeros_for(i, like) for i, g in enumerate(grads)]


def _piece(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """split's and unbind's forward rule: the same piece of the tangent (this output is piece `out._output_nr`)."""
    t, i = tangents[0], out._output_nr
    if isinstance(node, UnbindBackward0):
        return select(t, node.dim, i)
    start = int(builtins.sum(node.sizes[:i]))
    return slice_dim(t, node.dim, start, start + node.sizes[i])


@spec.base
class _SplitNode(_MultiOutput):
    __slots__ = ("sizes",)

    def zeros_for(self, i: int, like: Tensor) -> Tensor:
        shape = list(self.in_shape)
        shape[self.dim] = self.sizes[i]
        return Tensor._make(np.zeros(shape, dtype=like._data.dtype), False, None)

    def apply(self, grads: list[Tensor | None]) -> tuple:
        return (cat(self.filled(grads), self.dim),)


@spec.node(
    formula={"self": "split_backward(grads, split_size, dim, self.sizes())"},
    saved={
        "dim": SV.field("dim"), "self_sym_sizes": SV.field("in_shape", tuple),
        "split_size": SV.field("sizes", lambda s: s[0]),
    },
    jvp=_piece, tangent="splitting_tangent(self_t, split_size, dim)",
)
class SplitBackward0(_SplitNode):
    __slots__ = ()


@spec.node(
    formula={"self": "split_with_sizes_backward(grads, split_sizes, dim, self.sizes())"},
    saved={
        "dim": SV.field("dim"), "self_sym_sizes": SV.field("in_shape", tuple),
        "split_sizes": SV.field("sizes", tuple),
    },
    jvp=_piece, tangent="split_with_sizes(self_t, split_sizes, dim)",
)
class SplitWithSizesBackward0(_SplitNode):
    __slots__ = ()


@spec.node(
    formula={"self": "unbind_backward(grads, dim)"},
    saved={"dim": SV.field("dim")},
    jvp=_piece, tangent="unbind(self_t, dim)",
)
class UnbindBackward0(_MultiOutput):
    __slots__ = ()

    def zeros_for(self, i: int, like: Tensor) -> Tensor:
        return Tensor._make(np.zeros_like(like._data), False, None)

    def apply(self, grads: list[Tensor | None]) -> tuple:
        return (stack(self.filled(grads), self.dim),)


def _pieces(x: Tensor, node: _MultiOutput | None, datas: list[np.ndarray]) -> tuple[Tensor, ...]:
    """The outputs of a split: views of `x`, output `i` of `node`."""
    outs = []
    for i, data in enumerate(datas):
        out = _view(data, x, node)
        out._output_nr = i
        outs.append(out)
    return tuple(outs)


def _split_sizes(x: Tensor, cls: type[_SplitNode], sizes: list[int], d: int) -> tuple[Tensor, ...]:
    node = record(cls, x)
    if node is not None:
        node.num_outputs, node.in_shape, node.dim, node.sizes = len(sizes), x._data.shape, d, sizes
    starts = np.cumsum([0, *sizes])
    bounds = zip(starts[:-1], starts[1:], strict=True)
    datas = [x._data[(_ALL,) * d + (slice(int(a), int(b)),)] for a, b in bounds]
    return _pieces(x, node, datas)


@spec.op("split", vmap=spec.rule("split_rule"), nodes=(SplitBackward0, SplitWithSizesBackward0),
         sample=spec.Sample(((5, 3),), lambda L, a: L.split(a, [2, 3], 0) + a.split(2, 1)))
def split(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of `split_size` along `dim` (the last may be smaller), or of the sizes listed."""
    if not x._data.shape:
        raise RuntimeError("split: a 0-d tensor has no dimension to split")
    d = dim_index(dim, x._data.ndim)
    n = x._data.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split: the sizes {sizes} must add up to {n}, the size of dimension {d}")
        return _split_sizes(x, SplitWithSizesBackward0, sizes, d)
    size = int(split_size_or_sections)
    if size <= 0 and not (size == 0 and n == 0):
        raise RuntimeError(f"split: the piece size must be positive, not {size}")
    count = max(-(-n // size), 1) if size else 1
    sizes = [min(size, n - i * size) for i in range(count)] if size else [0]
    return _split_sizes(x, SplitBackward0, sizes, d)


@spec.op("chunk", vmap=spec.rule("chunk_rule"), nodes=(SplitBackward0, SplitWithSizesBackward0),
         sample=spec.Sample(((4, 3),), lambda L, a: L.chunk(a, 2, 0) + a.chunk(3, 1)))
def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` pieces of equal size along `dim` (the last may be smaller), as PyTorch splits."""
    if int(chunks) <= 0:
        raise RuntimeError(f"chunk: the number of chunks must be positive, not {chunks}")
    if not x._data.shape:
        raise RuntimeError("chunk: a 0-d tensor has no dimension to split")
    d = dim_index(dim, x._data.ndim)
    n = x._data.shape[d]
    size = -(-n // int(chunks))
    if size == 0:  # an empty dimension: `chunks` empty pieces
        return _split_sizes(x, SplitWithSizesBackward0, [0] * int(chunks), d)
    return split(x, size, d)


@spec.op("unbind", nodes=(UnbindBackward0,),
         vmap=spec.rule("unbind_rule"), sample=spec.Sample(((2, 3),), lambda L, a: L.unbind(a, 1) + a.unbind()))
def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along `dim`, that dimension removed."""
    if not x._data.shape:
        raise RuntimeError("unbind: a 0-d tensor has no dimension to unbind")
    d = dim_index(dim, x._data.ndim)
    n = x._data.shape[d]
    node = record(UnbindBackward0, x)
    if node is not None:
        node.num_outputs, node.in_shape, node.dim = n, x._data.shape, d
    return _pieces(x, node, [x._data[(_ALL,) * d + (i, Ellipsis)] for i in range(n)])
