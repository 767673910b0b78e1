"""LANGUAGE.md §5, rule by rule: each behaviour is run on gradcalc AND on PyTorch (the oracle), with the
same code, and the outcomes compared: values, dtype, `requires_grad`, `is_leaf`, `grad_fn` name, whether a
UserWarning was raised, and the exception type. gradcalc's own messages are then checked for the fix they
must name (`retain_graph`, `retain_grad`, `no_grad`, `.detach()`, `allow_unused=true`, ...).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import warnings
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

ROOT = Path(__file__).resolve().parents[2]
Lib = Any  # `gradcalc` or `torch`: every scenario below is written once against PyTorch's API


# -- the oracle ---------------------------------------------------------------------------------------------
def version(t: Any) -> int:
    """The in-place version counter, PyTorch's `t._version` (gradcalc's language also calls it `version`)."""
    if isinstance(t, gradcalc.Tensor):
        assert t.version == t._version
    return t._version


def node_name(fn: Any) -> str | None:
    if fn is None:
        return None
    return fn.name() if isinstance(fn, gradcalc.autograd.Node) else type(fn).__name__


def describe(r: Any) -> Any:
    """What must agree between the libraries, as plain data (tensor values as float arrays)."""
    if isinstance(r, (torch.Tensor, gradcalc.Tensor)):
        # (force: PyTorch gives some zero gradients as ZeroTensors, which need it)
        data = r.detach().numpy(force=True) if isinstance(r, torch.Tensor) else np.asarray(r._data)
        return ("tensor", np.array(data, dtype=float), str(r.dtype).removeprefix("torch."), r.requires_grad,
                r.is_leaf, node_name(r.grad_fn))
    if isinstance(r, (list, tuple)):
        return tuple(describe(x) for x in r)
    if r is None or isinstance(r, (bool, int, float, str)):
        return r
    return ("node", node_name(r))


def assert_same(expected: Any, actual: Any, where: str = "result") -> None:
    if isinstance(expected, tuple) and expected and expected[0] == "tensor":
        assert isinstance(actual, tuple) and actual[0] == "tensor", f"{where}: {actual!r} is not a tensor"
        assert expected[1].shape == actual[1].shape, f"{where}: shape {actual[1].shape} != {expected[1].shape}"
        np.testing.assert_allclose(actual[1], expected[1], rtol=1e-12, atol=1e-300, equal_nan=True,
                                   err_msg=where)
        assert actual[2:] == expected[2:], f"{where}: (dtype, requires_grad, is_leaf, grad_fn) differ"
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), f"{where}: {actual!r} != {expected!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-12, nan_ok=True), where
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def outcome(scenario: Callable[[Lib], Any], lib: Lib) -> tuple[str, Any, bool]:
    """(`ok`, result, warned) or (`error`, exception type, warned)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", describe(scenario(lib)))
        except Exception as e:  # noqa: BLE001 - the exception type is part of the outcome
            result = ("error", type(e).__name__)
    warned = any(issubclass(w.category, UserWarning) and "anomaly" not in str(w.message).lower() for w in caught)
    return (*result, warned)


def same(scenario: Callable[[Lib], Any], *, check_warnings: bool = True) -> None:
    """Run `scenario` on both libraries and compare everything observable."""
    expected, actual = outcome(scenario, torch), outcome(scenario, gradcalc)
    assert actual[0] == expected[0], f"gradcalc gave {actual}, PyTorch gave {expected}"
    assert_same(expected[1], actual[1])
    if check_warnings:
        assert actual[2] == expected[2], f"UserWarning: gradcalc {actual[2]}, PyTorch {expected[2]}"


def scenarios(*fns: Callable[[Lib], Any]) -> Any:
    return pytest.mark.parametrize("scenario", fns, ids=[f.__name__ for f in fns])


# -- leaves ----------------------------------------------------------------------------------------------
def leaf_status(T: Lib) -> Any:
    a = T.tensor(3.0, requires_grad=True)
    c = T.tensor([1.0, 2.0])
    with T.no_grad():
        n = a * 2
    return a, a * a, c, c * c, n, a.detach(), T.tensor([1, 2]), T.zeros(2, requires_grad=True), T.ones(2) + a


def requires_grad_is_any_input(T: Lib) -> Any:
    a = T.tensor(5.0, requires_grad=True)
    b = T.tensor(5.0, requires_grad=False)
    return a * b, b * a, b * b, T.sin(a * b * b), (a + b).sum()


@scenarios(leaf_status, requires_grad_is_any_input)
def test_leaves(scenario: Callable) -> None:
    same(scenario)


# -- retention -------------------------------------------------------------------------------------------
def nonleaf_grad_is_none(T: Lib) -> Any:
    a = T.tensor(3.0, requires_grad=True)
    b = a * a
    b.backward()
    return a.grad, b.grad


def leaf_without_grad_reads_none(T: Lib) -> Any:
    c = T.tensor(3.0)
    return c.grad, (c * c).grad


def retained(T: Lib) -> Any:
    a = T.tensor([1.0, 3.0], requires_grad=True)
    b = a * a
    b.retain_grad()
    c = b.sin()
    c.retain_grad()
    c.sum().backward()
    return a.grad, b.grad, c.grad, b.retains_grad, a.retains_grad, a.grad.retains_grad, b.grad.is_leaf


def retain_grad_on_leaf_is_noop(T: Lib) -> Any:
    a = T.tensor(2.0, requires_grad=True)
    a.retain_grad()
    (a * a).backward()
    return a.retains_grad, a.grad


def retain_grad_without_requires_grad(T: Lib) -> Any:
    T.tensor(2.0).retain_grad()


def retained_sums_out_of_place(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    h = x * x
    h.retain_grad()
    y = h * h
    y.backward(retain_graph=True)
    first = h.grad
    y.backward()
    return first, h.grad, first is h.grad


def grad_fills_retained_not_leaves(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x * x
    y.retain_grad()
    return T.autograd.grad(y * 3, x), y.grad, x.grad


@scenarios(nonleaf_grad_is_none, leaf_without_grad_reads_none, retained, retain_grad_on_leaf_is_noop,
           retain_grad_without_requires_grad, retained_sums_out_of_place, grad_fills_retained_not_leaves)
def test_retention(scenario: Callable) -> None:
    same(scenario)


def test_nonleaf_grad_warning_names_the_fix() -> None:
    a = gradcalc.tensor(3.0, requires_grad=True)
    b = a * a
    b.backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert b.grad is None
    b.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert b.grad is None  # marked now: no warning, though nothing was retained yet


# -- accumulation ----------------------------------------------------------------------------------------
def accumulates(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    first = x.grad
    (x * 3).sum().backward()
    kept = first is x.grad  # PyTorch adds into the same tensor when nothing is recorded
    x.grad.zero_()
    (x * x).sum().backward()
    after_zero = x.grad
    x.grad = None
    (x**3).sum().backward()
    return first, kept, after_zero, x.grad


def two_paths_add(T: Lib) -> Any:
    x = T.tensor(3.0, requires_grad=True)
    y = x * x + x.sin() * x + x
    y.backward()
    return x.grad


def assigned_grad_accumulates(T: Lib) -> Any:
    x = T.tensor([2.0, 3.0], requires_grad=True)
    g = T.tensor([1.0, 1.0])
    x.grad = g
    (x * x).sum().backward()
    return x.grad, g


def float32_leaf(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], dtype=T.float32, requires_grad=True)
    (x * 2.5).sum().backward()
    return x.grad


def shared_gradient_array(T: Lib) -> Any:
    # `(u + v) * 1.0` hands one new gradient array to both u's and v's nodes, and u gets a second gradient
    # from `u * 1.0`: a sum made in place into the shared array would change v's gradient too. Both orders.
    out = []
    for swap in (False, True):
        a = T.tensor([1.0, 2.0], requires_grad=True)
        b = T.tensor([3.0, 4.0], requires_grad=True)
        u, v = a * 2.0, b * 3.0
        first, second = (u + v) * 1.0, u * 5.0
        ((second + first) if swap else (first + second)).sum().backward()
        out += [a.grad, b.grad]
    return out


def captured_gradient_kept(T: Lib) -> Any:
    # grad() w.r.t. a non-leaf returns the gradient reaching it: later sums in the walk must not change it
    x = T.tensor([1.0, 2.0], requires_grad=True)
    m = x * 2.0
    y = m + m * 1.0
    gm, gx = T.autograd.grad((y * 1.0 + m * 4.0).sum(), (m, x))
    return gm, gx


def given_gradient_untouched(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    g = T.tensor([1.0, 1.0])
    (x * 2.0 + x * 3.0).backward(g)
    return g, x.grad


@scenarios(accumulates, two_paths_add, assigned_grad_accumulates, float32_leaf, shared_gradient_array,
           captured_gradient_kept, given_gradient_untouched)
def test_accumulation(scenario: Callable) -> None:
    same(scenario)


# -- freeing saved values --------------------------------------------------------------------------------
def second_backward_after_mul(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = x * 2  # MulBackward0 saved the scalar
    y.backward()
    y.backward()


def second_backward_after_add(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = x + 1  # AddBackward0 saves nothing, so it can run again
    y.backward()
    y.backward()
    return x.grad


def second_grad_call(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x.exp()
    T.autograd.grad(y, x)
    T.autograd.grad(y, x)


def retain_graph_keeps(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x.exp() * x
    a = T.autograd.grad(y, x, retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()
    return a, x.grad


def create_graph_implies_retain_graph(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x**3
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (h,) = T.autograd.grad(y, x)  # still there
    return g, h


def create_graph_with_retain_graph_false(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x**3
    T.autograd.grad(y, x, create_graph=True, retain_graph=False)
    T.autograd.grad(y, x)


@scenarios(second_backward_after_mul, second_backward_after_add, second_grad_call, retain_graph_keeps,
           create_graph_implies_retain_graph, create_graph_with_retain_graph_false)
def test_freeing(scenario: Callable) -> None:
    same(scenario)


SECOND_BACKWARD = ["x.sum()", "(-x).sum()", "(x - 1).sum()", "(1 - x).sum()", "(x + x).sum()", "x.clone().sum()",
                   "x.float().sum()", "x.detach().sum() + x.sum()", "(x * 2).sum()", "(x * x).sum()", "(x / 2).sum()",
                   "(2 / x).sum()", "(x / x).sum()", "(x ** 2).sum()", "(2 ** x).sum()", "(x ** x).sum()",
                   "x.exp().sum()", "x.sin().sum()", "x.tanh().sum()", "x.mean()"]


@pytest.mark.parametrize("expression", SECOND_BACKWARD)
def test_second_backward_fails_exactly_when_values_were_saved(expression: str) -> None:
    """A node that saved values cannot run again after the walk freed them; one that saved none (add, sum,
    neg, clone, ...) can, as in PyTorch."""

    def scenario(T: Lib) -> Any:
        x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        y = eval(expression, {"x": x})  # noqa: S307 - a fixed expression of this file
        y.backward()
        y.backward()
        return x.grad

    same(scenario)


def test_second_backward_error_names_retain_graph() -> None:
    x = gradcalc.tensor(3.0, requires_grad=True)
    y = x * x
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        gradcalc.autograd.grad(y, x)


def test_saved_values_are_released_as_the_walk_passes() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    y = h.sin()  # saves h
    alive = weakref.ref(h)
    del h
    y.sum().backward(retain_graph=True)
    assert alive() is not None  # retained: the node still holds what it saved
    y.sum().backward()
    assert alive() is None  # freed by the walk, though `y` and its graph are still alive
    assert y.grad_fn is not None


# -- higher order ----------------------------------------------------------------------------------------
def backward_create_graph(T: Lib) -> Any:
    a = T.tensor(5.0, requires_grad=True)
    b = a * a
    b.retain_grad()
    b.backward(create_graph=True)
    return a.grad, b.grad


def create_graph_constant_derivative(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    (x * 3).backward(create_graph=True)
    return x.grad


def create_graph_accumulates_recorded(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    (x * x).backward(create_graph=True)
    (x**3).backward(create_graph=True)
    return x.grad


def plain_backward_into_recorded_grad(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    (x**3).backward(create_graph=True)
    (x * x).backward()  # added in place: the .grad keeps its grad_fn, as in PyTorch
    return x.grad


def retained_under_create_graph(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    y = x * x
    y.retain_grad()
    z = y * y
    z.backward(create_graph=True)
    return y.grad, x.grad


def grad_of_grad_backward(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    (x**3).backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    return g, x.grad


def fourth_derivative(T: Lib) -> Any:
    x = T.tensor([0.5, 1.5], requires_grad=True)
    y = (x.sin() * x**3 + (x * 2).exp() / (x + 2)).sum()
    out = []
    for _ in range(4):
        (y,) = T.autograd.grad(y, x, create_graph=True)
        out.append(y)
        y = y.sum()
    return out


def grad_without_create_graph_is_constant(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    v = T.tensor(3.0, requires_grad=True)
    (g,) = T.autograd.grad(x * x, x, grad_outputs=v)
    x.grad = None
    (x * x).backward(v)
    return g, x.grad


def grad_outputs_recorded(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    v = T.tensor(3.0, requires_grad=True)
    (g,) = T.autograd.grad(x * x, x, grad_outputs=v, create_graph=True)
    return g, T.autograd.grad(g, [x, v])


@scenarios(backward_create_graph, create_graph_constant_derivative, create_graph_accumulates_recorded,
           plain_backward_into_recorded_grad, retained_under_create_graph, grad_of_grad_backward,
           fourth_derivative, grad_without_create_graph_is_constant, grad_outputs_recorded)
def test_higher_order(scenario: Callable) -> None:
    same(scenario, check_warnings=False)  # PyTorch warns about create_graph only once per process


def test_create_graph_warns_about_the_cycle() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    with pytest.warns(UserWarning, match="cycle"):
        (x * x).backward(create_graph=True)
    assert x.grad.requires_grad and not x.grad.is_leaf and x.grad.grad_fn.name() == "CopyBackwards"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcalc.autograd.grad(x * x, x, create_graph=True)  # grad() makes no cycle: no warning


# -- non-scalar outputs, outputs that do not require grad ------------------------------------------------
def vector_backward_needs_gradient(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward()


def vector_grad_needs_grad_outputs(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    T.autograd.grad(x * 2, x)


def vector_backward_with_gradient(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(T.tensor([1.0, 10.0]))
    return x.grad, T.autograd.grad(x * x, x, grad_outputs=T.tensor([3.0, 4.0]))


def one_element_output_is_implied(T: Lib) -> Any:
    x = T.tensor([[2.0]], requires_grad=True)
    (x * x).backward()
    return x.grad


def gradient_of_wrong_shape(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * x).backward(T.tensor([1.0, 2.0, 3.0]))


def backward_of_constant(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0])
    (x * 2).sum().backward()


def grad_of_constant(T: Lib) -> Any:
    x = T.tensor(2.0)
    T.autograd.grad(x * 2, x)


@scenarios(vector_backward_needs_gradient, vector_grad_needs_grad_outputs, vector_backward_with_gradient,
           one_element_output_is_implied, gradient_of_wrong_shape, backward_of_constant, grad_of_constant)
def test_outputs(scenario: Callable) -> None:
    same(scenario)


def test_output_errors_name_the_fix() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="grad_outputs"):
        gradcalc.autograd.grad(x * 2, x)
    with pytest.raises(RuntimeError, match="does not require grad"):
        (gradcalc.tensor(1.0) * 2).backward()


# -- Tensor.backward / autograd.backward / autograd.grad arguments ---------------------------------------
def backward_inputs_leaf(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    w = T.tensor(3.0, requires_grad=True)
    (x * w).backward(inputs=[x])
    return x.grad, w.grad


def backward_inputs_nonleaf(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    h = x * x
    y = h * 3
    y.backward(inputs=[h], retain_graph=True)
    first = (h.grad, x.grad, h.retains_grad)
    y.backward()
    return first, h.grad, x.grad


def autograd_backward_several(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    T.autograd.backward([x * x, x * 3], [T.tensor(1.0), T.tensor(2.0)])
    T.autograd.backward(x.exp())
    return x.grad


def grad_several(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    w = T.tensor(3.0, requires_grad=True)
    h = x * w
    y = (h.sin() * x).sum()
    z = (h * h).sum()
    both = T.autograd.grad([y, z], [x, w, h], retain_graph=True)
    return both, T.autograd.grad(y * 2, x), T.autograd.grad(w * w, [w, w])


def positional_arguments_in_pytorch_order(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    u = T.tensor(1.0, requires_grad=True)
    y = x**3
    # grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs, allow_unused)
    first = T.autograd.grad(y, [x, u], None, True, True, True, True)
    T.autograd.backward([y], None, None, False, None, [x])  # (..., grad_variables, inputs)
    y2 = x * 5
    y2.backward(T.tensor(2.0), None, False, [x])  # Tensor.backward(gradient, retain_graph, create_graph, inputs)
    return first, x.grad


def grad_with_named_inputs(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    w = T.tensor([1.0, 3.0], requires_grad=True)
    found = T.autograd.grad((x * w).sum(), {"x": x, "w": w})
    return sorted(found), found["x"], found["w"]


def grad_input_does_not_require_grad(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    c = T.tensor(3.0)
    T.autograd.grad(x * c, [x, c])


@scenarios(backward_inputs_leaf, backward_inputs_nonleaf, autograd_backward_several, grad_several,
           positional_arguments_in_pytorch_order, grad_with_named_inputs, grad_input_does_not_require_grad)
def test_entry_points(scenario: Callable) -> None:
    same(scenario)


# -- allow_unused ----------------------------------------------------------------------------------------
def unused_input(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = T.tensor(1.0, requires_grad=True)
    T.autograd.grad(x * 2, [x, y])


def unused_allowed(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = T.tensor([1.0, 2.0], requires_grad=True)
    return (T.autograd.grad(x * 2, [x, y], allow_unused=True),
            T.autograd.grad(x * 2, [x, y], allow_unused=True, materialize_grads=True))


def unused_nonleaf(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    h = x * 5
    return T.autograd.grad(x * 2, [h, x], allow_unused=True)


@scenarios(unused_input, unused_allowed, unused_nonleaf)
def test_allow_unused(scenario: Callable) -> None:
    same(scenario)


def test_unused_error_names_the_fix() -> None:
    x = gradcalc.tensor(1.0, requires_grad=True)
    y = gradcalc.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused=true"):
        gradcalc.autograd.grad(x * 2, [x, y])


# -- grad modes ------------------------------------------------------------------------------------------
def modes_as_context_managers(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    out = []
    with T.no_grad():
        out += [x * 2, T.is_grad_enabled()]
        with T.enable_grad():
            out += [x * 2, T.is_grad_enabled()]
        out.append(x * 2)
    with T.set_grad_enabled(False):
        out += [x * 2, T.is_grad_enabled()]
        with T.set_grad_enabled(True):
            out.append(x * 2)
    out += [x * 2, T.is_grad_enabled()]
    return out


def modes_as_decorators(T: Lib) -> Any:
    @T.no_grad()
    def f(x: Any) -> Any:
        return x * 2, T.is_grad_enabled()

    @T.no_grad
    def g(x: Any) -> Any:
        return x * 2

    @T.enable_grad()
    def h(x: Any) -> Any:
        return x * 2

    @T.set_grad_enabled(False)
    def k(x: Any) -> Any:
        return x * 2

    x = T.tensor(2.0, requires_grad=True)
    after_decorating = T.is_grad_enabled()  # set_grad_enabled(False) applies inside k only
    with T.no_grad():
        enabled = h(x)
    return f(x), g(x), enabled, k(x), after_decorating, T.is_grad_enabled(), f.__name__


def set_grad_enabled_as_a_call(T: Lib) -> Any:
    x = T.tensor(2.0, requires_grad=True)
    T.set_grad_enabled(False)
    try:
        off = (x * 2, T.is_grad_enabled())
    finally:
        T.set_grad_enabled(True)
    return off, x * 2, T.is_grad_enabled()


def modes_restore_after_exception(T: Lib) -> Any:
    for mode in (T.no_grad(), T.enable_grad(), T.inference_mode(), T.set_grad_enabled(False)):
        try:
            with mode:
                raise KeyError
        except KeyError:
            pass
    return T.is_grad_enabled(), T.is_inference_mode_enabled()


def same_instance_nested(T: Lib) -> Any:
    ng = T.no_grad()
    x = T.tensor(2.0, requires_grad=True)
    with T.no_grad():
        with T.enable_grad():
            with ng:
                with T.enable_grad():
                    inner = x * 2
            after = x * 2
    return inner, after, T.is_grad_enabled()


def inference_mode_tensors(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.inference_mode():
        y = x * 2
        flags = (T.is_grad_enabled(), T.is_inference_mode_enabled(), y.is_inference(), x.is_inference())
        with T.enable_grad():
            z = x * 2  # grad mode on, but inference mode records nothing
            on = T.is_grad_enabled()
        with T.inference_mode(False):
            w = x * 2  # a normal, recorded tensor
            off = (T.is_grad_enabled(), T.is_inference_mode_enabled(), w.is_inference())
    return y, flags, z, z.is_inference(), on, w, off, T.is_inference_mode_enabled()


def inference_mode_decorators(T: Lib) -> Any:
    @T.inference_mode()
    def f(x: Any) -> Any:
        return x * 2

    @T.inference_mode
    def g(x: Any) -> Any:
        return x * 3

    x = T.tensor(1.0, requires_grad=True)
    return f(x), f(x).is_inference(), g(x), g(x).is_inference(), T.is_inference_mode_enabled()


@scenarios(modes_as_context_managers, modes_as_decorators, set_grad_enabled_as_a_call,
           modes_restore_after_exception, same_instance_nested, inference_mode_tensors, inference_mode_decorators)
def test_grad_modes(scenario: Callable) -> None:
    same(scenario)


@pytest.mark.parametrize("lib", [torch, gradcalc], ids=["torch", "gradcalc"])
def test_grad_modes_are_per_thread(lib: Lib) -> None:
    seen: dict[str, Any] = {}

    def other() -> None:
        x = lib.tensor(1.0, requires_grad=True)
        seen["other"] = (lib.is_grad_enabled(), (x * 2).requires_grad, lib.is_inference_mode_enabled())

    for mode in (lib.no_grad(), lib.inference_mode()):
        with mode:
            t = threading.Thread(target=other)
            t.start()
            t.join()
            assert seen.pop("other") == (True, True, False)
            assert not lib.is_grad_enabled()


# -- detach ----------------------------------------------------------------------------------------------
def detach_shares_data_and_version(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    d.add_(1)
    e = x.detach()
    with T.no_grad():
        x.mul_(10)
    return y, d, version(y), version(d), e, version(e), version(x)


def detached_change_caught_at_backward(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its output
    y.detach().zero_()
    y.sum().backward()


def detach_in_place(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    r = y.detach_()
    return r is y, y, (y * 3)


@scenarios(detach_shares_data_and_version, detached_change_caught_at_backward, detach_in_place)
def test_detach(scenario: Callable) -> None:
    same(scenario)


# -- requires_grad_ ----------------------------------------------------------------------------------------
def requires_grad_on_leaves(T: Lib) -> Any:
    a = T.tensor([1.0, 2.0])
    r = a.requires_grad_()
    b = T.tensor([1.0, 2.0], requires_grad=True).requires_grad_(False)
    c = T.tensor(1.0)
    c.requires_grad = True
    return r is a, a, b, c


def freezing(T: Lib) -> Any:
    w = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([3.0, 4.0], requires_grad=True)
    w.requires_grad_(False)
    y = (w * b).sum()
    y.backward()
    return w.grad, b.grad, y


def requires_grad_false_on_nonleaf(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    (x * 2).requires_grad_(False)


def requires_grad_true_on_nonleaf(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = x * 2
    return y.requires_grad_(True) is y, y


def requires_grad_attribute_on_nonleaf(T: Lib) -> Any:
    x = T.tensor(1.0, requires_grad=True)
    y = x * 2
    y.requires_grad = True


def requires_grad_on_integers(T: Lib) -> Any:
    T.tensor([1, 2]).requires_grad_()


@scenarios(requires_grad_on_leaves, freezing, requires_grad_false_on_nonleaf, requires_grad_true_on_nonleaf,
           requires_grad_attribute_on_nonleaf, requires_grad_on_integers)
def test_requires_grad_(scenario: Callable) -> None:
    same(scenario)


def test_requires_grad_error_names_detach() -> None:
    y = gradcalc.tensor(1.0, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"\.detach\(\)"):
        y.requires_grad_(False)


# -- in place --------------------------------------------------------------------------------------------
INPLACE_WITH_NUMBER = [("add_", (2.0,)), ("sub_", (2.0,)), ("mul_", (3.0,)), ("div_", (4.0,)), ("pow_", (2.0,)),
                       ("fill_", (7.0,)), ("zero_", ()), ("add_", (2.0,), {"alpha": 3}), ("sub_", (1.0,), {"alpha": 2})]
INPLACE_WITH_TENSOR = ["add_", "sub_", "mul_", "div_", "pow_", "copy_", "fill_"]


@pytest.mark.parametrize("case", INPLACE_WITH_NUMBER, ids=lambda c: c[0] + str(c[1:]))
def test_inplace_method_with_number(case: tuple) -> None:
    name, args, kwargs = (*case, {})[:3]

    def scenario(T: Lib) -> Any:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1.5
        r = getattr(y, name)(*args, **kwargs)
        (y * y).sum().backward()
        return r is y, y, version(y), x.grad

    same(scenario)


@pytest.mark.parametrize("name", INPLACE_WITH_TENSOR)
def test_inplace_method_with_tensor(name: str) -> None:
    def scenario(T: Lib) -> Any:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = T.tensor([0.5, 1.5, 2.0], requires_grad=True)
        y = x * 1.5
        other = (w * w).sum() if name == "fill_" else w * w
        getattr(y, name)(other)
        (y * y).sum().backward()
        return y, x.grad, w.grad

    same(scenario)


def test_clamp_in_place() -> None:
    if not hasattr(gradcalc.Tensor, "clamp"):
        pytest.xfail("clamp (elementwise.py) is not written yet")

    def scenario(T: Lib) -> Any:
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y, z = x * 1.5, x * 1.5
        y.clamp_(1.6, 3.0)
        z.clamp_(min=2.0)
        (y * y + z * z).sum().backward()
        return y, z, x.grad

    same(scenario)


def augmented_assignment(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    ids = {id(y)}
    out = []
    for step in range(5):
        if step == 0:
            y += 1
        elif step == 1:
            y -= x
        elif step == 2:
            y *= x
        elif step == 3:
            y /= 2
        else:
            y **= 2
        ids.add(id(y))
        out.append(node_name(y.grad_fn))
    y.sum().backward()
    return y, out, len(ids), version(y), x.grad


def setitem_basic(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = T.tensor(5.0, requires_grad=True)
    y = x * 2
    y[0] = w * w
    y[1:] = 0.5
    (y * y).sum().backward()
    return y, version(y), x.grad, w.grad


def setitem_advanced(T: Lib) -> Any:
    x = T.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    v = T.tensor([10.0, 20.0], requires_grad=True)
    y = x * 2
    y[y < 0] = 0
    z = x * 3
    z[[0, 2]] = v * v
    (y * z).sum().backward()
    return y, z, x.grad, v.grad


def setitem_broadcast_rows(T: Lib) -> Any:
    w = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = T.zeros(3, 3)
    m[1] = w
    m[:, 0] = w * 10
    m[:] = m * 2  # the whole tensor: a plain copy_
    (m * m).sum().backward()
    return m, w.grad


def setitem_into_constant(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    c = T.zeros(3)
    c[1:] = x * x
    c.sum().backward()
    return c, x.grad, version(c)


def setitem_second_order(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y[1] = (x * x * x).sum()
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    return g, T.autograd.grad(g.sum(), x)


def nonleaf_chain_rewritten(T: Lib) -> Any:
    x = T.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(x)
    y.div_(y.detach().sum())
    y.sub_(x, alpha=0.5)
    y.exp_()
    z = y * y
    z.sum().backward()
    return y, z, x.grad


def constant_changed_by_recorded_value(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0])
    w = T.tensor([3.0, 4.0], requires_grad=True)
    x.mul_(w)
    x.sum().backward()
    return x, w.grad


def retained_then_changed(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)  # .grad is the gradient of y's latest value
    (y * y).sum().backward()
    return y.grad, x.grad, y.retains_grad


def version_counts(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0, 3.0])
    seen = [version(x)]
    x.add_(1)
    seen.append(version(x))
    x[0] = 3
    seen.append(version(x))
    x += 1
    seen.append(version(x))
    x.zero_()
    seen.append(version(x))
    y = x * 2  # a new tensor: its own counter
    seen.append(version(y))
    return seen


@scenarios(augmented_assignment, setitem_basic, setitem_advanced, setitem_broadcast_rows, setitem_into_constant,
           setitem_second_order, nonleaf_chain_rewritten, constant_changed_by_recorded_value,
           retained_then_changed, version_counts)
def test_inplace(scenario: Callable) -> None:
    same(scenario)


# -- in place through views ----------------------------------------------------------------------------------
def view_written_through(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.T
    v.mul_(2)
    (y * y).sum().backward()
    return y, v, x.grad, version(y)


def view_of_view_written_through(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 1
    v = y.T
    w = v[1]
    w.mul_(10)
    (y * y).sum().backward()
    return y, v, w, x.grad


def base_changed_view_read(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.T  # made before the change, read after it
    y.mul_(2)
    (v * v).sum().backward()
    return v, x.grad


def sibling_views(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    a, b = y[:2], y[1:]
    a.mul_(3)
    (b * b).sum().backward()
    return a, b, x.grad


def view_takes_recorded_value(T: Lib) -> Any:
    c = T.zeros(2, 3)
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    c[0].add_(x)
    c[1].copy_(x * x)
    (c.T * c.T).sum().backward()
    return c, x.grad


def view_second_order(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * x
    y.T[0].mul_(x[1])
    (g,) = T.autograd.grad((y**2).sum(), x, create_graph=True)
    return g, T.autograd.grad(g.sum(), x)


def detached_view_changes_no_graph(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 2
    y.detach().T[0].add_(1)  # a view of the detached alias: y's graph stays, its version goes up
    (y * 3).sum().backward()
    return y, x.grad, version(y)


def view_of_leaf_in_place(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x.T.add_(1)


def view_of_leaf_under_no_grad(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with T.no_grad():
        x[0].mul_(2)
        x.T[1] += 1
    (x * x).sum().backward()
    return x, x.grad, x.is_leaf


def saved_view_changed(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.exp()
    y.T[0].mul_(2)  # ExpBackward0 saved y: changed through a view
    y.sum().backward()


def view_made_under_no_grad(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    with T.no_grad():
        v = y.T
    v.mul_(2)


def view_made_and_changed_under_no_grad(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    with T.no_grad():
        v = y.T
        v.mul_(2)
    (y * y).sum().backward()
    return y, x.grad


def view_bases(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * 1
    v = y.T
    return v._base is y, y._base, v[0]._base is y, y.detach()._base


def retained_base_changed_through_view(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y[0].mul_(3)
    (y * y).sum().backward()
    return y.grad, x.grad


def view_detached_in_place(T: Lib) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (x * 2).T.detach_()


@scenarios(view_written_through, view_of_view_written_through, base_changed_view_read, sibling_views,
           view_takes_recorded_value, view_second_order, view_of_leaf_in_place, view_bases,
           retained_base_changed_through_view, view_detached_in_place, view_made_under_no_grad,
           view_made_and_changed_under_no_grad)
def test_inplace_through_views(scenario: Callable) -> None:
    same(scenario)


@scenarios(detached_view_changes_no_graph, view_of_leaf_under_no_grad, saved_view_changed)
def test_inplace_views_without_rewriting(scenario: Callable) -> None:
    same(scenario)


def leaf_add_(T: Lib) -> Any:
    T.tensor([1.0, 2.0], requires_grad=True).add_(1)


def leaf_iadd(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    x += 1


def leaf_setitem(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    x[0] = 1.0


def leaf_zero_(T: Lib) -> Any:
    T.tensor([1.0, 2.0], requires_grad=True).zero_()


def leaf_under_no_grad(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    with T.no_grad():
        x -= 0.5 * x.grad
        x.mul_(2)
        x[0] = 9
    x.grad.zero_()
    (x * x).sum().backward()
    return x, version(x), x.grad


def saved_input_changed(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.add_(1)
    z.sum().backward()


def saved_output_changed(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def saved_output_of_inplace_changed(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.exp_()  # ExpBackward0 saves its output: y itself, at version 1
    y.add_(1)
    y.sum().backward()


def self_product_in_place(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.mul_(y)
    y.sum().backward()


def change_after_backward_is_fine(T: Lib) -> Any:
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    z.sum().backward(retain_graph=True)
    y.add_(1)
    return x.grad, y


@scenarios(leaf_add_, leaf_iadd, leaf_setitem, leaf_zero_, leaf_under_no_grad, saved_input_changed,
           saved_output_changed, saved_output_of_inplace_changed, self_product_in_place,
           change_after_backward_is_fine)
def test_inplace_checks(scenario: Callable) -> None:
    same(scenario)


def test_leaf_inplace_error_names_no_grad() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    for change in (lambda: x.add_(1), lambda: x.__iadd__(1), lambda: x.__setitem__(0, 1.0), x.zero_):
        with pytest.raises(RuntimeError, match="with no_grad:"):
            change()
    assert x.version == 0 and x.tolist() == [1.0, 2.0]  # refused before anything changed


def test_saved_tensor_error_names_shape_node_and_versions() -> None:
    x = gradcalc.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = x * 1
    z = y.sin()
    y.mul_(2)
    y.add_(1)
    with pytest.raises(RuntimeError) as caught:
        z.sum().backward()
    message = str(caught.value)
    for fragment in ("[1, 3]", "SinBackward0", "version 2", "version 0", ".clone()"):
        assert fragment in message


# -- inference tensors -------------------------------------------------------------------------------------
def inference_tensor_saved(T: Lib) -> Any:
    with T.inference_mode():
        c = T.tensor([1.0, 2.0])
    w = T.tensor([1.0, 2.0], requires_grad=True)
    return w * c


def inference_tensor_in_place(T: Lib) -> Any:
    with T.inference_mode():
        c = T.tensor([1.0, 2.0])
    c.add_(1)


def inference_tensor_in_place_under_no_grad(T: Lib) -> Any:
    with T.inference_mode():
        c = T.tensor([1.0, 2.0])
    with T.no_grad():
        c.add_(1)


def inference_tensor_fine_uses(T: Lib) -> Any:
    with T.inference_mode():
        c = T.tensor([1.0, 2.0])
        c.add_(1)  # inside inference mode: allowed
    w = T.tensor([1.0, 2.0], requires_grad=True)
    d = c.clone()
    d.mul_(2)
    return c, (w + c), c * 2, (c * 2).is_inference(), d.is_inference(), (w * d).sum()


def inference_tensor_requires_grad(T: Lib) -> Any:
    with T.inference_mode():
        c = T.tensor([1.0, 2.0])
    c.requires_grad_()


@scenarios(inference_tensor_saved, inference_tensor_in_place, inference_tensor_in_place_under_no_grad,
           inference_tensor_fine_uses, inference_tensor_requires_grad)
def test_inference_tensors(scenario: Callable) -> None:
    same(scenario)


def test_inference_errors_name_the_fix() -> None:
    with gradcalc.inference_mode():
        c = gradcalc.tensor([1.0, 2.0])
    w = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"inference_mode.*\.clone\(\)"):
        w * c
    with pytest.raises(RuntimeError, match=r"inference.*\.clone\(\)"):
        c.add_(1)


# -- anomaly mode ----------------------------------------------------------------------------------------
def anomaly_nan(T: Lib) -> Any:
    x = T.tensor([0.0, 1.0], requires_grad=True)
    with T.autograd.detect_anomaly():
        (x.sqrt() * 0).sum().backward()


def anomaly_clean(T: Lib) -> Any:
    x = T.tensor([4.0, 1.0], requires_grad=True)
    with T.autograd.detect_anomaly():
        (x.sqrt() * 2).sum().backward()
        on = T.is_anomaly_enabled()
    return x.grad, on, T.is_anomaly_enabled()


def nan_without_anomaly(T: Lib) -> Any:
    x = T.tensor([0.0, 1.0], requires_grad=True)
    (x.sqrt() * 0).sum().backward()
    return x.grad


@scenarios(anomaly_nan, anomaly_clean, nan_without_anomaly)
def test_anomaly(scenario: Callable) -> None:
    same(scenario)


def test_anomaly_error_names_the_forward_operation() -> None:
    x = gradcalc.tensor([0.0, 1.0], requires_grad=True)
    with pytest.warns(UserWarning, match="anomaly"):
        mode = gradcalc.autograd.detect_anomaly()
    with mode:
        y = x.sqrt()  # the operation whose backward makes the NaN
        z = (y * 0).sum()
        with pytest.raises(RuntimeError) as caught:
            z.backward()
    message = str(caught.value)
    assert "SqrtBackward0" in message
    assert "y = x.sqrt()" in message and Path(__file__).name in message


# -- the walk: iterative, a million operations deep --------------------------------------------------------
def test_million_operation_chain() -> None:
    """Differentiate, and drop, a chain of 10^6 operations, inside a thread with a small C stack: recursion
    anywhere (in the walk, or in freeing the nodes) would overflow it. In a child process, so that a crash
    fails this test instead of the whole run."""
    script = textwrap.dedent("""
        import gc, threading
        import gradcalc

        gc.disable()  # the cyclic collector has nothing to find here (the engine makes no cycles): save time

        def chain(n):
            x = gradcalc.tensor(0.5, requires_grad=True)
            y = x
            for _ in range(n // 2):
                y = y * 1.0 + 1e-6  # MulBackward0 and AddBackward0 nodes alternately
            return x, y

        def run():
            x, y = chain(1_000_000)
            y.backward(retain_graph=True)
            assert abs(x.grad.item() - 1.0) < 1e-12, x.grad.item()
            del y  # a retained chain of 10^6 nodes, freed by reference counting
            x, y = chain(100_000)
            (g,) = gradcalc.autograd.grad(y, x)  # grad() prunes the graph first: also without recursion
            assert abs(g.item() - 1.0) < 1e-12
            y = x.exp()
            for _ in range(100_000):
                y = y.sin()  # each node saves its input tensor: node -> tensor -> node ...
            y.backward()
            del y
            print("ok")

        threading.stack_size(256 * 1024)
        t = threading.Thread(target=run)
        t.start()
        t.join()
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_bare_array_operand_broadcasts_the_tensor() -> None:
    """A NumPy array operand is a constant like a number, but unlike a number it can broadcast the tensor:
    the gradient is then summed back to the tensor's shape."""
    for op in ("mul", "add", "sub", "div"):
        a = gradcalc.tensor([1.0, 2.0, 4.0], requires_grad=True)
        other = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        getattr(a, f"__{'truediv' if op == 'div' else op}__")(other).sum().backward()
        expected = {"mul": other.sum(0), "add": np.full(3, 2.0), "sub": np.full(3, 2.0),
                    "div": (1.0 / other).sum(0)}[op]
        np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-15)


# -- the edges of a node: PyTorch's Tensor and Scalar overloads ---------------------------------------------
def number_operand_edges(T: Lib) -> Any:
    """A number operand keeps an empty edge where PyTorch's Tensor overload takes it (`x * 2.0`), and has
    none where its Scalar overload does (`x ** 2`, `2 - x`, `2 ** x`, `x % 2.0`, `x // 2.0`)."""
    x = T.tensor(3.0, requires_grad=True)
    c = T.tensor(2.0)
    made = [x * 2.0, 2.0 * x, x + 1.0, x - 1.0, 1.0 - x, x / 2.0, 2.0 / x, x**2, x**2.5, 2**x, x % 2.0,
            x // 2.0, x * c, c * x, x / c, c / x, -x, T.add(x, 1.0, alpha=3)]
    return [y.grad_fn.next_functions for y in made]


def add_sub_alpha(T: Lib) -> Any:
    """`add`/`sub` with alpha record one node, as PyTorch's, and differentiate to the second order."""
    x = T.tensor([1.0, 2.0], requires_grad=True)
    w = T.tensor([3.0, -1.0], requires_grad=True)
    out = []
    for y in (x.add(w * w, alpha=2.5), T.sub(x, w * w, alpha=-3), x.add(w, alpha=2), x.sub(2.0, alpha=4)):
        gx, gw = T.autograd.grad(y.sum(), (x, w), create_graph=True, allow_unused=True)
        second = T.autograd.grad(gw.sum(), w) if gw is not None and gw.requires_grad else None
        out += [y, y.grad_fn.next_functions, gx, gw, second]
    return out


@scenarios(number_operand_edges, add_sub_alpha)
def test_node_edges_as_pytorch(scenario: Callable) -> None:
    same(scenario)


def where_edges_and_saved_condition(T: Lib) -> Any:
    x = T.tensor([1.0, -2.0], requires_grad=True)
    w = T.tensor([3.0, 4.0], requires_grad=True)
    edges = [T.where(x > 0, x, 0.0).grad_fn.next_functions, T.where(x > 0, x, w).grad_fn.next_functions,
             T.where(x > 0, 1.0, w).grad_fn.next_functions]
    y = T.where(x > 0, x * x, w).sum()
    y.backward(retain_graph=True)
    y.backward()
    return edges, x.grad, w.grad


def where_second_backward(T: Lib) -> Any:
    x = T.tensor([1.0, -2.0], requires_grad=True)
    y = T.where(x > 0, x, 0.0).sum()
    y.backward()
    y.backward()  # the condition was freed: PyTorch's retain_graph error


def where_condition_changed_in_place(T: Lib) -> Any:
    x = T.tensor([1.0, -2.0], requires_grad=True)
    mask = x.detach() > 0
    y = T.where(mask, x, 0.0).sum()
    mask[1] = True
    y.backward()


@scenarios(where_edges_and_saved_condition, where_second_backward, where_condition_changed_in_place)
def test_where_as_pytorch(scenario: Callable) -> None:
    same(scenario)


def create_graph_gradient_nodes(T: Lib) -> Any:
    """Under create_graph a gradient is made of the nodes PyTorch makes (TanhBackwardBackward0,
    SoftmaxBackwardDataBackward0, `grad * factor` products, ...), and differentiates to the third order."""
    x = T.tensor([0.5, -1.25, 2.0], requires_grad=True)
    w = T.tensor([1.5, -0.5, 0.25])
    functions = [T.tanh, T.sigmoid, T.exp, T.sin, T.cos, T.abs, lambda t: t**3, lambda t: t**0.5 * 0 + t**2.5,
                 lambda t: T.softmax(t, 0), lambda t: T.log_softmax(t, 0), lambda t: T.softmax(t * t, 0),
                 lambda t: T.sqrt(t * t), lambda t: T.log(t * t), lambda t: t.norm() * t, lambda t: t.norm(p=3) * t,
                 T.atan, T.expm1, T.erf, lambda t: T.reciprocal(t), lambda t: 2.0 / t,
                 lambda t: T.maximum(t, w) * t, lambda t: T.minimum(t * t, w), lambda t: T.acos(t / 3.0),
                 lambda t: t.var() * t, lambda t: (t * t).std(0) * t, lambda t: t.min() * t, lambda t: t.max() * t]
    out = []
    for f in functions:
        (g,) = T.autograd.grad((f(x) * w).sum(), x, create_graph=True)
        (h,) = T.autograd.grad((g * g * w).sum(), x, create_graph=True)
        third = T.autograd.grad((h * w).sum(), x)[0] if h.requires_grad else None  # abs: h is constant
        out += [g, g.grad_fn.next_functions, h, third]
    return out


@scenarios(create_graph_gradient_nodes)
def test_create_graph_nodes_as_pytorch(scenario: Callable) -> None:
    assert outcome(scenario, torch)[0] == "ok"  # compare results, not merely the same error
    same(scenario)


def create_graph_gradient_nodes_2d(T: Lib) -> Any:
    """The same for reductions, linear algebra, shapes and indexing on a 2-d tensor."""
    x = T.tensor([[0.5, -1.25, 2.0], [1.5, 0.3, -0.7]], requires_grad=True)
    w = T.tensor([[1.5, -0.5, 0.25], [0.1, 0.2, 0.3]])
    v = T.tensor([[0.3, 0.2], [0.1, -0.4], [0.5, 0.6]], requires_grad=True)
    softplus = T.nn.functional.softplus if T is torch else T.softplus
    functions = [
        lambda: T.log1p(x * x), lambda: T.relu(x) * x, lambda: softplus(x) * x, lambda: T.clamp(x, -1, 1) * x,
        lambda: x / (x * x + 1), lambda: (x * x + 1) ** x, lambda: x.prod(1), lambda: x.prod(),
        lambda: x.max(1)[0] * 2, lambda: x.amax(1) * 2, lambda: x.logsumexp(1), lambda: (x * x).mean(1),
        lambda: x @ v, lambda: (x @ v) @ (x @ v), lambda: x.T @ x, lambda: x.reshape(3, 2) * v,
        lambda: x[0] * x[1], lambda: x[:, 1:] * x[:, :2], lambda: T.cat([x, x * x]), lambda: T.stack([x, x * x]),
        lambda: (x * x).sum(0), lambda: T.where(x > 0, x * x, x), lambda: (x.unsqueeze(0) * x).squeeze(0),
        lambda: x[0:1].expand(2, 3) * x, lambda: x * w - x * x,
    ]
    out = []
    for f in functions:
        y = f()
        (g,) = T.autograd.grad((y * T.ones_like(y) * 1.3).sum(), x, create_graph=True)
        out += [g, g.grad_fn.next_functions if g.grad_fn is not None else None]  # a constant gradient: none
    return out


@scenarios(create_graph_gradient_nodes_2d)
def test_create_graph_nodes_2d_as_pytorch(scenario: Callable) -> None:
    assert outcome(scenario, torch)[0] == "ok"
    same(scenario)
