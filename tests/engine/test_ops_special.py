"""lgamma, digamma, polygamma, erfinv, i0, sinc, deg2rad, rad2deg, logit, copysign, signbit, float_power and
true_divide against PyTorch: the NumPy kernels over wide ranges and at their special points, then values, dtypes,
grad_fn names, first and second derivatives over generated cases (ops_oracle.check), forward-mode tangents,
vmap, float32, integer inputs and the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_outcome
from tests.precision import EPS64, assert_float32_close

torch = pytest.importorskip("torch")

CASES = 20


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    if shape and rng.random() < 0.1:
        shape = (*shape[:-1], 0)  # an empty tensor now and then
    return shape


def _close(ours: np.ndarray, theirs: np.ndarray, rtol: float, what: str) -> None:
    """Equal where PyTorch's value is inf or nan, within `rtol` (relative to max(|value|, 1)) elsewhere."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(ours[~finite], theirs[~finite], err_msg=what)
    err = np.abs(ours[finite] - theirs[finite]) / np.maximum(np.abs(theirs[finite]), 1.0)
    assert err.max(initial=0.0) <= rtol, f"{what}: relative error {err.max():.3g} > {rtol:.3g}"


# -- the kernels: wide ranges and special points, float64 --------------------------------------------------------
RNG = np.random.default_rng(0)
POSITIVE = np.concatenate([RNG.uniform(0, 3, 3000), RNG.uniform(3, 50, 1000), 10 ** RNG.uniform(-200, 200, 500)])
NEGATIVE = -RNG.uniform(0, 30, 2000)
SPECIAL = np.array([0.0, -0.0, 1.0, 2.0, 0.5, -1.0, -2.0, -0.5, np.inf, -np.inf, np.nan, 1e-300])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_kernels(name: str) -> None:
    f_ours, f_theirs = getattr(gc, name), getattr(torch, name)
    # positive arguments: both are accurate to a few ulps (lgamma's Stirling series with the recurrence; an
    # absolute 1e-15 near lgamma's zeros at 1 and 2, so relative to max(|value|, 1))
    _close(f_ours(gc.tensor(POSITIVE)).numpy(), f_theirs(torch.tensor(POSITIVE)).numpy(), 64 * EPS64, name)
    # negative ones go through the reflection formula: PyTorch's sin(pi x) and tan(pi x) are not reduced first, so
    # its value carries an error of ~|x| ulps of pi x, amplified by 1 / sin(pi x) near the poles
    neg = NEGATIVE[np.abs(NEGATIVE - np.round(NEGATIVE)) > 1e-3]
    _close(f_ours(gc.tensor(neg)).numpy(), f_theirs(torch.tensor(neg)).numpy(), 1e-9, name)
    _close(f_ours(gc.tensor(SPECIAL[:-1])).numpy(), f_theirs(torch.tensor(SPECIAL[:-1])).numpy(), 64 * EPS64, name)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7])
def test_polygamma_kernel(n: int) -> None:
    x = np.concatenate([POSITIVE[POSITIVE < 1e6], SPECIAL[:-1]])
    _close(gc.polygamma(n, gc.tensor(x)).numpy(), torch.polygamma(n, torch.tensor(x)).numpy(), 128 * EPS64,
           f"polygamma({n})")
    neg = NEGATIVE[np.abs(NEGATIVE - np.round(NEGATIVE)) > 1e-2]
    _close(gc.polygamma(n, gc.tensor(neg)).numpy(), torch.polygamma(n, torch.tensor(neg)).numpy(), 1e-9,
           f"polygamma({n}) negative")


def test_erfinv_and_i0_kernels() -> None:
    tails = 10 ** RNG.uniform(-16, 0, 300)
    y = np.concatenate([RNG.uniform(-1, 1, 3000), 1 - tails, tails - 1,
                        [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan, 1e-300]])
    _close(gc.erfinv(gc.tensor(y)).numpy(), torch.erfinv(torch.tensor(y)).numpy(), 8 * EPS64, "erfinv")
    x = np.concatenate([RNG.uniform(-30, 30, 2000), RNG.uniform(-700, 700, 300), [0.0, -0.0, 710.0, np.inf, np.nan]])
    _close(gc.i0(gc.tensor(x)).numpy(), torch.i0(torch.tensor(x)).numpy(), 16 * EPS64, "i0")
    # I1, i0's derivative (PyTorch's special_i1)
    xg = gc.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    gc.i0(xg).sum().backward()
    torch.i0(xt).sum().backward()
    _close(xg.grad.numpy(), xt.grad.numpy(), 16 * EPS64, "i1")


def test_sinc_logit_angles_at_special_points() -> None:
    x = np.array([0.0, -0.0, 1.0, -3.0, 0.5, 1e-20, np.inf, np.nan, 1e10])
    for name in ("sinc", "deg2rad", "rad2deg", "signbit"):
        same_outcome(lambda L, name=name: getattr(L, name)(L.tensor(x)))
    p = np.array([0.0, 1.0, 0.5, -0.5, 2.0, 1e-9, np.nan])
    for eps in (None, 0.0, 1e-6, 0.25, 0.6):
        same_outcome(lambda L, eps=eps: L.logit(L.tensor(p), eps))
    same_outcome(lambda L: L.copysign(L.tensor([1.0, -2.0, 0.0, np.nan]), L.tensor([-0.0, 0.0, -1.0, -np.nan])))


# -- the operations: values, grads to second order, grad_fn names --------------------------------------------------
UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "lgamma": lambda L, a: L.lgamma(a.exp() + 0.1) + (a * 3.0).lgamma(),
    "digamma": lambda L, a: L.digamma(a.exp() + 0.1) + a.digamma(),
    "polygamma": lambda L, a: L.polygamma(1, a.exp()) + a.exp().polygamma(3) + L.polygamma(0, a.exp() + 1.0),
    "erfinv": lambda L, a: L.erfinv(a.tanh()) * a.sin().erfinv(),
    "i0": lambda L, a: L.i0(a * 4.0) + a.i0(),
    "sinc": lambda L, a: L.sinc(a * 2.0) + a.sinc(),
    "deg2rad": lambda L, a: L.deg2rad(a * a) + a.rad2deg().sin(),
    "logit": lambda L, a: L.logit(a.sigmoid()) + a.sigmoid().logit(eps=0.3) + L.logit(a * 0.3, 1e-6),
    "copysign": lambda L, a: L.copysign(a, -1.0) * L.copysign(a * 2.0, a.flip(0) if a.ndim else a),
    "float_power": lambda L, a: L.float_power(a.exp(), 2.5) + a.float_power(2) + L.float_power(2.0, a),
    "true_divide": lambda L, a: L.true_divide(a, a.exp()) + a.true_divide(3.0),
}


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_and_gradients(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    check(UNARY[name], [rng.standard_normal(shape)], seed=seed)


def test_copysign_of_two_tensors_with_broadcasting() -> None:
    rng = np.random.default_rng(1)
    check(lambda L, a, b: L.copysign(a * a, b) + a.copysign(b.exp()), [rng.standard_normal((2, 3)),
                                                                     rng.standard_normal((3,))])
    for lib in (gc, torch):  # the sign's gradient is zeros (PyTorch's zeros_like(other)), not None
        a, b = lib.ones(2, 3, requires_grad=True), lib.ones(3, requires_grad=True)
        assert lib.autograd.grad(lib.copysign(a, b).sum(), b)[0].tolist() == [0.0, 0.0, 0.0]


def test_saved_names() -> None:
    for lib in (gc, torch):
        x = lib.tensor([0.25, 0.5], requires_grad=True)
        assert lib.logit(x).grad_fn._saved_eps is None and lib.logit(x, 0.1).grad_fn._saved_eps == 0.1
        assert lib.polygamma(2, x).grad_fn._saved_n == 2
        assert lib.copysign(x, -1).grad_fn.name() == "CopysignBackward1"
        y = lib.copysign(x, x)
        assert y.grad_fn.name() == "CopysignBackward0" and y.grad_fn._saved_result.tolist() == y.tolist()
        assert lib.deg2rad(x).grad_fn.name() == "Deg2RadBackward0" and lib.signbit(x).grad_fn is None
        assert lib.float_power(x.float(), 2).grad_fn.next_functions[0][0].name() == "ToCopyBackward0"


def test_integral_and_bool_inputs() -> None:
    ints, bools = np.array([0, 1, -2, 3]), np.array([True, False])
    for name in ("lgamma", "digamma", "erfinv", "i0", "sinc", "deg2rad", "rad2deg", "logit", "signbit"):
        for data in (ints, bools):
            same_outcome(lambda L, name=name, data=data: getattr(L, name)(L.tensor(data)))
    same_outcome(lambda L: L.polygamma(2, L.tensor(np.array([1, 2]))))
    same_outcome(lambda L: L.copysign(L.tensor(ints), -1))
    same_outcome(lambda L: L.copysign(L.tensor(ints), L.tensor(ints[::-1].copy())))
    same_outcome(lambda L: L.float_power(L.tensor(ints), 2))
    same_outcome(lambda L: L.true_divide(L.tensor(ints), 2))
    same_outcome(lambda L: L.copysign(L.tensor([1.0], dtype=L.float32), L.tensor([-1.0], dtype=L.float64)))


def test_in_place_forms() -> None:
    for name, call in {"lgamma_": lambda x: x.lgamma_(), "digamma_": lambda x: x.digamma_(),
                       "polygamma_": lambda x: x.polygamma_(1), "erfinv_": lambda x: x.erfinv_(),
                       "i0_": lambda x: x.i0_(), "sinc_": lambda x: x.sinc_(), "deg2rad_": lambda x: x.deg2rad_(),
                       "rad2deg_": lambda x: x.rad2deg_(), "logit_": lambda x: x.logit_(0.1),
                       "copysign_": lambda x: x.copysign_(-1.0), "float_power_": lambda x: x.float_power_(2),
                       "true_divide_": lambda x: x.true_divide_(4.0)}.items():

        def run(L: Any, call: Callable = call, name: str = name) -> Any:
            x = L.tensor([0.2, 0.7, 0.4], requires_grad=True)
            y = x * 1.0
            out = call(y)
            assert out is y and y._version == 1, name
            return L.autograd.grad((y * y).sum(), x)[0]

        same_outcome(run)


# -- forward mode, vmap, float32 ------------------------------------------------------------------------------------
def _jvp(lib: Any, f: Callable, x: np.ndarray, t: np.ndarray) -> list[np.ndarray]:
    out, tangent = lib.func.jvp(f, (lib.tensor(x),), (lib.tensor(t),))
    return [np.asarray(out.detach().numpy()), np.asarray(tangent.detach().numpy())]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_forward_mode(name: str) -> None:
    rng = np.random.default_rng(9)
    x, t = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    ours = _jvp(gc, lambda a: UNARY[name](gc, a), x, t)
    theirs = _jvp(torch, lambda a: UNARY[name](torch, a), x, t)
    for o, th in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, th, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(UNARY) + ["signbit"])
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap(name: str, in_dim: int) -> None:
    data = np.random.default_rng(3).standard_normal((5, 3, 4) if in_dim == 0 else (3, 5, 4))
    f = UNARY.get(name, lambda L, a: L.signbit(a))
    ours = gc.func.vmap(lambda a: f(gc, a), in_dims=in_dim)(gc.tensor(data))
    theirs = torch.func.vmap(lambda a: f(torch, a), in_dims=in_dim)(torch.tensor(data))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


FLOAT32 = {  # the function, its input's domain, and its length in roundings per element
    "lgamma": (lambda L, a: L.lgamma(a), (0.05, 20.0), 8), "digamma": (lambda L, a: L.digamma(a), (0.05, 20.0), 8),
    "polygamma": (lambda L, a: L.polygamma(2, a), (0.05, 20.0), 8),
    "erfinv": (lambda L, a: L.erfinv(a), (-0.99, 0.99), 8),
    "i0": (lambda L, a: L.i0(a), (-20.0, 20.0), 8), "sinc": (lambda L, a: L.sinc(a), (-5.0, 5.0), 4),
    "deg2rad": (lambda L, a: L.deg2rad(a), (-400.0, 400.0), 1), "logit": (lambda L, a: L.logit(a), (0.01, 0.99), 3),
}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32(name: str) -> None:
    f, (lo, hi), steps = FLOAT32[name]
    x = np.random.default_rng(5).uniform(lo, hi, (6, 7)).astype(np.float32)
    ours, theirs = f(gc, gc.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy()
    reference = f(torch, torch.tensor(x, dtype=torch.float64)).numpy()
    assert_float32_close(ours, theirs, reference, steps=steps, what=name)
    assert gc.float_power(gc.tensor(x), 2).dtype == gc.float64  # float_power computes in float64 whatever comes in


ERRORS: dict[str, Callable[[Any], Any]] = {
    "polygamma negative n": lambda L: L.polygamma(-1, L.ones(2)),
    "float_power_ of float32": lambda L: L.ones(2, dtype=L.float32).float_power_(2),
    "copysign shapes": lambda L: L.copysign(L.ones(2, 3), L.ones(4)),
    "logit of a list": lambda L: L.logit([0.5]),
    "copysign string": lambda L: L.copysign(L.ones(2), "x"),
}
SAME_TEXT = {"polygamma negative n", "float_power_ of float32", "copysign shapes"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)
