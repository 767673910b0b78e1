"""Elementwise functions of two and three tensors beyond the arithmetic operators: `addcmul`, `addcdiv` (the
optimizers' updates), `lerp`, `atan2`, `hypot`, `logaddexp`, `fmod`, `heaviside`.

Operands broadcast together; each gradient is summed back to its input's shape (`sum_to`). The backward formulas
are derivatives.yaml's, written with the engine's operations so that create_graph differentiates them again, and
each node saves what PyTorch saves: only the tensors the gradients that are wanted use (addcmul keeps `tensor2`
only when `tensor1` requires grad...), as `grad_fn._saved_*` shows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..defaults import default_float
from ..node import Node, SavedOutput
from ..tensor import Tensor
from .arithmetic import NotImplemented_, div, mul, sub
from .binary import add_scalar, mul_scalar, plus
from .core import broadcast_error, broadcast_message, needs, record, result
from .elementwise import masked_fill, promoted
from .logarithms import exp
from .rounding import trunc
from .sums import sum_to
from .unary import reciprocal


def _tensors(name: str, *xs: Any) -> tuple[Tensor, ...]:
    """The operands as tensors (a Python number becomes a 0-d one, as PyTorch wraps it); a tensor is required."""
    if not any(isinstance(x, Tensor) for x in xs):
        raise TypeError(f"{name}(): expected a tensor, got {', '.join(type(x).__name__ for x in xs)}")
    out = []
    for x in xs:
        if isinstance(x, Tensor):
            out.append(x)
        elif isinstance(x, (bool, int, float, np.number)):
            out.append(Tensor._make(np.asarray(x), False, None))
        else:
            raise TypeError(f"{name}(): expected a tensor or a number, not {type(x).__name__}")
    return tuple(out)


def _arrays(name: str, xs: tuple[Tensor, ...], floating: bool = False) -> tuple[np.ndarray, ...]:
    """The operands' arrays in PyTorch's promoted dtype, with the shapes checked to broadcast. `floating`: the
    operation has no integer kernel (hypot, logaddexp, lerp: PyTorch's NotImplementedError for one)."""
    dtype = promoted(*(x._data for x in xs))
    if floating and dtype.kind != "f":
        kind = {"b": "Bool", "i": "Long" if dtype.itemsize == 8 else "Int", "u": "Byte"}[dtype.kind]
        raise NotImplementedError(f'"{name}" not implemented for \'{kind}\'')
    arrays = tuple(x._data.astype(dtype, copy=False) for x in xs)
    message = broadcast_message([a.shape for a in arrays])
    if message is not None:
        raise RuntimeError(message)
    return arrays


def _unbroadcast(node: Node, grads: list[Any]) -> tuple:
    """Each gradient summed back to its input's shape."""
    return tuple(None if g is None else sum_to(g, s) for g, s in zip(grads, node.shapes, strict=True))


def _wrapped(value: Any, like: Tensor, full: bool = False) -> Tensor:
    """A number in a formula as PyTorch's C++ makes it a tensor: 0-d of `like`'s dtype (`1 - w` records
    SubBackward0, as there), or `full` of its shape (`value / t` divides a filled tensor: DivBackward0)."""
    data = np.full(like._data.shape, value, like._data.dtype) if full else np.asarray(value, like._data.dtype)
    return Tensor._make(data, False, None)


def _shapes(*xs: Tensor) -> tuple[tuple[int, ...], ...]:
    return tuple(x._data.shape for x in xs)


# -- addcmul, addcdiv -----------------------------------------------------------------------------------------
def _addcmul_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, t1, t2), (ts, tt1, tt2), v = inputs, tangents, node.value
    return plus(plus(ts, None if tt1 is None else mul_scalar(tt1 * t2, v)),
                None if tt2 is None else mul_scalar(tt2 * t1, v))


@spec.node(
    formula={"self": "grad", "tensor1": "grad * (tensor2 * value)", "tensor2": "grad * (tensor1 * value)"},
    saved={"tensor1": SV.tensor(0), "tensor2": SV.tensor(1), "value": SV.field("value")},
    jvp=_addcmul_jvp, tangent="self_t + maybe_multiply(tensor1_t * tensor2_p, value) + "
                              "maybe_multiply(tensor2_t * tensor1_p, value)",
    batched=None,  # (its formulas run on tensors only)
)
class AddcmulBackward0(Node):
    __slots__ = ("shapes", "value")

    def apply(self, g: Any) -> tuple:
        t1, t2 = self.saved_tensors
        return _unbroadcast(self, [
            g if needs(self, 0) else None,
            g * mul_scalar(t2, self.value) if needs(self, 1) else None,
            g * mul_scalar(t1, self.value) if needs(self, 2) else None,
        ])


def _addcdiv_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, t1, t2), (ts, tt1, tt2), v = inputs, tangents, node.value
    first = None if tt1 is None else mul_scalar(tt1 / t2, v)
    second = None if tt2 is None else -(mul_scalar(tt2 * t1, v) / (t2 * t2))
    return plus(plus(ts, first), second)


@spec.node(
    formula={"self": "grad", "tensor1": "grad * (value / tensor2)",
             "tensor2": "-grad * (value * tensor1 / (tensor2 * tensor2))"},
    saved={"tensor1": SV.tensor(0), "tensor2": SV.tensor(1), "value": SV.field("value")},
    jvp=_addcdiv_jvp, tangent="self_t + maybe_multiply(tensor1_t / tensor2_p, value) - "
                              "maybe_multiply(tensor2_t * (tensor1_p / tensor2_p) / tensor2_p, value)",
    batched=None,  # (its formulas run on tensors only)
)
class AddcdivBackward0(Node):
    __slots__ = ("shapes", "value")

    def apply(self, g: Any) -> tuple:
        t1, t2 = self.saved_tensors
        return _unbroadcast(self, [
            g if needs(self, 0) else None,
            g * div(_wrapped(self.value, t2, full=True), t2) if needs(self, 1) else None,
            -g * (mul_scalar(t1, self.value) / (t2 * t2)) if needs(self, 2) else None,
        ])


def _addc(name: str, cls: type[Node], x: Any, t1: Any, t2: Any, value: Any) -> Tensor:
    x, t1, t2 = _tensors(name, x, t1, t2)
    xd, ad, bd = _arrays(name, (x, t1, t2))
    if isinstance(value, Tensor):
        value = value.item()
    if name == "addcdiv" and ad.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the "
            "latter implementation: (input + value * tensor1 / tensor2), for all dtypes."
        )
    if xd.dtype.kind in "biu" and isinstance(value, float) and not float(value).is_integer():
        raise RuntimeError(f"value cannot be converted to type {_torch_int(xd.dtype)} without overflow")
    with np.errstate(divide="ignore", invalid="ignore"):
        combined = ad * bd if name == "addcmul" else ad / bd
        data = np.asarray(xd + combined * value).astype(xd.dtype, copy=False)
    node = record(cls, x, t1, t2)
    if node is not None:
        node.shapes, node.value = _shapes(x, t1, t2), value
        if name == "addcmul":  # tensor1 is needed by tensor2's gradient, and the other way round
            node.save(t1 if t2._requires_grad else None, t2 if t1._requires_grad else None)
        else:
            node.save(t1 if t2._requires_grad else None, t2)
    return result(data, node)


def _torch_int(dtype: np.dtype) -> str:
    return {"int64": "long int", "int32": "int", "bool": "bool"}.get(dtype.name, dtype.name)


@spec.op("addcmul", nodes=(AddcmulBackward0,), inplace=True, vmap=spec.rule("pointwise", "addcmul", 3),
         sample=spec.Sample(((2, 3), (3,), (2, 1)), lambda L, a, b, c: L.addcmul(a, b, c, value=0.5)
                            + a.addcmul(b, a)))
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 * tensor2, elementwise (broadcasting)."""
    return _addc("addcmul", AddcmulBackward0, input, tensor1, tensor2, value)


@spec.op("addcdiv", nodes=(AddcdivBackward0,), inplace=True, vmap=spec.rule("pointwise", "addcdiv", 3),
         sample=spec.Sample(((2, 3), (3,), (2, 1)), lambda L, a, b, c: L.addcdiv(a, b, c, value=-2.0)
                            + a.addcdiv(b, c.exp()), spec.POSITIVE))
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 / tensor2, elementwise (broadcasting)."""
    return _addc("addcdiv", AddcdivBackward0, input, tensor1, tensor2, value)


# -- lerp -----------------------------------------------------------------------------------------------------
def _lerp_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (ts, te), w = tangents[:2], float(node.weight)
    first = None if ts is None else mul_scalar(ts, 1.0 - w)
    return plus(first, None if te is None else mul_scalar(te, w))


@spec.node(
    formula={"self": "grad * (1 - weight.toDouble())", "end": "grad * weight"},
    saved={"weight": SV.field("weight")},
    jvp=_lerp_jvp, tangent="at::lerp(self_t, end_t, weight)", batched=spec.BROADCASTS,
)
class LerpBackward0(Node):
    """lerp with a number weight."""

    __slots__ = ("shapes", "weight")

    def apply(self, g: Any) -> tuple:
        w = self.weight
        return _unbroadcast(self, [mul_scalar(g, 1.0 - w) if needs(self, 0) else None,
                                   mul_scalar(g, w) if needs(self, 1) else None])


def _lerp_tensor_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (s, e, w), (ts, te, tw) = inputs, tangents
    first = None if ts is None else ts * (1.0 - w)
    second = None if te is None else te * w
    third = None if tw is None else tw * (e - s)
    return plus(plus(first, second), third)


@spec.node(
    formula={"self": "grad * (1 - weight)", "end": "grad * weight", "weight": "grad * (end - self)"},
    saved={"end": SV.tensor(1), "self": SV.tensor(0), "weight": SV.tensor(2)},
    jvp=_lerp_tensor_jvp, tangent="at::lerp(self_t, end_t, weight_p) + weight_t * (end_p - self_p)",
    batched=None,  # (its formulas run on tensors only)
)
class LerpBackward1(Node):
    """lerp with a tensor weight: a gradient for the weight too."""

    __slots__ = ("shapes",)

    def apply(self, g: Any) -> tuple:
        s, e, w = self.saved_tensors
        return _unbroadcast(self, [g * sub(_wrapped(1, w), w) if needs(self, 0) else None,
                                   g * w if needs(self, 1) else None,
                                   g * (e - s) if needs(self, 2) else None])


def _lerp_data(s: np.ndarray, e: np.ndarray, w: Any) -> np.ndarray:
    # PyTorch's formula, exact at both ends: from `self` below a weight of 0.5, from `end` above
    diff = e - s
    return np.asarray(np.where(np.abs(w) < 0.5, s + w * diff, e - diff * (1 - w)))


@spec.op("lerp", nodes=(LerpBackward0, LerpBackward1), inplace=True, vmap=spec.rule("pointwise", "lerp", 3),
         sample=spec.Sample(((2, 3), (3,), (2, 1)), lambda L, a, b, w: L.lerp(a, b, 0.3) + a.lerp(b, w)
                            + L.lerp(a, b, 0.8)))
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:  # noqa: A002
    """input + weight * (end - input): linear interpolation, with a number or tensor weight."""
    if not (isinstance(input, Tensor) and isinstance(end, Tensor)):
        raise TypeError(f"lerp(): expected tensors for input and end, got {type(input).__name__} and "
                        f"{type(end).__name__}")
    if isinstance(weight, Tensor):
        if input._data.dtype != end._data.dtype or input._data.dtype != weight._data.dtype:
            raise RuntimeError(f"expected dtype {_torch_name(input._data.dtype)} for `weight` but got dtype "
                               f"{_torch_name(weight._data.dtype)}" if input._data.dtype == end._data.dtype else
                               f"expected dtype {_torch_name(input._data.dtype)} for `end` but got dtype "
                               f"{_torch_name(end._data.dtype)}")
        sd, ed, wd = _arrays("lerp_kernel_tensor", (input, end, weight), floating=True)
        node = record(LerpBackward1, input, end, weight)
        if node is not None:
            node.shapes = _shapes(input, end, weight)
            needs_se = input._requires_grad or end._requires_grad
            node.save(input if weight._requires_grad else None, end if weight._requires_grad else None,
                      weight if needs_se else None)
        return result(_lerp_data(sd, ed, wd), node)
    if input._data.dtype != end._data.dtype:
        raise RuntimeError(f"expected dtype {_torch_name(input._data.dtype)} for `end` but got dtype "
                           f"{_torch_name(end._data.dtype)}")
    sd, ed = _arrays("lerp_kernel_scalar", (input, end), floating=True)
    w = float(weight)
    node = record(LerpBackward0, input, end)
    if node is not None:
        node.shapes, node.weight = _shapes(input, end), weight
    return result(_lerp_data(sd, ed, w).astype(sd.dtype, copy=False), node)


def _torch_name(dtype: np.dtype) -> str:
    return {"float64": "double", "float32": "float", "int64": "long int", "int32": "int"}.get(dtype.name, dtype.name)


# -- atan2, hypot, logaddexp ----------------------------------------------------------------------------------
def _binary_floating(name: str, a: Any, b: Any, kernel: str | None = None) -> tuple[Tensor, Tensor, tuple]:
    a, b = _tensors(name, a, b)
    ad, bd = _arrays(kernel or name, (a, b), floating=kernel is not None)
    return a, b, (ad, bd)


def _as_float(ad: np.ndarray, bd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integral operands in the default dtype (PyTorch's atan2 of integers is a float)."""
    if ad.dtype.kind == "f":
        return ad, bd
    f = default_float()
    return ad.astype(f), bd.astype(f)


def _atan2_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    r = reciprocal(a * a + b * b)
    return plus(None if ta is None else ta * (b * r), None if tb is None else tb * (-a * r))


@spec.node(
    formula={"self": "grad * other / (self * self + other * other)",
             "other": "grad * -self / (self * self + other * other)"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_atan2_jvp, tangent="atan2_jvp(self_p, self_t, other_p, other_t)",
)
class Atan2Backward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g: Any) -> tuple:
        a, b = self.saved_tensors
        # PyTorch's atan2_backward: 0 at the origin, where 1 / (self² + other²) is inf
        r = masked_fill(reciprocal(a * a + b * b), (a._data == 0) & (b._data == 0), 0.0)
        return _unbroadcast(self, [g * b * r if needs(self, 0) else None, g * -a * r if needs(self, 1) else None])


@spec.op("atan2", aliases=("arctan2",), nodes=(Atan2Backward0,), inplace=True,
         vmap=spec.rule("pointwise_binary", "atan2"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.atan2(a, b) + L.arctan2(b, a.abs() + 0.1)))
def atan2(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The angle of the point (other, input): arctan(input / other) in the right quadrant, elementwise."""
    a, b, (ad, bd) = _binary_floating("atan2", input, other)
    ad, bd = _as_float(ad, bd)
    node = record(Atan2Backward0, a, b)
    if node is not None:
        node.shapes = _shapes(a, b)
        node.save(a, b)
    return result(np.arctan2(ad, bd), node)


def _hypot_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    return plus(None if ta is None else ta * a, None if tb is None else tb * b) / out


@spec.node(
    formula={"self": "grad * self / result", "other": "grad * other / result"},
    saved={"other": SV.tensor(1), "result": SV.tensor(2), "self": SV.tensor(0)},
    jvp=_hypot_jvp, tangent="(self_t * self_p + other_t * other_p) / result",
)
class HypotBackward0(Node):
    __slots__ = ("shapes",)

    def apply(self, g: Any) -> tuple:
        a, b, r = self.saved_tensors
        return _unbroadcast(self, [g * a / r if needs(self, 0) else None, g * b / r if needs(self, 1) else None])


@spec.op("hypot", nodes=(HypotBackward0,), inplace=True, vmap=spec.rule("pointwise_binary", "hypot"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.hypot(a, b) + a.hypot(a * 2.0)))
def hypot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """sqrt(input² + other²) elementwise, without overflow."""
    a, b, (ad, bd) = _binary_floating("hypot", input, other, "hypot_cpu")
    node = record(HypotBackward0, a, b)
    out = result(np.hypot(ad, bd), node)
    if node is not None:
        node.shapes = _shapes(a, b)
        node.save(a if a._requires_grad else None, b if b._requires_grad else None, SavedOutput(out))
    return out


def _logaddexp_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    first = None if ta is None else ta / add_scalar(exp(b - a), 1.0)
    return plus(first, None if tb is None else tb / add_scalar(exp(a - b), 1.0))


@spec.node(
    formula={"self": "grad / (1 + exp(other - self))", "other": "grad / (1 + exp(self - other))"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_logaddexp_jvp, tangent="self_t / (1 + exp(other_p - self_p)) + other_t / (1 + exp(self_p - other_p))",
    batched=spec.BROADCASTS,
)
class LogaddexpBackward0(Node):
    __slots__ = ("shapes",)
    raw_ok = True  # operators and the engine's functions: it runs on bare arrays too

    def apply(self, g: Any) -> tuple:
        a, b = self.unpack_saved(type(g) is not Tensor)
        return _unbroadcast(self, [g / add_scalar(exp(b - a), 1.0) if needs(self, 0) else None,
                                   g / add_scalar(exp(a - b), 1.0) if needs(self, 1) else None])


@spec.op("logaddexp", nodes=(LogaddexpBackward0,), vmap=spec.rule("pointwise_binary", "logaddexp"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.logaddexp(a, b) + a.logaddexp(a * 3.0)))
def logaddexp(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """log(exp(input) + exp(other)) elementwise, computed without overflow."""
    a, b, (ad, bd) = _binary_floating("logaddexp", input, other, "logaddexp_cpu")
    node = record(LogaddexpBackward0, a, b)
    if node is not None:
        node.shapes = _shapes(a, b)
        node.save(a, b)
    return result(np.logaddexp(ad, bd), node)


# -- fmod -----------------------------------------------------------------------------------------------------
@spec.node(formula={"self": "grad"}, jvp=lambda node, inputs, out, tangents: tangents[0], tangent="self_t",
           batched=spec.BROADCASTS)
class FmodBackward0(Node):
    """fmod by a number: the gradient passes unchanged."""

    __slots__ = ()

    def apply(self, g: Any) -> tuple:
        return (g,)


def _fmod_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    return plus(ta, None if tb is None else -(tb * trunc(a / b)))


@spec.node(
    formula={"self": "grad", "other": "-grad * self.div(other, rounding_mode='trunc')"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_fmod_jvp, tangent="self_t - other_t * self_p.div(other_p, rounding_mode='trunc')",
)
class FmodBackward1(Node):
    __slots__ = ("shapes",)

    def apply(self, g: Any) -> tuple:
        a, b = self.saved_tensors
        # the quotient rounded toward zero is piecewise constant: a constant factor, as PyTorch's div(...)
        q = Tensor._make(np.trunc(a._data / b._data), False, None) if needs(self, 1) else None
        return _unbroadcast(self, [g if needs(self, 0) else None, mul(-g, q) if q is not None else None])


@spec.op("fmod", nodes=(FmodBackward0, FmodBackward1), inplace=True, vmap=spec.rule("pointwise_binary", "fmod"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.fmod(a * 3.0, b) + a.fmod(0.7) + L.fmod(-a, b),
                            spec.POSITIVE))
def fmod(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """The remainder of input / other with the sign of the dividend `input` (C's fmod; `remainder` takes the
    divisor's sign)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fmod(): argument 'input' must be Tensor, not {type(input).__name__}")
    number = not isinstance(other, Tensor)
    a, b = _tensors("fmod", input, other)
    ad, bd = _arrays("fmod", (a, b))
    if number and input._data.dtype.kind in "biu" and isinstance(other, float):
        ad, bd = ad.astype(default_float()), bd.astype(default_float())
    if ad.dtype.kind in "biu" and np.any(bd == 0):
        raise RuntimeError("ZeroDivisionError")
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.fmod(ad, bd)
    if number:
        node = record(FmodBackward0, a)
        return result(data, node)
    node = record(FmodBackward1, a, b)
    if node is not None:
        node.shapes = _shapes(a, b)
        node.save(a if b._requires_grad else None, b if b._requires_grad else None)
    return result(data, node)


# -- heaviside ------------------------------------------------------------------------------------------------
@spec.op("heaviside", nodes=(NotImplemented_,), inplace=True, vmap=spec.rule("pointwise_binary", "heaviside"))
def heaviside(input: Tensor, values: Tensor) -> Tensor:  # noqa: A002
    """The step function: 0 where input < 0, `values` where input == 0, 1 where input > 0 (no derivative:
    PyTorch records it as NotImplemented, and backward through it is an error)."""
    if not (isinstance(input, Tensor) and isinstance(values, Tensor)):
        raise TypeError(f"heaviside(): expected two tensors, got {type(input).__name__} and "
                        f"{type(values).__name__}")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    ad, vd = input._data, values._data
    try:
        data = np.asarray(np.where(ad == 0, vd, (ad > 0).astype(ad.dtype))).astype(ad.dtype, copy=False)
    except ValueError as exc:
        raise broadcast_error(exc, input, values) from None
    node = record(NotImplemented_, input, values)
    if node is not None:
        node.op = "heaviside"
    return result(data, node)

