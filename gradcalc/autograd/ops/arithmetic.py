"""Arithmetic operators: each forward beside its backward.

Operands broadcast as in NumPy; each gradient is summed back to its input's shape (`sum_to`).
A Python number operand is a constant: it gets no edge, and its gradient is never computed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import NOTHING, Node, SavedOutput, one_class_copy
from ..reasons import worded
from ..temporaries import REUSE_MIN_SIZE, spare_times, temporary_operand, times
from ..tensor import Tensor
from .binary import (
    MulBackward1,
    _Binary,
    _binary,
    _mul1_number,
    _shape,
    integral_promoted,
    mul_scalar,
    number_path,
    plus,
    scaled,
    sub_scalar,
)
from .core import binary_operands, broadcast_error, needs, record, result
from .unary import log, reciprocal

# -- add, sub ---------------------------------------------------------------------------------------
_ALPHA = {"alpha": SV.field("other", lambda k: 1 if k is None else k)}


def _add_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    ta, tb = tangents
    return plus(ta, tb if node.other is None else scaled(tb, node.other))


@spec.node(
    formula={"self": "grad", "other": "maybe_multiply(grad, alpha)"},
    saved=_ALPHA, jvp=_add_jvp, tangent="self_t + maybe_multiply(other_t, alpha)", batched=spec.BROADCASTS,
)
class AddBackward0(_Binary):
    """a + b, or `add(a, b, alpha=k)`: a + k*b, with k in `other`."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        first, second = self._next
        gb = None
        if second is not None:
            gb = g if self.other is None else mul_scalar(g, self.other)  # PyTorch's maybe_multiply
        ga = g if first is not None else None
        return (ga, gb) if self.shapes is None else self.grads(ga, gb)  # (grads' test inlined: most don't broadcast)


def add(a: Any, b: Any) -> Tensor:
    """a + b."""
    try:
        if type(a) is Tensor:  # the commonest operands first, without binary_operands
            ad = a._data if a._data.ndim else a._data[()]
            if type(b) is float:
                return _add_number(AddBackward0, a, b, ad + b, None, None)
            if type(b) is Tensor and a._data.dtype is b._data.dtype:
                return _add_binary(AddBackward0, a, b, ad + (b._data if b._data.ndim else b._data[()]), None, None,
                                   True)
        ad, bd = binary_operands(a, b)
        return _add_binary(AddBackward0, a, b, ad + bd, None, None)
    except ValueError as exc:  # shapes that do not broadcast (a `try` costs nothing until it catches)
        raise broadcast_error(exc, a, b) from None


def _into_temporary(ufunc: np.ufunc, a: Any, b: Any) -> np.ndarray | None:
    """`ufunc(a, b)` written into `a`'s own array, when the result has `a`'s shape and dtype (the caller has
    checked that `a` is a dying temporary); None when it would not fit."""
    ad = a._data
    bd = b._data if type(b) is Tensor else b
    if type(bd) is np.ndarray:
        if bd.dtype != ad.dtype or (bd.shape != ad.shape and bd.ndim != 0):
            return None
    elif type(bd) is not float and type(bd) is not int:
        return None
    return ufunc(ad, bd, out=ad)


def _operator(op: Any, node: type[_Binary], ufunc: np.ufunc, check: Callable[[Any, Any], None] | None = None) -> Any:
    """The Python operator for `op` (`a + b`): like `op`, but when the left operand is a temporary that
    dies with this expression (as `s * x` in `s * x + e`), the result is written into its array instead of
    a new one. Only for operations that save neither input, and only through the operator, where a
    temporary can be told from a named tensor (`temporaries.temporary_operand`). `check(a, b)`, when given,
    runs first: an operation PyTorch refuses fails before a temporary's array is written into."""

    def operator(a: Any, b: Any) -> Tensor:
        if type(a) is Tensor and a._data.size >= REUSE_MIN_SIZE and temporary_operand(a):
            data = _into_temporary(ufunc, a, b)
            if data is not None:
                return _binary(node, a, b, data, None, None)
        return op(a, b)

    if check is not None:  # a closure of its own: the unchecked operators (`+`) pay nothing for it

        def operator(a: Any, b: Any) -> Tensor:  # type: ignore[misc]
            check(a, b)
            if type(a) is Tensor and a._data.size >= REUSE_MIN_SIZE and temporary_operand(a):
                data = _into_temporary(ufunc, a, b)
                if data is not None:
                    return _binary(node, a, b, data, None, None)
            return op(a, b)

    operator.__name__ = f"__{op.__name__}__"
    operator.__doc__ = op.__doc__
    return operator


def _sub_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (ta, tb), other = tangents, node.other
    return plus(ta, None if tb is None else (-tb if other is None else tb * -other))


@spec.node(
    formula={"self": "grad", "other": "-grad * alpha"},
    saved=_ALPHA, jvp=_sub_jvp, tangent="self_t - maybe_multiply(other_t, alpha)", batched=spec.BROADCASTS,
)
class SubBackward0(_Binary):
    """a - b, or `sub(a, b, alpha=k)`: a - k*b, with k in `other`."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        gb = None
        if needs(self, 1):
            gb = -g if self.other is None else mul_scalar(-g, self.other)
        return self.grads(g if needs(self, 0) else None, gb)


# PyTorch's messages for `-` of bool tensors (NumPy's name its own functions)
_MASK_HINT = " If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
_BOOL_NEG = "Negation, the `-` operator, on a bool tensor is not supported." + _MASK_HINT
_BOOL_SUB_ONE = "Subtraction, the `-` operator, with a bool tensor is not supported." + _MASK_HINT
_BOOL_SUB = (
    "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
    "operator instead."
)


def _is_bool(x: Any) -> bool:
    """Whether `x` is a bool operand in PyTorch's sense: a bool tensor, or a Python bool (which PyTorch wraps
    as a bool tensor)."""
    if type(x) is Tensor:
        return x._data.dtype.kind == "b"
    return isinstance(x, bool | np.bool_) or (isinstance(x, Tensor | np.ndarray) and _dtype_kind(x) == "b")


def _dtype_kind(x: Any) -> str:
    return (x._data if isinstance(x, Tensor) else x).dtype.kind


def check_sub(a: Any, b: Any) -> None:
    """PyTorch's `sub_check`: a subtraction with a bool operand on either side (a bool tensor or a Python
    bool) is refused, whatever the other operand is; NumPy would compute most of them."""
    if type(a) is Tensor and type(b) is Tensor and a._data.dtype.kind != "b" and b._data.dtype.kind != "b":
        return  # the common case, without a call more per subtraction
    first, second = _is_bool(a), _is_bool(b)
    if first or second:
        raise RuntimeError(_BOOL_SUB if first and second else _BOOL_SUB_ONE)


def sub(a: Any, b: Any) -> Tensor:
    """a - b."""
    check_sub(a, b)
    ad, bd = binary_operands(a, b)
    try:
        data = ad - bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return _sub_binary(SubBackward0, a, b, data, None, None)


@spec.op("add", nodes=(AddBackward0,), vmap=spec.rule("pointwise_binary", "add"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.add(a, b, alpha=2.0) + (a + b) + (a + 1.5) + (2 + b)))
def add_scaled(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    """`add(a, b, alpha=k)`: a + k*b, one node as in PyTorch (the operator `+` skips this wrapper)."""
    return _scaled(AddBackward0, add, np.add, a, b, alpha)


@spec.op("sub", nodes=(SubBackward0,), vmap=spec.rule("pointwise_binary", "sub"),
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.sub(a, b, alpha=0.5) - (1.5 - a) + (a - b) - 2.0))
def sub_scaled(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    """`sub(a, b, alpha=k)`: a - k*b."""
    return _scaled(SubBackward0, sub, np.subtract, a, b, alpha)


def _scaled(cls: type[_Binary], op: Any, ufunc: np.ufunc, a: Any, b: Any, alpha: Any) -> Tensor:
    if not isinstance(alpha, (int, float, np.number)):  # (bool is an int)
        raise TypeError(f"alpha must be a number, not {type(alpha).__name__}")
    if cls is SubBackward0:  # on the operands as given: `b * alpha` would turn a Python bool into an int
        check_sub(a, b)
    if alpha == 1:
        return op(a, b)
    if type(b) is not Tensor:  # a number operand: scaled first, as PyTorch's Scalar overload does
        return op(a, b * alpha)
    ad, bd = binary_operands(a, b)
    try:
        data = ufunc(ad, bd * alpha)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return _binary(cls, a, b, data, None, alpha)


@spec.node(
    formula={"self": "-grad * alpha"},
    saved={"alpha": SV.const(1)},
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else -tangents[0],
    tangent="-self_t * alpha", batched=spec.BROADCASTS,
)
class RsubBackward1(_Binary):
    __slots__ = ()
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return self.grads(-g if needs(self, 0) else None, None)


def rsub(a: Tensor, b: Any) -> Tensor:
    """b - a, for a number b (Python's `2 - x`)."""
    check_sub(b, a)  # NumPy would compute most of them; PyTorch refuses
    ad, bd = binary_operands(a, b)
    data = bd - ad
    return _binary(RsubBackward1, a, b, data, None, None)


# -- mul, div ---------------------------------------------------------------------------------------
def _mul_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb), other = inputs, tangents, node.other
    if other is not None:  # times a number: `a` is the tensor
        return scaled(ta, other)
    return plus(scaled(ta, b), None if tb is None else a * tb)


def _mul_batched(self: Node, g: Any) -> tuple:
    # as `apply` on bare arrays, with the last product written into `g` when the walk gave it as spare
    first, second = self._next
    if self._saved is NOTHING:
        ga = spare_times(self.other, g)
        return (ga, None) if self.shapes is None else self.grads(ga, None)
    a, b = self.unpack_saved(True)
    gb = ga = None
    if first is not None:
        gb = None if second is None else spare_times(a, g, last=False)
        ga = spare_times(b, g)
    elif second is not None:
        gb = spare_times(a, g)
    return self.grads(ga, gb)


@spec.node(
    formula={"self": "grad * other", "other": "grad * self"},
    saved={"other": SV.tensor(1, number="other"), "self": SV.tensor(0)},
    jvp=_mul_jvp, tangent="other_t * self_p + self_t * other_p", batched=_mul_batched,
)
class MulBackward0(_Binary):
    __slots__ = ()
    unpack_saved = one_class_copy(Node.unpack_saved)  # (node.one_class_copy: a formula run on every backward)

    def apply(self, g: Tensor) -> tuple:
        if self._saved is NOTHING:  # times a number, kept in `other`
            ga = g * self.other
            return (ga, None) if self.shapes is None else self.grads(ga, None)
        first, second = self._next
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        gb = ga = None
        if second is not None:
            gb = times(a, g) if raw else _mul(g, a) if type(g) is Tensor and type(a) is Tensor else g * a
        a = None  # in a plain backward the node let its saved values go: this frees `a` before `g * b` is made
        if first is not None:
            ga = times(b, g) if raw else _mul(g, b) if type(g) is Tensor and type(b) is Tensor else g * b
        return (ga, gb) if self.shapes is None else self.grads(ga, gb)  # (grads' test inlined, as AddBackward0's)


@spec.op("mul", nodes=(MulBackward0,), vmap=spec.rule("pointwise_binary", "mul"),
         sample=spec.Sample(((2, 3), (2, 1)), lambda L, a, b: L.mul(a, b) * 3.0 + 2.0 * a + a * b.detach()))
def mul(a: Any, b: Any) -> Tensor:
    """a * b."""
    kind = type(b)
    if type(a) is Tensor:  # the commonest operands first, each type tested once
        if kind is float or kind is int:
            return _mul_number(MulBackward0, a, b, (a._data if a._data.ndim else a._data[()]) * b, NOTHING, b)
        if kind is Tensor:
            ad, bd = a._data, b._data
            if ad.dtype is bd.dtype:  # binary_operands' work
                try:
                    data = (ad if ad.ndim else ad[()]) * (bd if bd.ndim else bd[()])
                except ValueError as exc:  # shapes that do not broadcast (a `try` costs nothing until it catches)
                    raise broadcast_error(exc, a, b) from None
                # each input's gradient needs the other input: save only what will be needed
                return _mul_binary(MulBackward0, a, b, data, (a if b._requires_grad else None,
                                                          b if a._requires_grad else None), None, True)
    ad, bd = binary_operands(a, b)
    try:
        data = ad * bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    if type(b) is not Tensor:
        return _binary(MulBackward0, a, b, data, NOTHING, b)
    if type(a) is not Tensor:
        return _binary(MulBackward0, b, a, data, NOTHING, a)
    save = (a if b._requires_grad else None, b if a._requires_grad else None)
    return _mul_binary(MulBackward0, a, b, data, save, None)


_mul = spec.raw_of(mul)  # the function as written, for formulas on plain tensors (no vmap dispatch)


def _div_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, b), (ta, tb) = inputs, tangents
    if type(b) is not Tensor:
        return None if ta is None else ta / b
    return plus(ta, None if tb is None else -(tb * out)) / b  # PyTorch's (self_t - other_t * result) / other_p


@spec.node(
    formula={"self": "grad / other", "other": "-grad * self / (other * other)"},
    saved={"other": SV.tensor(1, number="other"), "self": SV.tensor(0)},
    jvp=_div_jvp, tangent="(self_t - other_t * result) / other_p", batched=spec.BROADCASTS,
)
class DivBackward0(_Binary):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        a, b = self.unpack_saved(type(g) is not Tensor)
        if b is None:
            b = self.other
        ga = g / b if needs(self, 0) else None
        gb = -g * ((a / b) / b) if needs(self, 1) else None  # PyTorch's form: inf, not nan, at b = 0
        return self.grads(ga, gb)


@spec.op("div", nodes=(DivBackward0,), vmap=spec.rule("pointwise_binary", "div"),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.div(a, b) + 2.0 / b + a / 4.0, spec.POSITIVE))
def div(a: Any, b: Any) -> Tensor:
    """a / b (true division)."""
    ad, bd = binary_operands(a, b)
    if type(b) is not Tensor:
        return _binary(DivBackward0, a, b, ad / bd, NOTHING, b)
    if type(a) is not Tensor:  # number / tensor: PyTorch computes it as reciprocal(b) * a
        return mul(reciprocal(b), a)
    try:
        data = ad / bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return _div_binary(DivBackward0, a, b, data, (a if b._requires_grad else None, b), None)


@spec.node(formula={"self": "grad.neg()"}, jvp=lambda node, inputs, out, tangents: -tangents[0],
           tangent="self_t.neg()", batched=spec.BROADCASTS)
class NegBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        return (-g,)


@spec.op("neg", nodes=(NegBackward0,), vmap=spec.rule("pointwise_unary", "neg"),
         sample=spec.Sample(((3,),), lambda L, a: L.neg(a) + -a))
def neg(a: Tensor) -> Tensor:
    """-a."""
    try:
        data = -a._data
    except TypeError:  # a bool tensor
        raise RuntimeError(_BOOL_NEG) from None
    return result(data, record(NegBackward0, a))


# -- pow -----------------------------------------------------------------------------------------------
def _pow_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    ta, p = tangents[0], node.other
    return ta * 0.0 if p == 0 else ta * mul_scalar(inputs[0] ** (p - 1), p)


@spec.node(
    formula={"self": "grad * exponent * self.pow(exponent - 1)"},
    saved={"self": SV.tensor(0), "exponent": SV.field("other")},
    jvp=_pow_jvp, tangent="self_t * exponent * self_p.pow(exponent - 1)", batched=spec.BROADCASTS,
)
class PowBackward0(_Binary):
    """x ** number."""

    __slots__ = ()
    unpack_saved = one_class_copy(Node.unpack_saved)  # (node.one_class_copy)
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        p = self.other
        if p == 0:
            return (g * 0.0,)
        if not raw:  # recorded: tensors take the functions as written (an operator's slot costs more)
            if type(x) is Tensor and type(g) is Tensor:
                if type(p) is float or type(p) is int:
                    # pow's and mul_scalar's own paths for a number, without their calls and tests: a second
                    # derivative runs this formula under create_graph, and every call is paid there
                    q = p - 1
                    d = x._data
                    fd = (d if d.ndim else d[()]) ** q  # x.pow(p - 1)'s values (a NumPy scalar for a 0-d x),
                    f = _pow_number(PowBackward0, x, q, fd, (x,), q)  # which f holds as an array
                    return (_mul(g, _mul1_number(MulBackward1, f, p, fd * p, None, p)),)
                return (_mul(g, mul_scalar(_pow(x, p - 1), p)),)
            return (g * mul_scalar(x ** (p - 1), p),)  # (batched tensors: their own operators)
        f = mul_scalar(x ** (p - 1), p)  # PyTorch's grad * (p * x.pow(p - 1))
        x = None
        return (times(f, g),)


def _pow_tensors_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    from .elementwise import where  # (here: elementwise loads at first use, off the start-up path)

    (a, b), (ta, tb) = inputs, tangents
    first = None if ta is None else ta * (b * pow(a, sub(b, 1.0)))
    second = None if tb is None else tb * where(_zero_base(a, b), 0.0, out * log(a))
    return plus(first, second)


@spec.node(
    formula={"self": "grad * exponent * self.pow(exponent - 1)",
             "exponent": "grad * where(self == 0 and exponent >= 0, 0, result * self.log())"},
    saved={"exponent": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_pow_tensors_jvp, tangent="self_t * exponent_p * self_p.pow(exponent_p - 1) + exponent_t * result * "
    "self_p.log()",
)
class PowBackward1(_Binary):
    """tensor ** tensor."""

    __slots__ = ()
    raw_ok = False  # uses where/log on tensors

    def apply(self, g: Tensor) -> tuple:
        from .elementwise import where  # (here: elementwise loads at first use, off the start-up path)

        a, b = self.saved_tensors
        ga = None
        if needs(self, 0):  # 0 where the exponent is 0, as PyTorch's pow_backward_self (not -0 from b * a**-1)
            ga = where(b == 0.0, 0.0, mul(g, mul(b, pow(a, sub_scalar(b, 1.0)))))
        gb = None
        if needs(self, 1):
            # d(a**b)/db = a**b log a, taken as 0 where a == 0 and b >= 0 (the limit), as PyTorch does
            safe = where(_zero_base(a, b), 0.0, mul(pow(a, b), log(a)))
            gb = mul(g, safe)
        return self.grads(ga, gb)


def _exponent_factor(base: float, exponent: Any, out: Any) -> Any:
    """d(base ** exponent)/d exponent = result * log(base); for a base of 0, 0 where exponent >= 0 (the limit, as
    PyTorch's pow_backward_exponent takes it: 0 * log(0) would be nan), result * -inf elsewhere. Tensors, or a
    plain backward's arrays."""
    if base != 0:
        return mul_scalar(out, float(np.log(base)))
    if type(out) is not Tensor:
        with np.errstate(invalid="ignore"):  # 0 * -inf where the mask puts 0 anyway
            return np.where(exponent >= 0, 0.0, out * -math.inf).astype(out.dtype, copy=False)
    from .elementwise import where  # (here: elementwise loads at first use, off the start-up path)

    return where(exponent >= 0.0, 0.0, mul_scalar(out, -math.inf))


@spec.node(
    formula={"exponent": "grad * (self == 0 and exponent >= 0 ? 0 : result * log(self))"},
    saved={"exponent": SV.tensor(0), "result": SV.tensor(1), "self": SV.field("other")},
    jvp=lambda node, inputs, out, tangents: tangents[0] * _exponent_factor(node.other, inputs[0], out),
    tangent="exponent_t * (self == 0 and exponent >= 0 ? 0 : result * log(self))", batched=spec.BROADCASTS,
)
class PowBackward2(_Binary):
    """number ** tensor: one edge, the exponent's."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        exponent, out = self.unpack_saved(type(g) is not Tensor)
        return (self.grads(None, g * _exponent_factor(float(self.other), exponent, out))[1],)


def _zero_base(a: Tensor, b: Tensor) -> Tensor:
    return Tensor._make(np.asarray((a._data == 0) & (b._data >= 0)), False, None)


@spec.op("pow", nodes=(PowBackward0, PowBackward1, PowBackward2), vmap=spec.rule("pointwise_binary", "pow"),
         sample=spec.Sample(((3,), (3,)), lambda L, a, b: L.pow(a, b) + a**3 + 2.0**b + a**0.5 + a**0, spec.POSITIVE))
def pow(a: Any, b: Any) -> Tensor:
    """a ** b."""
    if type(a) is Tensor and (type(b) is float or type(b) is int):  # the commonest operands first
        return _pow_number(PowBackward0, a, b, (a._data if a._data.ndim else a._data[()]) ** b, (a,), b)
    ad, bd = binary_operands(a, b)
    try:
        data = ad**bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    if type(b) is not Tensor:
        return _binary(PowBackward0, a, b, data, (a,), b)
    if type(a) is not Tensor:
        node = record(PowBackward2, b)
        out = result(integral_promoted(np.asarray(data), a, b), node)
        if node is not None:
            node.shapes, node.other = ((), _shape(b)), a
            node.save(b, SavedOutput(out))
        return out
    return _binary(PowBackward1, a, b, data, (a, b), None)


_pow = spec.raw_of(pow)  # as _mul


# -- floor division and remainder ----------------------------------------------------------------------
@spec.node(
    formula={"self": "not differentiable", "other": "not differentiable"},
    no_jvp="floor_divide and scatter with reduce= have no derivative (PyTorch records them as NotImplemented): a "
    "tangent through them is an error, as a gradient is",
)
class NotImplemented_(Node):
    """PyTorch records `//` (and scatter with reduce=) but has no derivative for it: backward through it is an
    error."""

    __slots__ = ("op",)

    @classmethod
    def name(cls) -> str:
        return "NotImplemented"

    def apply(self, g: Tensor) -> tuple:
        raise worded(f"derivative for aten::{self.op} is not implemented",
                     f"'{self.op}' has no derivative: compute it on .detach()ed values")


@spec.op("floor_divide", nodes=(NotImplemented_,), vmap=spec.rule("pointwise_binary", "floor_divide"))
def floor_divide(a: Any, b: Any) -> Tensor:
    """a // b (no derivative)."""
    ad, bd = binary_operands(a, b)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            data = integral_promoted(np.asarray(np.floor_divide(ad, bd)), a, b)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    node = record(NotImplemented_, a, b) if type(b) is Tensor else record(NotImplemented_, a)  # as PyTorch
    if node is not None:
        node.op = "floor_divide"
    return result(data, node)


@spec.node(formula={"self": "grad"}, jvp=lambda node, inputs, out, tangents: tangents[0], tangent="self_t")
class RemainderBackward0(_Binary):
    __slots__ = ()
    raw_ok = False
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return self.grads(g, None)


def _remainder_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    return plus(ta, None if tb is None else -(tb * floor_divide(a, b).detach()))


@spec.node(
    formula={"self": "grad", "other": "-grad * self.div(other, rounding_mode='floor')"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_remainder_jvp, tangent="self_t - other_t * self_p.div(other_p, rounding_mode='floor')",
)
class RemainderBackward1(_Binary):
    __slots__ = ()
    raw_ok = False

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        ga = g if needs(self, 0) else None
        gb = mul(neg(g), floor_divide(a, b).detach()) if needs(self, 1) else None
        return self.grads(ga, gb)


@spec.op("remainder", nodes=(RemainderBackward0, RemainderBackward1), vmap=spec.rule("pointwise_binary", "remainder"),
         sample=spec.Sample(((4,), (4,)), lambda L, a, b: L.remainder(a * 3.0, b) + a % 0.7, spec.POSITIVE))
def remainder(a: Any, b: Any) -> Tensor:
    """a % b, with the sign of b (Python's and PyTorch's convention)."""
    ad, bd = binary_operands(a, b)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.remainder(ad, bd)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    if type(b) is not Tensor:
        return _binary(RemainderBackward0, a, b, data, None, None)
    if type(a) is not Tensor:
        a = Tensor._make(np.asarray(a, dtype=bd.dtype), False, None)
    return _binary(RemainderBackward1, a, b, data, (a, b), None)


# the operators; the named functions and methods are the specs' (add, sub, mul, div, neg, pow, ...)
METHODS = {
    "__add__": _operator(add, AddBackward0, np.add),
    "__radd__": add,
    "__sub__": _operator(sub, SubBackward0, np.subtract, check_sub),
    "__rsub__": rsub,
    "__mul__": mul,
    "__rmul__": mul,
    "__truediv__": div,
    "__rtruediv__": lambda a, b: div(b, a),
    "__neg__": neg,
    "__pos__": lambda a: a,
    "__pow__": pow,
    "__rpow__": lambda a, b: pow(b, a),
    "__floordiv__": floor_divide,
    "__rfloordiv__": lambda a, b: floor_divide(b, a),
    "__mod__": remainder,
    "__rmod__": lambda a, b: remainder(b, a),
}


# the number and tensor paths' own copies for the commonest operations (binary.one_class_copy): each always
# makes nodes of one class, so its slot stores stay specialised
_add_number, _add_binary = number_path(AddBackward0), one_class_copy(_binary)
_sub_binary = one_class_copy(_binary)
_mul_number, _mul_binary = number_path(MulBackward0), one_class_copy(_binary)
_div_binary = one_class_copy(_binary)
_pow_number = number_path(PowBackward0)
