"""Elementwise operations against PyTorch: values, dtypes, grad_fn names, first-order gradients by
backward, and higher orders by autograd.grad(create_graph=True), whether each gradient requires grad,
and the edge cases (relu, abs, sign at 0 and nan, sqrt at 0, clamp at its bounds, ties of maximum)."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pointwise_oracle import ATOL, RTOL, _np, assert_same, check, shapes  # noqa: F401

import gradcalc as gc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

FAST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def values(lo: float, hi: float, shape=None):
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    return hnp.arrays(np.float64, shape if shape is not None else shapes(), elements=elements)


# -- the unary table ------------------------------------------------------------------------------------------
UNARY = {
    # name: (torch function, domain)
    "exp": (torch.exp, (-5, 5)),
    "expm1": (torch.expm1, (-5, 5)),
    "log": (torch.log, (0.1, 5)),
    "log2": (torch.log2, (0.1, 5)),
    "log10": (torch.log10, (0.1, 5)),
    "log1p": (torch.log1p, (-0.9, 5)),
    "sin": (torch.sin, (-4, 4)),
    "cos": (torch.cos, (-4, 4)),
    "tan": (torch.tan, (-1.3, 1.3)),
    "asin": (torch.asin, (-0.95, 0.95)),
    "acos": (torch.acos, (-0.95, 0.95)),
    "atan": (torch.atan, (-4, 4)),
    "sinh": (torch.sinh, (-3, 3)),
    "cosh": (torch.cosh, (-3, 3)),
    "tanh": (torch.tanh, (-3, 3)),
    "sqrt": (torch.sqrt, (0.1, 5)),
    "rsqrt": (torch.rsqrt, (0.1, 5)),
    "reciprocal": (torch.reciprocal, (0.2, 5)),
    "abs": (torch.abs, (-3, 3)),
    "sign": (torch.sign, (-3, 3)),
    "relu": (torch.relu, (-3, 3)),
    "sigmoid": (torch.sigmoid, (-8, 8)),
    "erf": (torch.erf, (-3, 3)),
    "softplus": (torch.nn.functional.softplus, (-25, 25)),
    # the special functions (ops/special.py) off their poles; sinc away from 0, where the second derivative of
    # PyTorch's formula is a cancellation of terms of size 1 / x² (its own value there is not -pi² / 3 either)
    "lgamma": (torch.lgamma, (0.1, 5)),
    "digamma": (torch.digamma, (0.1, 5)),
    "erfinv": (torch.erfinv, (-0.95, 0.95)),
    "sinc": (torch.sinc, (0.05, 3)),
}


def _with_every_row(listed: dict) -> dict:
    """Every row of the engine's table, compared with torch's function of the same name: a row added to the
    table is covered here without a line in this file (on (-3, 3) unless its domain is listed above)."""
    from gradcalc.autograd.ops.unary import ROWS as TABLE

    rows = {name: (getattr(torch, name), (-3, 3)) for name, row in TABLE.items() if row.public and name not in listed}
    return {**listed, **rows}


UNARY = _with_every_row(UNARY)


def test_the_table_is_covered():
    from gradcalc.autograd.ops.unary import ROWS as TABLE

    assert {name for name, row in TABLE.items() if row.public} | {"softplus"} == set(UNARY)


@pytest.mark.parametrize("name", sorted(UNARY))
@FAST
@given(data=st.data())
def test_unary_against_torch(name, data):
    fn_t, (lo, hi) = UNARY[name]
    x = data.draw(values(lo, hi))
    check(fn_t, getattr(gc, name), x, order=2)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"softplus"}))
def test_unary_method_and_float32(name):
    fn_t, (lo, hi) = UNARY[name]
    a = np.linspace(lo, hi, 5)
    y = getattr(gc.tensor(a, dtype=gc.float32, requires_grad=True), name)()
    yt = getattr(torch.tensor(a, dtype=torch.float32, requires_grad=True), name)()
    assert str(y.dtype) == str(yt.dtype) == "torch.float32"
    np.testing.assert_allclose(y.detach().numpy(), _np(yt), rtol=1e-6, atol=1e-7)
    assert y.grad_fn.name() == yt.grad_fn.name()


# points where the functions or their derivatives are singular, signed or undefined
EDGES = [0.0, -0.0, 1.0, -1.0, 25.0, -25.0, -720.0, 720.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("name", ["relu", "abs", "sign", "sqrt", "rsqrt", "reciprocal", "sigmoid", "tanh", "exp",
                                  "expm1", "erf", "softplus", "log", "atan"])
def test_unary_edges(name):
    fn_t = UNARY[name][0]
    with warnings.catch_warnings(record=True) as caught:  # NumPy's float warnings must not reach the user
        # gradcalc silences them by a filter on its own modules (pytest resets filters for each test)
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradcalc\.autograd")
        check(fn_t, getattr(gc, name), np.array(EDGES), order=2)
    # gradcalc's own code by where its package lies, not by a word in a path (a venv inside a clone named
    # gradcalc holds NumPy too)
    package = os.path.dirname(os.path.realpath(gc.__file__)) + os.sep
    ours = [w for w in caught if os.path.realpath(w.filename).startswith(package)]
    assert not ours, [str(w.message) for w in ours]


def test_signed_zeros_print_as_torch():
    z = np.array([-0.0, 0.0])
    for fn_t, fn_g in [(torch.relu, gc.relu), (torch.abs, gc.abs), (torch.sign, gc.sign),
                       (lambda x: torch.clamp(x, min=0.0), lambda x: gc.clamp(x, min=0.0)),
                       (lambda x: torch.clamp(x, max=-0.0), lambda x: gc.clamp(x, max=-0.0))]:
        assert np.array_equal(np.signbit(fn_g(gc.tensor(z)).numpy()), np.signbit(_np(fn_t(torch.tensor(z)))))


def test_relu_gradient_at_zero_and_its_second_derivative():
    # relu'(0) = 0; relu's gradient records ThresholdBackwardBackward0, whose own derivative is zero
    x = gc.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    (g,) = gc.autograd.grad(gc.relu(x).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 0.0, 1.0] and g.grad_fn.name() == "ThresholdBackwardBackward0"
    (h,) = gc.autograd.grad((g * x).sum(), x)
    assert h.tolist() == [0.0, 0.0, 1.0]


def test_sign_gradient_is_a_constant_zero():
    x = gc.tensor([1.0, -2.0], requires_grad=True)
    (g,) = gc.autograd.grad((gc.sign(x) * x).sum(), x, create_graph=True)
    xt = torch.tensor([1.0, -2.0], requires_grad=True)
    (gt,) = torch.autograd.grad((torch.sign(xt) * xt).sum(), xt, create_graph=True)
    assert_same(g, gt)


@pytest.mark.parametrize("beta,threshold", [(1, 20), (2, 5), (0.5, 1)])
def test_softplus_beta_threshold(beta, threshold):
    x = np.array([-30.0, -2.0, 0.0, 0.7, 1.9, 2.5, 4.0, 21.0])
    check(lambda t: torch.nn.functional.softplus(t, beta, threshold), lambda t: gc.softplus(t, beta, threshold),
          x, order=3)


@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "sigmoid", "log", "sqrt", "atan"])
def test_fourth_order(name):
    check(UNARY[name][0], getattr(gc, name), np.array([0.3, 0.9, 1.7]), order=4)


def test_fourth_order_composition():
    check(lambda t: torch.exp(torch.tanh(t)) * torch.sin(t), lambda t: gc.exp(gc.tanh(t)) * gc.sin(t),
          np.array([[-0.8, 0.1], [0.5, 1.2]]), order=4)


def test_unary_no_graph_without_grad():
    x = gc.tensor([1.0, 2.0])
    assert gc.sin(x).grad_fn is None and not gc.sin(x).requires_grad
    with gc.no_grad():
        y = gc.exp(gc.tensor([1.0], requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


def test_unary_of_a_number_is_a_type_error_as_in_torch():
    with pytest.raises(TypeError):
        torch.sin(2.0)
    with pytest.raises(TypeError, match="tensor"):
        gc.sin(2.0)


def test_saved_input_changed_in_place_is_caught():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1.0
    y = gc.sin(a)
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match="in place"):
        y.sum().backward()


def test_int_inputs_follow_torch_dtypes():
    for name in ["sin", "exp", "sqrt", "abs", "sign", "relu", "sigmoid", "erf", "reciprocal", "rsqrt"]:
        yt = UNARY[name][0](torch.tensor([1, 2, 3]))
        y = getattr(gc, name)(gc.tensor([1, 2, 3]))
        assert str(y.dtype) == str(yt.dtype), name
        np.testing.assert_allclose(y.numpy(), _np(yt), rtol=RTOL)


# -- where ----------------------------------------------------------------------------------------------------
@FAST
@given(data=st.data())
def test_where_broadcasting(data):
    sc, sa, sb = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3)).input_shapes
    c = data.draw(hnp.arrays(np.bool_, sc))
    a, b = data.draw(values(-3, 3, sa)), data.draw(values(-3, 3, sb))
    check(lambda c_, a_, b_: torch.where(c_, a_, b_), lambda c_, a_, b_: gc.where(c_, a_, b_), c, a, b,
          const=(0,))


def test_where_with_numbers_and_method():
    a = np.array([[-1.0, 2.0], [3.0, -4.0]])
    check(lambda x: torch.where(x > 0, x, 0.0), lambda x: gc.where(x > 0, x, 0.0), a)
    check(lambda x: torch.where(x > 0, 1.0, x * x), lambda x: gc.where(x > 0, 1.0, x * x), a)
    check(lambda x: x.where(x < 0, -x), lambda x: x.where(x < 0, -x), a)
    f32 = gc.where(gc.tensor([True, False]), gc.tensor([1.0, 2.0], dtype=gc.float32), 0.0)
    assert str(f32.dtype) == "torch.float32"


# -- clamp ----------------------------------------------------------------------------------------------------
BOUNDS = [(-0.5, 0.5), (0.0, None), (None, 0.0), (1.0, -1.0), (-1.0, -1.0), (0.5, 2.0)]


@pytest.mark.parametrize("lo,hi", BOUNDS)
def test_clamp_number_bounds_including_the_bounds_themselves(lo, hi):
    # the values include the bounds: the gradient passes where min <= x <= max
    x = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, math.nan])
    check(lambda t: torch.clamp(t, lo, hi), lambda t: gc.clamp(t, lo, hi), x)
    check(lambda t: t.clamp(min=lo, max=hi), lambda t: t.clamp(min=lo, max=hi), x)
    check(lambda t: torch.clip(t, lo, hi), lambda t: gc.clip(t, lo, hi), x)


@FAST
@given(data=st.data())
def test_clamp_tensor_bounds(data):
    # the bounds broadcast to x's shape (PyTorch's clamp backward does not sum x's gradient back down)
    sx = data.draw(shapes())
    slo, shi = (data.draw(hnp.broadcastable_shapes(sx, max_dims=len(sx))) for _ in "ab")
    try:
        assume(np.broadcast_shapes(sx, slo, shi) == sx)
    except ValueError:  # the two bounds do not broadcast together
        assume(False)
    grid = st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0])  # coarse values: ties with the bounds happen
    x = data.draw(hnp.arrays(np.float64, sx, elements=grid))
    lo = data.draw(hnp.arrays(np.float64, slo, elements=grid))
    hi = data.draw(hnp.arrays(np.float64, shi, elements=grid))
    check(torch.clamp, gc.clamp, x, lo, hi)
    check(lambda a, b: torch.clamp(a, min=b), lambda a, b: gc.clamp(a, min=b), x, lo)
    check(lambda a, b: torch.clamp(a, max=b), lambda a, b: gc.clamp(a, max=b), x, hi)
    check(torch.clamp_min, gc.clamp_min, x, lo)
    check(torch.clamp_max, gc.clamp_max, x, hi)


def test_clamp_min_max_number_forms():
    x = np.array([-1.0, 0.0, 1.0])
    check(lambda t: torch.clamp_min(t, 0.0), lambda t: gc.clamp_min(t, 0.0), x)
    check(lambda t: torch.clamp_max(t, 0.0), lambda t: gc.clamp_max(t, 0.0), x)


def test_clamp_dtypes_and_errors():
    for data, lo in [([1, 2], 1.5), ([1, 2], 1), ([1.0, 2.0], 1.5)]:
        for dtype_t, dtype_g in [(None, None), (torch.float32, gc.float32)] if isinstance(lo, float) else [
                (None, None)]:
            yt = torch.clamp(torch.tensor(data, dtype=dtype_t), min=lo)
            y = gc.clamp(gc.tensor(data, dtype=dtype_g), min=lo)
            assert str(y.dtype) == str(yt.dtype) and y.tolist() == yt.tolist()
    # a 0-d float64 bound does not widen a float32 tensor
    y = gc.clamp(gc.tensor([1.0, 2.0], dtype=gc.float32), min=gc.tensor(1.5))
    assert str(y.dtype) == "torch.float32"
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="min and max"):
        gc.clamp(x)
    with pytest.raises(TypeError):
        gc.clamp(x, min=gc.tensor([1.0, 1.0]), max=3.0)
    with pytest.raises(TypeError):
        gc.clamp(x, min="a")
    # a 0-d tensor that needs no grad mixes with a number, as PyTorch's number form
    y = gc.clamp(x, min=gc.tensor(1.5), max=3.0)
    assert y.grad_fn.name() == "ClampBackward1"


def test_clamp_inplace_keeps_working():
    x = gc.tensor([-1.0, 0.5, 3.0])
    x.clamp_(0.0, 1.0)
    assert x.tolist() == [0.0, 0.5, 1.0]


# -- maximum, minimum -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["maximum", "minimum"])
@FAST
@given(data=st.data())
def test_maximum_minimum_ties_split(name, data):
    sa, sb = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3)).input_shapes
    grid = st.sampled_from([-1.0, 0.0, 1.0])  # many ties
    a = data.draw(hnp.arrays(np.float64, sa, elements=grid))
    b = data.draw(hnp.arrays(np.float64, sb, elements=grid))
    check(getattr(torch, name), getattr(gc, name), a, b)
    check(lambda p, q: getattr(p, name)(q), lambda p, q: getattr(p, name)(q), a, b, const=(1,))


def test_maximum_minimum_nan_and_errors():
    a, b = np.array([math.nan, 1.0, 2.0]), np.array([1.0, math.nan, 2.0])
    check(torch.maximum, gc.maximum, a, b)
    check(torch.minimum, gc.minimum, a, b)
    with pytest.raises(TypeError):
        gc.maximum(gc.tensor([1.0]), 0.0)
    y = gc.maximum(gc.tensor([1, 2]), gc.tensor([1.5, 0.5]))
    assert str(y.dtype) == "torch.float64" and y.tolist() == [1.5, 2.0]


def test_maximum_second_order_through_a_product():
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    check(lambda p, q: torch.maximum(p * q, q * q), lambda p, q: gc.maximum(p * q, q * q), a, b, order=3)
