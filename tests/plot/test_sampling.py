"""Sampling: exact derivatives against closed forms, the per-point fallback, constants, shapes, gaps."""

from __future__ import annotations

import numpy as np
import pytest

import gradcalc as torch
from gradcalc.plotting import PlotError, derivative_label, make_figure, sample, samples_for_width
from gradcalc.plotting.sampling import _spot_indices

TOL = 1e-12


def close(got: np.ndarray, want: np.ndarray) -> None:
    """Agreement to 1e-12, relative to the size of the values (absolute for values below 1)."""
    scale = np.maximum(1.0, np.abs(want))
    assert np.all(np.abs(got - want) <= TOL * scale), np.max(np.abs(got - want) / scale)


def test_sin_and_three_derivatives() -> None:
    s = sample(torch.sin, -np.pi, np.pi, 101, order=3)
    assert s.elementwise and s.order == 3 and s.values.shape == (4, 101)
    x = s.x
    for row, want in zip(s.values, (np.sin(x), np.cos(x), -np.sin(x), -np.cos(x)), strict=True):
        close(row, want)


def test_polynomial_derivatives() -> None:
    s = sample(lambda x: x**3 - 2 * x, -2, 2, 41, order=3)
    x = s.x
    close(s.values[0], x**3 - 2 * x)
    close(s.values[1], 3 * x**2 - 2)
    close(s.values[2], 6 * x)
    close(s.values[3], np.full_like(x, 6.0))


def test_product_of_transcendentals() -> None:
    s = sample(lambda x: torch.sin(x) * torch.exp(-x / 5), 0, 20, 321, order=2)
    x = s.x
    e = np.exp(-x / 5)
    close(s.values[0], np.sin(x) * e)
    close(s.values[1], (np.cos(x) - np.sin(x) / 5) * e)
    close(s.values[2], (-np.sin(x) * 24 / 25 - 2 * np.cos(x) / 5) * e)


def test_sample_points_are_even_and_float64() -> None:
    s = sample(torch.sin, 0, 1, 5)
    assert s.x.dtype == np.float64 and s.values.dtype == np.float64
    assert s.x.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]


def test_reduction_falls_back_to_points() -> None:
    # x * mean(x) mixes the points: over the vector it is x_i * mean, at one point it is x**2
    s = sample(lambda x: x * x.mean(), -1, 3, 9, order=2)
    assert not s.elementwise
    close(s.values[0], s.x**2)
    close(s.values[1], 2 * s.x)
    close(s.values[2], np.full(9, 2.0))


def test_centering_falls_back_to_points() -> None:
    s = sample(lambda x: x - x.mean(), -1, 2, 11, order=1)
    assert not s.elementwise
    close(s.values[0], np.zeros(11))
    close(s.values[1], np.zeros(11))


def test_detached_reduction_falls_back() -> None:
    # no graph, but still mixes the points: the spot check compares values, not only derivatives
    s = sample(lambda x: x - x.detach().mean(), 0, 1, 7, order=1)
    assert not s.elementwise
    close(s.values[0], np.zeros(7))
    close(s.values[1], np.ones(7))
    d = sample(lambda x: x.detach().mean(), 0, 1, 7, order=1)
    assert not d.elementwise
    close(d.values[0], d.x)
    close(d.values[1], np.zeros(7))


def test_indexing_falls_back_and_its_error_propagates() -> None:
    # x[0] * x works on a vector; on one point x is a number and cannot be indexed, which is the
    # user's error to see -- the fallback does not hide it
    with pytest.raises(IndexError):
        sample(lambda x: x[0] * x, 0, 1, 5)


def test_vector_failure_falls_back() -> None:
    def branchy(x: torch.Tensor) -> torch.Tensor:
        return torch.sin(x) if float(x) > 0 else -x  # float() of a vector fails

    s = sample(branchy, -1, 1, 9, order=1)
    assert not s.elementwise
    x = s.x
    close(s.values[0], np.where(x > 0, np.sin(x), -x))
    close(s.values[1], np.where(x > 0, np.cos(x), -1.0))


def test_propagate_reraises_at_once() -> None:
    class Stop(Exception):
        pass

    calls = []

    def fn(x: torch.Tensor) -> torch.Tensor:
        calls.append(x.ndim)
        raise Stop

    with pytest.raises(Stop):
        sample(fn, 0, 1, 50, propagate=(Stop,))
    assert calls == [1]  # the vectorised call only: no per-point retry


@pytest.mark.parametrize("constant", [3.0, 3, torch.tensor(3.0), np.float64(3.0)])
def test_constant(constant: object) -> None:
    s = sample(lambda x: constant, -1, 1, 6, order=2)
    assert s.elementwise
    assert s.values.tolist() == [[3.0] * 6, [0.0] * 6, [0.0] * 6]


def test_constant_derivative_then_zero() -> None:
    s = sample(lambda x: 2 * x, 0, 1, 4, order=3)
    assert s.values[1].tolist() == [2.0] * 4
    assert s.values[2].tolist() == [0.0] * 4 and s.values[3].tolist() == [0.0] * 4


def test_detached_has_zero_derivative() -> None:
    s = sample(lambda x: x.detach() * 2, 0, 1, 3, order=1)
    assert s.values.tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]]


def test_not_one_number_per_point() -> None:
    with pytest.raises(PlotError, match=r"shape \(2,\) for each value of t; a plot needs one number per point"):
        sample(lambda t: torch.stack([t, t]), 0, 1, 5, name="t")


def test_one_element_result_per_point_is_accepted() -> None:
    s = sample(lambda x: x.reshape(1) * x.sum(), 0, 1, 3)  # a vector of n on the vector: falls back
    assert not s.elementwise
    close(s.values[0], s.x**2)


def test_non_numeric_result() -> None:
    with pytest.raises(PlotError, match="^the plotted expression does not give a number$"):
        sample(lambda x: "text", 0, 1, 3)


def test_non_finite_values_are_nan() -> None:
    s = sample(lambda x: 1 / x, -1, 1, 5, order=1)
    assert np.isnan(s.values[0, 2]) and np.isnan(s.values[1, 2])
    assert s.values[0].tolist()[:2] == [-1.0, -2.0]
    log = sample(torch.log, -1, 1, 3)
    assert np.isnan(log.values[0, 0]) and np.isnan(log.values[0, 1]) and log.values[0, 2] == 0.0


@pytest.mark.parametrize(
    "lo, hi, n, order, message",
    [
        (1, 1, 5, 0, "from a lower to a higher number"),
        (2, 1, 5, 0, "from a lower to a higher number"),
        (0, float("inf"), 5, 0, "must be finite"),
        (0, 1, 5, 4, "from 0 to 3"),
        (0, 1, 5, -1, "from 0 to 3"),
        (0, 1, 5, True, "from 0 to 3"),
        (0, 1, 1, 0, "at least 2 sample points"),
    ],
)
def test_bad_arguments(lo: float, hi: float, n: int, order: int, message: str) -> None:
    with pytest.raises(PlotError, match=message):
        sample(torch.sin, lo, hi, n, order)


def test_gradient_mode_off_outside_does_not_matter() -> None:
    with torch.no_grad():
        s = sample(torch.sin, 0, 1, 5, order=1)
    close(s.values[1], np.cos(s.x))


def test_spot_indices_are_fixed() -> None:
    picks = _spot_indices(320)
    assert picks == _spot_indices(320)
    assert picks[0] == 0 and picks[-1] == 319 and 160 in picks and len(picks) == 4
    assert _spot_indices(2) == [0, 1]


def test_samples_for_width() -> None:
    # two samples per braille dot, two dots per column
    assert samples_for_width(80) == 320
    assert samples_for_width(0) == 2


@pytest.mark.parametrize(
    "text, k, label",
    [
        ("sin(x)", 0, "sin(x)"),
        ("sin(x)", 1, "d/dx sin(x)"),
        ("sin(x)", 2, "d²/dx² sin(x)"),
        ("sin(x)", 3, "d³/dx³ sin(x)"),
        ("x**3 - 2*x", 1, "d/dx (x**3 - 2*x)"),
        ("sin(x)**2", 1, "d/dx (sin(x)**2)"),
        ("(x + 1)", 1, "d/dx (x + 1)"),
        ("x", 2, "d²/dx² x"),
        ("w[0]", 1, "d/dx w[0]"),
    ],
)
def test_derivative_label(text: str, k: int, label: str) -> None:
    assert derivative_label(text, "x", k) == label


def test_derivative_label_uses_the_name() -> None:
    assert derivative_label("cos(t)", "t", 2) == "d²/dt² cos(t)"


def test_make_figure_groups_curves_by_expression() -> None:
    fig = make_figure([("sin(x)", torch.sin), ("cos(x)", torch.cos)], "x", 0, 1, order=1, n=5)
    assert [c.label for c in fig.curves] == ["sin(x)", "d/dx sin(x)", "cos(x)", "d/dx cos(x)"]
    close(fig.curves[3].values, -np.sin(fig.x))
    assert fig.lo == 0.0 and fig.hi == 1.0 and fig.name == "x"
