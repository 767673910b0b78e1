"""Binary nodes: what every operation of two operands shares (`_Binary`, the hot `_binary`), and the
tensor-and-number forms that backward formulas record (`add_scalar`, `mul_scalar`, `div_scalar`: PyTorch's
Scalar overloads, AddBackward1, MulBackward1, DivBackward1).

Operands broadcast as in NumPy; each gradient is summed back to its input's shape (`sum_to`). A Python number
operand is a constant: it gets no edge, and its gradient is never computed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import grad_mode, spec
from ..defaults import FLOAT64, default_float
from ..grad_mode import ALTERED, state
from ..node import NOTHING, SEQ, STAMP, Node, one_class_copy
from ..tensor import Tensor
from .sums import sum_to


def _shape(x: Any) -> tuple[int, ...]:
    return x._data.shape if type(x) is Tensor else ()


@spec.base
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
# NumPy's module has a `__getattr__`, so CPython never specialises a load of its attributes (`np.asarray`
# costs ten times a global's): the hot paths below read these names instead
_ndarray, _asarray = np.ndarray, np.asarray
_F64 = np.dtype(np.float64)  # NumPy's one float64 descriptor: `is` tells it at the cost of a pointer compare


def plus(p: Any, q: Any) -> Any:
    """p + q for forward-mode rules, where None is a zero tangent."""
    if q is None:
        return p
    return q if p is None else p + q


def scaled(t: Any, f: Any) -> Any:
    """t * f for forward-mode rules, where a None tangent stays None."""
    return None if t is None else t * f


def integral_promoted(data: np.ndarray, a: Any, b: Any) -> np.ndarray:
    """`data`, a float64 result of two operands, in PyTorch's dtype: NumPy makes float64 of integral or bool
    tensors with a Python float, and of a true division of integers, where PyTorch makes the default dtype.
    Unchanged when an operand is a floating tensor (its dtype decided the result), or when it is not float64."""
    if data.dtype != FLOAT64:
        return data
    for x in (a, b):
        if isinstance(x, Tensor) and x._data.dtype.kind == "f":
            return data
        if isinstance(x, np.ndarray | np.generic) and x.dtype.kind == "f":  # (a formula's bare operand)
            return data
    want = default_float()
    return data if want == FLOAT64 else data.astype(want)


def _binary(cls: type[_Binary], a: Any, b: Any, data: Any, save: tuple | None, other: Any,
            same: bool = False) -> Tensor:
    """The result of a binary operation, recorded when grad mode is on and an input requires grad.

    `record`, `result` and `Node.save` are inlined here (node.make_node is the reference, slot by slot): this
    is the engine's hottest path, and every call and object it avoids is paid once per operation of every
    user's graph. (Callers pass every argument by position for the same reason: keywords cost as much as two
    attribute stores.) `same`: both operands are tensors of one dtype (the caller checked), so the result
    needs no promotion, and its dtype is not read."""
    if type(data) is not _ndarray:
        data = _asarray(data)
    # (rare: integral operands)
    if not same and data.dtype is _F64 and (type(a) is not Tensor or a._data.dtype is not _F64):
        data = integral_promoted(data, a, b)
    ta = type(a) is Tensor and a._requires_grad
    tb = type(b) is Tensor and b._requires_grad
    if not ((ta or tb) and (not ALTERED or state.grad_enabled)):
        if grad_mode.forward_seen:
            return grad_mode.forward_ad.binary(cls, a, b, Tensor._make(data, False, None), other)
        t = _new(Tensor)  # Tensor._make inlined: formulas under create_graph make many results that record nothing
        t._data = data
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._output_nr = 0
        t._vc = None
        t._accumulator = None
        t._retains_grad = False
        t._inference = grad_mode.inference_seen and state.inference
        return t
    node = cls()
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
        if so:
            sa = a._data.shape if type(a) is Tensor else ()
            sb = b._data.shape if type(b) is Tensor else ()
            node.shapes = None if sa == so and (sb == so or not tb) else (sa, sb)
        else:  # a 0-d result: both inputs were 0-d
            node.shapes = None
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
        return grad_mode.forward_ad.binary(cls, a, b, Tensor._make(data, True, node), other)
    # Tensor._make inlined (the reference, field by field): one call less per recorded operation
    t = _new(Tensor)
    t._data = data
    t._requires_grad = True
    t._grad = None
    t.grad_fn = node
    t._output_nr = 0
    t._vc = None
    t._accumulator = None
    t._retains_grad = False
    t._inference = grad_mode.inference_seen and state.inference
    return t


def _binary_number(cls: type[_Binary], a: Tensor, b: float | int, data: Any, save: tuple | None, other: Any,
                   number_edge: bool) -> Tensor:
    """`_binary` for a tensor `a` and a Python number `b` (`type(b)` float or int, checked by the caller), with
    `save` None, NOTHING or `(a,)`: the commonest operands of all (`x * 0.999`, `x ** 3`, the formulas'
    `mul_scalar`). A fast path: every test `_binary` makes on `b` is known here, and a chain of small operations
    spends a good part of each operation in them. node.make_node is the reference, slot by slot, and
    tests/engine/test_node_constructor.py's number cases check every slot this writes. Called only through
    `number_path(cls)`'s copies, which give `number_edge` (the class's) as a default."""
    if type(data) is not _ndarray:
        data = _asarray(data)
    if not (a._requires_grad and (not ALTERED or state.grad_enabled)):
        if data.dtype is not a._data.dtype:  # a promotion (an integral or bool tensor, which never requires grad,
            return _binary(cls, a, b, data, save, other)  # with a float): `_binary` decides the dtype
        if grad_mode.forward_seen:
            return grad_mode.forward_ad.binary(cls, a, b, Tensor._make(data, False, None), other)
        t = _new(Tensor)  # Tensor._make inlined: formulas under create_graph make many results that record nothing
        t._data = data
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._output_nr = 0
        t._vc = None
        t._accumulator = None
        t._retains_grad = False
        t._inference = grad_mode.inference_seen and state.inference
        return t
    node = cls()
    na = a.grad_fn or a._accumulator or a._accumulate_node()
    if number_edge:  # cls.number_edge, given by number_path's copy (a read through the class is never specialised)
        node._next = (na, None)
        node._nrs = (a._output_nr, 0) if a._output_nr else None
    else:
        node._next = (na,)
        node._nrs = (a._output_nr,) if a._output_nr else None
    node._extras = None
    node._seq = SEQ[0] = SEQ[0] + 1  # the creation number (node.SEQ)
    node.shapes = None  # a number broadcasts nothing
    node.other = other
    node._versions = None
    node._saved = save
    if save is not None and save is not NOTHING and (a._vc is not None or a._inference):  # save is (a,) here
        node.save(*save)  # the checked path: versions to remember, or an inference tensor to refuse
    if STAMP.on:  # as in _binary
        if STAMP.simple:
            node._trace = STAMP.origin
        else:
            STAMP.stamp(node)
    if grad_mode.forward_seen:
        return grad_mode.forward_ad.binary(cls, a, b, Tensor._make(data, True, node), other)
    t = _new(Tensor)  # Tensor._make inlined, as in _binary
    t._data = data
    t._requires_grad = True
    t._grad = None
    t.grad_fn = node
    t._output_nr = 0
    t._vc = None
    t._accumulator = None
    t._retains_grad = False
    t._inference = grad_mode.inference_seen and state.inference
    return t


# -- the Scalar overloads backward formulas record ----------------------------------------------------------
@spec.node(
    formula={"self": "grad"},
    jvp=lambda node, inputs, out, tangents: tangents[0], tangent="self_t", batched=spec.BROADCASTS,
)
class AddBackward1(_Binary):
    """tensor + number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return (g,)


def add_scalar(a: Any, s: float) -> Any:
    """`a + s` inside a backward formula: recorded as AddBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a + s
    if type(s) is float or type(s) is int:
        return _add1_number(AddBackward1, a, s, (a._data if a._data.ndim else a._data[()]) + s, None, None)
    return _binary(AddBackward1, a, s, (a._data if a._data.ndim else a._data[()]) + s, None, None)


@spec.node(
    formula={"self": "grad"},
    jvp=lambda node, inputs, out, tangents: tangents[0], tangent="self_t", batched=spec.BROADCASTS,
)
class SubBackward1(_Binary):
    """tensor - number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return (g,)


def sub_scalar(a: Any, s: float) -> Any:
    """`a - s` inside a backward formula: recorded as SubBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a - s
    if type(s) is float or type(s) is int:
        return _sub1_number(SubBackward1, a, s, (a._data if a._data.ndim else a._data[()]) - s, None, None)
    return _binary(SubBackward1, a, s, (a._data if a._data.ndim else a._data[()]) - s, None, None)


@spec.node(
    formula={"self": "grad * other"},
    saved={"other": spec.saved_module.field("other")},
    jvp=lambda node, inputs, out, tangents: scaled(tangents[0], node.other), tangent="self_t * other",
    batched=spec.BROADCASTS,
)
class MulBackward1(_Binary):
    """tensor * number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    number_edge = False

    def apply(self, g: Tensor) -> tuple:
        return (mul_scalar(g, self.other),)


def mul_scalar(a: Any, s: float) -> Any:
    """`a * s` inside a backward formula: recorded as MulBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a * s
    if type(s) is float or type(s) is int:
        return _mul1_number(MulBackward1, a, s, (a._data if a._data.ndim else a._data[()]) * s, None, s)
    return _binary(MulBackward1, a, s, (a._data if a._data.ndim else a._data[()]) * s, None, s)


@spec.node(
    formula={"self": "grad / other"},
    saved={"other": spec.saved_module.field("other")},
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else div_scalar(tangents[0], node.other),
    tangent="self_t / other", batched=spec.BROADCASTS,
)
class DivBackward1(_Binary):
    """tensor / number as PyTorch's own formulas make it (its Scalar overload): one edge, nothing saved."""

    __slots__ = ()
    number_edge = False

    def apply(self, g: Any) -> tuple:
        return (div_scalar(g, self.other),)


def div_scalar(a: Any, s: float) -> Any:
    """`a / s` inside a formula: recorded as DivBackward1, as PyTorch records it there."""
    if type(a) is not Tensor:
        return a / s
    return _binary(DivBackward1, a, s, np.asarray(a._data / s), None, s)


def number_path(cls: type[_Binary]) -> Any:
    """`_binary_number`'s own copy for nodes of `cls` (node.one_class_copy), with the class's `number_edge` as
    its default: a class attribute read through a class object is never specialised (~170 instructions)."""
    fn = one_class_copy(_binary_number)
    fn.__defaults__ = (cls.number_edge,)
    return fn


# each Scalar overload's own copy of the number path
_add1_number = number_path(AddBackward1)
_sub1_number = number_path(SubBackward1)
_mul1_number = number_path(MulBackward1)
