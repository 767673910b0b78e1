"""The y range rule (poles clipped, peaks and growth kept) and cutting curves at the frame."""

from __future__ import annotations

import numpy as np
import pytest

from gradcalc.plotting.yrange import _round_outwards, clip_to_frame, y_range


def curve(f, lo: float, hi: float, n: int = 320) -> np.ndarray:  # noqa: ANN001 - a NumPy function
    with np.errstate(all="ignore"):
        v = f(np.linspace(lo, hi, n))
    return np.where(np.isfinite(v), v, np.nan)


def test_smooth_curve_shows_its_whole_range() -> None:
    r = y_range([curve(np.sin, -np.pi / 2, np.pi / 2)])
    assert (r.lo, r.hi, r.clipped) == (-1.0, 1.0, False)


@pytest.mark.parametrize(
    "f, lo, hi",
    [
        (np.exp, 0, 20),  # fast growth is the curve, not an outlier
        (lambda x: x**10, -2, 2),
        (lambda x: np.exp(-100 * x**2), -5, 5),  # a narrow bump keeps its top
        (lambda x: np.exp(-1000 * x**2), -5, 5),  # caught by one or two samples only
        (lambda x: np.sin(x) + 5 * np.exp(-(x**2) / 0.001), -3, 3),  # a bump on a curve
        (np.log, 0, 2),  # -inf at 0 is a gap; the rest is not a pole at plot resolution
        (np.tan, -1.5, 1.5),  # steep, but no pole inside
    ],
)
def test_no_clipping(f, lo: float, hi: float) -> None:  # noqa: ANN001
    v = curve(f, lo, hi)
    r = y_range([v])
    assert not r.clipped
    low, high = np.nanmin(v), np.nanmax(v)
    assert r.lo <= low and r.hi >= high and r.hi - r.lo <= 1.2 * (high - low)  # only rounded outwards


@pytest.mark.parametrize("n", [200, 320, 321, 400, 640])
@pytest.mark.parametrize(
    "f, lo, hi",
    [
        (np.tan, -np.pi, np.pi),
        (lambda x: 1 / x, -1, 1),
        (lambda x: 1 / x**2, -1, 1),
        (lambda x: 1 / np.abs(x), -3, 3),
        (lambda x: np.tan(x) / np.cos(x) ** 2, -3, 3),
    ],
)
def test_poles_are_clipped(f, lo: float, hi: float, n: int) -> None:  # noqa: ANN001
    v = curve(f, lo, hi, n)
    r = y_range([v])
    assert r.clipped
    assert r.hi < np.nanmax(v) / 2
    # the clipped range still shows the bulk of the curve: at least 90% of its points
    inside = (v >= r.lo) & (v <= r.hi)
    assert inside.sum() >= 0.9 * np.isfinite(v).sum()


def test_mild_pole_is_kept() -> None:
    # 1/sqrt(x) grows too slowly near 0 to swamp the rest: its whole sampled range is shown
    v = curve(lambda x: 0.5 / np.sqrt(x), 0, 1)
    assert not y_range([v]).clipped


def test_one_sided_pole_leaves_the_other_side_alone() -> None:
    v = curve(lambda x: 1 / x, 0, 1)  # +inf at 0 (a gap), then a steep fall
    r = y_range([v])
    assert r.clipped and r.lo == 1.0 and r.hi < np.nanmax(v)


def test_curves_are_pooled() -> None:
    x = np.linspace(-np.pi, np.pi, 320)
    r = y_range([np.tan(x), np.sin(x)])
    assert r.clipped and r.lo < -1 and r.hi > 1 and r.hi < 50


@pytest.mark.parametrize("c, lo, hi", [(3.0, 2.7, 3.3), (0.0, -1.0, 1.0), (-5.0, -5.5, -4.5)])
def test_constant_is_widened(c: float, lo: float, hi: float) -> None:
    r = y_range([np.full(10, c)])
    assert r.lo == pytest.approx(lo) and r.hi == pytest.approx(hi) and not r.clipped


@pytest.mark.parametrize(
    "bounds, rounded",
    [
        ((-1.0, 0.999988), (-1.0, 1.0)),
        ((-11.4154, 11.4154), (-12.0, 12.0)),
        ((1.0, 2.0), (1.0, 2.0)),
        ((0.1, 0.3), (0.1, 0.3)),  # not exact in binary, still left alone
        ((0.03846, 0.9998), (0.03, 1.0)),
        ((1.0, 4.852e8), (0.0, 4.9e8)),
        ((-3e-7, 2.5e-7), (-3e-7, 2.5e-7)),
    ],
)
def test_range_is_rounded_outwards(bounds: tuple[float, float], rounded: tuple[float, float]) -> None:
    assert _round_outwards(*bounds) == rounded


def test_nothing_finite() -> None:
    assert y_range([np.full(4, np.nan)]) is None
    assert y_range([]) is None


def test_clip_to_frame_cuts_at_the_edges() -> None:
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([0.0, 2.0, 0.5, -0.5, -3.0])
    cx, cy = clip_to_frame(x, y, -1.0, 1.0)
    # 0 -> 2 leaves through the top at t = 1/2; 2 -> 0.5 comes back at t = 2/3; -0.5 -> -3 leaves
    # through the bottom at t = 1/5
    assert cx.tolist() == pytest.approx([0.0, 0.5, 1.0, 1 + 2 / 3, 2.0, 3.0, 3.2, 4.0])
    np.testing.assert_array_equal(cy, [0.0, 1.0, np.nan, 1.0, 0.5, -0.5, -1.0, np.nan])


def test_clip_to_frame_drops_a_jump_across_the_frame() -> None:
    # above then below: at plot resolution a pole; no line joins them
    cx, cy = clip_to_frame(np.array([0.0, 1.0, 2.0]), np.array([0.5, 5.0, -5.0]), -1.0, 1.0)
    assert cx.tolist() == pytest.approx([0.0, 0.5 / 4.5 + 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(cy, [0.5, 1.0, np.nan, np.nan])


def test_clip_to_frame_drops_a_jump_out_through_the_far_edge() -> None:
    # tan just left of its pole, then just right of it: 0.9 is in the upper half of [-1, 1], -5 is
    # below the frame -- no line from 0.9 down to the bottom edge
    cx, cy = clip_to_frame(np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.9, -5.0]), -1.0, 1.0)
    assert cx.tolist() == [0.0, 1.0, 2.0]
    np.testing.assert_array_equal(cy, [0.5, 0.9, np.nan])
    # from the lower half out through the top: dropped as well; out through the near edge: cut there
    cx, cy = clip_to_frame(np.array([0.0, 1.0, 2.0]), np.array([-0.5, 5.0, 0.0]), -1.0, 1.0)
    assert cx.tolist() == pytest.approx([0.0, 1.0, 1.8, 2.0])
    np.testing.assert_array_equal(cy, [-0.5, np.nan, 1.0, 0.0])


def test_clip_to_frame_keeps_gaps() -> None:
    cx, cy = clip_to_frame(np.arange(4.0), np.array([0.0, np.nan, 0.5, 0.25]), -1.0, 1.0)
    assert cx.tolist() == [0.0, 1.0, 2.0, 3.0]
    np.testing.assert_array_equal(cy, [0.0, np.nan, 0.5, 0.25])
