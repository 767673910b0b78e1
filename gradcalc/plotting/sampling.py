"""Sampling a function and its exact derivatives on a grid of points.

`sample` evaluates `fn` once over the whole vector of sample points and takes the derivatives with
`gradcalc.autograd.grad(..., grad_outputs=ones, create_graph=True)`: for an elementwise f the Jacobian is
diagonal, so the vector-Jacobian product with ones is exactly the vector of pointwise derivatives, and
order N costs one forward and N backward passes however many points there are.

That shortcut is wrong when f is not elementwise in x (it reduces, indexes or mixes points: `x - mean(x)`,
`x[0] * x`, `cumsum(x)`), so the vectorised result is checked against single-point evaluations at a few
fixed indices; on any disagreement, or when the vectorised call fails or has the wrong shape, every point
is evaluated on its own (a scalar x, derivatives by grad) -- slower, always right, and silent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import gradcalc
from gradcalc.autograd.tensor import Tensor

from .errors import PlotError

MAX_ORDER = 3

# Agreement between the vectorised pass and single-point evaluations: the two go through the same
# arithmetic but NumPy may take different (SIMD or scalar) paths, so allow a few ulps, relative to each
# value and to the row's largest magnitude (for values near zero produced by cancellation).
_RTOL = 1e-9
_ATOL_SCALE = 1e-12

# The "random" spot-checked index is fixed (a golden-ratio fraction of the way along): it must not change
# between runs, or the same plot could take a different path (and print differently) from one run to the
# next -- and numpy.random would cost more to import than a whole plot takes to draw.
_SPOT_FRACTION = 0.6180339887498949

Fn = Callable[[Tensor], Any]


class Samples(NamedTuple):
    """One function sampled on a grid.

    `x` is the (n,) vector of sample points; `values` is (order + 1, n), row k holding the k-th
    derivative (row 0 the function itself), NaN wherever the value is not finite. `elementwise` says
    whether the single vectorised pass was used (False: the per-point fallback).
    """

    x: np.ndarray
    values: np.ndarray
    elementwise: bool

    @property
    def order(self) -> int:
        """How many derivatives were taken."""
        return self.values.shape[0] - 1


def samples_for_width(columns: int) -> int:
    """How many points make a smooth curve in a terminal `columns` wide.

    A braille cell is 2 dots wide, and the curve needs at least two samples per dot to look continuous,
    so 4 points per column; the plot area is narrower than the terminal, so this over-counts a little.
    """
    return max(2, 4 * int(columns))


def sample(
    fn: Fn,
    lo: float,
    hi: float,
    n: int,
    order: int = 0,
    *,
    name: str = "x",
    propagate: tuple[type[BaseException], ...] = (),
) -> Samples:
    """Sample `fn` and its first `order` derivatives at `n` evenly spaced points from `lo` to `hi`.

    `fn(x)` receives a float64 tensor that requires grad (a vector of points, or a single point in the
    fallback) and returns a tensor, or a plain number for a constant. `name` is the variable's name, used
    in messages. Exceptions that `fn` raises during the vectorised attempt are taken as "not vectorisable"
    and the per-point evaluation decides -- except those of the types in `propagate` (pass the
    interpreter's interrupt there), which are re-raised at once. Exceptions from the per-point evaluation
    propagate unchanged.

    Raises PlotError for a bad range, order or point count, and for an expression that is not one
    number per point.
    """
    lo, hi = _check_range(lo, hi, name)
    if isinstance(order, bool) or not isinstance(order, int) or not 0 <= order <= MAX_ORDER:
        raise PlotError(f"the derivative order must be a whole number from 0 to {MAX_ORDER}, not {order!r}")
    if n < 2:
        raise PlotError(f"a plot needs at least 2 sample points, not {n}")
    xs = np.linspace(lo, hi, int(n))
    with gradcalc.enable_grad():
        values = _vectorised(fn, xs, order, propagate)
        elementwise = values is not None and _agrees_at_spots(fn, xs, values, order, name)
        if not elementwise:
            values = np.stack([_at_point(fn, float(xi), order, name) for xi in xs], axis=1)
    assert values is not None
    values = np.where(np.isfinite(values), values, np.nan)
    return Samples(x=xs, values=values, elementwise=elementwise)


def _check_range(lo: float, hi: float, name: str) -> tuple[float, float]:
    try:
        lo_f, hi_f = float(lo), float(hi)
    except (TypeError, ValueError):
        raise PlotError(f"the range of {name} must be two numbers") from None
    if not (np.isfinite(lo_f) and np.isfinite(hi_f)):
        raise PlotError(f"the range of {name} must be finite, not [{lo_f:g}, {hi_f:g}]")
    if not lo_f < hi_f:
        raise PlotError(f"the range of {name} must go from a lower to a higher number, not [{lo_f:g}, {hi_f:g}]")
    return lo_f, hi_f


def _as_tensor(value: Any) -> Tensor:
    """The expression's result as a tensor: a plain number (a constant expression) becomes one."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, int, float, np.number, np.bool_, np.ndarray)):
        return gradcalc.tensor(np.asarray(value, dtype=np.float64))
    raise PlotError("the plotted expression does not give a number")


def _numbers(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def _derivatives(y: Tensor, x: Tensor, order: int, count: int) -> list[np.ndarray]:
    """Rows 0..order: y and its derivatives, each the vector-Jacobian product with ones.

    A result that no longer depends on x (no graph, or grad reports the input unused) has derivative 0
    from there on, as autograd defines it.
    """
    rows = [np.broadcast_to(_numbers(y).reshape(-1), (count,)).copy()]
    current: Tensor | None = y
    for k in range(1, order + 1):
        g = None
        if current is not None and current.requires_grad:
            (g,) = gradcalc.autograd.grad(
                current, x, grad_outputs=gradcalc.ones_like(current), create_graph=k < order, allow_unused=True
            )
        current = g
        rows.append(np.zeros(count) if g is None else _numbers(g).reshape(-1).copy())
    return rows


def _vectorised(
    fn: Fn, xs: np.ndarray, order: int, propagate: tuple[type[BaseException], ...]
) -> np.ndarray | None:
    """All rows from one evaluation over the vector of points, or None when that cannot be right."""
    n = xs.shape[0]
    x = gradcalc.tensor(xs, requires_grad=True)
    try:
        y = _as_tensor(fn(x))
        if tuple(y.shape) == (n,):
            return np.stack(_derivatives(y, x, order, n))
        if y.numel() == 1 and not y.requires_grad:
            # a constant (or something cut from the graph): its derivatives are 0; the spot check
            # still compares its value with single points, which catches a detached reduction
            value = float(_numbers(y).reshape(()))
            return np.stack([np.full(n, value)] + [np.zeros(n) for _ in range(order)])
        return None  # a reduction or a wrong shape: the per-point path decides (and names the shape)
    except propagate:
        raise
    except Exception:  # noqa: BLE001 - any failure only means "not vectorisable"; per-point decides
        return None


def _at_point(fn: Fn, xi: float, order: int, name: str) -> np.ndarray:
    """Rows 0..order at one point, x a 0-d tensor."""
    x = gradcalc.tensor(np.float64(xi), requires_grad=True)
    y = _as_tensor(fn(x))
    if y.numel() != 1:
        raise PlotError(
            f"the plotted expression gives a tensor of shape {tuple(y.shape)} for each value of {name}; "
            "a plot needs one number per point"
        )
    return np.array([row[0] for row in _derivatives(y, x, order, 1)])


def _spot_indices(n: int) -> list[int]:
    """First, middle, last and one fixed interior index off the halves and quarters of the grid."""
    picks = {0, n // 2, n - 1}
    if n > 2:
        picks.add(1 + int(_SPOT_FRACTION * (n - 2)))
    return sorted(picks)


def _agrees_at_spots(fn: Fn, xs: np.ndarray, values: np.ndarray, order: int, name: str) -> bool:
    """Whether single-point evaluations reproduce the vectorised rows (values and derivatives)."""
    scale = np.nanmax(np.where(np.isfinite(values), np.abs(values), np.nan), axis=1, initial=1.0)
    for i in _spot_indices(xs.shape[0]):
        alone = _at_point(fn, float(xs[i]), order, name)
        if not np.all(_same(values[:, i], alone, scale)):
            return False
    return True


def _same(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Elementwise agreement; any two non-finite values agree (both are gaps in the plot)."""
    both_gaps = ~np.isfinite(a) & ~np.isfinite(b)
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= _RTOL * np.maximum(np.abs(a), np.abs(b)) + _ATOL_SCALE * scale
    return both_gaps | (np.isfinite(a) & np.isfinite(b) & close)
