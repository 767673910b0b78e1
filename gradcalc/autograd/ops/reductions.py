"""Reductions: mean, prod, max/min, amax/amin, norm, var/std over all elements or over `dim` (an int, or a
tuple where PyTorch takes one), with `keepdim` (sum, each other's adjoint with expand, is in sums.py; logsumexp
and softmax in softmax.py).

A reduction's backward first puts the reduced dims back as size 1 (`_keep`, PyTorch's `unsqueeze_multiple`)
so that the gradient broadcasts against the input. The formulas are PyTorch's (`derivatives.yaml`), written
with the engine's own operations; most run on bare arrays too (`raw_ok`), since their constants (masks,
counts) are NumPy arrays multiplied in from the right of a tensor. Every reduction's forward rule is the same
(`reduced_jvp`): each input element belongs to one output element, so the tangent is the sum, over the reduced
dims, of the tangent times the backward formula's gradient of a 1 (derivatives.yaml's `prod_backward(1) *
self_t`, `evenly_read_jvp`, ...).
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import NOTHING, Node, SavedOutput
from ..tensor import Tensor
from . import shape as S
from .binary import div_scalar, mul_scalar
from .core import record, result
from .elementwise import _select, filled_where, masked_fill, maximum, minimum, where
from .return_types import named_tuple
from .rounding import abs, sgn
from .sums import (
    _NO_DIM,
    _acc_dtype,
    _axis,
    _back_to,
    _batched_expand,
    _cast_input,
    _count,
    _expand,
    _keep,
    _restore,
    expand,
    expand_back,
    normalize_dims,
    sum,
)
from .unary import _const

_py_max = builtins.max


def _one_dim(dim: Any, ndim: int, name: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{name}(): dim must be one int here, not {type(dim).__name__}")
    return normalize_dims(dim, ndim)[0]


def _floating(x: Tensor, name: str) -> np.ndarray:
    d = x._data
    if d.dtype.kind != "f":
        raise RuntimeError(f"{name}() needs a floating-point tensor, not {d.dtype}: convert it with .double()")
    return d



def reduced_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """The forward rule of a reduction: sum over the reduced dims of `tangent * d out / d input`, the latter
    the node's own backward formula applied to ones (exact: each input element belongs to one output)."""
    partial = node.apply(Tensor._make(np.ones(out._data.shape, out._data.dtype), False, None))[0]
    if partial is None:  # a constant reduction (norm with p = 0)
        return None
    terms = tangents[0] * partial
    dims, keepdim = _reduced(node, inputs[0]._data.ndim)
    if dims is None:
        return sum(terms)
    return sum(terms, dims, keepdim) if inputs[0]._data.ndim else terms


def _reduced(node: Node, ndim: int) -> tuple[Any, bool]:
    """The dims a reduction node reduced (None: all) and its keepdim."""
    dims = getattr(node, "dims", None)
    if dims is None:
        dim = getattr(node, "dim", None)
        dims = None if dim is None else (dim,)
    return dims, getattr(node, "keepdim", False)


@spec.node(
    formula={"self": "grad.expand(self.sizes()) / self.numel()"},
    saved={"self_sym_numel": SV.field("in_shape", SV.numel), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: mean(tangents[0]), tangent="self_t.mean()",
    batched=lambda self, g: (_batched_expand(_back_to(g / self.count, self.in_dtype), self.in_shape, None, False),),
)
class MeanBackward0(Node):
    __slots__ = ("in_shape", "count", "in_dtype")
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        if type(g) is not Tensor:  # the division before the broadcast: on one number, not on the input's size
            return (_expand(_back_to(g / self.count, self.in_dtype), self.in_shape),)
        return (div_scalar(_expand(_back_to(g, self.in_dtype), self.in_shape), self.count),)  # PyTorch's order


def _mean_batched(self: Node, g: Any) -> tuple:
    g = _back_to(g / self.count, self.in_dtype)
    return (_batched_expand(g, self.in_shape, self.dims, self.keepdim),)


@spec.node(
    formula={"self": "mean_backward(grad, self.sizes(), dim, self.numel(), keepdim)"},
    saved={
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"),
        "self_sym_numel": SV.field("in_shape", SV.numel), "self_sym_sizes": SV.field("in_shape", tuple),
    },
    jvp=lambda node, inputs, out, tangents: mean(tangents[0], node.dims, node.keepdim),
    tangent="self_t.mean(dim, keepdim)", batched=_mean_batched,
)
class MeanBackward1(Node):
    __slots__ = ("in_shape", "dims", "keepdim", "count", "in_dtype")
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        if type(g) is not Tensor:
            g = _back_to(g / self.count, self.in_dtype)
            return (expand_back(g, self.in_shape, self.dims, self.keepdim),)
        g = expand_back(_back_to(g, self.in_dtype), self.in_shape, self.dims, self.keepdim)
        return (div_scalar(g, self.count),)  # PyTorch's mean_backward: the expand, then the division


@spec.op("mean", nodes=(MeanBackward0, MeanBackward1), vmap=spec.rule("reduction", "mean"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.mean(a, 1) + L.mean(a) + a.mean((0, 1), keepdim=True)))
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


@spec.node(
    formula={"self": "sum over i of grad_i * prod of self_j (j not i, k)"},
    # only a create_graph gradient of a product over zeros reaches it: its Jacobian (products of all but two
    # elements) has no simpler tangent than its own transpose, which the double-vjp takes exactly
    jvp=spec.DOUBLE_VJP,
)
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
        rows = expand(S.reshape(x, (lead, 1, n, trail)), (lead, n, n, trail))  # rows[., k, j, .] = x_j
        others = prod_others(where(eye, 1.0, rows), 2)  # [., k, i, .] = prod of x_j, j not in {i, k}
        terms = where(eye, 0.0, others * S.reshape(g, (lead, 1, n, trail)))
        return (S.reshape(sum(terms, 2), shape),)


def prod_others(x: Tensor, axis: int) -> Tensor:
    """For each element, the product of all the other elements along `axis` (differentiable)."""
    # alone along the axis, the product of the others is the empty product 1: a constant
    node = record(ProdOthersBackward, x) if x._data.shape[axis] > 1 else None
    if node is not None:
        node.axis = axis
        node.save(x)
    return result(_prod_others_np(x._data, axis), node)


@spec.base
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


@spec.node(
    formula={"self": "prod_backward(grad, self, result)"},
    saved={"result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="(prod_backward(ones, self_p, result) * self_t).sum()",
)
class ProdBackward0(_ProdNode):
    __slots__ = ()


@spec.node(
    formula={"self": "prod_backward(grad, self, result, dim, keepdim)"},
    saved={"dim": SV.field("dim"), "keepdim": SV.field("keepdim"), "result": SV.tensor(1), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="(prod_backward(ones, self_p, result, dim, keepdim) * self_t).sum(dim, keepdim)",
)
class ProdBackward1(_ProdNode):
    __slots__ = ()


@spec.op("prod", vmap=spec.rule("prod_rule"), nodes=(ProdBackward0, ProdBackward1),
         sample=spec.Sample(((3, 4),), lambda L, a: L.prod(a, 1) + L.prod(a) + a.prod(0, keepdim=True).sum(),
                            spec.POSITIVE))
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
@spec.node(
    formula={"self": "evenly_distribute_backward(grad, self, result)"},
    saved={"result": SV.array("value"), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="evenly_read_jvp(self_t, self_p, result)",
)
class MaxBackward1(Node):
    """max/min over all elements: the gradient split evenly among the elements equal to the result (among
    the nans when the result is nan), as PyTorch's evenly_distribute_backward."""

    __slots__ = ("value",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        xd = x if type(g) is not Tensor else x._data
        mask = np.isnan(xd) if np.isnan(self.value) else xd == self.value
        return (filled_where(mask, g / float(np.count_nonzero(mask))),)


@spec.node(
    formula={"self": "evenly_distribute_backward(grad, self, result)"},
    saved={"result": SV.array("value"), "self": SV.tensor(0)},
    jvp=reduced_jvp, tangent="evenly_read_jvp(self_t, self_p, result)",
)
class MinBackward1(MaxBackward1):
    __slots__ = ()


_MAX_DIM = {
    "dim": SV.field("dim"), "indices": SV.array("indices"), "keepdim": SV.field("keepdim"),
    "self_sym_sizes": SV.field("in_shape", tuple),
}


@spec.node(
    formula={"self": "value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)"},
    saved=_MAX_DIM, jvp=reduced_jvp, tangent="gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
)
class MaxBackward0(Node):
    """max/min along a dim: the gradient goes to the element at the returned index."""

    __slots__ = ("indices", "in_shape", "dim", "keepdim")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if not self.in_shape:
            return (g,)
        dim, shape = self.dim, self.in_shape
        idx = self.indices if self.keepdim else np.expand_dims(self.indices, dim)
        positions = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
        return (_select(positions == idx, _keep(g, shape, (dim,), self.keepdim)),)


@spec.node(
    formula={"self": "value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)"},
    saved=_MAX_DIM, jvp=reduced_jvp, tangent="gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
)
class MinBackward0(MaxBackward0):
    __slots__ = ()


_EXTREMES = {
    "max": (np.max, np.argmax, maximum, MaxBackward1, MaxBackward0, named_tuple("max", ("values", "indices"))),
    "min": (np.min, np.argmin, minimum, MinBackward1, MinBackward0, named_tuple("min", ("values", "indices"))),
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
    return pair((result(values, node), Tensor._make(np.asarray(idx, dtype=np.int64), False, None)))


@spec.op("max", vmap=spec.rule("max_rule"), nodes=(MaxBackward1, MaxBackward0),
         sample=spec.Sample(((3, 4),), lambda L, a: L.max(a, 1)[0] + L.max(a) + a.max(0, keepdim=True).values.sum(),
                            spec.DISTINCT))
def max(x: Tensor, dim: int | None = None, keepdim: bool = False, *, other: Tensor | None = None) -> Any:  # noqa: A001, E501
    """max(x): the largest element; max(x, dim): (values, indices) along dim; max(x, other): elementwise."""
    return _extreme("max", x, other if other is not None else dim, keepdim)


@spec.op("min", vmap=spec.rule("min_rule"), nodes=(MinBackward1, MinBackward0),
         sample=spec.Sample(((3, 4),), lambda L, a: L.min(a, 0)[0].sum() + L.min(a) + a.min(1).values.sum(),
                            spec.DISTINCT))
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
_AMAX = {"dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "result": SV.array("value"),
         "self": SV.tensor(0)}


@spec.node(
    formula={"self": "scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), "
             "restore_reduced_dims(result, dim, keepdim) == self, dim)"},
    saved=_AMAX, jvp=reduced_jvp, tangent="amaxamin_jvp(self_p, self_t, result, dim, keepdim)",
)
class AmaxBackward0(Node):
    """The gradient split evenly among the elements equal to the result, in each reduced slice."""

    __slots__ = ("value", "dims", "keepdim")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        xd = x if raw else x._data
        dims, keepdim = self.dims, self.keepdim
        mask = xd == _restore(self.value, xd.shape, dims, keepdim)
        count = mask.sum(axis=_axis(dims, xd.ndim), keepdims=True).astype(xd.dtype)
        return ((_restore(g, xd.shape, dims, keepdim) / count) * mask,)


@spec.node(
    formula={"self": "scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), "
             "restore_reduced_dims(result, dim, keepdim) == self, dim)"},
    saved=_AMAX, jvp=reduced_jvp, tangent="amaxamin_jvp(self_p, self_t, result, dim, keepdim)",
)
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


@spec.op("amax", nodes=(AmaxBackward0,), vmap=spec.rule("reduction", "amax"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.amax(a, 1) + L.amax(a, (0, 1)), spec.DISTINCT))
def amax(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The largest elements over `dim` (all dims by default); ties share the gradient evenly."""
    return _amax(np.max, AmaxBackward0, "amax", x, dim, keepdim)


@spec.op("amin", nodes=(AminBackward0,), vmap=spec.rule("reduction", "amin"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.amin(a, 0).sum() + a.amin(1, keepdim=True).sum(), spec.DISTINCT))
def amin(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The smallest elements over `dim` (all dims by default); ties share the gradient evenly."""
    return _amax(np.min, AminBackward0, "amin", x, dim, keepdim)


# -- norm --------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim)"},
    saved={
        "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"), "ord": SV.field("p"),
        "result": SV.tensor(1), "self": SV.tensor(0),
    },
    jvp=reduced_jvp, tangent="linalg_vector_norm_jvp(self_p, self_t, ord, result, dim, keepdim)",
)
class LinalgVectorNormBackward0(Node):
    """PyTorch's norm_backward, per p (0 at the zero vector for p > 1, as its masked_fill gives)."""

    __slots__ = ("p", "dims", "keepdim", "in_dtype")

    def apply(self, g: Tensor) -> tuple:
        grad = self._grad(g)
        return (None if grad is None else _back_to(grad, self.in_dtype),)

    def _grad(self, g: Tensor) -> Tensor | None:
        x, norm = self.saved_tensors
        return norm_backward(g, x, self.p, norm, self.dims, self.keepdim)


def norm_backward(g: Tensor, x: Tensor, p: float, norm: Tensor, dims: tuple[int, ...] | None = None,
                  keepdim: bool = False) -> Tensor | None:
    """PyTorch's norm_backward: the gradient of the `p`-norm `norm` of `x` over `dims` (None: all of it) given
    `g`, written with the engine's operations (None for p = 0, whose gradient is zero)."""
    shape = x._data.shape
    if dims is not None:  # over all dims (dim=None) the norm is one number: nothing to put back
        g, norm = _keep(g, shape, dims, keepdim), _keep(norm, shape, dims, keepdim)
    zero_norm = norm._data == 0
    if p == 0:
        return None
    if p == 1:
        return sgn(x) * g  # PyTorch's self.sgn() * grad
    if p == 2:
        return g * masked_fill(x / norm, zero_norm, 0.0)
    if math.isinf(p):
        a = np.abs(x._data)
        mask = (a == norm._data) | np.isnan(a)
        axis = None if dims is None else _axis(dims, a.ndim)
        count = mask.sum(axis=axis, keepdims=True).astype(a.dtype)
        return sgn(x) * ((g / count) * mask)
    if p < 1:
        scaled = where(_const(x._data == 0), 0.0, sgn(x) * abs(x) ** (p - 1))
        return scaled * g * norm ** (1 - p)
    scaled = sgn(x) * abs(x) ** (p - 1) if p < 2 else x * abs(x) ** (p - 2)
    return scaled * masked_fill(g / norm ** (p - 1), zero_norm, 0.0)


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


@spec.op("norm", vmap=spec.rule("norm_rule"), nodes=(LinalgVectorNormBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.norm(a) + L.norm(a, dim=1).sum() + L.norm(a, p=1)
                            + a.norm(p=3, dim=0, keepdim=True).sum() + a.norm(p=float("inf"))))
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
        node.p, node.dims, node.keepdim, node.in_dtype = p, None if dim is None else dims, keepdim, in_dtype
        node.save(x, SavedOutput(out))
    return out


# -- var, std ----------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "var_backward(grad, self, dim, correction, keepdim)"},
    saved={
        "correction": SV.correction, "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"),
        "self": SV.tensor(0),
    },
    jvp=reduced_jvp, tangent="var_jvp(self_t, self_p, result, dim, correction, keepdim)",
)
class VarBackward0(Node):
    """PyTorch's var_backward: 2 / (n - correction) * grad * (x - mean)."""

    __slots__ = ("dims", "correction", "keepdim")

    def apply(self, g: Tensor) -> tuple:
        x, _ = self.saved_tensors
        return (_var_backward(g, x, self.dims, self.correction, self.keepdim),)


@spec.node(
    formula={"self": "std_backward(result, grad, self, dim, correction, keepdim)"},
    saved={
        "correction": SV.correction, "dim": SV.field("dims", SV.maybe_tuple), "keepdim": SV.field("keepdim"),
        "result": SV.tensor(1), "self": SV.tensor(0),
    },
    jvp=reduced_jvp, tangent="std_jvp(self_t, self_p, result, dim, correction, keepdim)",
)
class StdBackward0(VarBackward0):
    """var's backward of grad / (2 std), that taken as 0 where std is 0."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        x, out = self.saved_tensors
        g = masked_fill(g / mul_scalar(out, 2.0), out._data == 0, 0.0)
        return (_var_backward(g, x, self.dims, self.correction, self.keepdim),)


def _var_backward(g: Tensor, x: Tensor, dims: tuple[int, ...] | None, correction: float, keepdim: bool) -> Tensor:
    shape = x._data.shape
    if dims is None or not shape:  # over all elements
        dof = x._data.size - correction
        if dof <= 0:  # 2 / 0 is inf: inf times a deviation, nan where the deviation is 0
            return g * np.where(x._data == x._data.mean(), np.nan, np.inf).astype(x._data.dtype)
        return mul_scalar(g, 2.0 / dof) * (x - mean(x))  # PyTorch's (2 / dof) * grad * (x - mean)
    dof = _count(shape, dims) - correction
    factor = 2.0 / dof if dof else math.inf
    return mul_scalar(_keep(g, shape, dims, keepdim), factor) * (x - mean(x, dims, keepdim=True))


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


@spec.op("var", vmap=spec.rule("var_rule"), nodes=(VarBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.var(a, 0, correction=0) + a.var() + a.var(1, keepdim=True).sum()))
def var(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    """The variance over all elements, or over `dim`, divided by n - correction (correction 1 by default)."""
    return _var("var", x, dim, unbiased, keepdim, correction)


@spec.op("std", vmap=spec.rule("std_rule"), nodes=(StdBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.std(a, 1) + a.std() + a.std(0, correction=0).sum()))
def std(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *, correction: Any = None) -> Tensor:
    """The standard deviation: the square root of `var` with the same arguments."""
    return _var("std", x, dim, unbiased, keepdim, correction)


# the index-only reductions (no derivative); the others are the specs'
REDUCTIONS = {"argmax": argmax, "argmin": argmin}
METHODS = dict(REDUCTIONS)
FUNCTIONS = dict(REDUCTIONS)
