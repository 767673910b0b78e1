"""grad_mode.ALTERED: the threads whose recording state (grad_enabled, releasing, wanted) is not the default.

Operations skip the thread-local read of `state.grad_enabled` while the set is empty, so it must never say
"default" for a thread that is not: after every way the state changes (grad modes, inference mode, a plain
backward, grad() with pruning, a custom Function's forward, once_differentiable, the batched Jacobian walk, a
walk that fails midway, restore_state), this thread's membership follows its state exactly, and an operation
records exactly when PyTorch's would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd import grad_mode


def membership_follows_state() -> None:
    state = grad_mode.state
    default = state.grad_enabled and not state.releasing and state.wanted is None
    assert (threading.get_ident() in grad_mode.ALTERED) is not default


def records() -> bool:
    """Whether an operation in this thread records now (what ALTERED lets operations decide unread)."""
    x = gradcalc.tensor(2.0, requires_grad=True)
    return (x * 3.0).requires_grad and (x * x).requires_grad and x.exp().requires_grad


@pytest.fixture(autouse=True)
def starts_and_ends_default() -> None:
    membership_follows_state()
    assert records()
    yield
    membership_follows_state()
    assert records()


def test_grad_modes_nested() -> None:
    with gradcalc.no_grad():
        membership_follows_state()
        assert not records()
        with gradcalc.enable_grad():
            membership_follows_state()
            assert records()
        membership_follows_state()
        assert not records()
    with gradcalc.set_grad_enabled(False):
        membership_follows_state()
        assert not records()
    gradcalc.set_grad_enabled(False)
    membership_follows_state()
    assert not records()
    gradcalc.set_grad_enabled(True)


def test_inference_mode() -> None:
    with gradcalc.inference_mode():
        membership_follows_state()
        assert not records()
        with gradcalc.enable_grad():  # still records nothing inside inference mode
            membership_follows_state()
            assert not records()
        with gradcalc.inference_mode(False):
            membership_follows_state()
            assert records()
    membership_follows_state()


def test_inside_formulas_of_a_plain_backward_and_of_pruned_grad() -> None:
    seen: list[tuple[bool, bool]] = []

    class Probe(gradcalc.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            membership_follows_state()
            seen.append(("forward", records()))
            return x * 2.0

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            membership_follows_state()
            seen.append(("backward", records()))
            return g * 2.0

    x = gradcalc.tensor(1.5, requires_grad=True)
    w = gradcalc.tensor(0.5, requires_grad=True)
    Probe.apply(x * w).sum().backward()
    (g,) = gradcalc.autograd.grad(Probe.apply(x * w), x)  # pruned: w's branch is not wanted
    (h,) = gradcalc.autograd.grad(Probe.apply(x * w), x, create_graph=True)
    assert seen == [("forward", False), ("backward", False), ("forward", False), ("backward", False),
                    ("forward", False), ("backward", True)]
    assert float(g) == float(h) == 1.0


def test_once_differentiable_and_hooks_that_raise() -> None:
    x = gradcalc.tensor(1.5, requires_grad=True)
    y = x * x
    y.register_hook(lambda g: (_ for _ in ()).throw(ValueError("hook")))
    with pytest.raises(ValueError):
        y.backward()
    membership_follows_state()

    class Once(gradcalc.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            return x * 1.0

        @staticmethod
        @gradcalc.autograd.function.once_differentiable
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            membership_follows_state()
            assert not records()
            return g * 3.0

    gradcalc.autograd.grad(Once.apply(x), x, create_graph=True)


def test_batched_jacobian_and_restore_state() -> None:
    x = gradcalc.tensor(np.linspace(0.1, 1.0, 5), requires_grad=True)
    jac = gradcalc.autograd.functional.jacobian(lambda t: t.sin() * t, x, vectorize=True)
    assert jac.shape == (5, 5)
    membership_follows_state()
    saved = grad_mode.save_state()
    with gradcalc.no_grad():
        grad_mode.restore_state(saved)  # a host putting back the state a failure left changed
        membership_follows_state()
        assert records()


def in_thread(work: Callable[[], object]) -> object:
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(work()))
    t.start()
    t.join()
    return out[0]


def test_a_thread_that_ends_inside_no_grad_changes_nothing_elsewhere() -> None:
    def leave_grad_off() -> bool:
        gradcalc.set_grad_enabled(False)  # and the thread ends so
        membership_follows_state()
        return records()

    assert in_thread(leave_grad_off) is False
    assert grad_mode.ALTERED  # its ident stays: readers go to the thread-local state, which is right
    assert records()
    assert in_thread(records) is True  # a new thread (perhaps with the same ident) records
    grad_mode.ALTERED.clear()  # (what stays of the ended thread)
