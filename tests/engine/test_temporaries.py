"""Reuse of arrays nobody else holds (gradcalc/autograd/temporaries.py): the results are NumPy's, a named
tensor, a held array or a held factor is never overwritten, and where reuse is on, every helper takes a
sole holder's array and leaves one with one more holder alone, so that a threshold off by one fails here.
Without PyTorch: these run on every Python the project supports, whether or not reuse is on there.
"""

from __future__ import annotations

import operator
import sys
import weakref
from collections.abc import Callable

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import temporaries

ON = pytest.mark.skipif(not temporaries.REUSE_TEMPORARIES, reason="reuse is off on this Python")


# -- calibration -----------------------------------------------------------------------------------------
def test_reuse_is_on_where_it_was_measured() -> None:
    """On CPython 3.11 to 3.13 (with the GIL) the calibration turns reuse on: the big-elementwise memory
    target of bench/engine.py depends on it. Elsewhere it stays off."""
    measured = (
        sys.implementation.name == "cpython"
        and (3, 11) <= sys.version_info[:2] <= (3, 13)
        and getattr(sys, "_is_gil_enabled", lambda: True)()
    )
    assert temporaries.REUSE_TEMPORARIES == measured


@ON
def test_calibrated_counts_are_those_seen_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The thresholds are the counts the helpers see for a sole holder, and one more holder shows in each."""
    monkeypatch.setattr(temporaries, "REUSE_TEMPORARIES", False)  # so that every helper counts both operands
    sole, held = temporaries._counts(False), temporaries._counts(True)
    t = temporaries
    assert sole == [t._OPERAND, t._OWN_DATA, t._ARGUMENT, t._OWN_DATA, t._VARIABLE, t._WALK, t._WALK]
    assert held == [n + 1 for n in sole]


# -- forward: the operators and the unary functions ------------------------------------------------------
BIG = 4096  # above REUSE_MIN_SIZE: small arrays are never reused


def marked(t: gradcalc.Tensor, arrays: list) -> gradcalc.Tensor:
    """`t` itself, after noting a weak reference to its array: the caller's expression still holds `t` as a
    temporary, and can tell afterwards whether the result took that array."""
    arrays.append(weakref.ref(t._data))
    return t


def kept(t: gradcalc.Tensor, arrays: list) -> gradcalc.Tensor:
    """`t` itself, its array now also held by `arrays` (as `t.numpy()` shares it)."""
    arrays.append(t.numpy())
    return t


# each takes a function making its operand, so that the operand is a temporary of the expression
FORWARD: dict[str, Callable[[Callable[[], gradcalc.Tensor]], gradcalc.Tensor]] = {
    "add": lambda make: make() + 1.0,
    "sub": lambda make: make() - 1.0,
    "exp": lambda make: gradcalc.exp(make()),
    "method": lambda make: make().exp(),
}
EXPECTED = {"add": lambda a: a + 1.0, "sub": lambda a: a - 1.0, "exp": np.exp, "method": np.exp}


@ON
@pytest.mark.parametrize("op", FORWARD)
def test_a_dying_temporary_gives_its_array(op: str) -> None:
    x = gradcalc.tensor(np.linspace(0.0, 1.0, BIG))
    arrays: list = []
    y = FORWARD[op](lambda: marked(x * 2.0, arrays))
    assert y._data is arrays[0]()  # written into the temporary's array
    np.testing.assert_array_equal(y.numpy(), EXPECTED[op](np.linspace(0.0, 1.0, BIG) * 2.0))


@pytest.mark.parametrize("op", FORWARD)
def test_a_named_tensor_or_a_held_array_keeps_its_values(op: str) -> None:
    """One more holder of the tensor (a name) or of its array (`kept`) and the result is a new array."""
    base = np.linspace(0.0, 1.0, BIG)
    x = gradcalc.tensor(base)
    t = x * 2.0
    y = FORWARD[op](lambda: t)
    np.testing.assert_array_equal(t.numpy(), base * 2.0)
    np.testing.assert_array_equal(y.numpy(), EXPECTED[op](base * 2.0))
    arrays: list = []
    y = FORWARD[op](lambda: kept(x * 2.0, arrays))
    np.testing.assert_array_equal(arrays[0], base * 2.0)
    np.testing.assert_array_equal(y.numpy(), EXPECTED[op](base * 2.0))


@ON
@pytest.mark.parametrize("grad", [False, True])
def test_nn_functional_relu_hands_a_dying_temporary_on(grad: bool) -> None:
    """`F.relu(t)` passes its input on to relu as the caller's expression would: a temporary's array takes
    the result (with or without a graph: relu saves its result, not its input)."""
    x = gradcalc.tensor(np.linspace(-1.0, 1.0, BIG), requires_grad=grad)
    arrays: list = []
    y = gradcalc.nn.functional.relu(marked(x * 2.0, arrays))
    assert y._data is arrays[0]()
    np.testing.assert_array_equal(y.detach().numpy(), np.maximum(np.linspace(-1.0, 1.0, BIG) * 2.0, 0.0))
    if grad:
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.where(np.linspace(-1.0, 1.0, BIG) > 0, 2.0, 0.0))


@pytest.mark.parametrize("grad", [False, True])
def test_nn_functional_relu_leaves_a_named_or_held_input_alone(grad: bool) -> None:
    base = np.linspace(-1.0, 1.0, BIG)
    x = gradcalc.tensor(base, requires_grad=grad)
    t = x * 2.0
    y = gradcalc.nn.functional.relu(t)
    np.testing.assert_array_equal(t.detach().numpy(), base * 2.0)
    np.testing.assert_array_equal(y.detach().numpy(), np.maximum(base * 2.0, 0.0))
    arrays: list = []
    y = gradcalc.nn.functional.relu(kept(x.detach() * 2.0, arrays))
    np.testing.assert_array_equal(arrays[0], base * 2.0)
    np.testing.assert_array_equal(y.numpy(), np.maximum(base * 2.0, 0.0))


def test_an_operator_called_directly_leaves_a_named_tensor_alone() -> None:
    """`t.__add__(1.0)` and `Tensor.__add__(t, 1.0)` give the method the count of a temporary on the
    stack: only the interpreter's `+` is taken as a temporary's last use. Through a C caller (`operator.add`,
    `sum`) likewise."""
    base = np.linspace(0.0, 1.0, BIG)
    t = gradcalc.tensor(base) * 2.0
    calls = {
        "t.__add__": lambda: t.__add__(1.0), "Tensor.__add__": lambda: gradcalc.Tensor.__add__(t, 1.0),
        "t.__sub__": lambda: t.__sub__(1.0), "Tensor.__sub__": lambda: gradcalc.Tensor.__sub__(t, 1.0),
        "operator.add": lambda: operator.add(t, 1.0), "sum": lambda: sum([t, t]),
    }
    for name, call in calls.items():
        y = call()
        np.testing.assert_array_equal(t.numpy(), base * 2.0, err_msg=name)
        assert y._data is not t._data, name


# -- the walk's buffers: sums in place only into arrays nobody else holds --------------------------------
@pytest.mark.skipif(not gradcalc.autograd.temporaries.REUSE_TEMPORARIES, reason="reuse is off on this Python")
@pytest.mark.parametrize("extra", [None, "old", "new"])
def test_buffer_sum_in_place_only_for_a_sole_holder(extra: str | None) -> None:
    """`plan.sum_grads` called as the walk calls it (the buffer and the node's returned tuple hold the arrays):
    with no other holder the sum goes into one of them (a leaf reached by many paths costs one array); with
    one more holder, of either array, the sum is a new array and the held one is unchanged."""
    from gradcalc.autograd import plan

    buffers = {"node": np.ones(3)}
    outs = (np.full(3, 2.0),)
    held = {"old": buffers["node"], "new": outs[0]}.get(extra) if extra else None  # noqa: F841 (a holder)
    old = buffers.get("node")
    g = outs[0]
    total = plan.sum_grads(old, g, True, True)
    np.testing.assert_array_equal(total, np.full(3, 3.0))
    if extra is None:
        assert total is old or total is g
    else:
        assert total is not held  # the held array is left as it was
        np.testing.assert_array_equal(held, np.ones(3) if extra == "old" else np.full(3, 2.0))


# -- forward: a dying temporary's array may take the result ---------------------------------------------
def test_held_temporaries_are_never_overwritten() -> None:
    """Operators may write into a temporary only when nothing else can see it: a named tensor, a detached
    alias or a view keeps its values; results and gradients are those of plain NumPy."""
    base = np.linspace(-1.0, 1.0, BIG)
    x = gradcalc.tensor(base, requires_grad=True)
    t = x * 2.0
    alias = (x * 3.0).detach()
    view_base = x * 4.0
    view = view_base[:10]
    y = (t + 1.0) + (t - 1.0) + gradcalc.sin(t) + gradcalc.exp(view_base) * 0.0 + alias * 0.0
    np.testing.assert_array_equal(t.detach().numpy(), base * 2.0)
    np.testing.assert_array_equal(alias.numpy(), base * 3.0)
    np.testing.assert_array_equal(view.detach().numpy(), base[:10] * 4.0)
    np.testing.assert_allclose(y.detach().numpy(), 4.0 * base + np.sin(2.0 * base), rtol=1e-15)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4.0 + 2.0 * np.cos(2.0 * base), rtol=1e-15)


@pytest.mark.skipif(not gradcalc.autograd.temporaries.REUSE_TEMPORARIES, reason="reuse is off on this Python")
def test_dying_temporaries_are_reused() -> None:
    """`exp(x * 2.0 + 1.0) - 0.5` over a large tensor makes one new array, not three: the temporaries'
    arrays take the results (the `+`, `exp` and `-` need neither input for backward)."""
    import tracemalloc

    x = gradcalc.tensor(np.linspace(0.0, 1.0, 1 << 18))
    nbytes = x.numpy().nbytes
    tracemalloc.start()
    y = gradcalc.exp(x * 2.0 + 1.0) - 0.5
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1.5 * nbytes
    np.testing.assert_allclose(y.numpy(), np.exp(x.numpy() * 2.0 + 1.0) - 0.5, rtol=1e-15)


# -- backward formulas: `factor * grad` written into a factor nobody else holds ----------------------------
def test_factor_products_in_place_keep_every_value() -> None:
    """Large tensors through exp, sin, tanh and `*`, differentiated through a sum (the gradient is the
    constant 1), a mean and an uneven gradient, twice with retain_graph: the gradients are NumPy's
    formulas, the named intermediates and the saved values keep their values."""
    base = np.linspace(-1.0, 1.0, BIG)
    for reduce in ("sum", "mean", "weighted"):
        x = gradcalc.tensor(base, requires_grad=True)
        e = gradcalc.exp(x)  # named: its array must not take a product
        y = gradcalc.sin(x) * x + e * 1.0 + gradcalc.tanh(x * 2.0) * gradcalc.exp(-x)
        weights = np.linspace(0.5, 2.0, BIG)
        out = {"sum": y.sum(), "mean": y.mean(), "weighted": (y * gradcalc.tensor(weights)).sum()}[reduce]
        scale = {"sum": 1.0, "mean": 1.0 / BIG, "weighted": weights}[reduce]
        t = np.tanh(2.0 * base)
        expected = scale * (np.sin(base) + base * np.cos(base) + np.exp(base)
                            + 2.0 * (1.0 - t * t) * np.exp(-base) - t * np.exp(-base))
        out.backward(retain_graph=True)
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-13, atol=1e-15)
        first = x.grad.numpy().copy()
        x.grad = None
        out.backward()  # the saved values survived the first backward unchanged
        np.testing.assert_array_equal(x.grad.numpy(), first)
        np.testing.assert_array_equal(e.detach().numpy(), np.exp(base))


@pytest.mark.skipif(not gradcalc.autograd.temporaries.REUSE_TEMPORARIES, reason="reuse is off on this Python")
def test_times_writes_only_into_a_factor_nobody_else_holds() -> None:
    from gradcalc.autograd.temporaries import times

    g = np.full(BIG, 3.0)
    f = np.full(BIG, 2.0)
    # (each call outside `assert`: pytest's rewriting of an assert would count the references differently)
    product = times(f, g)
    assert product is f  # only `f` holds it: the product goes into it
    np.testing.assert_array_equal(f, np.full(BIG, 6.0))
    f = np.full(BIG, 2.0)
    other = f  # a second holder
    product = times(f, g)
    assert product is not f and other is f
    np.testing.assert_array_equal(f, np.full(BIG, 2.0))
    np.testing.assert_array_equal(product, np.full(BIG, 6.0))
    del other
    ones = np.broadcast_to(np.float64(1.0), (BIG,))
    product = times(f, ones)
    assert product is f  # times the constant 1 of a sum: no pass at all
    np.testing.assert_array_equal(f, np.full(BIG, 2.0))
    other = f  # a second holder
    product = times(f, ones)
    assert product is not other  # held elsewhere: a copy of it
    np.testing.assert_array_equal(product, np.full(BIG, 2.0))


