"""Which part of the y axis a plot shows, and how curves are cut at its frame.

A pole (`tan(x)` near pi/2, `1/x` near 0) gives a few samples of enormous magnitude; drawn as they are,
they would squash the rest of every curve into one flat line. The rule (docs/plotting.md, "Y range"):

1. Pool the finite values of all drawn curves; the full range is [min, max].
2. Take the median m and the 2% and 98% quantiles q_lo, q_hi; each side has its own spread,
   s_hi = q_hi - m above and s_lo = m - q_lo below (so a pole on one side, or a derivative that blows up
   only upwards, does not decide the other side).
3. The top is clipped only when the pool's largest value is an outlier that looks like a pole:
   - it lies more than 3 s_hi above q_hi (a narrow feature, not just the end of a growing curve),
   - the sample is explosive, on at least one side: going away from it along its curve, the next
     sample is a gap or lies across the median, or the distances a, b, c of it and its next two
     samples from the median have a >= 3 b and a/b >= b/c (c on the same side; no third sample:
     a >= 3 b is enough). Near a pole |f| falls off like a power of the distance, ever more slowly
     (log-convex); a smooth peak falls off ever faster (log-concave), so even a narrow bump caught by
     only a sample or two keeps its top.
   A clipped top is q_hi + s_hi/2. The bottom is handled the same way, mirrored.
4. A range of zero height (a constant curve c) is widened to c -/+ |c|/10, or -/+ 1 around 0.
5. The range is rounded outwards to round numbers, multiples of 10^(floor(log10(hi - lo)) - 1), so
   the axis labels are short ([-1, 0.999988] becomes [-1, 1]; [-11.4, 11.4] becomes [-12, 12]).

Points outside the range are gaps; a segment that crosses the frame is cut where it crosses it, so a
curve leaves the plot at the frame's edge rather than stopping one sample short. A segment that jumps
across the whole frame in one step is dropped: from above the frame to below it, or from inside the
frame out through its far edge (from the upper half to below, from the lower half to above). At plot
resolution that is how a pole looks; a continuous curve that steep loses only that one step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

TAIL = 0.02  # the quantiles that bound the bulk of the values
TRIGGER = 3.0  # how many spreads beyond the bulk an extreme must lie before it can be clipped
WIDEN = 0.5  # a clipped side is set this many spreads beyond its quantile
EXPLOSIVE = 3.0  # how many times farther from the median than its neighbour a pole-like sample lies


class YRange(NamedTuple):
    """The y interval shown, and whether a side was clipped (so the caption can say so)."""

    lo: float
    hi: float
    clipped: bool = False


def y_range(curves: Sequence[np.ndarray]) -> YRange | None:
    """The y range for the given curves' values (NaN = gap), or None when no value is finite."""
    finite = [c[np.isfinite(c)] for c in curves]
    pool = np.concatenate(finite) if finite else np.empty(0)
    if pool.size == 0:
        return None
    full_lo, full_hi = float(pool.min()), float(pool.max())
    q_lo, median, q_hi = _quantiles(np.sort(pool), (TAIL, 0.5, 1.0 - TAIL))
    up, down = q_hi - median, median - q_lo  # each side's own spread
    lo, hi, clipped = full_lo, full_hi, False
    if full_hi > q_hi + TRIGGER * up and _explosive(curves, median, top=True):
        hi, clipped = q_hi + WIDEN * up, True
    if full_lo < q_lo - TRIGGER * down and _explosive(curves, median, top=False):
        lo, clipped = q_lo - WIDEN * down, True
    if hi - lo <= 0.0:
        pad = abs(lo) / 10 if lo != 0.0 else 1.0
        lo, hi = lo - pad, hi + pad
    lo, hi = _round_outwards(lo, hi)
    return YRange(lo, hi, clipped)


def _round_outwards(lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] widened to multiples of a round step a tenth of the range's order of magnitude."""
    step = 10.0 ** (np.floor(np.log10(hi - lo)) - 1)
    # a bound already on a multiple (up to rounding error) stays where it is
    down = np.floor(lo / step + 1e-9) * step
    up = np.ceil(hi / step - 1e-9) * step
    # multiples of a negative power of ten are not exact in binary: take the shortest decimal
    return float(f"{down:.12g}"), float(f"{up:.12g}")


def _quantiles(ordered: np.ndarray, qs: tuple[float, ...]) -> tuple[float, ...]:
    """Quantiles of sorted values, interpolated linearly as np.quantile's default does.

    Written out because np.quantile's first call loads a large part of NumPy (its masked arrays),
    which would cost a terminal plot more time than all of its drawing.
    """
    last = ordered.shape[0] - 1
    out = []
    for q in qs:
        position = q * last
        below = int(np.floor(position))
        above = min(below + 1, last)
        fraction = position - below
        out.append(float(ordered[below] + (ordered[above] - ordered[below]) * fraction))
    return tuple(out)


def _explosive(curves: Sequence[np.ndarray], median: float, *, top: bool) -> bool:
    """Whether the most extreme sample (highest if `top`, else lowest) looks like the side of a pole.

    With a, b, c the distances from the median of the sample and of its next two neighbours going one
    way, that side is pole-like when the next neighbour is a gap or across the median, or when a >= 3 b
    and the ratios do not grow outwards (a/b >= b/c; a curve back at the median, c = 0, is a peak):
    |f| ~ 1/|x - p|^k falls off ever more slowly away from the pole (log-convex), while a peak of a
    smooth curve -- even a narrow one caught by only a sample or two -- falls off ever faster
    (log-concave: a/b < b/c).
    """
    best: tuple[float, int, int] | None = None
    for c_index, values in enumerate(curves):
        if not np.any(np.isfinite(values)):
            continue
        i = int(np.nanargmax(values) if top else np.nanargmin(values))
        key = values[i] if top else -values[i]
        if best is None or key > best[0]:
            best = (float(key), c_index, i)
    assert best is not None
    _, c_index, i = best
    values = curves[c_index]
    a = values[i] - median
    for step in (-1, 1):
        j, k = i + step, i + 2 * step
        if not 0 <= j < values.shape[0]:
            continue
        b = values[j] - median
        if not np.isfinite(b) or b * a < 0:
            return True
        if b == 0 or abs(a) < EXPLOSIVE * abs(b):
            continue
        c = values[k] - median if 0 <= k < values.shape[0] else np.nan
        if not np.isfinite(c) or (c * b > 0 and abs(a) * abs(c) >= b * b):
            return True  # no third sample to judge by, or log-convex: a pole
    return False


def clip_to_frame(x: np.ndarray, y: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """The polyline (x, y) cut to lo <= y <= hi: outside points become NaN (gaps), and each segment
    from a point inside to one outside gains a point where it meets the frame -- unless it leaves
    through the far edge, which is a pole's jump, not a line."""
    finite = np.isfinite(y)
    with np.errstate(invalid="ignore"):
        inside = finite & (y >= lo) & (y <= hi)
    # segments with exactly one end inside and both ends finite cross the frame once
    crossing = np.flatnonzero((inside[:-1] != inside[1:]) & finite[:-1] & finite[1:])
    out_y = np.where(inside, y, np.nan)
    if crossing.size == 0:
        return x.copy(), out_y
    y0, y1 = y[crossing], y[crossing + 1]
    inside_value = np.where(inside[crossing], y0, y1)
    outside_value = np.where(inside[crossing], y1, y0)
    # a segment leaving through the far edge (from the upper half to below the frame, or from the lower
    # half to above it) crosses the whole frame in one step: at plot resolution, a pole -- no line
    middle = (lo + hi) / 2
    far = ((outside_value < lo) & (inside_value > middle)) | ((outside_value > hi) & (inside_value < middle))
    crossing, y0, y1, outside_value = crossing[~far], y0[~far], y1[~far], outside_value[~far]
    if crossing.size == 0:
        return x.copy(), out_y
    x0, x1 = x[crossing], x[crossing + 1]
    edge = np.where(outside_value > hi, hi, lo)
    t = (edge - y0) / (y1 - y0)
    edge_x = x0 + t * (x1 - x0)
    # np.insert before index k+1 puts the frame point between points k and k+1
    return np.insert(x, crossing + 1, edge_x), np.insert(out_y, crossing + 1, edge)
