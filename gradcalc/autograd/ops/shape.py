"""Shape operations: views of the same data in another shape (the joins and splits of tensors are joins.py's).

A view (reshape, transpose, select, ...) shares its input's memory and its version counter, as PyTorch's
views do, so an in-place change through either is seen by both, and bumps both versions. Each backward
puts the gradient back into the input's shape, with the engine's own operations, so that a backward
recorded under `create_graph` is differentiable again; most also run on bare NumPy arrays in a plain
backward (`raw_ok`), where they are a reshape or a transpose of the gradient array.

Node names and the graphs recorded are PyTorch's: `x.T` is `PermuteBackward0`, `x.t()` `TBackward0`,
`reshape` of a tensor that cannot be viewed is `UnsafeViewBackward0` after `CloneBackward0`, and the
backward of `select` records `SelectBackwardBackward0`, as PyTorch's double backward does.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import grad_mode, spec
from .. import saved as SV
from ..node import Node
from ..tensor import Tensor, Version
from .basic import clone
from .core import record, register_view, result

_ALL = slice(None)


# -- helpers ---------------------------------------------------------------------------------------------
def _shape_arg(shape: tuple) -> tuple[int, ...]:
    """`f(2, 3)`, `f((2, 3))` and `f([2, 3])` all name the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


def dim_index(dim: Any, ndim: int) -> int:
    """`dim` as a non-negative axis; a 0-d tensor accepts 0 and -1, as in PyTorch."""
    n = max(ndim, 1)
    d = int(dim)
    if not -n <= d < n:
        raise IndexError(
            f"dimension {d} is out of range: a tensor of {ndim} dimensions takes -{n} to {n - 1}"
        )
    return d % n


def _view(data: np.ndarray, base: Tensor, node: Node | None) -> Tensor:
    """An output that is a view of `base`'s array: registered as PyTorch's views are (it shares `base`'s
    version counter, and in-place changes through either keep both graphs right)."""
    out = result(data, node)
    register_view(out, base)
    return out


def _is_tensor(g: Any) -> bool:
    return type(g) is Tensor


def _prod(shape: Sequence[int]) -> int:
    return math.prod(shape)


# -- reshape and view ------------------------------------------------------------------------------------
def _reshaped(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Tensor:
    """The forward rule of every reshaping view: the tangent in the output's shape."""
    return reshape(tangents[0], out._data.shape)


def _batched_reshape(self: Node, g: Any) -> tuple:
    return (g.reshape(g.shape[:1] + self.in_shape),)


@spec.node(
    formula={"self": "grad.reshape(self.sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="self_t.view(size)", batched=_batched_reshape,
)
class ViewBackward0(Node):
    __slots__ = ("in_shape",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        return (reshape(g, self.in_shape) if _is_tensor(g) else g.reshape(self.in_shape),)


@spec.node(
    formula={"self": "grad.reshape(self.sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="_unsafe_view(self_t, size)", batched=_batched_reshape,
)
class UnsafeViewBackward0(ViewBackward0):
    """PyTorch's `_unsafe_view`: a reshape of a fresh result (the copy `reshape` makes, matmul's output)."""

    __slots__ = ()


def _target_shape(x: Tensor, shape: tuple) -> tuple[int, ...]:
    """The requested shape with a -1 filled in, checked against the number of elements."""
    target = _shape_arg(shape)
    size = x._data.size
    if target.count(-1) > 1:
        raise RuntimeError(f"shape {list(target)}: only one dimension can be -1 (inferred)")
    if any(n < -1 for n in target):
        raise RuntimeError(f"shape {list(target)}: sizes cannot be negative")
    known = _prod(n for n in target if n != -1)
    if -1 in target:
        if known == 0 or size % known:
            raise RuntimeError(f"shape {list(target)} is invalid for a tensor of {size} elements")
        target = tuple(size // known if n == -1 else n for n in target)
    elif known != size:
        raise RuntimeError(
            f"shape {list(target)} is invalid for a tensor of {size} elements (shape {list(x._data.shape)})"
        )
    return target


def _no_copy_reshape(data: np.ndarray, target: tuple[int, ...]) -> np.ndarray | None:
    """`data` in the new shape without copying, or None when its strides do not allow that."""
    try:
        return np.reshape(data, target, copy=False)
    except ValueError:
        return None


@spec.op("view", nodes=(ViewBackward0,), top_level=False, vmap=spec.rule("reshaping", "view"),
         sample=spec.Sample(((2, 3),), lambda L, a: a.view(3, 2) + a.view(-1).view(3, 2)))
def view(x: Tensor, *shape: Any) -> Tensor:
    """The same memory in another shape (one dimension may be -1); an error when the strides forbid it."""
    target = _target_shape(x, shape)
    data = _no_copy_reshape(x._data, target)
    if data is None:
        raise RuntimeError(
            f"view{list(target)}: this tensor's memory layout (e.g. after a transpose) cannot be viewed in "
            "that shape without a copy; use .reshape(...), which copies when it must"
        )
    node = record(ViewBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
    return _view(data, x, node)


@spec.op("reshape", nodes=(ViewBackward0, UnsafeViewBackward0), vmap=spec.rule("reshaping", "reshape"),
         sample=spec.Sample(((2, 3),), lambda L, a: L.reshape(a, (3, 2)) + a.t().reshape(2, 3).t()))
def reshape(x: Tensor, *shape: Any) -> Tensor:
    """The same elements in another shape: a view when the layout allows, else a copy."""
    target = _target_shape(x, shape)
    data = _no_copy_reshape(x._data, target)
    if data is None:
        return unsafe_view(clone(x), target)  # PyTorch's graph for a copying reshape
    node = record(ViewBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
    return _view(data, x, node)


def unsafe_view(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A reshape of a fresh result, recorded as `UnsafeViewBackward0`; it has its own version counter."""
    node = record(UnsafeViewBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
    return result(x._data.reshape(shape), node)


@spec.op("view_as", vmap=spec.rule("view_as_rule"), nodes=(ViewBackward0,), top_level=False,
         sample=spec.Sample(((2, 3), (3, 2)), lambda L, a, b: a.view_as(b)))
def view_as(x: Tensor, other: Tensor) -> Tensor:
    """`x.view(other.shape)`."""
    return view(x, other._data.shape)


@spec.op("reshape_as", vmap=spec.rule("reshape_as_rule"), nodes=(ViewBackward0,), top_level=False,
         sample=spec.Sample(((2, 3), (3, 2)), lambda L, a, b: a.reshape_as(b)))
def reshape_as(x: Tensor, other: Tensor) -> Tensor:
    """`x.reshape(other.shape)`."""
    return reshape(x, other._data.shape)


@spec.op("flatten", vmap=spec.rule("flatten_rule"), nodes=(ViewBackward0,),
         sample=spec.Sample(((2, 3, 2),), lambda L, a: L.flatten(a, 1) + L.flatten(a).view(2, 6)))
def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Dimensions `start_dim` to `end_dim` (inclusive) merged into one."""
    shape = x._data.shape
    if not shape:
        return reshape(x, (1,))
    s, e = dim_index(start_dim, len(shape)), dim_index(end_dim, len(shape))
    if s > e:
        raise RuntimeError(f"flatten: start_dim ({start_dim}) comes after end_dim ({end_dim})")
    if s == e:
        return x  # nothing to merge: PyTorch returns the tensor itself
    return reshape(x, shape[:s] + (_prod(shape[s : e + 1]),) + shape[e + 1 :])


# -- squeeze, unsqueeze -------------------------------------------------------------------------------------
@spec.base
class _SqueezeNode(Node):
    """Backward of a squeeze: the removed dims (ascending) put back with unsqueeze."""

    __slots__ = ("in_shape", "removed")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if not _is_tensor(g):
            return (g.reshape(self.in_shape),)
        for d in self.removed:
            g = unsqueeze(g, d)
        return (g,)


@spec.node(
    formula={"self": "unsqueeze_to(grad, self.sizes())"},
    saved={"self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="self_t.squeeze()", batched=_batched_reshape,
)
class SqueezeBackward0(_SqueezeNode):
    """squeeze() of all size-1 dims."""

    __slots__ = ()


@spec.node(
    formula={"self": "unsqueeze_to(grad, dim, self.sizes())"},
    saved={"dim": SV.field("removed", lambda r: r[0]), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="self_t.squeeze(dim)", batched=_batched_reshape,
)
class SqueezeBackward1(_SqueezeNode):
    """squeeze(dim)."""

    __slots__ = ()


@spec.node(
    formula={"self": "unsqueeze_to(grad, dim, self.sizes())"},
    saved={"dim": SV.field("removed", tuple), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="self_t.squeeze(dim)", batched=_batched_reshape,
)
class SqueezeBackward2(_SqueezeNode):
    """squeeze((d0, d1, ...))."""

    __slots__ = ()


@spec.node(
    formula={"self": "unsqueeze_to(grad, dim, self.sizes())"},
    saved={"dim": SV.field("removed", lambda r: r[0]), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=_reshaped, tangent="self_t.squeeze(dim)", batched=_batched_reshape,
)
class SqueezeBackward4(_SqueezeNode):
    """squeeze_(dim), in place: what matmul of a vector by a matrix records last."""

    __slots__ = ()


@spec.op("squeeze", nodes=(SqueezeBackward0, SqueezeBackward1, SqueezeBackward2), vmap=spec.rule("squeeze_rule"),
         sample=spec.Sample(((2, 1, 3, 1),), lambda L, a: L.squeeze(a, 1).sum(-1) + a.squeeze()
                            + a.squeeze((1, 3))))
def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    """Remove dimensions of size 1: all of them, or those of `dim` (an int or a tuple) that have size 1."""
    shape = x._data.shape
    if dim is None:
        cls, dims = SqueezeBackward0, range(len(shape))
    elif isinstance(dim, (tuple, list)):
        cls, dims = SqueezeBackward2, sorted({dim_index(d, len(shape)) for d in dim})
    else:
        cls, dims = SqueezeBackward1, (dim_index(dim, len(shape)),)
    removed = tuple(d for d in dims if d < len(shape) and shape[d] == 1)
    node = record(cls, x)
    if node is not None:
        node.in_shape, node.removed = shape, removed
    data = np.squeeze(x._data, axis=removed) if removed else x._data.view()
    return _view(data, x, node)


@spec.node(
    formula={"self": "grad.squeeze(dim)"},
    saved={"dim": SV.field("dim")},
    jvp=lambda node, inputs, out, tangents: unsqueeze(tangents[0], node.dim), tangent="self_t.unsqueeze(dim)",
    batched=lambda self, g: (np.squeeze(g, axis=self.dim + 1),),
)
class UnsqueezeBackward0(Node):
    __slots__ = ("dim",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        return (squeeze(g, self.dim) if _is_tensor(g) else np.squeeze(g, axis=self.dim),)


@spec.op("unsqueeze", nodes=(UnsqueezeBackward0,), vmap=spec.rule("unsqueeze_rule"),
         sample=spec.Sample(((2, 3),), lambda L, a: L.unsqueeze(a, 1) + a.unsqueeze(-1)))
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at `dim` (from -(ndim+1) to ndim)."""
    d = dim_index(dim, x._data.ndim + 1)
    node = record(UnsqueezeBackward0, x)
    if node is not None:
        node.dim = d
    return _view(np.expand_dims(x._data, d), x, node)


# -- transposes ----------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.transpose(dim0, dim1)"},
    saved={"dim0": SV.field("dims", lambda d: d[0]), "dim1": SV.field("dims", lambda d: d[1])},
    jvp=lambda node, inputs, out, tangents: transpose(tangents[0], *node.dims), tangent="self_t.transpose(dim0, dim1)",
    batched=lambda self, g: (np.swapaxes(g, self.dims[0] + 1, self.dims[1] + 1),),
)
class TransposeBackward0(Node):
    __slots__ = ("dims",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        d0, d1 = self.dims
        return (transpose(g, d0, d1) if _is_tensor(g) else np.swapaxes(g, d0, d1),)


@spec.op("transpose", vmap=spec.rule("transpose_rule"), aliases=("swapaxes", "swapdims"), nodes=(TransposeBackward0,),
         sample=spec.Sample(((2, 3, 4),), lambda L, a: L.transpose(a, 0, 2) + L.swapaxes(a, 2, 0) + a.swapdims(0, -1)))
def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap two dimensions (a view)."""
    nd = x._data.ndim
    d0, d1 = dim_index(dim0, nd), dim_index(dim1, nd)
    data = np.swapaxes(x._data, d0, d1) if nd else x._data.view()
    node = record(TransposeBackward0, x)
    if node is not None:
        node.dims = (d0, d1)
    return _view(data, x, node)


@spec.node(
    formula={"self": "grad.t()"},
    jvp=lambda node, inputs, out, tangents: t(tangents[0]), tangent="self_t.t()",
    batched=lambda self, g: (np.swapaxes(g, 1, 2) if g.ndim == 3 else g,),
)
class TBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        return (t(g) if _is_tensor(g) else g.T,)


@spec.op("t", nodes=(TBackward0,),
         vmap=spec.rule("t_rule"), sample=spec.Sample(((2, 3),), lambda L, a: L.t(a) + a[:, 0].t()))
def t(x: Tensor) -> Tensor:
    """The transpose of a matrix; a vector or a 0-d tensor comes back as it is (still a new view)."""
    if x._data.ndim > 2:
        raise RuntimeError(
            f"t() takes a tensor of at most 2 dimensions, this one has {x._data.ndim}: use transpose"
        )
    return _view(x._data.T, x, record(TBackward0, x))


def _batched_permute(self: Node, g: Any) -> tuple:
    inverse = tuple(int(i) + 1 for i in np.argsort(self.dims))
    return (np.transpose(g, (0, *inverse)),)


@spec.node(
    formula={"self": "permute_backwards(grad, dims)"},
    saved={"dims": SV.field("dims", tuple)},
    jvp=lambda node, inputs, out, tangents: permute(tangents[0], node.dims), tangent="self_t.permute(dims)",
    batched=_batched_permute,
)
class PermuteBackward0(Node):
    __slots__ = ("dims",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        inverse = tuple(int(i) for i in np.argsort(self.dims))
        return (permute(g, inverse) if _is_tensor(g) else np.transpose(g, inverse),)


@spec.op("permute", vmap=spec.rule("permute_rule"), nodes=(PermuteBackward0,),
         sample=spec.Sample(((2, 3, 4),), lambda L, a: L.permute(a, (2, 0, 1)) + a.permute(2, 0, 1)))
def permute(x: Tensor, *dims: Any) -> Tensor:
    """Reorder the dimensions (a view)."""
    nd = x._data.ndim
    order = tuple(dim_index(d, nd) for d in _shape_arg(dims))
    if len(order) != nd:
        raise RuntimeError(f"permute: {len(order)} dimensions given for a tensor of {nd} dimensions")
    if len(set(order)) != len(order):
        raise RuntimeError(f"permute: {list(order)} names a dimension twice")
    node = record(PermuteBackward0, x)
    if node is not None:
        node.dims = order
    return _view(np.transpose(x._data, order) if nd else x._data.view(), x, node)


def T(x: Tensor) -> Tensor:
    """All dimensions reversed (PyTorch's `x.T`: a permute); deprecated there for other than 2 dims."""
    nd = x._data.ndim
    if nd == 0:
        warnings.warn("x.T of a 0-d tensor is deprecated: it is the tensor itself", UserWarning, stacklevel=2)
    elif nd != 2:
        warnings.warn(
            f"x.T on a tensor of {nd} dimension{'s' if nd > 1 else ''} reverses them all, a use that is "
            "deprecated: write x.mT to transpose the last two dimensions, or x.permute(...) to reverse them",
            UserWarning,
            stacklevel=2,
        )
    return permute(x, tuple(range(nd - 1, -1, -1)))


def mT(x: Tensor) -> Tensor:
    """The last two dimensions swapped (a batch of matrices transposed)."""
    if x._data.ndim < 2:
        raise RuntimeError(f"x.mT needs a tensor of at least 2 dimensions, this one has {x._data.ndim}")
    return transpose(x, -2, -1)


def H(x: Tensor) -> Tensor:
    """The conjugate transpose of a matrix (for real tensors, the transpose)."""
    if x._data.ndim != 2:
        raise RuntimeError(f"x.H needs a matrix (2 dimensions), this tensor has {x._data.ndim}: use x.mH")
    return transpose(x, 0, 1)


def _squeeze_(x: Tensor, dim: int) -> Tensor:
    """`x.squeeze_(dim)` on a fresh result nobody else holds: recorded as PyTorch's in-place
    `SqueezeBackward4`, and the version counter shows the in-place change."""
    d = dim_index(dim, x._data.ndim)
    removed = (d,) if x._data.shape[d] == 1 else ()
    node = record(SqueezeBackward4, x)
    if node is not None:
        node.in_shape, node.removed = x._data.shape, removed
    version = Version()
    version.value = 1
    data = np.squeeze(x._data, axis=removed) if removed else x._data
    if node is not None and grad_mode.forward_seen:
        return grad_mode.forward_ad.output(data, node, version)
    return Tensor._make(data, node is not None, node, version)


PROPERTIES = {"T": T, "mT": mT, "mH": mT, "H": H}
