"""The trapezoidal rule: `trapezoid` (and its older name `trapz`) and `cumulative_trapezoid`.

A deferred family (ops/lazy.py). PyTorch writes them as composites of sums, slices and products, and records
those operations' nodes; so does gradcalc, in PyTorch's order (`(y.sum(dim) - (y[0] + y[-1]) * 0.5) * dx` for a
number dx, `((y[:-1] + y[1:]) * dx).sum(dim) / 2` for spacings from sample points `x`), their products and
quotients by numbers recorded as PyTorch's C++ records them (MulBackward1, DivBackward1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import spec
from ..defaults import default_float
from ..tensor import Tensor
from . import shape as S
from . import slicing as SL
from .binary import div_scalar, mul_scalar
from .cumulative import cumsum


def _prepare(name: str, y: Tensor, x: Any, dx: Any, dim: int) -> tuple[int, Any]:
    """The dim (resolved) and the spacing: a number, or a tensor of differences of `x` viewed to broadcast."""
    if not isinstance(y, Tensor):
        raise TypeError(f"{name}(): argument 'y' (position 1) must be Tensor, not {type(y).__name__}")
    if y._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    axis = S.dim_index(dim, y._data.ndim)
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both `x` and `dx`")
    if x is None or not isinstance(x, Tensor):
        spacing = 1.0 if x is None and dx is None else (x if x is not None else dx)
        if isinstance(spacing, (bool, np.bool_, complex)) or not isinstance(spacing, (int, float, np.number)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
        return axis, spacing
    if x._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x`, but bool is not supported")
    if x._data.ndim == 1:
        if x._data.shape[0] != y._data.shape[axis]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y._data.ndim
        sizes[axis] = x._data.shape[0]
        x = S.view(x, tuple(sizes))
    elif x._data.ndim < y._data.ndim:
        x = S.view(x, (1,) * (y._data.ndim - x._data.ndim) + x._data.shape)
    return axis, _right(x, axis) - _left(x, axis)


def _left(t: Tensor, axis: int) -> Tensor:
    """`t.slice(dim, 0, -1)`, saved as PyTorch saves it (end -1)."""
    return SL.slice_dim(t, axis, 0, -1, 1) if t._data.shape[axis] else t


def _right(t: Tensor, axis: int) -> Tensor:
    """`t.slice(dim, 1)`, saved as PyTorch saves it (no end)."""
    return SL.slice_dim(t, axis, 1, None, 1)


def _floating(t: Tensor) -> Tensor:
    """An integer tensor in the default float dtype, as its product with a number (0.5, dx) is in PyTorch."""
    return t if t._data.dtype.kind in "fc" else t.to(default_float())


def _zeros_without(y: Tensor, axis: int) -> Tensor:
    """PyTorch's result for no sample points: zeros of y's shape without the dim (y's dtype)."""
    shape = y._data.shape[:axis] + y._data.shape[axis + 1:]
    return Tensor._make(np.zeros(shape, y._data.dtype), False, None)


@spec.op("trapezoid", method=False, vmap=spec.rule("integral_rule", "trapezoid"),
         sample=spec.Sample(((3, 4), (4,)), lambda L, y, x: L.trapezoid(y) + L.trapezoid(y, x)
                            + L.trapezoid(y, dx=0.5, dim=0).sum() + L.trapz(y, x.exp().cumsum(0), dim=1)))
def trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of the samples `y` along `dim` by the trapezoidal rule: at the points `x` (a tensor of
    sample points, broadcast against y), or `dx` apart (a number, default 1)."""
    axis, spacing = _prepare("trapezoid", y, x, dx, dim)
    n = y._data.shape[axis]
    if n == 0:
        return _zeros_without(y, axis)
    if isinstance(spacing, Tensor):
        return div_scalar(((_left(y, axis) + _right(y, axis)) * spacing).sum(axis), 2.0)
    y = _floating(y)
    ends = SL.select(y, axis, 0) + SL.select(y, axis, n - 1)
    return mul_scalar(y.sum(axis) - mul_scalar(ends, 0.5), float(spacing))


@spec.op("trapz", method=False, vmap=spec.rule("integral_rule", "trapz"),
         sample=spec.Sample(((3, 4),), lambda L, y: L.trapz(y) + L.trapz(y, dx=2.0, dim=0).sum()))
def trapz(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """`trapezoid`'s older name: the integral of `y` along `dim` at the points `x`, or `dx` apart."""
    return trapezoid(y, x, dx=dx, dim=dim)


@spec.op("cumulative_trapezoid", method=False, vmap=spec.rule("integral_rule", "cumulative_trapezoid"),
         sample=spec.Sample(((3, 4), (4,)), lambda L, y, x: L.cumulative_trapezoid(y) * 2.0
                            + L.cumulative_trapezoid(y, x.exp().cumsum(0))
                            + L.cumulative_trapezoid(y, dx=0.5, dim=0).sum()))
def cumulative_trapezoid(y: Tensor, x: Any = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The running integrals of the samples `y` along `dim` by the trapezoidal rule (one fewer than the
    samples): at the points `x`, or `dx` apart (a number, default 1)."""
    axis, spacing = _prepare("cumulative_trapezoid", y, x, dx, dim)
    both = _left(y, axis) + _right(y, axis)
    if isinstance(spacing, Tensor):
        return div_scalar(cumsum(both * spacing, axis), 2.0)  # (PyTorch resolves the dim on this path only)
    return cumsum(mul_scalar(_floating(both), spacing / 2.0), dim)
