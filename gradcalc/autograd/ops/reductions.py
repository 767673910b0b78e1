"""Reductions: sum, mean, prod, max/min, amax/amin, norm, logsumexp, var/std over all elements or over
`dim` (an int, or a tuple where PyTorch takes one), with `keepdim`; and softmax/log_softmax along a dim.

A reduction's backward first puts the reduced dims back as size 1 (`_keep`, PyTorch's
`unsqueeze_multiple`) so that the gradient broadcasts against the input. The formulas are PyTorch's
(`derivatives.yaml`), written with the engine's own operations; most run on bare arrays too (`raw_ok`),
since their constants (masks, counts) are NumPy arrays multiplied in from the right of a tensor.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from ..node import NOTHING, Node, SavedOutput
from ..tensor import Tensor
from . import arithmetic as A
from . import elementwise as E
from . import shape as S
from .core import needs, record, result

_py_max = builtins.max
# sum(x) and mean(x) are PyTorch's overloads without a dim (SumBackward0); sum(x, None) has one (SumBackward1)
_NO_DIM: Any = type("_NoDim", (), {"__repr__": lambda self: "None", "__slots__": ()})()


# -- dims ------------------------------------------------------------------------------------------------
def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """`dim` (None or () for all, an int, or a sequence) as a sorted tuple of non-negative axes.

    A 0-d tensor takes dim 0 or -1, as in PyTorch, and reduces over its one element: `(0,)`."""
    if dim is None or dim is _NO_DIM:
        return tuple(range(ndim)) if ndim else (0,)
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if not dims:
        return tuple(range(ndim)) if ndim else (0,)
    n = _py_max(ndim, 1)
    out = []
    for d in dims:
        d = int(d)
        if not -n <= d < n:
            raise IndexError(f"dimension {d} is out of range: a tensor of {ndim} dimensions takes -{n} to {n - 1}")
        d %= n
        if d in out:
            raise RuntimeError(f"dim {d} is given more than once in {list(dims)}: name each dim once")
        out.append(d)
    return tuple(sorted(out))


def _one_dim(dim: Any, ndim: int, name: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): dim must be one int here, not {type(dim).__name__}")
    return normalize_dims(dim, ndim)[0]


def _axis(dims: tuple[int, ...], ndim: int) -> Any:
    """The NumPy axis argument for `dims` (None for a 0-d tensor, which NumPy has no axis for)."""
    return dims if ndim else None


def _count(shape: tuple[int, ...], dims: tuple[int, ...]) -> int:
    return math.prod(shape[i] for i in dims) if shape else 1


def _keep(g: Any, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool, always: bool = False) -> Any:
    """A reduced result with its reduced dims back as size 1, to broadcast against the input. A 0-d one
    broadcasts as it is (PyTorch's backward of a full reduction expands it directly), unless `always` (PyTorch's
    logsumexp unsqueezes it all the same)."""
    if keepdim or not in_shape:
        return g
    kept = tuple(1 if i in dims else n for i, n in enumerate(in_shape))
    if type(g) is not Tensor:
        return np.reshape(g, kept)
    if g._data.shape == kept or (not g._data.ndim and not always):
        return g
    for d in sorted(dims):  # PyTorch's unsqueeze_multiple: its double backward is then a squeeze, as PyTorch's
        g = S.unsqueeze(g, d)
    return g


def expand_back(g: Tensor, in_shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """Undo a reduction's shape change: restore the reduced dims as size 1, then broadcast to `in_shape`."""
    return _expand(_keep(g, in_shape, dims, keepdim), in_shape)


def _expand(g: Any, shape: tuple[int, ...]) -> Any:
    """Broadcast a gradient back over an input's shape: a view, for tensors and bare arrays alike."""
    if type(g) is not Tensor:
        return np.broadcast_to(g, shape)
    return S.expand(g, shape) if g._data.shape != shape else g


def _batched_expand(g: np.ndarray, in_shape: tuple[int, ...], dims: Any, keepdim: bool) -> np.ndarray:
    """`expand_back` of a gradient array with a leading batch dim (`Node.apply_batched`): the reduced dims
    (all of them when `dims` is None) put back as size 1 after the batch dim, then broadcast."""
    b = g.shape[0]
    if dims is None:
        g = g.reshape((b,) + (1,) * len(in_shape))
    elif not keepdim:
        g = np.expand_dims(g, tuple(d + 1 for d in dims))
    return np.broadcast_to(g, (b,) + tuple(in_shape))


def reshape_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Reshape used inside backward formulas."""
    return S.reshape(x, shape)


def _const(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a), False, None)


def _np_dtype(dtype: Any) -> np.dtype | None:
    return None if dtype is None else np.dtype(getattr(dtype, "np", dtype))


def _floating(x: Tensor, name: str) -> np.ndarray:
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    return d


def _cast_input(x: Tensor, dtype: Any) -> tuple[np.ndarray, np.dtype | None]:
    """The data to reduce, converted to `dtype=` first as PyTorch does; and the dtype to give gradients back."""
    target = _np_dtype(dtype)
    d = x._data
    if target is None or target == d.dtype:
        return d, None
    if target.kind != "f" and x._requires_grad:
        raise RuntimeError(f"dtype={target} cannot carry a gradient: reduce to a floating dtype, or .detach() first")
    return d.astype(target), d.dtype


def _back_to(g: Any, dtype: np.dtype | None) -> Any:
    """A gradient given back in the input's dtype, after a reduction that computed in `dtype=`."""
    if dtype is None:
        return g
    if type(g) is not Tensor:
        return np.asarray(g, dtype=dtype)
    from .basic import to_dtype

    return to_dtype(g, dtype)


# -- sum, mean -------------------------------------------------------------------------------------------
class SumBackward0(Node):
    __slots__ = ("in_shape", "in_dtype")
    saved_names = {"self_sym_sizes": SV.field("in_shape", tuple)}
    raw_ok = True
    batchable = True

    def apply(self, g: Tensor) -> tuple:
        return (_expand(_back_to(g, self.in_dtype), self.in_shape),)

    def apply_batched(self, g: Any) -> tuple:
        return (_batched_expand(_back_to(g, self.in_dtype), self.in_shape, None, False),)


class SumBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim", "in_dtype")
    saved_names = {
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "self_sym_sizes": SV.field("in_shape", tuple),
    }
    raw_ok = True
    batchable = True

    def apply(self, g: Tensor) -> tuple:
        return (expand_back(_back_to(g, self.in_dtype), self.in_shape, self.dims, self.keepdim),)

    def apply_batched(self, g: Any) -> tuple:
        return (_batched_expand(_back_to(g, self.in_dtype), self.in_shape, self.dims, self.keepdim),)


def _acc_dtype(d: np.ndarray) -> Any:
    return np.int64 if d.dtype.kind in "bi" else None


def sum(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001
    """Sum of all elements, or over `dim` (bools and ints sum as int64)."""
    d, in_dtype = (x._data, None) if dtype is None else _cast_input(x, dtype)
    if dim is _NO_DIM and not keepdim:
        node = record(SumBackward0, x)
        if node is not None:
            node.in_shape, node.in_dtype = d.shape, in_dtype
        return result(d.sum(dtype=_acc_dtype(d)), node)
    dims = normalize_dims(dim, d.ndim)
    node = record(SumBackward1, x)
    if node is not None:
        node.in_shape, node.dims, node.keepdim, node.in_dtype = d.shape, dims, keepdim, in_dtype
    return result(d.sum(axis=_axis(dims, d.ndim), keepdims=keepdim, dtype=_acc_dtype(d)), node)


class MeanBackward0(Node):
    __slots__ = ("in_shape", "count", "in_dtype")
    saved_names = {"self_sym_numel": SV.field("in_shape", SV.numel), "self_sym_sizes": SV.field("in_shape", tuple)}
    raw_ok = True
    batchable = True

    def apply(self, g: Tensor) -> tuple:
        return (_expand(_back_to(g / self.count, self.in_dtype), self.in_shape),)

    def apply_batched(self, g: Any) -> tuple:
        return (_batched_expand(_back_to(g / self.count, self.in_dtype), self.in_shape, None, False),)


class MeanBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim", "count", "in_dtype")
    saved_names = {
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"),
        "self_sym_numel": SV.field("in_shape", SV.numel), "self_sym_sizes": SV.field("in_shape", tuple),
    }
    raw_ok = True
    batchable = True

    def apply(self, g: Tensor) -> tuple:
        g = _back_to(g / self.count, self.in_dtype)
        return (expand_back(g, self.in_shape, self.dims, self.keepdim),)

    def apply_batched(self, g: Any) -> tuple:
        g = _back_to(g / self.count, self.in_dtype)
        return (_batched_expand(g, self.in_shape, self.dims, self.keepdim),)


def mean(x: Tensor, dim: Any = _NO_DIM, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean of all elements, or over `dim` (nan for no elements)."""
    d, in_dtype = (x._data, None) if dtype is None else _cast_input(x, dtype)
    if d.dtype.kind != "f":
        raise RuntimeError(f"mean() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    if dim is _NO_DIM and not keepdim:
        node = record(MeanBackward0, x)
        if node is not None:
            node.in_shape, node.count, node.in_dtype = d.shape, float(d.size), in_dtype
        return result(d.mean() if d.size else np.array(np.nan, d.dtype), node)
    dims = normalize_dims(dim, d.ndim)
    node = record(MeanBackward1, x)
    if node is not None:
        node.in_shape, node.dims, node.keepdim, node.in_dtype = d.shape, dims, keepdim, in_dtype
        node.count = float(_count(d.shape, dims))
    return result(d.mean(axis=_axis(dims, d.ndim), keepdims=keepdim), node)


# -- prod --------------------------------------------------------------------------------------------------
def _prod_others_np(d: np.ndarray, axis: int) -> np.ndarray:
    """The product of all the other elements along `axis`, exact with zeros (no division): the product of
    the elements before times the product of those after, from two exclusive cumulative products."""
    n = d.shape[axis]
    out = np.ones_like(d)
    if n < 2:
        return out
    before = [slice(None)] * d.ndim
    after = [slice(None)] * d.ndim
    before[axis], after[axis] = slice(1, None), slice(None, -1)
    out[tuple(before)] = np.cumprod(d[tuple(after)], axis=axis)  # out[i] = x[0] ... x[i-1]
    rev = np.flip(d, axis)
    suffix = np.ones_like(d)
    suffix[tuple(before)] = np.cumprod(rev[tuple(after)], axis=axis)
    out *= np.flip(suffix, axis)  # times x[i+1] ... x[n-1]
    return out


class ProdOthersBackward(Node):
    """The derivative of `prod_others`: d E_i / d x_k = the product of all but x_i and x_k (k != i).

    Written as `prod_others` of an (n, n) stack of copies of x with the diagonal set to 1, so that it is
    differentiable again, to any order. Only a gradient recorded under create_graph, of a product over
    zeros, reaches this node."""

    __slots__ = ("axis",)

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.saved_tensors
        shape, a = x._data.shape, self.axis
        n, lead, trail = shape[a], math.prod(shape[:a]), math.prod(shape[a + 1 :])
        eye = _const(np.eye(n, dtype=bool).reshape(1, n, n, 1))
        rows = S.expand(S.reshape(x, (lead, 1, n, trail)), (lead, n, n, trail))  # rows[., k, j, .] = x_j
        others = prod_others(E.where(eye, 1.0, rows), 2)  # [., k, i, .] = prod of x_j, j not in {i, k}
        terms = E.where(eye, 0.0, others * S.reshape(g, (lead, 1, n, trail)))
        return (S.reshape(sum(terms, 2), shape),)


def prod_others(x: Tensor, axis: int) -> Tensor:
    """For each element, the product of all the other elements along `axis` (differentiable)."""
    # alone along the axis, the product of the others is the empty product 1: a constant
    node = record(ProdOthersBackward, x) if x._data.shape[axis] > 1 else None
    if node is not None:
        node.axis = axis
        node.save(x)
    return result(_prod_others_np(x._data, axis), node)


class _ProdNode(Node):
    """PyTorch's prod_backward: grad * result / x when x has no zero, else the product of the others."""

    __slots__ = ("in_shape", "dim", "keepdim", "in_dtype")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, out = self.unpack_saved(raw)
        if not self.in_shape:
            return (g,)
        dim = self.dim
        xd = x if raw else x._data
        if dim is not None:
            g, out = _keep(g, self.in_shape, (dim,), self.keepdim), _keep(out, self.in_shape, (dim,), self.keepdim)
        if not (xd == 0).any():
            grad = g * (out / x)
        elif dim is None:  # over all elements: the others along the flattened tensor
            flat = np.reshape(x, -1) if raw else S.reshape(x, (-1,))
            others = _prod_others_np(flat, 0) if raw else prod_others(flat, 0)
            grad = g * (np.reshape(others, self.in_shape) if raw else S.reshape(others, self.in_shape))
        else:
            grad = g * (_prod_others_np(x, dim) if raw else prod_others(x, dim))
        return (_back_to(grad, self.in_dtype),)


class ProdBackward0(_ProdNode):
    __slots__ = ()
    saved_names = {"result": SV.tensor(1), "self": SV.tensor(0)}


class ProdBackward1(_ProdNode):
    __slots__ = ()
    saved_names = {
        "dim": SV.field("dim"), "keepdim": SV.field("keepdim"), "result": SV.tensor(1), "self": SV.tensor(0),
    }


def prod(x: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Product of all elements, or along one `dim` (bools and ints multiply as int64)."""
    d, in_dtype = (x._data, None) if dtype is None else _cast_input(x, dtype)
    if dim is None:
        data, cls, axis = d.prod(dtype=_acc_dtype(d)), ProdBackward0, None
    else:
        axis = _one_dim(dim, d.ndim, "prod")
        data = d.prod(axis=axis if d.ndim else None, keepdims=keepdim, dtype=_acc_dtype(d))
        cls = ProdBackward1
    node = record(cls, x)
    out = result(data, node)
    if node is not None:
        node.in_shape, node.dim, node.keepdim, node.in_dtype = d.shape, axis, keepdim, in_dtype
        node.save(x, SavedOutput(out))
    return out


# -- max, min over all elements, and along a dim with indices ----------------------------------------------
class MaxBackward1(Node):
    """max/min over all elements: the gradient split evenly among the elements equal to the result (among
    the nans when the result is nan), as PyTorch's evenly_distribute_backward."""

    __slots__ = ("value",)
    saved_names = {"result": SV.array("value"), "self": SV.tensor(0)}
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        xd = x if type(g) is not Tensor else x._data
        mask = np.isnan(xd) if np.isnan(self.value) else xd == self.value
        return (E.filled_where(mask, g / float(np.count_nonzero(mask))),)


class MinBackward1(MaxBackward1):
    __slots__ = ()


class MaxBackward0(Node):
    """max/min along a dim: the gradient goes to the element at the returned index."""

    __slots__ = ("indices", "in_shape", "dim", "keepdim")
    saved_names = {
        "dim": SV.field("dim"), "indices": SV.array("indices"), "keepdim": SV.field("keepdim"),
        "self_sym_sizes": SV.field("in_shape", tuple),
    }
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if not self.in_shape:
            return (g,)
        dim, shape = self.dim, self.in_shape
        idx = self.indices if self.keepdim else np.expand_dims(self.indices, dim)
        positions = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
        return (E._select(positions == idx, _keep(g, shape, (dim,), self.keepdim)),)


class MinBackward0(MaxBackward0):
    __slots__ = ()


class _ValuesIndices(tuple):
    """A (values, indices) pair with named fields, as PyTorch's `torch.return_types.max`."""

    __slots__ = ()
    _name = ""

    def __new__(cls, values: Tensor, indices: Tensor) -> _ValuesIndices:
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"

    def __reduce__(self) -> tuple:
        return (type(self), tuple(self))


class return_types:  # noqa: N801 - PyTorch's name
    """The named tuples that `max(x, dim)` and `min(x, dim)` return."""

    max = type("max", (_ValuesIndices,), {"__slots__": (), "_name": "max", "__qualname__": "return_types.max"})
    min = type("min", (_ValuesIndices,), {"__slots__": (), "_name": "min", "__qualname__": "return_types.min"})


_EXTREMES = {
    "max": (np.max, np.argmax, E.maximum, MaxBackward1, MaxBackward0, return_types.max),
    "min": (np.min, np.argmin, E.minimum, MinBackward1, MinBackward0, return_types.min),
}


def _extreme(name: str, x: Tensor, dim: Any, keepdim: bool) -> Any:
    reduce, arg, pairwise, all_node, dim_node, pair = _EXTREMES[name]
    if isinstance(dim, Tensor):  # max(a, b): the elementwise form
        return pairwise(x, dim)
    d = x._data
    if dim is None:
        if not d.size:
            raise RuntimeError(f"{name}() of a tensor with no elements: give a dim, or use amax/amin")
        node = record(all_node, x)
        data = np.asarray(reduce(d))
        if node is not None:
            node.value = data
            node.save(x)
        return result(data, node)
    axis = _one_dim(dim, d.ndim, name)
    if d.ndim and not d.shape[axis]:
        raise IndexError(f"{name}(): dim {axis} has size 0, so it has no {name}imum")
    idx = np.asarray(arg(d, axis=axis, keepdims=True) if d.ndim else 0)
    values = np.take_along_axis(d, idx, axis) if d.ndim else d.copy()
    if not keepdim and d.ndim:
        values, idx = np.squeeze(values, axis), np.squeeze(idx, axis)
    node = record(dim_node, x)
    if node is not None:
        node.indices, node.in_shape, node.dim, node.keepdim = idx, d.shape, axis, keepdim
        # the indices are a saved tensor in PyTorch: a plain backward frees the node (marked by a `_saved` to
        # release), after which reading them, or a second backward, is PyTorch's error
        node._saved = NOTHING
    return pair(result(values, node), Tensor._make(np.asarray(idx, dtype=np.int64), False, None))


def max(x: Tensor, dim: int | None = None, keepdim: bool = False, *, other: Tensor | None = None) -> Any:  # noqa: A001, E501
    """max(x): the largest element; max(x, dim): (values, indices) along dim; max(x, other): elementwise."""
    return _extreme("max", x, other if other is not None else dim, keepdim)


def min(x: Tensor, dim: int | None = None, keepdim: bool = False, *, other: Tensor | None = None) -> Any:  # noqa: A001, E501
    """min(x): the smallest element; min(x, dim): (values, indices) along dim; min(x, other): elementwise."""
    return _extreme("min", x, other if other is not None else dim, keepdim)


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the largest element (of the flattened tensor), or along `dim`; the first of ties."""
    return _arg(np.argmax, x, dim, keepdim)


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """The index of the smallest element (of the flattened tensor), or along `dim`; the first of ties."""
    return _arg(np.argmin, x, dim, keepdim)


def _arg(arg: Any, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    d = x._data
    name = arg.__name__
    if dim is None:
        if not d.size:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        idx = arg(d, keepdims=keepdim) if d.ndim else np.asarray(0)
    else:
        axis = _one_dim(dim, d.ndim, name)
        if d.ndim and not d.shape[axis]:
            raise IndexError(f"{name}(): Expected reduction dim {axis} to have non-zero size.")
        idx = arg(d, axis=axis, keepdims=keepdim) if d.ndim else np.asarray(0)
    return Tensor._make(np.asarray(idx, dtype=np.int64), False, None)


# -- amax, amin --------------------------------------------------------------------------------------------
class AmaxBackward0(Node):
    """The gradient split evenly among the elements equal to the result, in each reduced slice."""

    __slots__ = ("value", "dims", "keepdim")
    saved_names = {
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "result": SV.array("value"),
        "self": SV.tensor(0),
    }
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        xd = x if raw else x._data
        dims, keepdim = self.dims, self.keepdim
        mask = xd == _keep(self.value, xd.shape, dims, keepdim)
        count = mask.sum(axis=_axis(dims, xd.ndim), keepdims=True).astype(xd.dtype)
        return ((_keep(g, xd.shape, dims, keepdim) / count) * mask,)


class AminBackward0(AmaxBackward0):
    __slots__ = ()


def _amax(reduce: Any, cls: type[Node], name: str, x: Tensor, dim: Any, keepdim: bool) -> Tensor:
    d = x._data
    dims = normalize_dims(dim, d.ndim)
    try:
        data = reduce(d, axis=_axis(dims, d.ndim), keepdims=keepdim)
    except ValueError:
        raise IndexError(f"{name}(): a reduced dim has size 0, so there is no {name[1:]}imum") from None
    node = record(cls, x)
    if node is not None:
        node.value, node.dims, node.keepdim = data, dims, keepdim
        node.save(x)
    return result(data, node)


def amax(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The largest elements over `dim` (all dims by default); ties share the gradient evenly."""
    return _amax(np.max, AmaxBackward0, "amax", x, dim, keepdim)


def amin(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The smallest elements over `dim` (all dims by default); ties share the gradient evenly."""
    return _amax(np.min, AminBackward0, "amin", x, dim, keepdim)


# -- logsumexp, softmax, log_softmax -----------------------------------------------------------------------
class LogsumexpBackward0(Node):
    __slots__ = ("dims", "keepdim")
    saved_names = {
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "result": SV.tensor(1), "self": SV.tensor(0),
    }
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        x, out = self.unpack_saved(type(g) is not Tensor)
        shape = np.shape(x) if type(x) is not Tensor else x._data.shape
        keep = _keep(g, shape, self.dims, self.keepdim, True), _keep(out, shape, self.dims, self.keepdim, True)
        return (keep[0] * E.exp(x - keep[1]),)


def _float_data(x: Tensor) -> np.ndarray:
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(np.float64)


def logsumexp(x: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, computed without overflow (ints reduce as float64)."""
    d = _float_data(x)
    dims = normalize_dims(dim, d.ndim)
    axis = _axis(dims, d.ndim)
    m = np.asarray(np.max(d, axis=axis, keepdims=True, initial=-np.inf))
    m[np.isinf(m)] = 0  # an infinite maximum is not subtracted: inf stays inf, all -inf stays -inf
    shifted = np.asarray(d - m)
    np.exp(shifted, out=shifted)
    data = np.log(np.sum(shifted, axis=axis, keepdims=True)) + m
    if not keepdim and d.ndim:
        data = np.squeeze(data, axis)
    node = record(LogsumexpBackward0, x)
    out = result(data.reshape(()) if not d.ndim else data, node)
    if node is not None:
        node.dims, node.keepdim = dims, keepdim
        node.save(x, SavedOutput(out))
    return out


def _sum_keep(t: Any, dim: int) -> Any:
    if type(t) is not Tensor:
        return np.sum(t, axis=dim if np.ndim(t) else None, keepdims=True)
    return sum(t, dim, keepdim=True)


class SoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saved_names = {"dim": SV.field("dim"), "result": SV.tensor(0)}
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (y,) = self.unpack_saved(type(g) is not Tensor)
        return (softmax_backward_data(g, y, self.dim),)


class LogSoftmaxBackward0(Node):
    __slots__ = ("dim",)
    saved_names = {"dim": SV.field("dim"), "result": SV.tensor(0)}
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (y,) = self.unpack_saved(type(g) is not Tensor)
        return (log_softmax_backward_data(g, y, self.dim),)


# The gradients of softmax and log_softmax from their outputs, each recorded as ONE node under create_graph
# (PyTorch's _softmax_backward_data and _log_softmax_backward_data), with edges to the incoming gradient and
# to the output, and derivatives written with differentiable operations for the orders after.
class SoftmaxBackwardDataBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        dim = self.dim
        d_g = softmax_backward_data(gg, y, dim) if needs(self, 0) else None
        d_y = gg * (g - _sum_keep(g * y, dim)) - g * _sum_keep(gg * y, dim) if needs(self, 1) else None
        return (d_g, d_y)


class LogSoftmaxBackwardDataBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        dim = self.dim
        d_g = gg - _sum_keep(gg * E.exp(y), dim) if needs(self, 0) else None
        d_y = -_sum_keep(g, dim) * E.exp(y) * gg if needs(self, 1) else None
        return (d_g, d_y)


def softmax_backward_data(g: Any, y: Any, dim: int | None) -> Any:
    """y (g - sum(g y)) along `dim`: softmax's gradient from its output `y`."""
    if type(g) is not Tensor:
        return y * (g - _sum_keep(g * y, dim))
    data = y._data * (g._data - _sum_keep(g._data * y._data, dim))
    return _backward_data(SoftmaxBackwardDataBackward0, g, y, dim, data)


def log_softmax_backward_data(g: Any, y: Any, dim: int | None) -> Any:
    """g - exp(y) sum(g) along `dim`: log_softmax's gradient from its output `y`."""
    if type(g) is not Tensor:
        return g - np.exp(y) * _sum_keep(g, dim)
    data = g._data - np.exp(y._data) * _sum_keep(g._data, dim)
    return _backward_data(LogSoftmaxBackwardDataBackward0, g, y, dim, data)


def _backward_data(cls: type[Node], g: Tensor, y: Tensor, dim: int | None, data: Any) -> Tensor:
    out = E.backward_of(cls, g, y, data)
    if out.grad_fn is not None:
        out.grad_fn.dim = dim
    return out


def _softmax(x: Tensor, dim: Any, dtype: Any, log: bool) -> Tensor:
    name = "log_softmax" if log else "softmax"
    if dtype is not None:  # PyTorch converts first: the graph runs through ToCopyBackward0
        from .basic import to_dtype

        x = to_dtype(x, _np_dtype(dtype))
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    axis = _one_dim(dim, d.ndim, name)
    ax = axis if d.ndim else None
    shifted = np.asarray(d - np.max(d, axis=ax, keepdims=True, initial=-np.inf))
    if log:
        data = shifted - np.log(np.sum(np.exp(shifted), axis=ax, keepdims=True))
    else:
        data = np.exp(shifted, out=shifted)
        data /= np.sum(data, axis=ax, keepdims=True)
    node = record(LogSoftmaxBackward0 if log else SoftmaxBackward0, x)
    out = result(data, node)
    if node is not None:
        node.dim = ax
        node.save(SavedOutput(out))
    return out


def softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`."""
    return _softmax(x, dim, dtype, log=False)


def log_softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    return _softmax(x, dim, dtype, log=True)


# -- norm --------------------------------------------------------------------------------------------------
class LinalgVectorNormBackward0(Node):
    """PyTorch's norm_backward, per p (0 at the zero vector for p > 1, as its masked_fill gives)."""

    __slots__ = ("p", "dims", "keepdim", "in_dtype")
    saved_names = {
        "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"), "ord": SV.field("p"),
        "result": SV.tensor(1), "self": SV.tensor(0),
    }

    def apply(self, g: Tensor) -> tuple:
        grad = self._grad(g)
        return (None if grad is None else _back_to(grad, self.in_dtype),)

    def _grad(self, g: Tensor) -> Tensor | None:
        x, norm = self.saved_tensors
        p, shape = self.p, x._data.shape
        g, norm = _keep(g, shape, self.dims, self.keepdim), _keep(norm, shape, self.dims, self.keepdim)
        zero_norm = norm._data == 0
        if p == 0:
            return None
        if p == 1:
            return g * E.sign(x)
        if p == 2:
            return g * E.masked_fill(x / norm, zero_norm, 0.0)
        if math.isinf(p):
            a = np.abs(x._data)
            mask = (a == norm._data) | np.isnan(a)
            count = mask.sum(axis=_axis(self.dims, a.ndim), keepdims=True).astype(a.dtype)
            return E.sign(x) * ((g / count) * mask)
        if p < 1:
            scaled = E.where(_const(x._data == 0), 0.0, E.sign(x) * E.abs(x) ** (p - 1))
            return scaled * g * norm ** (1 - p)
        scaled = E.sign(x) * E.abs(x) ** (p - 1) if p < 2 else x * E.abs(x) ** (p - 2)
        return scaled * E.masked_fill(g / norm ** (p - 1), zero_norm, 0.0)


def _vector_norm(d: np.ndarray, p: float, axis: Any, keepdim: bool) -> np.ndarray:
    a = np.abs(d)
    if p == 1:
        return np.sum(a, axis=axis, keepdims=keepdim)
    if p == math.inf:
        return np.max(a, axis=axis, keepdims=keepdim, initial=0.0)
    if p == -math.inf:
        return np.min(a, axis=axis, keepdims=keepdim, initial=math.inf)
    if p == 0:
        return np.sum(a != 0, axis=axis, keepdims=keepdim).astype(d.dtype)
    powered = np.sum(d * d if p == 2 else a**p, axis=axis, keepdims=keepdim)
    tiny, huge = np.finfo(d.dtype).tiny / np.finfo(d.dtype).eps, np.finfo(d.dtype).max
    if np.all((powered > tiny) & (powered < huge)):
        return powered ** (1.0 / p) if p != 2 else np.sqrt(powered)
    # the powers under- or overflowed somewhere (or a norm is 0): scale by the largest |x| first
    m = np.max(a, axis=axis, keepdims=True, initial=0.0)
    m = np.where((m == 0) | ~np.isfinite(m), 1.0, m).astype(d.dtype)
    scaled = np.sum((a / m) ** p, axis=axis, keepdims=keepdim) ** (1.0 / p)
    return scaled * (m if keepdim else np.squeeze(m, axis) if d.ndim else m.reshape(()))


def norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
    """The vector p-norm over all elements, or over `dim` (p = 'fro' is 2; inf and -inf are max and min |x|)."""
    d, in_dtype = (x._data, None) if dtype is None else _cast_input(x, dtype)
    if d.dtype.kind != "f":
        raise RuntimeError(f"norm() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    if p == "fro" or p is None:
        p = 2.0
    elif isinstance(p, str):
        raise RuntimeError(f"norm(p={p!r}) is a matrix norm, which gradcalc does not have: use p=2 (or 'fro')")
    p = float(p)
    dims = normalize_dims(dim, d.ndim)
    data = _vector_norm(d, p, _axis(dims, d.ndim), keepdim)
    node = record(LinalgVectorNormBackward0, x)
    out = result(data, node)
    if node is not None:
        node.p, node.dims, node.keepdim, node.in_dtype = p, dims, keepdim, in_dtype
        node.save(x, SavedOutput(out))
    return out


# -- var, std ----------------------------------------------------------------------------------------------
class VarBackward0(Node):
    """PyTorch's var_backward: 2 / (n - correction) * grad * (x - mean)."""

    __slots__ = ("dims", "correction", "keepdim")
    saved_names = {
        "correction": SV.correction, "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"),
        "self": SV.tensor(0),
    }

    def apply(self, g: Tensor) -> tuple:
        x, _ = self.saved_tensors
        return (_var_backward(g, x, self.dims, self.correction, self.keepdim),)


class StdBackward0(VarBackward0):
    """var's backward of grad / (2 std), that taken as 0 where std is 0."""

    __slots__ = ()
    saved_names = {
        "correction": SV.correction, "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"),
        "result": SV.tensor(1), "self": SV.tensor(0),
    }

    def apply(self, g: Tensor) -> tuple:
        x, out = self.saved_tensors
        g = E.masked_fill(g / (out * 2.0), out._data == 0, 0.0)
        return (_var_backward(g, x, self.dims, self.correction, self.keepdim),)


def _var_backward(g: Tensor, x: Tensor, dims: tuple[int, ...] | None, correction: float, keepdim: bool) -> Tensor:
    shape = x._data.shape
    if dims is None or not shape:  # over all elements
        dof = x._data.size - correction
        if dof <= 0:  # 2 / 0 is inf: inf times a deviation, nan where the deviation is 0
            return g * np.where(x._data == x._data.mean(), np.nan, np.inf).astype(x._data.dtype)
        return A.mul_scalar(g, 2.0 / dof) * (x - mean(x))  # PyTorch's (2 / dof) * grad * (x - mean)
    dof = _count(shape, dims) - correction
    factor = 2.0 / dof if dof else math.inf
    return A.mul_scalar(_keep(g, shape, dims, keepdim), factor) * (x - mean(x, dims, keepdim=True))


def _var_args(name: str, dim: Any, unbiased: Any, correction: Any) -> tuple[Any, float]:
    """PyTorch's forms: var(x, unbiased), var(x, dim, unbiased, keepdim), var(x, dim, correction=c)."""
    if isinstance(dim, bool):  # var(x, True): the old form whose first argument is `unbiased`
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): give either unbiased or correction, not both (correction=0 is unbiased=False)")
    if correction is None:
        correction = 0 if unbiased is False else 1
    return dim, float(correction)


def _var(name: str, x: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any) -> Tensor:
    dim, corr = _var_args(name, dim, unbiased, correction)
    d = _floating(x, name)
    dims = normalize_dims(dim, d.ndim)
    axis = _axis(dims, d.ndim)
    dof = _count(d.shape, dims) - corr
    if dof <= 0:
        warnings.warn(
            f"{name}(): the degrees of freedom (elements - correction = {dof:g}) are <= 0, so the result is "
            "inf or nan: reduce over more elements, or lower the correction",
            UserWarning,
            stacklevel=3,
        )
    dev = d - d.mean(axis=axis, keepdims=True) if d.size else d
    sq = np.sum(dev * dev, axis=axis, keepdims=keepdim)
    data = np.asarray(sq / _py_max(dof, 0))
    if name == "std":
        data = np.sqrt(data)
    node = record(StdBackward0 if name == "std" else VarBackward0, x)
    out = result(data, node)
    if node is not None:
        node.dims, node.correction, node.keepdim = None if dim is None else dims, corr, keepdim
        node.save(x, SavedOutput(out) if name == "std" else None)
    return out


def var(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    """The variance over all elements, or over `dim`, divided by n - correction (correction 1 by default)."""
    return _var("var", x, dim, unbiased, keepdim, correction)


def std(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    """The standard deviation: the square root of `var` with the same arguments."""
    return _var("std", x, dim, unbiased, keepdim, correction)


REDUCTIONS = {
    "sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "amax": amax, "amin": amin,
    "argmax": argmax, "argmin": argmin, "logsumexp": logsumexp, "softmax": softmax, "log_softmax": log_softmax,
    "norm": norm, "var": var, "std": std,
}
METHODS = dict(REDUCTIONS)
FUNCTIONS = dict(REDUCTIONS)
