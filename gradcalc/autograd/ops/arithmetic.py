"""Arithmetic operators: each forward beside its backward.

Operands broadcast as in NumPy; each gradient is summed back to its input's shape (`sum_to`).
A Python number operand is a constant: it gets no edge, and its gradient is never computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import forward_ad, grad_mode
from .. import saved as SV
from ..grad_mode import state
from ..node import NOTHING, SEQ, STAMP, Node, SavedOutput
from ..temporaries import REUSE_MIN_SIZE, spare_times, temporary_operand, times
from ..tensor import Tensor
from .core import binary_operands, broadcast_error, needs, record, result


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back down to `shape` (differentiable; also on bare arrays)."""
    raw = type(g) is not Tensor
    gshape = np.shape(g) if raw else g._data.shape
    if gshape == shape:
        return g
    if raw and state.batch:  # a batched backward (never equal shapes): the leading batch dim is kept
        return batched_sum_to(g, shape)
    lead = len(gshape) - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape) if n == 1 and gshape[i + lead] != 1)
    if raw:
        return np.sum(g, axis=dims, keepdims=True).reshape(shape)
    if not shape:  # as PyTorch's sum_to: a plain sum (SumBackward0, not a view of a kept-dims sum)
        return R.sum(g)
    out = R.sum(g, dim=dims, keepdim=True) if dims else g
    return R.reshape_to(out, shape) if out._data.shape != shape else out


def batched_sum_to(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`sum_to` for a gradient array with a leading batch dim: each row summed down to `shape`."""
    gshape = g.shape
    lead = len(gshape) - 1 - len(shape)
    dims = tuple(range(1, 1 + lead)) + tuple(
        i + 1 + lead for i, n in enumerate(shape) if n == 1 and gshape[i + 1 + lead] != 1)
    if dims and dims[-1] != len(gshape) - 1 and g.dtype.kind == "f":
        # the last dim kept: NumPy's sum adds along the other dims in a loop over that one, slow when it is
        # short ((rows, 100, 4) to (rows, 4) runs at a quarter of the speed); einsum adds in the same order
        keep = [i for i in range(len(gshape)) if i not in dims]
        return np.einsum(g, list(range(len(gshape))), keep).reshape(gshape[:1] + shape)
    return np.sum(g, axis=dims, keepdims=True).reshape(gshape[:1] + shape)


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if type(x) is Tensor else ()


class _Binary(Node):
    """A binary node: keeps both input shapes, to sum broadcast gradients back.

    Backward formulas here use Python operators only, so they run on tensors (recorded, under
    create_graph) and on bare NumPy arrays (a plain backward) alike."""

    __slots__ = ("shapes", "other")
    raw_ok = True
    # Whether a number operand keeps an (empty) edge, as PyTorch's Tensor overloads do (`x * 2.0` shows
    # `(None, 0)` for the 2.0); PyTorch's Scalar overloads (`x ** 2`, `2 - x`, `x % 2`) have one edge only.
    number_edge = True

    def grads(self, ga: Any, gb: Any) -> tuple[Tensor | None, Tensor | None]:
        if self.shapes is None:
            return ga, gb
        sa, sb = self.shapes
        return (
            sum_to(ga, sa) if ga is not None else None,
            sum_to(gb, sb) if gb is not None else None,
        )


_new = object.__new__


def plus(p: Any, q: Any) -> Any:
    """p + q for forward-mode rules, where None is a zero tangent."""
    if q is None:
        return p
    return q if p is None else p + q


def scaled(t: Any, f: Any) -> Any:
    """t * f for forward-mode rules, where a None tangent stays None."""
    return None if t is None else t * f


def _binary(cls: type[_Binary], a: Any, b: Any, data: Any, save: tuple | None, other: Any) -> Tensor:
    """The result of a binary operation, recorded when grad mode is on and an input requires grad.

    `record`, `result` and `Node.save` are inlined here: this is the engine's hottest path,
    and every call and object it avoids is paid once per operation of every user's graph. (Callers pass
    every argument by position for the same reason: keywords cost as much as two attribute stores.)"""
    if type(data) is not np.ndarray:
        data = np.asarray(data)
    ta = type(a) is Tensor and a._requires_grad
    tb = type(b) is Tensor and b._requires_grad
    if not ((ta or tb) and state.grad_enabled):
        if grad_mode.forward_seen:
            return forward_ad.binary(cls, a, b, Tensor._make(data, False, None), other)
        return Tensor._make(data, False, None)
    node = _new(cls)
    if ta:
        na = a.grad_fn or a._accumulator or a._accumulate_node()
        if tb:
            node._next = (na, b.grad_fn or b._accumulator or b._accumulate_node())
            node._nrs = (a._output_nr, b._output_nr) if a._output_nr or b._output_nr else None
        elif cls.number_edge or type(b) is Tensor:
            node._next = (na, None)
            node._nrs = (a._output_nr, 0) if a._output_nr else None
        else:
            node._next = (na,)
            node._nrs = (a._output_nr,) if a._output_nr else None
    else:
        node._next = (None, b.grad_fn or b._accumulator or b._accumulate_node())
        node._nrs = (0, b._output_nr) if b._output_nr else None
    node._extras = None
    node._seq = SEQ[0] = SEQ[0] + 1  # the creation number (node.SEQ)
    # input shapes, to sum broadcast gradients back; None when nothing was broadcast (never, by a number)
    if type(b) is float or type(b) is int:
        node.shapes = None
    else:
        so = data.shape
        sa = a._data.shape if type(a) is Tensor else ()
        sb = b._data.shape if type(b) is Tensor else ()
        node.shapes = None if sa == so and (sb == so or not tb) else (sa, sb)
    node.other = other
    node._versions = None
    node._saved = save
    if save is not None and save is not NOTHING:
        for t in save:
            if t is not None and (t._vc is not None or t._inference):
                node.save(*save)  # the checked path: versions to remember, or an inference tensor to refuse
                break
    if STAMP.on:  # anomaly mode, an origin or saved-tensor hooks were ever used: see node.STAMP
        if STAMP.simple:  # only the front end's origin (the language running): stamp() inlined
            node._trace = STAMP.origin
        else:
            STAMP.stamp(node)
    if grad_mode.forward_seen:
        return forward_ad.binary(cls, a, b, Tensor._make(data, True, node), other)
    return Tensor._make(data, True, node)


# -- add, sub ---------------------------------------------------------------------------------------
class AddBackward0(_Binary):
    """a + b, or `add(a, b, alpha=k)`: a + k*b, with k in `other`."""

    __slots__ = ()
    batchable = True
    saved_names = {"alpha": SV.field("other", lambda k: 1 if k is None else k)}

    def apply(self, g: Tensor) -> tuple:
        first, second = self._next
        gb = None
        if second is not None:
            gb = g if self.other is None else g * self.other
        return self.grads(g if first is not None else None, gb)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return plus(ta, tb if other is None else scaled(tb, other))


def add(a: Any, b: Any) -> Tensor:
    """a + b."""
    try:
        if type(a) is Tensor:  # the commonest operands first, without binary_operands
            ad = a._data if a._data.ndim else a._data[()]
            if type(b) is float:
                return _binary(AddBackward0, a, b, ad + b, None, None)
            if type(b) is Tensor and a._data.dtype is b._data.dtype:
                return _binary(AddBackward0, a, b, ad + (b._data if b._data.ndim else b._data[()]), None, None)
        ad, bd = binary_operands(a, b)
        return _binary(AddBackward0, a, b, ad + bd, None, None)
    except ValueError as exc:  # shapes that do not broadcast (a `try` costs nothing until it catches)
        raise broadcast_error(exc, a, b) from None


class AddBackward1(_Binary):
    """tensor + number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    batchable = True
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return (g,)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return ta


def add_scalar(a: Any, s: float) -> Any:
    """`a + s` inside a backward formula: recorded as AddBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a + s
    return _binary(AddBackward1, a, s, (a._data if a._data.ndim else a._data[()]) + s, None, None)


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


class SubBackward0(_Binary):
    """a - b, or `sub(a, b, alpha=k)`: a - k*b, with k in `other`."""

    __slots__ = ()
    batchable = True
    saved_names = {"alpha": SV.field("other", lambda k: 1 if k is None else k)}

    def apply(self, g: Tensor) -> tuple:
        gb = None
        if needs(self, 1):
            gb = -g if self.other is None else g * -self.other
        return self.grads(g if needs(self, 0) else None, gb)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return plus(ta, None if tb is None else (-tb if other is None else tb * -other))


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
    return _binary(SubBackward0, a, b, data, None, None)


def add_scaled(a: Any, b: Any, alpha: Any = 1) -> Tensor:
    """`add(a, b, alpha=k)`: a + k*b, one node as in PyTorch (the operator `+` skips this wrapper)."""
    return _scaled(AddBackward0, add, np.add, a, b, alpha)


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


class RsubBackward1(_Binary):
    __slots__ = ()
    batchable = True
    saved_names = {"alpha": SV.const(1)}
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return self.grads(-g if needs(self, 0) else None, None)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return None if ta is None else -ta


def rsub(a: Tensor, b: Any) -> Tensor:
    """b - a, for a number b (Python's `2 - x`)."""
    check_sub(b, a)  # NumPy would compute most of them; PyTorch refuses
    ad, bd = binary_operands(a, b)
    data = bd - ad
    return _binary(RsubBackward1, a, b, data, None, None)


# -- mul, div ---------------------------------------------------------------------------------------
class MulBackward0(_Binary):
    __slots__ = ()
    batchable = True
    saved_names = {"other": SV.tensor(1, number="other"), "self": SV.tensor(0)}

    def apply(self, g: Tensor) -> tuple:
        first, second = self._next
        if self._saved is NOTHING:  # times a number, kept in `other`
            ga = g * self.other
            return (ga, None) if self.shapes is None else self.grads(ga, None)
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        gb = ga = None
        if second is not None:
            gb = times(a, g) if raw else g * a
        a = None  # in a plain backward the node let its saved values go: this frees `a` before `g * b` is made
        if first is not None:
            ga = times(b, g) if raw else g * b
        return self.grads(ga, gb)

    def apply_batched(self, g: Any) -> tuple:
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

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        if other is not None:  # times a number: `a` is the tensor
            return scaled(ta, other)
        return plus(scaled(ta, b), None if tb is None else a * tb)


def mul(a: Any, b: Any) -> Tensor:
    """a * b."""
    if type(a) is Tensor and (type(b) is float or type(b) is int):  # the commonest operands first
        return _binary(MulBackward0, a, b, (a._data if a._data.ndim else a._data[()]) * b, NOTHING, b)
    if type(a) is Tensor and type(b) is Tensor and a._data.dtype is b._data.dtype:  # binary_operands' work
        try:
            data = (a._data if a._data.ndim else a._data[()]) * (b._data if b._data.ndim else b._data[()])
        except ValueError as exc:  # shapes that do not broadcast (a `try` costs nothing until it catches)
            raise broadcast_error(exc, a, b) from None
    else:
        ad, bd = binary_operands(a, b)
        try:
            data = ad * bd
        except ValueError as exc:
            raise broadcast_error(exc, a, b) from None
        if type(b) is not Tensor:
            return _binary(MulBackward0, a, b, data, NOTHING, b)
        if type(a) is not Tensor:
            return _binary(MulBackward0, b, a, data, NOTHING, a)
    # each input's gradient needs the other input: save only what will be needed
    save = (a if b._requires_grad else None, b if a._requires_grad else None)
    return _binary(MulBackward0, a, b, data, save, None)


class MulBackward1(_Binary):
    """tensor * number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    batchable = True
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return (mul_scalar(g, self.other),)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return scaled(ta, other)


def mul_scalar(a: Any, s: float) -> Any:
    """`a * s` inside a backward formula: recorded as MulBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a * s
    return _binary(MulBackward1, a, s, (a._data if a._data.ndim else a._data[()]) * s, None, s)


class DivBackward0(_Binary):
    __slots__ = ()
    batchable = True
    saved_names = {"other": SV.tensor(1, number="other"), "self": SV.tensor(0)}

    def apply(self, g: Tensor) -> tuple:
        a, b = self.unpack_saved(type(g) is not Tensor)
        if b is None:
            b = self.other
        ga = g / b if needs(self, 0) else None
        gb = -g * ((a / b) / b) if needs(self, 1) else None  # PyTorch's form: inf, not nan, at b = 0
        return self.grads(ga, gb)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        if type(b) is not Tensor:
            return None if ta is None else ta / b
        # PyTorch's (self_t - other_t * result) / other_p
        return plus(ta, None if tb is None else -(tb * out)) / b


def div(a: Any, b: Any) -> Tensor:
    """a / b (true division)."""
    ad, bd = binary_operands(a, b)
    if type(b) is not Tensor:
        return _binary(DivBackward0, a, b, ad / bd, NOTHING, b)
    if type(a) is not Tensor:  # number / tensor: PyTorch computes it as reciprocal(b) * a
        return mul(E.reciprocal(b), a)
    try:
        data = ad / bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    return _binary(DivBackward0, a, b, data, (a if b._requires_grad else None, b), None)


class NegBackward0(Node):
    __slots__ = ()
    batchable = True
    raw_ok = True

    def apply(self, g: Tensor) -> tuple:
        return (-g,)

    def jvp(self, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        return -tangents[0]


def neg(a: Tensor) -> Tensor:
    """-a."""
    try:
        data = -a._data
    except TypeError:  # a bool tensor
        raise RuntimeError(_BOOL_NEG) from None
    return result(data, record(NegBackward0, a))


# -- pow -----------------------------------------------------------------------------------------------
class PowBackward0(_Binary):
    """x ** number."""

    __slots__ = ()
    batchable = True
    saved_names = {"self": SV.tensor(0), "exponent": SV.field("other")}
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        (x,) = self.unpack_saved(type(g) is not Tensor)
        p = self.other
        if p == 0:
            return (g * 0.0,)
        f = mul_scalar(x ** (p - 1), p)  # PyTorch's grad * (p * x.pow(p - 1))
        x = None
        return (times(f, g),)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return ta * 0.0 if other == 0 else ta * mul_scalar(a ** (other - 1), other)


class PowBackward1(_Binary):
    """tensor ** tensor."""

    __slots__ = ()
    saved_names = {"exponent": SV.tensor(1), "self": SV.tensor(0)}

    raw_ok = False  # uses where/log on tensors

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        ga = None
        if needs(self, 0):  # 0 where the exponent is 0, as PyTorch's pow_backward_self (not -0 from b * a**-1)
            ga = E.where(b == 0.0, 0.0, mul(g, mul(b, pow(a, sub(b, 1.0)))))
        gb = None
        if needs(self, 1):
            # d(a**b)/db = a**b log a, taken as 0 where a == 0 and b >= 0 (the limit), as PyTorch does
            safe = E.where(_zero_base(a, b), 0.0, mul(pow(a, b), E.log(a)))
            gb = mul(g, safe)
        return self.grads(ga, gb)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        first = None if ta is None else ta * (b * pow(a, sub(b, 1.0)))
        second = None if tb is None else tb * E.where(_zero_base(a, b), 0.0, out * E.log(a))
        return plus(first, second)


class PowBackward2(_Binary):
    """number ** tensor: one edge, the exponent's."""

    __slots__ = ()
    batchable = True
    saved_names = {"self": SV.field("other"), "result": SV.tensor(0)}

    def apply(self, g: Tensor) -> tuple:
        (out,) = self.unpack_saved(type(g) is not Tensor)
        return (self.grads(None, g * (out * float(np.log(self.other))))[1],)

    def jvp(self, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        return tangents[0] * (out * float(np.log(self.other)))


def _zero_base(a: Tensor, b: Tensor) -> Tensor:
    return Tensor._make(np.asarray((a._data == 0) & (b._data >= 0)), False, None)


def pow(a: Any, b: Any) -> Tensor:
    """a ** b."""
    if type(a) is Tensor and (type(b) is float or type(b) is int):  # the commonest operands first
        return _binary(PowBackward0, a, b, (a._data if a._data.ndim else a._data[()]) ** b, (a,), b)
    ad, bd = binary_operands(a, b)
    try:
        data = ad**bd
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    if type(b) is not Tensor:
        return _binary(PowBackward0, a, b, data, (a,), b)
    if type(a) is not Tensor:
        node = record(PowBackward2, b)
        out = result(data, node)
        if node is not None:
            node.shapes, node.other = ((), _shape(b)), a
            node.save(SavedOutput(out))
        return out
    return _binary(PowBackward1, a, b, data, (a, b), None)


# -- floor division and remainder ----------------------------------------------------------------------
class NotImplemented_(Node):
    """PyTorch records `//` but has no derivative for it: backward through it is an error."""

    __slots__ = ("op",)

    @classmethod
    def name(cls) -> str:
        return "NotImplemented"

    def apply(self, g: Tensor) -> tuple:
        raise RuntimeError(f"'{self.op}' has no derivative: compute it on .detach()ed values")


def floor_divide(a: Any, b: Any) -> Tensor:
    """a // b (no derivative)."""
    ad, bd = binary_operands(a, b)
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            data = np.floor_divide(ad, bd)
    except ValueError as exc:
        raise broadcast_error(exc, a, b) from None
    node = record(NotImplemented_, a, b) if type(b) is Tensor else record(NotImplemented_, a)  # as PyTorch
    if node is not None:
        node.op = "floor_divide"
    return result(data, node)


class RemainderBackward0(_Binary):
    __slots__ = ()
    raw_ok = False
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return self.grads(g, None)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return ta


class RemainderBackward1(_Binary):
    __slots__ = ()
    saved_names = {"other": SV.tensor(1), "self": SV.tensor(0)}
    raw_ok = False

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        ga = g if needs(self, 0) else None
        gb = mul(neg(g), floor_divide(a, b).detach()) if needs(self, 1) else None
        return self.grads(ga, gb)

    @staticmethod
    def jvp(a: Any, b: Any, out: Tensor, ta: Any, tb: Any, other: Any) -> Any:
        return plus(ta, None if tb is None else -(tb * floor_divide(a, b).detach()))


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
    "add": add_scaled,
    "sub": sub_scaled,
    "mul": mul,
    "div": div,
    "neg": neg,
    "pow": pow,
    "remainder": remainder,
    "floor_divide": floor_divide,
}
FUNCTIONS = {
    "add": add_scaled, "sub": sub_scaled, "mul": mul, "div": div, "neg": neg, "pow": pow,
    "remainder": remainder, "floor_divide": floor_divide,
}

# Imported last: these modules build on this one (elementwise's binary nodes subclass `_Binary`), and this
# one uses them only inside functions, at call time.
from . import elementwise as E  # noqa: E402
from . import reductions as R  # noqa: E402
