"""gradcalc.nn.init against torch.nn.init: the random streams differ, so the distributions are compared
(bounds, mean, variance over many draws, against the theory and against PyTorch's own draws); gains, fans,
constants, seeding and errors exactly."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch

SHAPE = (256, 128)  # 32768 draws: the sample mean and variance are within a few percent of the truth
FAN_IN, FAN_OUT = SHAPE[1], SHAPE[0]

# name: (fill, ("uniform", bound) or ("normal", mean, std))
SCHEMES: dict[str, tuple[Any, tuple]] = {
    "uniform": (lambda init, t: init.uniform_(t, -0.5, 2.0), ("uniform", -0.5, 2.0)),
    "normal": (lambda init, t: init.normal_(t, 0.3, 2.0), ("normal", 0.3, 2.0)),
    "kaiming_uniform": (lambda init, t: init.kaiming_uniform_(t), ("uniform", *(2 * [math.sqrt(6 / FAN_IN)]))),
    "kaiming_uniform_relu_fan_out": (
        lambda init, t: init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"),
        ("uniform", *(2 * [math.sqrt(6 / FAN_OUT)])),
    ),
    "kaiming_uniform_linear_layer": (
        lambda init, t: init.kaiming_uniform_(t, a=math.sqrt(5)), ("uniform", *(2 * [1 / math.sqrt(FAN_IN)]))
    ),
    "kaiming_normal": (
        lambda init, t: init.kaiming_normal_(t, nonlinearity="relu"), ("normal", 0.0, math.sqrt(2 / FAN_IN))
    ),
    "xavier_uniform": (
        lambda init, t: init.xavier_uniform_(t, gain=2.0), ("uniform", *(2 * [2.0 * math.sqrt(6 / (FAN_IN + FAN_OUT))]))
    ),
    "xavier_normal": (lambda init, t: init.xavier_normal_(t), ("normal", 0.0, math.sqrt(2 / (FAN_IN + FAN_OUT)))),
}


def _stats(values: np.ndarray) -> tuple[float, float, float, float]:
    return float(values.min()), float(values.max()), float(values.mean()), float(values.var())


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_distribution(scheme: str) -> None:
    fill, law = SCHEMES[scheme]
    for lib in (torch, gradcalc):
        t = lib.empty(*SHAPE, requires_grad=True)
        before = t._version
        out = fill(lib.nn.init, t)
        assert out is t and t.is_leaf and t.requires_grad
        assert t._version > before
        lo, hi, mean, var = _stats(t.detach().numpy())
        if law[0] == "uniform":
            a, b = (law[1], law[2]) if scheme == "uniform" else (-law[1], law[2])
            assert a <= lo and hi <= b, lib.__name__
            assert lo < a + 0.01 * (b - a) and hi > b - 0.01 * (b - a)
            expect_mean, expect_var = (a + b) / 2, (b - a) ** 2 / 12
        else:
            expect_mean, expect_var = law[1], law[2] ** 2
        sd = math.sqrt(expect_var)
        assert abs(mean - expect_mean) < 0.03 * sd, (lib.__name__, mean, expect_mean)
        assert abs(var / expect_var - 1) < 0.05, (lib.__name__, var, expect_var)


def test_linear_initialisation_matches_torchs_law() -> None:
    """nn.Linear: W and b uniform in ±1/√in_features, for both libraries."""
    for lib in (torch, gradcalc):
        layer = lib.nn.Linear(64, 512)
        bound = 1 / math.sqrt(64)
        for values in (layer.weight.detach().numpy(), layer.bias.detach().numpy()):
            lo, hi, mean, var = _stats(values)
            n = values.size
            assert -bound <= lo and hi <= bound
            # within 5 standard errors of the uniform law's mean and variance (a uniform's sample variance
            # has a relative standard error of sqrt(0.8 / n))
            assert abs(mean) < 5 * (bound / math.sqrt(3)) / math.sqrt(n)
            assert abs(var / (bound**2 / 3) - 1) < 5 * math.sqrt(0.8 / n)


@pytest.mark.parametrize(
    ("name", "param"),
    [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None), ("leaky_relu", None),
     ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)],
)
def test_calculate_gain(name: str, param: Any) -> None:
    assert gradcalc.nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


@pytest.mark.parametrize("fill", ["zeros_", "ones_", "constant_"])
def test_constants(fill: str) -> None:
    t = gradcalc.empty(3, 2, requires_grad=True)
    args = (2.5,) if fill == "constant_" else ()
    getattr(gradcalc.nn.init, fill)(t, *args)
    expected = getattr(torch.nn.init, fill)(torch.empty(3, 2), *args).numpy()
    np.testing.assert_array_equal(t.detach().numpy(), expected)


def test_manual_seed_repeats() -> None:
    draws = []
    for _ in range(2):
        gradcalc.manual_seed(7)
        draws.append(gradcalc.nn.Linear(3, 4).weight.detach().numpy().copy())
    np.testing.assert_array_equal(draws[0], draws[1])


ERRORS = {
    "fan_of_vector": lambda L: L.nn.init.xavier_uniform_(L.empty(3)),
    "bad_mode": lambda L: L.nn.init.kaiming_uniform_(L.empty(3, 2), mode="fan_middle"),
    "bad_nonlinearity": lambda L: L.nn.init.kaiming_normal_(L.empty(3, 2), nonlinearity="swish"),
    "bad_slope": lambda L: L.nn.init.calculate_gain("leaky_relu", "x"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case: str) -> None:
    kinds = []
    for lib in (torch, gradcalc):
        try:
            ERRORS[case](lib)
            kinds.append(None)
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            kinds.append(type(e).__name__)
    assert kinds[0] is not None and kinds[1] == kinds[0]


def test_trunc_normal_orthogonal_and_eye() -> None:
    """The schemes added for tutorials' models: trunc_normal_ by its law (bounds, mean, variance of the
    truncated normal), orthogonal_ by orthogonality and gain, eye_ exactly as torch's; each repeats with a
    generator's seed."""
    mean, std, a, b = 0.25, 0.5, -0.5, 1.25
    t = gradcalc.empty(200_000)
    gradcalc.nn.init.trunc_normal_(t, mean, std, a, b, generator=gradcalc.Generator().manual_seed(1))
    v = t.numpy()
    assert a <= v.min() and v.max() <= b
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    al, be = (a - mean) / std, (b - mean) / std
    z = cdf(be) - cdf(al)
    expect_mean = mean + std * (phi(al) - phi(be)) / z
    expect_var = std**2 * (1 + (al * phi(al) - be * phi(be)) / z - ((phi(al) - phi(be)) / z) ** 2)
    n = v.size
    assert abs(v.mean() - expect_mean) < 6 * math.sqrt(expect_var / n)
    assert abs(v.var() - expect_var) < 6 * expect_var * math.sqrt(2 / n) * 2
    for shape in ((4, 6), (6, 4), (3, 2, 2)):
        w = gradcalc.empty(*shape)
        gradcalc.nn.init.orthogonal_(w, gain=2.0, generator=gradcalc.Generator().manual_seed(2))
        m = w.numpy().reshape(shape[0], -1) / 2.0
        small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(small, np.eye(small.shape[0]), atol=1e-12)
        w2 = gradcalc.empty(*shape)
        gradcalc.nn.init.orthogonal_(w2, gain=2.0, generator=gradcalc.Generator().manual_seed(2))
        np.testing.assert_array_equal(w.numpy(), w2.numpy())
    for lib in (gradcalc, torch):
        e = lib.empty(2, 3, requires_grad=True)
        lib.nn.init.eye_(e)
        assert e.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] and e.is_leaf and e.requires_grad


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (100.0, 1.0, -2.0, 2.0), (0.0, 1.0, 3.0, 4.0),
                                          (0.0, 1.0, -0.1, 0.1), (-50.0, 2.0, 0.0, 1.0)])
def test_trunc_normal_any_interval_as_pytorch(mean: float, std: float, a: float, b: float) -> None:
    """trunc_normal_ ends for an interval far in a tail (redrawing normal draws until inside never would), and
    its law is PyTorch's: the moments of 200,000 draws agree within a few standard errors, all inside [a, b]."""
    torch = pytest.importorskip("torch")
    n = 200_000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's warning for a mean more than 2 std away: checked below)
        ours = gradcalc.nn.init.trunc_normal_(gradcalc.empty(n, dtype=gradcalc.float64), mean, std, a, b)
        theirs = torch.nn.init.trunc_normal_(torch.empty(n, dtype=torch.float64), mean, std, a, b)
    o, t = np.asarray(ours.tolist()), theirs.numpy()
    assert o.min() >= a and o.max() <= b
    se = t.std() / np.sqrt(n)
    assert abs(o.mean() - t.mean()) < 6 * se + 1e-12
    assert abs(o.std() - t.std()) < 0.02 * t.std() + 1e-12
    far = mean < a - 2 * std or mean > b + 2 * std
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcalc.nn.init.trunc_normal_(gradcalc.empty(3, dtype=gradcalc.float64), mean, std, a, b)
    assert any("more than 2 std" in str(w.message) for w in caught) == far
