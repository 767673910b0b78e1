"""The piecewise activations: `relu` (a `unary(...)` row of ops/unary.py, with its gradient as one differentiable
node, PyTorch's `threshold_backward`), and those of `nn.functional` beyond nn.py's: `leaky_relu`,
`elu`/`selu`, `hardtanh`/`relu6`, `hardswish` and `hardsigmoid`, each with PyTorch's nodes (the smooth ones,
`logsigmoid`, `mish`, `glu`, are in smooth_activations.py; sigmoid in logarithms.py).

A node's backward is PyTorch's `*_backward` function, recorded (under create_graph) as PyTorch's
`*BackwardBackward0` node, whose own formulas are derivatives.yaml's; in a plain backward the formulas run on bare
NumPy arrays (`raw_ok`). The in-place forms PyTorch records with a node of their own (`leaky_relu_` as
LeakyReluBackward1, `elu_` as EluBackward1) save the result, as PyTorch's do; the others (`hardtanh_`,
`hardswish_`...) record the out-of-place node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from .arithmetic import NotImplemented_
from .binary import div_scalar, mul_scalar, plus
from .core import needs, record, result
from .elementwise import where
from .inplace import apply_inplace
from .unary import _const, _zeros_like, unary


# -- relu: a unary row, and its gradient as one differentiable node ------------------------------------------
def _relu(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # the bound first: NumPy then keeps the input where they are equal, so relu(-0.) is -0. as in PyTorch
    return np.maximum(0.0 if a.dtype.kind == "f" else 0, a, out=out)  # a float 0: NumPy's fast path for floats


_relu.writes_out = True  # type: ignore[attr-defined]  # like a ufunc, it may write into a dying input (out=)


# gradient 0 at 0 (and passed through at nan), as PyTorch's threshold_backward(grad, result, 0)
relu = unary("relu", forward=_relu, node="ReluBackward0", saves="result", formula="threshold_backward(grad, result, 0)",
             backward=lambda g, x, y: threshold_backward(g, y))
relu.__module__ = __name__  # (ops/lazy.py files an operation under the module its function names: unary.py made it)


# As PyTorch's threshold_backward: under create_graph relu's gradient is ONE node with edges to the incoming
# gradient and to relu's output, whose derivatives are those of derivatives.yaml.
@spec.node(
    formula={"grad_output": "threshold_backward(grad, self, threshold)", "self": "zeros_like(grad)"},
    saved={"self": SV.tensor(0), "threshold": SV.const(0)},
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else threshold_backward(tangents[0], inputs[1]),
    tangent="threshold_backward(grad_output_t, self_p, threshold)",
)
class ThresholdBackwardBackward0(Node):
    """The node of relu's gradient under create_graph: linear in the gradient, constant in the output."""

    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        (y,) = self.saved_tensors
        return (threshold_backward(gg, y) if needs(self, 0) else None, _zeros_like(gg) if needs(self, 1) else None)


_SAME_WIDTH_INT = {np.dtype(np.float32): np.int32, np.dtype(np.float64): np.int64}


def _zeroed_where_not_positive(g: Any, y: Any) -> Any:
    """np.where(y <= 0, 0.0, g) on arrays: for large float arrays of one shape, the bits of `g` ANDed with a mask
    (the same +0.0 and NaNs, without np.where's branch per element, which costs ten times more on such arrays)."""
    ints = _SAME_WIDTH_INT.get(getattr(g, "dtype", None))
    if ints is None or type(g) is not np.ndarray or type(y) is not np.ndarray or g.shape != y.shape or \
            y.dtype != g.dtype or g.size < 4096:
        return np.where(y <= 0, 0.0, g)
    mask = np.less_equal(y, 0).astype(ints)
    mask -= 1  # 0 where y <= 0, every bit set elsewhere
    return np.bitwise_and(g.view(ints), mask, out=mask).view(g.dtype)


def threshold_backward(g: Any, y: Any) -> Any:
    """`g` where `y > 0` (and where `y` is nan), else 0: relu's gradient from its output `y`."""
    if type(g) is not Tensor and type(y) is not Tensor:
        return _zeroed_where_not_positive(g, y)
    gd = g._data if type(g) is Tensor else np.asarray(g)
    node = record(ThresholdBackwardBackward0, g, y)
    if node is not None:
        node.save(y)
    return result(np.where(y._data <= 0, 0.0, gd), node)


def _floating(x: Any, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{fn}" not implemented for \'{_TORCH_NAMES.get(x._data.dtype.name, "Long")}\'')
    return x


_TORCH_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


# -- leaky_relu ----------------------------------------------------------------------------------------------
def _leaky_np(g: Any, x: Any, slope: float) -> Any:
    return np.where(x > 0, g, g * slope)


class _LeakyNode(Node):
    __slots__ = ("negative_slope",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (v,) = self.unpack_saved(raw)
        if raw:
            return (_leaky_np(g, np.asarray(v), self.negative_slope),)
        return (leaky_relu_backward(g, v, self.negative_slope),)


spec.BASES.add(_LeakyNode)


@spec.node(
    formula={"self": "leaky_relu_backward(grad, self, negative_slope, false)"},
    saved={"negative_slope": SV.field("negative_slope"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: leaky_relu_backward(tangents[0], inputs[0], node.negative_slope),
    tangent="leaky_relu_backward(self_t, self_p, negative_slope, false)", batched=spec.BROADCASTS,
)
class LeakyReluBackward0(_LeakyNode):
    __slots__ = ()


@spec.node(
    formula={"self": "leaky_relu_backward(grad, result, negative_slope, true)"},
    saved={"negative_slope": SV.field("negative_slope"), "result": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: leaky_relu_backward(tangents[0], out, node.negative_slope),
    tangent="leaky_relu_backward(self_t, result, negative_slope, true)", batched=spec.BROADCASTS,
)
class LeakyReluBackward1(_LeakyNode):
    """leaky_relu_'s node: the result saved (positive exactly where the input was, the slope being >= 0)."""

    __slots__ = ()

    def apply(self, g: Any) -> tuple:
        if self.negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
                "This is caused by calling in-place forward function with a negative slope, please call "
                "out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do "
                "require supporting in-place leakRelu backward calculation with negative slope")
        return super().apply(g)


@spec.node(
    formula={"grad_output": "leaky_relu_backward(grad, self, negative_slope, false)", "self": "zeros_like(grad)"},
    saved={"negative_slope": SV.field("negative_slope"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: (None if tangents[0] is None
                                             else leaky_relu_backward(tangents[0], inputs[1], node.negative_slope)),
    tangent="leaky_relu_backward(grad_output_t, self_p, negative_slope, false)",
)
class LeakyReluBackwardBackward0(Node):
    __slots__ = ("negative_slope",)

    def apply(self, gg: Tensor) -> tuple:
        (x,) = self.saved_tensors
        return (leaky_relu_backward(gg, x, self.negative_slope) if needs(self, 0) else None,
                _zeros_like(gg) if needs(self, 1) else None)


def leaky_relu_backward(g: Tensor, x: Tensor, negative_slope: float) -> Tensor:
    """leaky_relu's gradient: g where x > 0, else g * negative_slope (one node when it records)."""
    node = record(LeakyReluBackwardBackward0, g, x)
    if node is not None:
        node.negative_slope = negative_slope
        node.save(x)
    return result(_leaky_np(g._data, x._data, negative_slope), node)


def _leaky_relu_saving_result(x: Tensor, negative_slope: float) -> Tensor:
    """leaky_relu recorded as leaky_relu_ is (LeakyReluBackward1, the result saved), for apply_inplace."""
    d = x._data
    out = result(np.where(d > 0, d, d * negative_slope), node := record(LeakyReluBackward1, x))
    if node is not None:
        node.negative_slope = negative_slope
        node.save(SavedOutput(out))
    return out


@spec.op("leaky_relu", vmap=spec.rule("pointwise_unary", "leaky_relu"), nodes=(LeakyReluBackward0,),
         top_level=False, method=False,
         sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.leaky_relu(a, 0.2)
                            + L.nn.functional.leaky_relu(a)))
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > 0, else negative_slope * x (in place with inplace=True)."""
    x = _floating(input, "leaky_relu")
    if inplace:
        return leaky_relu_(x, negative_slope)
    d = x._data
    node = record(LeakyReluBackward0, x)
    if node is not None:
        node.negative_slope = negative_slope
        node.save(x)
    return result(np.where(d > 0, d, d * negative_slope), node)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """leaky_relu written into `input` (PyTorch refuses a backward through it with a negative slope)."""
    x = _floating(input, "leaky_relu_")
    return apply_inplace(x, lambda a: _leaky_relu_saving_result(a, negative_slope), "leaky_relu_")


# -- elu, selu -----------------------------------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu_np(d: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    neg = np.expm1(np.minimum(d, 0) * input_scale) * (alpha * scale)
    return np.where(d <= 0, neg, d * scale).astype(d.dtype, copy=False)


def _elu_grad_np(g: Any, v: Any, alpha: float, scale: float, input_scale: float, is_result: bool) -> Any:
    """PyTorch's elu_backward kernel on arrays: `v` is the input, or the result when `is_result`."""
    if is_result:
        return np.where(v <= 0, g * input_scale * (v + alpha * scale), g * scale)
    return np.where(v <= 0, g * (input_scale * alpha * scale) * np.exp(np.minimum(v, 0) * input_scale), g * scale)


_ELU_SAVED = {"alpha": SV.field("alpha"), "input_scale": SV.field("input_scale"), "scale": SV.field("scale")}


class _EluNode(Node):
    __slots__ = ("alpha", "scale", "input_scale")
    raw_ok = True
    is_result = False

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (v,) = self.unpack_saved(raw)
        if raw:
            return (_elu_grad_np(g, np.asarray(v), self.alpha, self.scale, self.input_scale, self.is_result),)
        return (elu_backward(g, self.alpha, self.scale, self.input_scale, self.is_result, v),)


spec.BASES.add(_EluNode)


@spec.node(
    formula={"self": "elu_backward(grad, alpha, scale, input_scale, /* is_result */ false, self)"},
    saved={**_ELU_SAVED, "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: elu_backward(tangents[0], node.alpha, node.scale, node.input_scale,
                                                         False, inputs[0]),
    tangent="elu_backward(self_t, alpha, scale, input_scale, false, self_p)", batched=spec.BROADCASTS,
)
class EluBackward0(_EluNode):
    __slots__ = ()


@spec.node(
    formula={"self": "elu_backward(grad, alpha, scale, input_scale, /* is_result */ true, result)"},
    saved={**_ELU_SAVED, "result": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: elu_backward(tangents[0], node.alpha, node.scale, node.input_scale,
                                                         True, out),
    tangent="elu_backward(self_t, alpha, scale, input_scale, true, result)", batched=spec.BROADCASTS,
)
class EluBackward1(_EluNode):
    """elu_'s node: the result saved."""

    __slots__ = ()
    is_result = True


def _elu_double(gg: Tensor, g: Tensor, node: Any, v: Tensor) -> Tensor:
    """PyTorch's elu_double_backward: the derivative of elu_backward in self_or_result."""
    neg = _const(v._data < 0)
    if node.is_result:
        return mul_scalar(gg * g, node.input_scale) * neg
    return elu_backward(mul_scalar(gg * g, node.input_scale), node.alpha, node.scale, node.input_scale, False,
                        v) * neg


@spec.node(
    formula={"grad_output": "elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result)",
             "self_or_result": "elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, "
                               "self_or_result)"},
    saved={**_ELU_SAVED, "grad_output": SV.tensor(0), "is_result": SV.field("is_result"),
           "self_or_result": SV.tensor(1)},
    jvp=lambda node, inputs, out, tangents: plus(
        None if tangents[0] is None else elu_backward(tangents[0], node.alpha, node.scale, node.input_scale,
                                                      node.is_result, inputs[1]),
        None if tangents[1] is None else _elu_double(tangents[1], inputs[0], node, inputs[1])),
    tangent="elu_backward(grad_output_t, alpha, scale, input_scale, is_result, self_or_result_p) + "
            "elu_double_backward(self_or_result_t, grad_output_p, alpha, scale, input_scale, is_result, "
            "self_or_result_p)",
)
class EluBackwardBackward0(Node):
    __slots__ = ("alpha", "scale", "input_scale", "is_result")

    def apply(self, gg: Tensor) -> tuple:
        g, v = self.saved_tensors
        return (elu_backward(gg, self.alpha, self.scale, self.input_scale, self.is_result, v)
                if needs(self, 0) else None,
                _elu_double(gg, g, self, v) if needs(self, 1) else None)


def elu_backward(g: Tensor, alpha: float, scale: float, input_scale: float, is_result: bool, v: Tensor) -> Tensor:
    """elu's gradient (PyTorch's elu_backward), one node when it records."""
    node = record(EluBackwardBackward0, g, v)
    if node is not None:
        node.alpha, node.scale, node.input_scale, node.is_result = alpha, scale, input_scale, is_result
        node.save(g, v)
    return result(_elu_grad_np(g._data, v._data, alpha, scale, input_scale, is_result), node)


def _elu(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    node = record(EluBackward0, x)
    if node is not None:
        node.alpha, node.scale, node.input_scale = alpha, scale, input_scale
        node.save(x)
    return result(_elu_np(x._data, alpha, scale, input_scale), node)


def _elu_saving_result(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    out = result(_elu_np(x._data, alpha, scale, input_scale), node := record(EluBackward1, x))
    if node is not None:
        node.alpha, node.scale, node.input_scale = alpha, scale, input_scale
        node.save(SavedOutput(out))
    return out


def _elu_in_place(x: Tensor, alpha: float, scale: float, what: str) -> Tensor:
    if alpha < 0 and x._requires_grad:
        raise RuntimeError("In-place elu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead.")
    return apply_inplace(x, lambda a: _elu_saving_result(a, alpha, scale, 1.0), what)


@spec.op("elu", vmap=spec.rule("pointwise_unary", "elu"), nodes=(EluBackward0,), top_level=False, method=False,
         sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.elu(a, 1.5) + L.nn.functional.elu(a)))
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > 0, else alpha (exp(x) - 1) (in place with inplace=True)."""
    x = _floating(input, "elu")
    if inplace:
        return _elu_in_place(x, alpha, 1.0, "elu_")
    return _elu(x, alpha, 1.0, 1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """elu written into `input`."""
    return _elu_in_place(_floating(input, "elu_"), alpha, 1.0, "elu_")


@spec.op("selu", vmap=spec.rule("pointwise_unary", "selu"), nodes=(EluBackward0,), method=False,
         sample=spec.Sample(((6,),), lambda L, a: L.selu(a)))
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale (x where x > 0, else alpha (exp(x) - 1)) with SELU's fixed alpha and scale (self-normalising)."""
    x = _floating(input, "selu")
    if inplace:
        return _elu_in_place(x, _SELU_ALPHA, _SELU_SCALE, "selu_")
    return _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0)


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """selu written into `input`."""
    return _elu_in_place(_floating(input, "selu_"), _SELU_ALPHA, _SELU_SCALE, "selu_")


# -- hardtanh, relu6 -----------------------------------------------------------------------------------------
def _inside(x: Any, lo: float, hi: float) -> Any:
    return (x > lo) & (x < hi)


_HARDTANH = {"max_val": SV.field("max_val"), "min_val": SV.field("min_val"), "self": SV.tensor(0)}


@spec.node(
    formula={"self": "hardtanh_backward(grad, self, min_val, max_val)"},
    saved=_HARDTANH,
    jvp=lambda node, inputs, out, tangents: hardtanh_backward(tangents[0], inputs[0], node.min_val, node.max_val),
    tangent="hardtanh_backward(self_t, self_p, min_val, max_val)", batched=spec.BROADCASTS,
)
class HardtanhBackward0(Node):
    __slots__ = ("min_val", "max_val")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (np.where(_inside(np.asarray(x), self.min_val, self.max_val), g, 0.0),)
        return (hardtanh_backward(g, x, self.min_val, self.max_val),)


@spec.node(
    formula={"grad_output": "hardtanh_backward(grad, self, min_val, max_val)", "self": "zeros_like(grad)"},
    saved=_HARDTANH,
    jvp=lambda node, inputs, out, tangents: (None if tangents[0] is None else hardtanh_backward(
        tangents[0], inputs[1], node.min_val, node.max_val)),
    tangent="hardtanh_backward(grad_output_t, self_p, min_val, max_val)",
)
class HardtanhBackwardBackward0(Node):
    __slots__ = ("min_val", "max_val")

    def apply(self, gg: Tensor) -> tuple:
        (x,) = self.saved_tensors
        return (hardtanh_backward(gg, x, self.min_val, self.max_val) if needs(self, 0) else None,
                _zeros_like(gg) if needs(self, 1) else None)


def hardtanh_backward(g: Tensor, x: Tensor, min_val: float, max_val: float) -> Tensor:
    """hardtanh's gradient: g strictly inside (min_val, max_val), else 0 (one node when it records)."""
    node = record(HardtanhBackwardBackward0, g, x)
    if node is not None:
        node.min_val, node.max_val = min_val, max_val
        node.save(x)
    data = np.where(_inside(x._data, min_val, max_val), g._data, 0.0).astype(g._data.dtype, copy=False)
    return result(data, node)


def _hardtanh(x: Tensor, min_val: float, max_val: float) -> Tensor:
    node = record(HardtanhBackward0, x)
    if node is not None:
        node.min_val, node.max_val = min_val, max_val
        node.save(x)
    return result(np.clip(x._data, min_val, max_val).astype(x._data.dtype, copy=False), node)


@spec.op("hardtanh", vmap=spec.rule("pointwise_unary", "hardtanh"), nodes=(HardtanhBackward0,), top_level=False,
         method=False, sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.hardtanh(a * 2.0)
                                          + L.nn.functional.hardtanh(a, -0.5, 0.7)))
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x clipped to [min_val, max_val] (in place with inplace=True)."""
    x = _floating(input, "hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return apply_inplace(x, lambda a: _hardtanh(a, min_val, max_val), "hardtanh_")
    return _hardtanh(x, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """hardtanh written into `input`."""
    return hardtanh(input, min_val, max_val, inplace=True)


@spec.op("relu6", vmap=spec.rule("pointwise_unary", "relu6"), nodes=(HardtanhBackward0,), top_level=False,
         method=False, sample=spec.Sample(((6,),), lambda L, a: L.nn.functional.relu6(a * 5.0 + 2.0)))
def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(0, x), 6) (hardtanh(x, 0, 6), as PyTorch records it)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# -- hardswish, hardsigmoid ----------------------------------------------------------------------------------
def _hardswish_grad_np(g: Any, x: Any) -> Any:
    return np.where(x < -3.0, 0.0, np.where(x <= 3.0, g * (x / 3.0 + 0.5), g))


def _hardswish_second(gg: Tensor, g: Tensor, x: Tensor) -> Tensor:
    """where(-3 < self < 3, grad * grad_output / 3, 0): derivatives.yaml's, with the engine's operations."""
    return where(_const((x._data > -3.0) & (x._data < 3.0)), div_scalar(gg * g, 3.0),
                 _const(np.zeros((), x._data.dtype)))


@spec.node(
    formula={"self": "hardswish_backward(grad, self)"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: hardswish_backward(tangents[0], inputs[0]),
    tangent="hardswish_backward(self_t, self_p)", batched=spec.BROADCASTS,
)
class HardswishBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (_hardswish_grad_np(g, np.asarray(x)),)
        return (hardswish_backward(g, x),)


@spec.node(
    formula={"grad_output": "hardswish_backward(grad, self)",
             "self": "at::where(at::logical_and(-3.0 < self, self < 3.0), grad * grad_output / 3.0, "
                     "at::zeros({}, self.options()))"},
    saved={"grad_output": SV.tensor(0), "self": SV.tensor(1)},
    jvp=lambda node, inputs, out, tangents: plus(
        None if tangents[0] is None else hardswish_backward(tangents[0], inputs[1]),
        None if tangents[1] is None else _hardswish_second(tangents[1], inputs[0], inputs[1])),
    tangent="hardswish_backward(grad_output_t, self_p) + at::where(at::logical_and(-3.0 < self_p, self_p < 3.0), "
            "self_t * grad_output_p / 3.0, at::zeros({}, self_p.options()))",
)
class HardswishBackwardBackward0(Node):
    __slots__ = ()

    def apply(self, gg: Tensor) -> tuple:
        g, x = self.saved_tensors
        return (hardswish_backward(gg, x) if needs(self, 0) else None,
                _hardswish_second(gg, g, x) if needs(self, 1) else None)


def hardswish_backward(g: Tensor, x: Tensor) -> Tensor:
    """hardswish's gradient (PyTorch's hardswish_backward), one node when it records."""
    node = record(HardswishBackwardBackward0, g, x)
    if node is not None:
        node.save(g, x)
    return result(_hardswish_grad_np(g._data, x._data).astype(g._data.dtype, copy=False), node)


def _hardswish(x: Tensor) -> Tensor:
    d = x._data
    node = record(HardswishBackward0, x)
    if node is not None:
        node.save(x)
    return result((d * np.clip(d + 3.0, 0.0, 6.0) / 6.0).astype(d.dtype, copy=False), node)


@spec.op("hardswish", vmap=spec.rule("pointwise_unary", "hardswish"), nodes=(HardswishBackward0,),
         top_level=False, method=False,
         sample=spec.Sample(((8,),), lambda L, a: L.nn.functional.hardswish(a * 3.0)))
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x relu6(x + 3) / 6 (in place with inplace=True)."""
    x = _floating(input, "hardswish")
    return apply_inplace(x, _hardswish, "hardswish_") if inplace else _hardswish(x)


_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))  # PyTorch's kernel multiplies by 1/6 as a float32


@spec.node(
    formula={"self": "hardsigmoid_backward(grad, self)"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: hardsigmoid_backward(tangents[0], inputs[0]),
    tangent="hardsigmoid_backward(self_t, self_p)", batched=spec.BROADCASTS,
)
class HardsigmoidBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (np.where(_inside(np.asarray(x), -3.0, 3.0), g * _ONE_SIXTH, 0.0),)
        return (hardsigmoid_backward(g, x),)


def hardsigmoid_backward(g: Tensor, x: Tensor) -> Tensor:
    """hardsigmoid's gradient: g / 6 strictly inside (-3, 3), else 0. PyTorch has no derivative of it: under
    create_graph it records NotImplemented, as PyTorch does."""
    node = record(NotImplemented_, g, x)
    if node is not None:
        node.op = "hardsigmoid_backward"
    data = np.where(_inside(x._data, -3.0, 3.0), g._data * _ONE_SIXTH, 0.0).astype(g._data.dtype, copy=False)
    return result(data, node)


def _hardsigmoid(x: Tensor) -> Tensor:
    d = x._data
    node = record(HardsigmoidBackward0, x)
    if node is not None:
        node.save(x)
    return result((np.clip(d + 3.0, 0.0, 6.0) / 6.0).astype(d.dtype, copy=False), node)


@spec.op("hardsigmoid", vmap=spec.rule("pointwise_unary", "hardsigmoid"), nodes=(HardsigmoidBackward0,),
         top_level=False, method=False,
         sample=spec.Sample(((8,),), lambda L, a: L.nn.functional.hardsigmoid(a * 3.0)))
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6 (in place with inplace=True)."""
    x = _floating(input, "hardsigmoid")
    return apply_inplace(x, _hardsigmoid, "hardsigmoid_") if inplace else _hardsigmoid(x)
