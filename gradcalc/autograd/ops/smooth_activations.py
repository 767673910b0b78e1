"""The smooth activations of `nn.functional`: `logsigmoid`, `mish` and `glu`, each with PyTorch's nodes (the
piecewise ones are in activations.py).

A node's backward is PyTorch's (`log_sigmoid_backward`, `infinitely_differentiable_mish_backward`,
`glu_backward`), recorded under create_graph as PyTorch records it; in a plain backward the formulas run on bare
NumPy arrays (`raw_ok`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .activations import _floating
from .arithmetic import sub
from .binary import mul_scalar, plus
from .core import needs, record, result
from .inplace import apply_inplace
from .joins import cat, chunk
from .logarithms import exp, log1p, sigmoid
from .trigonometric import tanh
from .unary import _const, _sigmoid


# -- logsigmoid ----------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "log_sigmoid_backward(grad, self, buffer)"},
    saved={"buffer": SV.tensor(1), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: tangents[0] * sigmoid(-inputs[0]),
    tangent="log_sigmoid_backward(self_t, self_p, buffer)", batched=spec.BROADCASTS,
)
class LogSigmoidBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, buffer = self.unpack_saved(raw)
        if raw:
            return (g * _sigmoid(-np.asarray(x)),)
        return (log_sigmoid_backward(g, x, buffer),)


def _log_sigmoid_second(gg: Tensor, x: Tensor) -> Tensor:
    """PyTorch's log_sigmoid_double_backward(grad, input): grad * (z - 1) * z, z = sigmoid(input)."""
    z = sigmoid(x)
    return gg * sub(z, _const(np.ones((), x._data.dtype))) * z


@spec.node(
    formula={"grad_output": "log_sigmoid_backward(grad, self, buffer)",
             "self": "log_sigmoid_double_backward(grad * grad_output, self)"},
    saved={"buffer": SV.tensor(2), "grad_output": SV.tensor(0), "self": SV.tensor(1)},
    jvp=lambda node, inputs, out, tangents: plus(
        None if tangents[0] is None else tangents[0] * sigmoid(-inputs[1]),
        None if tangents[1] is None else _log_sigmoid_second(tangents[1] * inputs[0], inputs[1])),
    tangent="log_sigmoid_backward(grad_output_t, self_p, buffer) + "
            "log_sigmoid_double_backward(self_t * grad_output_p, self_p)",
)
class LogSigmoidBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, x, buffer = self.saved_tensors
        return (log_sigmoid_backward(gg, x, buffer) if needs(self, 0) else None,
                _log_sigmoid_second(gg * g, x) if needs(self, 1) else None)


def log_sigmoid_backward(g: Tensor, x: Tensor, buffer: Tensor) -> Tensor:
    """logsigmoid's gradient g sigmoid(-x) (PyTorch's log_sigmoid_backward), one node when it records."""
    node = record(LogSigmoidBackwardBackward0, g, x)
    if node is not None:
        node.save(g, x, buffer)
    return result(g._data * _sigmoid(-x._data), node)


@spec.op("logsigmoid", vmap=spec.rule("pointwise_unary", "logsigmoid"), nodes=(LogSigmoidBackward0,),
         top_level=False, method=False, sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.logsigmoid(a * 3.0)))
def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(1 / (1 + exp(-x))), computed stably."""
    x = _floating(input, "log_sigmoid_forward")
    d = x._data
    buffer = np.exp(-np.abs(d))  # PyTorch's CPU buffer, which its backward node keeps
    data = (np.minimum(d, 0) - np.log1p(buffer)).astype(d.dtype, copy=False)
    node = record(LogSigmoidBackward0, x)
    if node is not None:
        node.save(x, Tensor._make(buffer, False, None))
    return result(data, node)


# -- mish ----------------------------------------------------------------------------------------------------
def _mish_backward(g: Tensor, x: Tensor) -> Tensor:
    """PyTorch's infinitely_differentiable_mish_backward, with its operations in its order."""
    s = sigmoid(x)
    tanh_softplus = tanh(log1p(exp(x)))
    one = _const(np.ones((), x._data.dtype))
    return g * (tanh_softplus + x * s * sub(one, tanh_softplus * tanh_softplus))


@spec.node(
    formula={"self": "GradMode::is_enabled() ? infinitely_differentiable_mish_backward(grad, self) : "
                     "mish_backward(grad, self)"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _mish_backward(tangents[0], inputs[0]),
    tangent="mish_backward(self_t, self_p)", batched=spec.BROADCASTS,
)
class MishBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            x = np.asarray(x)
            s = _sigmoid(x)
            t = np.tanh(np.logaddexp(0, x))
            return (g * (t + x * s * (1.0 - t * t)),)
        return (_mish_backward(g, x),)


@spec.op("mish", vmap=spec.rule("pointwise_unary", "mish"), nodes=(MishBackward0,), top_level=False,
         method=False, sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.mish(a * 2.0)))
def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x tanh(softplus(x)) (in place with inplace=True)."""
    x = _floating(input, "mish")
    if inplace:
        return apply_inplace(x, mish, "mish_")
    d = x._data
    node = record(MishBackward0, x)
    if node is not None:
        node.save(x)
    return result((d * np.tanh(np.logaddexp(0, d))).astype(d.dtype, copy=False), node)


# -- glu -----------------------------------------------------------------------------------------------------
def _halves(x: Any, dim: int) -> tuple[Any, Any]:
    n = x.shape[dim] // 2
    return np.take(x, range(n), axis=dim), np.take(x, range(n, 2 * n), axis=dim)


def _glu_grad_np(g: Any, x: Any, dim: int) -> Any:
    a, b = _halves(x, dim)
    s = _sigmoid(b)
    return np.concatenate([g * s, g * a * s * (1.0 - s)], axis=dim)


def _glu_parts(t: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    a, b = chunk(t, 2, dim)
    return a, b


def _glu_double_x(gg: Tensor, g: Tensor, x: Tensor, dim: int) -> Tensor:
    """d/dx of <gg, glu_backward(g, x)>: PyTorch's glu_double_backward, with the engine's operations."""
    a, b = _glu_parts(x, dim)
    gga, ggb = _glu_parts(gg, dim)
    s = sigmoid(b)
    one = _const(np.ones((), x._data.dtype))
    ds = s * sub(one, s)  # sigmoid'(b)
    d2s = ds * sub(one, mul_scalar(s, 2.0))  # sigmoid''(b)
    grad_a = g * ggb * ds
    grad_b = g * (gga * ds + ggb * a * d2s)
    return cat([grad_a, grad_b], dim)


@spec.node(
    formula={"self": "glu_backward(grad, self, dim)"},
    saved={"dim": SV.field("dim"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _glu_jvp(tangents[0], inputs[0], node.dim),
    tangent="glu_jvp(result, self_p, self_t, dim)",
)
class GluBackward0(Node):
    __slots__ = ("dim",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (_glu_grad_np(g, np.asarray(x), self.dim),)
        return (glu_backward(g, x, self.dim),)


def _glu_jvp(t: Tensor, x: Tensor, dim: int) -> Tensor:
    a, b = _glu_parts(x, dim)
    ta, tb = _glu_parts(t, dim)
    s = sigmoid(b)
    one = _const(np.ones((), x._data.dtype))
    return ta * s + a * s * sub(one, s) * tb


@spec.node(
    formula={"grad_output": "glu_double_backward_grad_output(grad, self, dim)",
             "self": "glu_double_backward(grad, grad_output, self, dim)"},
    saved={"dim": SV.field("dim"), "grad_output": SV.tensor(0), "self": SV.tensor(1)},
    jvp=lambda node, inputs, out, tangents: plus(
        None if tangents[0] is None else glu_backward(tangents[0], inputs[1], node.dim),
        None if tangents[1] is None else _glu_double_x(tangents[1], inputs[0], inputs[1], node.dim)),
    tangent="glu_backward_jvp(grad_x, grad_output_p, self_p, grad_output_t, self_t, dim)",
)
class GluBackwardBackward0(Node):
    __slots__ = ("dim",)

    def apply(self, gg: Tensor) -> tuple:
        g, x = self.saved_tensors
        d_g = _glu_jvp(gg, x, self.dim) if needs(self, 0) else None  # glu_backward is linear in g: its transpose
        return (d_g, _glu_double_x(gg, g, x, self.dim) if needs(self, 1) else None)


def glu_backward(g: Tensor, x: Tensor, dim: int) -> Tensor:
    """glu's gradient (PyTorch's glu_backward), one node when it records."""
    node = record(GluBackwardBackward0, g, x)
    if node is not None:
        node.dim = dim
        node.save(g, x)
    return result(_glu_grad_np(g._data, x._data, dim).astype(x._data.dtype, copy=False), node)


@spec.op("glu", vmap=spec.rule("glu_rule"), nodes=(GluBackward0,), top_level=False, method=False,
         sample=spec.Sample(((3, 4),), lambda L, a: L.nn.functional.glu(a) + L.nn.functional.glu(a.t(), 0).t()))
def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a sigmoid(b), where a and b are the two halves of `input` along `dim` (the gated linear unit)."""
    x = _floating(input, "glu")
    d = x._data
    if d.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -d.ndim <= dim < d.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d.ndim}, {d.ndim - 1}], but got "
                         f"{dim})")
    dim %= d.ndim
    if d.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {d.shape[dim]}")
    a, b = _halves(d, dim)
    node = record(GluBackward0, x)
    if node is not None:
        node.dim = dim
        node.save(x)
    return result((a * _sigmoid(b)).astype(d.dtype, copy=False), node)
