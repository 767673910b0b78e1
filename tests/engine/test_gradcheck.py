"""`autograd.gradcheck` / `gradgradcheck`: correct backwards pass, wrong ones fail naming the entries.

PyTorch's own gradcheck judges the same functions (written once for both libraries), so a verdict here
agrees with the oracle's.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd.gradcheck import GradcheckError

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

LIBS = [gradcalc, torch]


def leaves(lib, *values):  # type: ignore[no-untyped-def]
    return tuple(lib.tensor(v, requires_grad=True) for v in values)


def cube(lib, factor=3.0, detach=False):  # type: ignore[no-untyped-def]
    """Custom x**3 whose backward uses `factor` (3 is right) and optionally a detached x (wrong twice)."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if detach:
                x = x.detach()
            return factor * x * x * g

    return Cube


def wrong_second_input(lib):  # type: ignore[no-untyped-def]
    """a * b whose gradient for b is off (a + 1 instead of a)."""

    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * (a + 1)

    return Mul


def wrong_second_output(lib):  # type: ignore[no-untyped-def]
    """(2x, x^2) whose backward gets the second output's derivative wrong (x instead of 2x)."""

    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            return g1 * 2 + g2 * x

    return Two


CORRECT = {
    "elementwise": (lambda lib: lambda a, b: a * b.sin() + a.exp(), ([1.0, 2.0, 0.5], [0.5, -1.0, 2.0])),
    "broadcast and reduce": (lambda lib: lambda a, b: (a * b).sum() / b.exp().sum(), ([[1.0], [2.0]], [0.3, 0.7])),
    "two outputs": (lambda lib: lambda a: (a.tanh(), (a * a).sum()), ([0.1, -0.4],)),
    "custom cube": (lambda lib: cube(lib).apply, ([1.0, -2.0, 0.5],)),
    "0-d": (lambda lib: lambda a: a.sigmoid() * a, (0.3,)),
}


@pytest.mark.parametrize("name", list(CORRECT))
def test_gradcheck_passes_on_correct_functions(name: str) -> None:
    make, values = CORRECT[name]
    for lib in LIBS:
        assert lib.autograd.gradcheck(make(lib), leaves(lib, *values)) is True
        assert lib.autograd.gradgradcheck(make(lib), leaves(lib, *values)) is True


def test_gradcheck_does_not_change_the_inputs() -> None:
    x, y = leaves(gradcalc, [1.0, 2.0], [3.0, 4.0])
    assert gradcalc.autograd.gradcheck(lambda a, b: a * b, (x, y))
    np.testing.assert_array_equal(x._data, [1.0, 2.0])
    np.testing.assert_array_equal(y._data, [3.0, 4.0])
    assert x.version == 0 and x.grad is None


def test_wrong_backward_fails_naming_output_input_elements_and_values() -> None:
    for lib in LIBS:
        with pytest.raises(RuntimeError):  # torch's GradcheckError is a RuntimeError too
            lib.autograd.gradcheck(cube(lib, factor=2.0).apply, leaves(lib, [1.0, -2.0, 0.5]))
    with pytest.raises(GradcheckError) as err:
        gradcalc.autograd.gradcheck(cube(gradcalc, factor=2.0).apply, leaves(gradcalc, [1.0, -2.0, 0.5]))
    msg = str(err.value)
    assert isinstance(err.value, RuntimeError)
    assert "output 0" in msg and "input 0" in msg
    # every diagonal entry is off: numerical 3x^2, analytic 2x^2
    for k, x in enumerate([1.0, -2.0, 0.5]):
        line = re.search(rf"output element \({k},\), input element \({k},\): numerical (\S+), analytic (\S+)", msg)
        assert line is not None, msg
        assert float(line.group(1)) == pytest.approx(3 * x * x, rel=1e-5)
        assert float(line.group(2)) == pytest.approx(2 * x * x, rel=1e-12)
    assert "3 of 9 entries" in msg


def test_raise_exception_false_returns_false() -> None:
    for lib in LIBS:
        assert lib.autograd.gradcheck(cube(lib, factor=2.0).apply, leaves(lib, [1.0, 2.0]),
                                      raise_exception=False) is False


def test_mismatch_in_the_second_input_names_input_1() -> None:
    for lib in LIBS:
        assert not lib.autograd.gradcheck(wrong_second_input(lib).apply, leaves(lib, [1.0, 2.0], [3.0, 4.0]),
                                          raise_exception=False)
    with pytest.raises(GradcheckError, match=r"output 0 with respect to input 1"):
        gradcalc.autograd.gradcheck(wrong_second_input(gradcalc).apply, leaves(gradcalc, [1.0, 2.0], [3.0, 4.0]))


def test_mismatch_in_the_second_output_names_output_1() -> None:
    for lib in LIBS:
        assert not lib.autograd.gradcheck(wrong_second_output(lib).apply, leaves(lib, [1.0, 2.0]),
                                          raise_exception=False)
    with pytest.raises(GradcheckError, match=r"output 1 with respect to input 0") as err:
        gradcalc.autograd.gradcheck(wrong_second_output(gradcalc).apply, leaves(gradcalc, [1.0, 2.0]))
    assert "output element (1,), input element (1,): numerical 4, analytic 2" in str(err.value)


def test_inputs_without_requires_grad_are_not_checked() -> None:
    for lib in LIBS:
        x, = leaves(lib, [1.0, 2.0])
        fixed = lib.tensor([0.5, 3.0])
        # the backward is wrong only for the second input, which is not checked
        assert lib.autograd.gradcheck(wrong_second_input(lib).apply, (x, fixed))


def test_non_tensor_arguments_are_passed_through() -> None:
    for lib in LIBS:
        assert lib.autograd.gradcheck(lambda a, k: a * k, (lib.tensor([1.0, 2.0], requires_grad=True), 3.0))


def test_nothing_to_check_is_an_error() -> None:
    for lib in LIBS:
        with pytest.raises(ValueError):
            lib.autograd.gradcheck(lambda a: a * 2, (lib.tensor([1.0]),))


def test_float32_inputs_warn() -> None:
    x = gradcalc.tensor([1.0, 2.0], dtype=gradcalc.float32, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradcalc.autograd.gradcheck(lambda a: a * 2, (x,), raise_exception=False)
    assert any("float64" in str(w.message) for w in caught)


def test_nondeterministic_backward_fails() -> None:
    calls = []

    class Drifting(gradcalc.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (2 + 1e-3 * len(calls))

    x, = leaves(gradcalc, [1.0, 2.0])
    with pytest.raises(GradcheckError, match="deterministic"):
        gradcalc.autograd.gradcheck(Drifting.apply, (x,), atol=1.0)  # atol: only non-determinism is caught
    assert gradcalc.autograd.gradcheck(Drifting.apply, (x,), atol=1.0, nondet_tol=1.0)


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable() -> None:
    for lib in LIBS:
        x = leaves(lib, [1.0, -2.0])
        assert lib.autograd.gradcheck(cube(lib, detach=True).apply, x)  # first order is right
        assert lib.autograd.gradgradcheck(cube(lib).apply, x)
        assert not lib.autograd.gradgradcheck(cube(lib, detach=True).apply, x, raise_exception=False)
    with pytest.raises(GradcheckError):
        gradcalc.autograd.gradgradcheck(cube(gradcalc, detach=True).apply, leaves(gradcalc, [1.0, -2.0]))


def test_gradgradcheck_with_given_grad_outputs() -> None:
    for lib in LIBS:
        x = leaves(lib, [0.3, 0.9])
        g = lib.tensor([1.0, -0.5], requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda a: a.sin() * a, x, (g,))
