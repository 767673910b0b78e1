"""The package installs, imports and differentiates: the first thing CI must prove."""

import math

import gradcalc


def test_derivative_of_x_squared_plus_sin() -> None:
    x = gradcalc.tensor(3.0, requires_grad=True)
    y = x**2 + gradcalc.sin(x)
    y.backward()
    assert x.grad is not None
    assert math.isclose(x.grad.item(), 2 * 3.0 + math.cos(3.0), rel_tol=1e-12)
