"""In-place operations: `x.add_(1)`, `x += 1`, `x[i] = v`, `x.zero_()`, ...

Each is its out-of-place operation written back into the tensor's own array. The version counter goes
up (so a node that saved the old value notices at backward), and when the operation was recorded the
tensor takes the new node as its `grad_fn`: the graph is rewritten so gradients stay correct.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..grad_mode import state
from ..node import Node
from ..tensor import Tensor, version_of
from . import arithmetic as A
from . import elementwise as E
from .core import record


def check_inplace(t: Tensor, what: str) -> None:
    """The two in-place changes PyTorch refuses."""
    if t._requires_grad and t.grad_fn is None and state.grad_enabled:
        raise RuntimeError(
            f"{what}: this tensor is a leaf that requires grad, and changing it in place would lose how "
            "its gradient flows; do it inside `with no_grad:` (as an optimizer step does), or change a "
            ".clone() of it"
        )
    if t._inference and not state.inference:
        raise RuntimeError(
            f"{what}: this is an inference tensor (made inside `with inference_mode:`), which cannot be "
            "changed in place outside inference mode; change a .clone() of it instead"
        )


def _alias(t: Tensor) -> Tensor:
    """The tensor as it is before the change: same place in the graph, its own copy of the values."""
    a = Tensor._make(t._data.copy(), t._requires_grad, t.grad_fn)
    a._output_nr = t._output_nr
    return a


def apply_inplace(t: Tensor, compute: Callable[[Tensor], Tensor], what: str, *others: Any) -> Tensor:
    """Run `compute` out of place and write its result into `t`."""
    check_inplace(t, what)
    recording = state.grad_enabled and (
        t._requires_grad or any(isinstance(o, Tensor) and o._requires_grad for o in others)
    )
    new = compute(_alias(t) if recording else t)
    data = t._data
    if not data.flags.writeable:
        raise RuntimeError(
            f"{what}: this tensor is an expanded view whose elements share memory; change a .clone() of it"
        )
    if new._data.shape != data.shape:
        raise RuntimeError(
            f"{what}: the result has shape {tuple(new._data.shape)}, which cannot be written into a tensor "
            f"of shape {tuple(data.shape)}"
        )
    np.copyto(data, new._data, casting="unsafe")
    version_of(t).value += 1
    if recording and new.grad_fn is not None:
        t.grad_fn, t._output_nr, t._requires_grad = new.grad_fn, new._output_nr, True
    return t


def _method(op: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    def method(self: Tensor, other: Any, *args: Any, **kwargs: Any) -> Tensor:
        return apply_inplace(self, lambda t: op(t, other, *args, **kwargs), name, other)

    method.__name__ = name
    method.__doc__ = f"In-place {op.__name__}: writes the result into this tensor."
    return method


def fill_(self: Tensor, value: Any) -> Tensor:
    """Set every element to `value`."""
    v = value._data if isinstance(value, Tensor) else value

    def compute(t: Tensor) -> Tensor:
        node = record(FillBackward, t, value)
        out = Tensor._make(np.full_like(t._data, v), node is not None, node)
        return out

    return apply_inplace(self, compute, "fill_", value)


class FillBackward(Node):
    """PyTorch names this node FillBackward0 (a number) or FillBackward1 (a tensor); both pass 0 on."""

    __slots__ = ()

    @classmethod
    def name(cls) -> str:
        return "FillBackward0"

    def apply(self, g: Tensor) -> tuple:
        return (A.mul(g, 0.0), None)


def zero_(self: Tensor) -> Tensor:
    """Set every element to 0."""

    def compute(t: Tensor) -> Tensor:
        node = record(ZeroBackward0, t)
        return Tensor._make(np.zeros_like(t._data), node is not None, node)

    return apply_inplace(self, compute, "zero_")


class ZeroBackward0(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        return (A.mul(g, 0.0),)


def copy_(self: Tensor, src: Any) -> Tensor:
    """Copy `src`'s values (broadcast) into this tensor."""

    def compute(t: Tensor) -> Tensor:
        s = src if isinstance(src, Tensor) else Tensor._make(np.asarray(src, dtype=t._data.dtype), False, None)
        node = record(CopyBackwards, t, s)
        if node is not None:
            node.src_shape = s._data.shape
        data = np.array(np.broadcast_to(s._data, t._data.shape), dtype=t._data.dtype)
        return Tensor._make(data, node is not None, node)

    return apply_inplace(self, compute, "copy_", src)


class CopyBackwards(Node):
    __slots__ = ("src_shape",)

    def apply(self, g: Tensor) -> tuple:
        ga = A.mul(g, 0.0) if self.next_functions[0][0] is not None else None
        gs = A.sum_to(g, self.src_shape) if self.next_functions[1][0] is not None else None
        return (ga, gs)


def clamp_(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Clamp in place."""
    return apply_inplace(self, lambda t: E.clamp(t, min, max), "clamp_", min, max)


METHODS: dict[str, Callable] = {
    "add_": _method(A.add, "add_"),
    "sub_": _method(A.sub, "sub_"),
    "mul_": _method(A.mul, "mul_"),
    "div_": _method(A.div, "div_"),
    "pow_": _method(A.pow, "pow_"),
    "__iadd__": _method(A.add, "add_"),
    "__isub__": _method(A.sub, "sub_"),
    "__imul__": _method(A.mul, "mul_"),
    "__itruediv__": _method(A.div, "div_"),
    "__ipow__": _method(A.pow, "pow_"),
    "fill_": fill_,
    "zero_": zero_,
    "copy_": copy_,
    "clamp_": clamp_,
    "exp_": lambda self: apply_inplace(self, E.exp, "exp_"),
    "sigmoid_": lambda self: apply_inplace(self, E.sigmoid, "sigmoid_"),
    "relu_": lambda self: apply_inplace(self, E.relu, "relu_"),
}
