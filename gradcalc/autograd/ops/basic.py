"""Identity-like operations: detach, clone, dtype conversion; and comparisons (bool results, no gradient)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import spec
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor, float32, float64, version_of
from .core import binary_operands, broadcast_error, record, result


def detach(x: Tensor) -> Tensor:
    """A new leaf on the same data (and the same version counter) that does not require grad."""
    t = Tensor._make(x._data, False, None, version_of(x))
    return t


def detach_(x: Tensor) -> Tensor:
    """Make this tensor a leaf that does not require grad, in place (not for a view: its base's graph
    still runs through it, so PyTorch refuses, as gradcalc does)."""
    if getattr(x, "_view_of", None) is not None:
        raise worded("Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                     "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                     "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                     "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.",
                     "detach_() cannot detach a view in place; use .detach(), which makes a new tensor")
    x.grad_fn, x._requires_grad, x._output_nr = None, False, 0
    return x


@spec.node(formula={"self": "grad"}, jvp=lambda node, inputs, out, tangents: clone(tangents[0]),
           tangent="self_t.clone()", batched=spec.BROADCASTS)
class CloneBackward0(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (g,)


@spec.op("clone", vmap=spec.rule("pointwise_unary", "clone"), nodes=(CloneBackward0,),
         sample=spec.Sample(((3,),), lambda L, a: L.clone(a) + a.clone() + a.float().double()))
def clone(x: Tensor) -> Tensor:
    """A copy with its own memory; gradients flow through it."""
    return result(x._data.copy(), record(CloneBackward0, x))


@spec.node(
    formula={"self": "_to_copy_backward(grad, self.options())"},
    jvp=lambda node, inputs, out, tangents: to_dtype(tangents[0], out._data.dtype), tangent="_to_copy(self_t, dtype)",
)
class ToCopyBackward0(Node):
    __slots__ = ("dtype",)

    def apply(self, g: Tensor) -> tuple:
        return (to_dtype(g, self.dtype),)


def to_dtype(x: Tensor, dtype: Any) -> Tensor:
    """The tensor converted to `dtype` (itself when it already has it)."""
    target = np.dtype(getattr(dtype, "np", dtype))
    if x._data.dtype == target:
        return x
    node = record(ToCopyBackward0, x) if target.kind == "f" else None
    if node is not None:
        node.dtype = x._data.dtype
    return result(x._data.astype(target), node)


def _compare(ufunc: np.ufunc, name: str) -> Callable[[Any, Any], Tensor]:
    def compare(a: Any, b: Any) -> Tensor:
        ad, bd = binary_operands(a, b)
        try:
            return Tensor._make(np.asarray(ufunc(ad, bd)), False, None)
        except ValueError as exc:
            raise broadcast_error(exc, a, b) from None

    compare.__name__ = name
    compare.__doc__ = f"Elementwise `{name}`: a bool tensor that never requires grad."
    return compare


eq, ne = _compare(np.equal, "eq"), _compare(np.not_equal, "ne")
lt, le = _compare(np.less, "lt"), _compare(np.less_equal, "le")
gt, ge = _compare(np.greater, "gt"), _compare(np.greater_equal, "ge")
logical_and, logical_or = _compare(np.logical_and, "logical_and"), _compare(np.logical_or, "logical_or")


def logical_not(a: Tensor) -> Tensor:
    """Elementwise not: a bool tensor."""
    return Tensor._make(np.asarray(np.logical_not(a._data)), False, None)


def _reduce_bool(x: Tensor, how: Any, dim: Any, keepdim: bool) -> Tensor:
    d = x._data
    if dim is None:
        return Tensor._make(np.asarray(how(d)), False, None)
    axes = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    for a in axes:
        if not -max(d.ndim, 1) <= a < max(d.ndim, 1):
            raise IndexError(f"dim {a} is out of range for a tensor of {d.ndim} dimensions")
    axes = tuple(a % max(d.ndim, 1) for a in axes) if d.ndim else ()
    for i, a in enumerate(axes):
        if a in axes[:i]:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return Tensor._make(np.asarray(how(d, axis=axes, keepdims=keepdim)), False, None)


def _any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether any element is true (nonzero), overall or along `dim`: a bool tensor."""
    return _reduce_bool(x, np.any, dim, keepdim)


def _all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Whether every element is true (nonzero), overall or along `dim`: a bool tensor."""
    return _reduce_bool(x, np.all, dim, keepdim)


def allclose(a: Tensor, b: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """Whether |a - b| <= atol + rtol |b| everywhere (broadcasting), as PyTorch's `allclose`."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError("allclose() takes two tensors")
    try:
        return bool(np.allclose(a._data, b._data, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None


def equal(a: Tensor, b: Tensor) -> bool:
    """Whether the two tensors have the same shape and the same elements."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        raise TypeError("equal() takes two tensors")
    return a._data.shape == b._data.shape and bool(np.array_equal(a._data, b._data))


def isnan(x: Tensor) -> Tensor:
    """Where the tensor holds NaN."""
    return Tensor._make(np.asarray(np.isnan(x._data)), False, None)


METHODS = {
    "detach": detach,
    "detach_": detach_,
    "float": lambda x: to_dtype(x, float32),
    "double": lambda x: to_dtype(x, float64),
    "to": lambda x, dtype: to_dtype(x, dtype),
    "type": lambda x, dtype: to_dtype(x, dtype),
    "contiguous": lambda x: x,
    "__eq__": eq, "__ne__": ne, "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge,
    "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "__and__": logical_and, "__or__": logical_or, "__invert__": logical_not,
    "logical_and": logical_and, "logical_or": logical_or, "logical_not": logical_not,
    "any": _any, "all": _all, "isnan": isnan, "allclose": allclose, "equal": equal,
}
FUNCTIONS = {
    "detach": detach, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "logical_and": logical_and, "logical_or": logical_or, "logical_not": logical_not, "isnan": isnan,
    "all": _all, "any": _any, "allclose": allclose, "equal": equal,
}
