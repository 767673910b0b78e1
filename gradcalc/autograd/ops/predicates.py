"""What a tensor's values are, and cleaning them: `isinf`, `isfinite`, `isposinf`, `isneginf`, `isclose` (bool
tensors, no gradient: PyTorch records no node), and `nan_to_num`, which has one (NanToNumBackward0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .core import binary_operands, broadcast_error, record, result
from .unary import _const


def _tensor(name: str, x: Any) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x


def _bools(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a, dtype=bool), False, None)


def isinf(input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
    """Where the tensor holds +inf or -inf (a bool tensor)."""
    d = _tensor("isinf", input)._data
    return _bools(np.isinf(d) if d.dtype.kind == "f" else np.zeros(d.shape, bool))


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    """Where the tensor holds a finite number: neither inf, -inf nor NaN (a bool tensor)."""
    d = _tensor("isfinite", input)._data
    return _bools(np.isfinite(d) if d.dtype.kind == "f" else np.ones(d.shape, bool))


def isposinf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the tensor holds +inf (a bool tensor)."""
    d = _tensor("isposinf", input)._data
    return _bools(np.isposinf(d) if d.dtype.kind == "f" else np.zeros(d.shape, bool))


def isneginf(input: Tensor) -> Tensor:  # noqa: A002
    """Where the tensor holds -inf (a bool tensor)."""
    d = _tensor("isneginf", input)._data
    return _bools(np.isneginf(d) if d.dtype.kind == "f" else np.zeros(d.shape, bool))


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """Where |input - other| <= atol + rtol * |other| (a bool tensor, broadcasting); equal infinities are close,
    and NaNs are close to each other only with equal_nan=True."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_torch_dtype(input._data.dtype)} did not match {_torch_dtype(other._data.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    a, b = binary_operands(input, other)
    try:
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    except ValueError as exc:
        raise broadcast_error(exc, input, other) from None
    return _bools(close)


def _torch_dtype(dtype: np.dtype) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(
        dtype.name, dtype.name)


# -- nan_to_num -----------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad * at::isfinite(self)"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: tangents[0] * _const(np.isfinite(inputs[0]._data)),
    tangent="self_t * at::isfinite(self_p)",
)
class NanToNumBackward0(Node):
    """The gradient passes where the input was finite; where it was NaN or infinite the value was replaced by a
    constant, whose gradient is 0."""

    __slots__ = ()

    def apply(self, g: Any) -> tuple:
        (x,) = self.saved_tensors
        return (g * _const(np.isfinite(x._data)),)


@spec.op("nan_to_num", nodes=(NanToNumBackward0,), inplace=True, vmap=spec.rule("pointwise_unary", "nan_to_num"),
         sample=spec.Sample(((2, 3),), lambda L, a: L.nan_to_num(a.log(), nan=0.5) + L.nan_to_num(a / 0.0, posinf=2.0,
                                                                                               neginf=-3.0) * a))
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """`input` with NaN replaced by `nan`, +inf by `posinf` and -inf by `neginf` (by default the largest and the
    smallest finite number of the dtype)."""
    d = _tensor("nan_to_num", input)._data
    if d.dtype.kind != "f":
        data = d.copy()
    else:
        info = np.finfo(d.dtype)
        data = np.nan_to_num(d, nan=nan, posinf=info.max if posinf is None else posinf,
                             neginf=info.min if neginf is None else neginf)
    node = record(NanToNumBackward0, input)
    if node is not None:
        node.save(input)
    return result(np.asarray(data), node)


FUNCTIONS = {"isinf": isinf, "isfinite": isfinite, "isposinf": isposinf, "isneginf": isneginf, "isclose": isclose}
METHODS = dict(FUNCTIONS)
