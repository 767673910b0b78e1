"""`autograd.functional.jacobian` and `hessian`: values, shapes, nesting and requires_grad against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def arr(t: object) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t._data)  # type: ignore[attr-defined]


def same(ours: object, theirs: object, path: str = "result") -> None:
    """Same nesting (tuples), shapes, values and requires_grad."""
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), f"{path}: {type(ours)} vs a tuple"
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            same(a, b, f"{path}[{k}]")
        return
    assert isinstance(ours, gradcalc.Tensor), f"{path}: {type(ours)}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    np.testing.assert_allclose(arr(ours), arr(theirs), rtol=1e-10, atol=1e-12, err_msg=path)
    assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad"


def make_inputs(lib, values, as_tuple, requires_grad=False):  # type: ignore[no-untyped-def]
    ts = tuple(lib.tensor(v, requires_grad=requires_grad) for v in values)
    return ts if as_tuple else ts[0]


# name: (function of the library, input values, give the inputs as a tuple)
JACOBIAN_CASES = {
    "sum of cubes": (lambda lib: lambda x: (x**3).sum(), [[1.0, 2.0, 3.0]], False),
    "elementwise matrix": (lambda lib: lambda x: x.exp() * 2, [[[1.0, 2.0], [3.0, 0.5]]], False),
    "0-d": (lambda lib: lambda x: x * x.sin(), [0.7], False),
    "one input as a tuple": (lambda lib: lambda x: x * x, [[1.0, -2.0]], True),
    "two inputs": (lambda lib: lambda x, y: x * y.sin(), [[1.0, 2.0], [0.3, 0.4]], True),
    "broadcast": (lambda lib: lambda x, y: x * y, [[[1.0], [2.0]], [0.5, -1.0, 2.0]], True),
    "tuple of outputs": (lambda lib: lambda x, y: (x * y, (x + y).sum()), [[1.0, 2.0], [0.3, 0.4]], True),
    "output independent of an input": (lambda lib: lambda x, y: x.exp(), [[1.0, 2.0], [3.0]], True),
    "constant output": (lambda lib: lambda x: lib.ones(2), [[1.0, 2.0, 3.0]], False),
    "linear": (lambda lib: lambda x: 3 * x, [[1.0, 2.0]], False),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(JACOBIAN_CASES))
def test_jacobian_matches_torch(name: str, create_graph: bool) -> None:
    make, values, as_tuple = JACOBIAN_CASES[name]
    ours = gradcalc.autograd.functional.jacobian(
        make(gradcalc), make_inputs(gradcalc, values, as_tuple), create_graph=create_graph
    )
    theirs = torch.autograd.functional.jacobian(make(torch), make_inputs(torch, values, as_tuple),
                                                create_graph=create_graph)
    same(ours, theirs)


def test_jacobian_of_a_matrix_function_has_output_then_input_dimensions() -> None:
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    j = gradcalc.autograd.functional.jacobian(lambda t: t * t, gradcalc.tensor(x))
    assert tuple(j.shape) == (2, 3, 2, 3)
    expected = np.zeros((2, 3, 2, 3))
    for i in range(2):
        for k in range(3):
            expected[i, k, i, k] = 2 * x[i, k]  # d(x_ik^2)/dx_ik, zero elsewhere
    np.testing.assert_allclose(arr(j), expected)


def test_jacobian_with_create_graph_differentiates_with_respect_to_the_callers_inputs() -> None:
    results = []
    for lib in (gradcalc, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        j = lib.autograd.functional.jacobian(lambda t: t.sin() * t, x, create_graph=True)
        assert j.requires_grad
        (g,) = lib.autograd.grad(j.sum(), x)
        results.append((arr(j), arr(g)))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])


def test_jacobian_without_create_graph_is_detached_and_leaves_inputs_alone() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    j = gradcalc.autograd.functional.jacobian(lambda t: t * t, x)
    assert not j.requires_grad and j.grad_fn is None
    assert x.grad is None and x.is_leaf


@pytest.mark.parametrize("case", ["independent input", "constant output"])
def test_strict_mode_refuses_what_it_would_fill_with_zeros(case: str) -> None:
    for lib in (gradcalc, torch):
        if case == "independent input":
            func, inputs = (lambda x, y: x.exp()), (lib.tensor([1.0]), lib.tensor([2.0]))
        else:
            func, inputs = (lambda x, lib=lib: lib.ones(2)), lib.tensor([1.0])
        with pytest.raises(RuntimeError):
            lib.autograd.functional.jacobian(func, inputs, strict=True)
    # and without strict both give zeros (checked against torch in test_jacobian_matches_torch)


def test_inputs_must_be_tensors() -> None:
    for lib in (gradcalc, torch):
        with pytest.raises(TypeError):
            lib.autograd.functional.jacobian(lambda x, y: x * y, (lib.tensor([1.0]), 2.0))
        with pytest.raises(TypeError):
            lib.autograd.functional.jacobian(lambda x: [x], lib.tensor([1.0]))


HESSIAN_CASES = {
    "sum of cubes": (lambda x: (x**3).sum(), [[1.0, 2.0, 3.0]], False),
    "two inputs": (lambda x, y: (x * y.sin()).sum(), [[1.0, 2.0], [0.3, 0.4]], True),
    "matrix input": (lambda x: (x * x.exp()).sum(), [[[1.0, 2.0], [0.5, -1.0]]], False),
    "product of sums": (lambda x: x.exp().sum() * x.sum(), [[1.0, 2.0]], False),
    "0-d": (lambda x: x.sin() * x, [0.3], False),
    "linear": (lambda x: (2 * x).sum(), [[1.0, 2.0]], False),
    "one-element output": (lambda x: (x * x).sum().reshape(1), [[1.0, 2.0]], False),
    "input unused in a factor": (lambda x, y: (x * x).sum() + y.sum(), [[1.0, 2.0], [3.0]], True),
}


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", list(HESSIAN_CASES))
def test_hessian_matches_torch(name: str, create_graph: bool) -> None:
    func, values, as_tuple = HESSIAN_CASES[name]
    ours = gradcalc.autograd.functional.hessian(func, make_inputs(gradcalc, values, as_tuple),
                                                create_graph=create_graph)
    theirs = torch.autograd.functional.hessian(func, make_inputs(torch, values, as_tuple),
                                               create_graph=create_graph)
    same(ours, theirs)


def test_hessian_of_sum_of_cubes_is_diagonal_6x() -> None:
    x = np.array([1.0, -2.0, 0.5])
    h = gradcalc.autograd.functional.hessian(lambda t: (t**3).sum(), gradcalc.tensor(x))
    np.testing.assert_allclose(arr(h), np.diag(6 * x))


def test_hessian_with_create_graph_gives_a_third_derivative() -> None:
    results = []
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = lib.autograd.functional.hessian(lambda t: (t**4).sum(), x, create_graph=True)
        (g,) = lib.autograd.grad(h.sum(), x)
        results.append(arr(g))
    np.testing.assert_allclose(results[0], results[1])
    np.testing.assert_allclose(results[0], [24.0, 48.0])  # d/dx of 12 x^2


def test_hessian_needs_a_single_element_output() -> None:
    for lib in (gradcalc, torch):
        with pytest.raises(RuntimeError):
            lib.autograd.functional.hessian(lambda x: x * x, lib.tensor([1.0, 2.0]))
        with pytest.raises(RuntimeError):
            lib.autograd.functional.hessian(lambda x: (x.sum(), x.sum()), lib.tensor([1.0, 2.0]))


def test_hessian_strict_refuses_a_linear_function() -> None:
    for lib in (gradcalc, torch):
        with pytest.raises(RuntimeError):
            lib.autograd.functional.hessian(lambda x: (2 * x).sum(), lib.tensor([1.0, 2.0]), strict=True)


def test_jacobian_of_a_custom_function_uses_its_backward() -> None:
    results = []
    for lib in (gradcalc, torch):

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x**2 * g

        x = lib.tensor([1.0, -2.0])
        results.append((arr(lib.autograd.functional.jacobian(Cube.apply, x)),
                        arr(lib.autograd.functional.hessian(lambda t: Cube.apply(t).sum(), x))))
    np.testing.assert_allclose(results[0][0], results[1][0])
    np.testing.assert_allclose(results[0][1], results[1][1])
    np.testing.assert_allclose(results[0][1], np.diag([6.0, -12.0]))


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=4),
    st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=4),
)
def test_random_inputs_match_torch(xs: list[float], ys: list[float]) -> None:
    def f(x, y):  # type: ignore[no-untyped-def]
        return (x.sin() * x).sum() * y.exp() + y * y

    def scalar(x, y):  # type: ignore[no-untyped-def]
        return (f(x, y) * y).sum()

    ours_j = gradcalc.autograd.functional.jacobian(f, (gradcalc.tensor(xs), gradcalc.tensor(ys)))
    theirs_j = torch.autograd.functional.jacobian(f, (torch.tensor(xs), torch.tensor(ys)))
    same(ours_j, theirs_j)
    ours_h = gradcalc.autograd.functional.hessian(scalar, (gradcalc.tensor(xs), gradcalc.tensor(ys)))
    theirs_h = torch.autograd.functional.hessian(scalar, (torch.tensor(xs), torch.tensor(ys)))
    same(ours_h, theirs_h)
