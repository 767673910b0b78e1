"""Rearranging into new shapes and blocks: `unflatten`, `rot90`, `block_diag`, `cartesian_prod`, `vander`.

A deferred family (ops/lazy.py). rot90 and block_diag have nodes of their own (Rot90Backward0,
BlockDiagBackward0); the others are PyTorch's composites, recorded as PyTorch records them: unflatten a view,
cartesian_prod a meshgrid stacked (StackBackward0), vander ones with the powers written in (a cumprod, then flip).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..defaults import default_float
from ..node import Node
from ..tensor import Tensor
from . import joins as J
from . import shape as S
from . import slicing as SL
from .core import record, result
from .cumulative import cumprod
from .rearrange import flip, meshgrid
from .sums import sum_to


def _ints(value: Any, what: str) -> tuple[int, ...]:
    if isinstance(value, Tensor):
        value = value._data.tolist()
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise TypeError(f"{what} must be tuple of ints, but found element of type {type(value).__name__}")
    return tuple(int(v) for v in value)


# -- unflatten -----------------------------------------------------------------------------------------------
@spec.op("unflatten", vmap=spec.rule("unflatten_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.unflatten(a, 1, (2, 2)) * 2.0
                            + a.unflatten(-1, (-1, 1, 2)).sum(-1)))
def unflatten(input: Tensor, dim: int, sizes: tuple[int, ...]) -> Tensor:  # noqa: A002
    """`input` with dim `dim` split into dims of `sizes` (whose product is its size; one may be -1, inferred):
    the inverse of flatten, a view."""
    shape = input._data.shape
    axis = S.dim_index(dim, len(shape))
    sizes = _ints(sizes, "unflatten(): argument 'sizes' (position 2)")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[axis] if shape else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("unflatten got an unexpected error:\nonly one dimension can be inferred")
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {axis} "
                               f"({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {axis} "
                           f"({n}) in the input tensor")
    return S.reshape(input, shape[:axis] + sizes + shape[axis + 1:])


# -- rot90 ---------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.rot90(-k, dims)"},
    saved={"dims": SV.field("given", tuple), "k": SV.field("k")},
    jvp=lambda node, inputs, out, tangents: rot90(tangents[0], node.k, node.given), tangent="self_t.rot90(k, dims)",
    batched=None,
)
class Rot90Backward0(Node):
    """Rotating back: the gradient turned -k quarter turns in the same plane."""

    __slots__ = ("k", "given")

    def apply(self, g: Tensor) -> tuple:
        return (rot90(g, -self.k, self.given),)


@spec.op("rot90", vmap=spec.rule("rot90_rule"), nodes=(Rot90Backward0,),
         sample=spec.Sample(((2, 3, 4),), lambda L, a: L.rot90(a) * 2.0 + a.rot90(3, [2, 0]).sum()
                            + a.rot90(-2, (1, -1)).sum(0).sum()))
def rot90(input: Tensor, k: int = 1, dims: Any = (0, 1)) -> Tensor:  # noqa: A002
    """`input` turned `k` quarter turns in the plane of `dims` (from the first dim towards the second)."""
    given = _ints(dims, "rot90(): argument 'dims'")
    d = input._data
    if len(given) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(given)}")
    if d.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {d.ndim}")
    a, b = S.dim_index(given[0], d.ndim), S.dim_index(given[1], d.ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    out = np.array(np.rot90(d, int(k), axes=(a, b)))
    node = record(Rot90Backward0, input)
    if node is not None:
        node.k, node.given = int(k), given
    return result(out, node)


# -- block_diag ----------------------------------------------------------------------------------------------
def _block_diag_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    parts = [t if t is not None else Tensor._make(np.zeros(x._data.shape, out._data.dtype), False, None)
             for x, t in zip(inputs, tangents, strict=True)]
    return block_diag(*parts)


@spec.node(
    formula={"tensors": "block_diag_backward(grad, to_args_sizes(tensors), to_args_scalartypes(tensors))"},
    jvp=_block_diag_jvp, tangent="block_diag(tensors_t)", batched=None,
)
class BlockDiagBackward0(Node):
    """Each input's gradient is its block of the gradient (reshaped to its shape, in its dtype)."""

    __slots__ = ("shapes", "dtypes")

    def apply(self, g: Tensor) -> tuple:
        out: list[Tensor | None] = []
        row = col = 0
        for nxt, shape, dtype in zip(self._next, self.shapes, self.dtypes, strict=True):
            rows, cols = _block(shape)
            if nxt is not None:
                piece = SL.slice_dim(SL.slice_dim(g, 0, row, row + rows, 1), 1, col, col + cols, 1)
                if len(shape) == 1:  # PyTorch leaves the row (1, n) to the engine, which sums it to the vector
                    piece = sum_to(piece, shape)
                elif not shape:  # and squeezes a number's 1 x 1 block
                    piece = S.squeeze(S.squeeze(piece, 0), 0)
                if dtype != g._data.dtype:
                    piece = piece.to(dtype)
                out.append(piece)
            else:
                out.append(None)
            row, col = row + rows, col + cols
        return tuple(out)


def _block(shape: tuple[int, ...]) -> tuple[int, int]:
    """The rows and columns of an input's block: a number is 1 x 1, a vector one row."""
    if len(shape) == 2:
        return shape[0], shape[1]
    return 1, (shape[0] if shape else 1)


@spec.op("block_diag", method=False, nodes=(BlockDiagBackward0,), vmap=spec.rule("per_sample_rule", "block_diag"),
         sample=spec.Sample(((2, 3), (3,), ()), lambda L, a, b, c: L.block_diag(a, b, c) * 2.0
                            + L.block_diag(b.exp(), a[:1]).sum()))
def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (numbers, vectors as rows, matrices) as the blocks of a block-diagonal matrix, zeros elsewhere."""
    items = list(tensors)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"block_diag(): argument 'tensors' must be tuple of Tensors, not {type(t).__name__}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t._data.ndim} dimensions")
    dtype = J._common_dtype(items) if items else np.dtype(default_float())
    blocks = [_block(t._data.shape) for t in items]
    out = np.zeros((sum(r for r, _ in blocks) if items else 1, sum(c for _, c in blocks)), dtype=dtype)
    row = col = 0
    for t, (rows, cols) in zip(items, blocks, strict=True):
        out[row:row + rows, col:col + cols] = t._data.reshape(rows, cols)
        row, col = row + rows, col + cols
    node = record(BlockDiagBackward0, *items)
    if node is not None:
        node.shapes = [t._data.shape for t in items]
        node.dtypes = [t._data.dtype for t in items]
    return result(out, node)


# -- cartesian_prod ------------------------------------------------------------------------------------------
@spec.op("cartesian_prod", method=False, vmap=spec.rule("per_sample_rule", "cartesian_prod"),
         sample=spec.Sample(((3,), (2,)), lambda L, a, b: L.cartesian_prod(a, b) * 2.0
                            + L.cartesian_prod(a, b.exp(), a[:2]).sum(0).sum() + L.cartesian_prod(a).sum()))
def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The cartesian product of the vectors `tensors`: one row per combination of their elements, the last
    vector's running fastest (itertools.product's order)."""
    items = list(tensors)
    for t in items:
        if isinstance(t, Tensor) and t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(items) == 1:
        return items[0]
    if not items:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    grids = meshgrid(*items, indexing="ij")
    return J.stack([S.flatten(g) for g in grids], 1)


# -- vander --------------------------------------------------------------------------------------------------
# the sample reads vander of a detached input: PyTorch's backward through vander fails (see below), so there is no
# gradient to compare; tests/engine/test_ops_blocks.py checks its values and forward rule against PyTorch's
@spec.op("vander", method=False, vmap=spec.rule("vander_rule"),
         sample=spec.Sample(((4,),), lambda L, a: a * L.vander(a.detach()) + a * L.vander(a.detach(), 4, True)))
def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the vector `x`: column j holds x ** (N - 1 - j) (x ** j with `increasing`);
    `N` columns, by default as many as x has elements. An integer or bool x gives int64."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = x._data.dtype if x._data.dtype.kind in "fc" else np.dtype(np.int64)
    rows = x._data.shape[0]
    ones = Tensor._make(np.ones((rows, min(n, 1)), dtype=dtype), False, None)
    if n > 1:
        # PyTorch writes x into columns 1.. and their running product back in place, which leaves its backward
        # failing on a saved value changed in place; the same values and forward rule, out of place, have one
        powers = cumprod(S.unsqueeze(x, 1).to(dtype).expand(rows, n - 1), 1)
        out = J.cat([ones, powers], 1)
    else:
        out = ones
    return out if increasing else flip(out, (1,))
