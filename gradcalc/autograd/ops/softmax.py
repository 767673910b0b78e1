"""logsumexp, softmax and log_softmax, and the one node each of softmax's and log_softmax's gradients records
under create_graph (PyTorch's _softmax_backward_data and _log_softmax_backward_data).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from .basic import to_dtype
from .binary import plus
from .core import needs, record, result
from .logarithms import exp
from .reductions import _one_dim
from .sums import _axis, _keep, _np_dtype, normalize_dims, sum
from .unary import backward_of


def _logsumexp_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (x,), t = inputs, tangents[0]
    weights = exp(x - _keep(out, x._data.shape, node.dims, node.keepdim))  # softmax along the dims
    return sum(t * weights, node.dims, node.keepdim) if x._data.ndim else t * weights


@spec.node(
    formula={"self": "logsumexp_backward(grad, self, result, dim, keepdim)"},
    saved={
        "dim": SV.field("dims", tuple), "keepdim": SV.field("keepdim"), "result": SV.tensor(1), "self": SV.tensor(0),
    },
    jvp=_logsumexp_jvp, tangent="logsumexp_jvp(self_p, self_t, dim, keepdim)",
)
class LogsumexpBackward0(Node):
    __slots__ = ("dims", "keepdim")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        x, out = self.unpack_saved(type(g) is not Tensor)
        shape = np.shape(x) if type(x) is not Tensor else x._data.shape
        return (_keep(g, shape, self.dims, self.keepdim) * exp(x - _keep(out, shape, self.dims, self.keepdim)),)


def _float_data(x: Tensor) -> np.ndarray:
    d = x._data
    return d if d.dtype.kind == "f" else d.astype(np.float64)


@spec.op("logsumexp", nodes=(LogsumexpBackward0,), vmap=spec.rule("reduction", "logsumexp"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.logsumexp(a, 1) + a.logsumexp((0, 1), keepdim=True)))
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


@spec.node(
    formula={"self": "_softmax_backward_data(grad, result, dim, self.scalar_type())"},
    saved={"dim": SV.field("dim"), "result": SV.tensor(0)},
    # its Jacobian is symmetric: the tangent goes through the backward formula
    jvp=lambda node, inputs, out, tangents: softmax_backward_data(tangents[0], out, node.dim),
    tangent="result * (self_t - (self_t * result).sum(dim, true))",
)
class SoftmaxBackward0(Node):
    __slots__ = ("dim",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (y,) = self.unpack_saved(type(g) is not Tensor)
        return (softmax_backward_data(g, y, self.dim),)


@spec.node(
    formula={"self": "_log_softmax_backward_data(grad, result, dim, self.scalar_type())"},
    saved={"dim": SV.field("dim"), "result": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: tangents[0] - _sum_keep(tangents[0] * exp(out), node.dim),
    tangent="self_t - (self_t * result.exp()).sum(dim, true)",
)
class LogSoftmaxBackward0(Node):
    __slots__ = ("dim",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        (y,) = self.unpack_saved(type(g) is not Tensor)
        return (log_softmax_backward_data(g, y, self.dim),)


# The gradients of softmax and log_softmax from their outputs, each recorded as ONE node under create_graph
# (PyTorch's _softmax_backward_data and _log_softmax_backward_data), with edges to the incoming gradient and
# to the output, and derivatives written with differentiable operations for the orders after.
def _softmax_data_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # d/dg is softmax's backward itself; d/dy of y (g - sum(g y)) along ty: ty (g - sum(g y)) - y sum(g ty)
    (g, y), (tg, ty), dim = inputs, tangents, node.dim
    first = None if tg is None else softmax_backward_data(tg, y, dim)
    second = None if ty is None else ty * (g - _sum_keep(g * y, dim)) - y * _sum_keep(g * ty, dim)
    return plus(first, second)


_DATA = {"dim": SV.field("dim"), "grad_output": SV.tensor(0), "output": SV.tensor(1)}


@spec.node(
    formula={"grad_output": "_softmax_backward_data(grad, output, dim, input_dtype)",
             "output": "grad * (grad_output - (grad_output * output).sum(dim, true)) - "
             "grad_output * (grad * output).sum(dim, true)"},
    saved=_DATA, jvp=_softmax_data_jvp,
    tangent="_softmax_backward_data(grad_output_t, output_p, dim) + output_t * (grad_output_p - "
    "(grad_output_p * output_p).sum(dim, true)) - output_p * (grad_output_p * output_t).sum(dim, true)",
)
class SoftmaxBackwardDataBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        dim = self.dim
        d_g = softmax_backward_data(gg, y, dim) if needs(self, 0) else None
        d_y = gg * (g - _sum_keep(g * y, dim)) - g * _sum_keep(gg * y, dim) if needs(self, 1) else None
        return (d_g, d_y)


def _log_softmax_data_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # g - exp(y) sum(g): linear in g; along ty, -exp(y) ty sum(g)
    (g, y), (tg, ty), dim = inputs, tangents, node.dim
    first = None if tg is None else tg - _sum_keep(tg, dim) * exp(y)
    second = None if ty is None else -_sum_keep(g, dim) * exp(y) * ty
    return plus(first, second)


@spec.node(
    formula={"grad_output": "grad - (grad * output.exp()).sum(dim, true)",
             "output": "-grad_output.sum(dim, true) * output.exp() * grad"},
    saved=_DATA, jvp=_log_softmax_data_jvp,
    tangent="grad_output_t - grad_output_t.sum(dim, true) * output_p.exp() - "
    "grad_output_p.sum(dim, true) * output_p.exp() * output_t",
)
class LogSoftmaxBackwardDataBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, gg: Tensor) -> tuple:
        g, y = self.saved_tensors
        dim = self.dim
        d_g = gg - _sum_keep(gg * exp(y), dim) if needs(self, 0) else None
        d_y = -_sum_keep(g, dim) * exp(y) * gg if needs(self, 1) else None
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
    out = backward_of(cls, g, y, data)
    if out.grad_fn is not None:
        out.grad_fn.dim = dim
    return out


def _softmax(x: Tensor, dim: Any, dtype: Any, log: bool) -> Tensor:
    name = "log_softmax" if log else "softmax"
    if dtype is not None:  # PyTorch converts first: the graph runs through ToCopyBackward0
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


@spec.op("softmax", vmap=spec.rule("softmax_rule"), nodes=(SoftmaxBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.softmax(a, 0) + a.softmax(-1)))
def softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`."""
    return _softmax(x, dim, dtype, log=False)


@spec.op("log_softmax", vmap=spec.rule("log_softmax_rule"), nodes=(LogSoftmaxBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.log_softmax(a, 1) + a.log_softmax(0)))
def log_softmax(x: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    return _softmax(x, dim, dtype, log=True)


