"""Threads (LANGUAGE.md §5): forward and backward from many threads at once.

- independent graphs in many threads give the single-threaded results (checked against PyTorch);
- accumulation into a leaf shared by all threads loses no update;
- a backward through a shared graph that another thread already freed is the ordinary `retain_graph`
  error, never a crash or a wrong value;
- grad modes are per thread, even while other threads record.

The interpreter is made to switch threads every microsecond during these tests, so that the threads
really interleave inside the engine's walk instead of taking turns.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


@pytest.fixture(autouse=True)
def interleave() -> Iterator[None]:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def run_threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(i)` in `n` threads started together; return their results, re-raising any exception."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def target(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def model(T: Any, seed: int) -> tuple[Any, Any, Any]:
    """A small graph with shared subexpressions, broadcasting, and a second derivative."""
    rng = np.random.default_rng(seed)
    x = T.tensor(rng.uniform(-1, 1, (3, 4)), requires_grad=True)
    w = T.tensor(rng.uniform(-1, 1, (4,)), requires_grad=True)
    h = (x * w).tanh()
    y = (h * h.exp() + x / (w * w + 1.0)).sum()
    (gx,) = T.autograd.grad(y, x, create_graph=True)
    y.backward(retain_graph=True)  # the second grad below frees the forward graph too
    (gw2,) = T.autograd.grad((gx * gx).sum(), w)
    return x.grad, w.grad, gw2


def as_array(t: Any) -> np.ndarray:
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def test_independent_graphs_in_many_threads() -> None:
    n = 16
    results = run_threads(n, lambda i: [model(gradcalc, i) for _ in range(5)])
    for i, per_thread in enumerate(results):
        expected = [as_array(t) for t in model(torch, i)]
        for got in per_thread:
            for e, g in zip(expected, got, strict=True):
                np.testing.assert_allclose(as_array(g), e, rtol=1e-12)


def test_shared_leaf_accumulation_loses_no_update() -> None:
    w = gradcalc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    n, k = 8, 1000

    def work(i: int) -> None:
        for _ in range(k):
            (w * float(i + 1)).sum().backward()

    run_threads(n, work)
    exact = float(k * sum(range(1, n + 1)))  # d/dw of sum(c*w) is c; summed over every call
    assert w.grad.tolist() == [exact, exact, exact]


def test_first_accumulation_race() -> None:
    """The riskiest moment is a leaf's first gradient (`.grad` is None, every thread wants to set it): many
    fresh leaves, each raced for by all threads at once."""
    for _ in range(2):  # without the accumulator's lock, most rounds lose an update
        leaves = [gradcalc.tensor([1.0, 2.0], requires_grad=True) for _ in range(1500)]

        def work(i: int) -> None:
            for w in leaves:  # noqa: B023 - run before the loop moves on
                (w * 3.0).sum().backward()

        run_threads(8, work)
        lost = [w.grad.tolist() for w in leaves if w.grad.tolist() != [24.0, 24.0]]
        assert lost == []


def test_shared_leaf_accumulation_through_deeper_graphs() -> None:
    """Each thread's backward reaches the shared leaf by two paths and through its own leaf too."""
    w = gradcalc.tensor([0.5, -1.0], requires_grad=True)
    n, k = 8, 200

    def work(i: int) -> float:
        own = gradcalc.tensor(float(i), requires_grad=True)
        for _ in range(k):
            (w * own + w * 2.0).sum().backward()
        return own.grad.item()

    owns = run_threads(n, work)
    assert owns == [k * (0.5 - 1.0)] * n
    exact = k * sum(float(i) + 2.0 for i in range(n))
    assert w.grad.tolist() == [exact, exact]


def test_shared_graph_freed_by_another_thread_is_the_retain_graph_error() -> None:
    for _ in range(30):
        x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * x).sin().sum()

        def work(i: int) -> str:
            try:
                y.backward()  # noqa: B023 - the threads run before the loop moves on
            except RuntimeError as e:
                assert "retain_graph" in str(e)
                return "error"
            return "ok"

        outcomes = run_threads(4, work)
        assert "ok" in outcomes  # somebody went through first
        # x's accumulator runs last, after both paths into x: a backward either adds the whole gradient
        # or, failing on the way, nothing at all
        v = np.array([1.0, 2.0])
        full = np.cos(np.exp(v) * v) * np.exp(v) * (1 + v)
        np.testing.assert_allclose(x.grad._data, outcomes.count("ok") * full, rtol=1e-12)


def test_shared_graph_with_retain_graph_in_many_threads() -> None:
    x = gradcalc.tensor([0.3, -0.7, 1.1], requires_grad=True)
    y = (x.sin() * x.exp()).sum()
    expected = (x.sin() + x.cos()) * x.exp()
    results = run_threads(8, lambda i: [gradcalc.autograd.grad(y, x, retain_graph=True)[0] for _ in range(50)])
    for per_thread in results:
        for g in per_thread:
            np.testing.assert_allclose(g._data, expected._data, rtol=1e-12)


def test_grad_modes_are_per_thread_while_others_record() -> None:
    x = gradcalc.tensor(1.0, requires_grad=True)

    def work(i: int) -> list[bool]:
        seen = []
        for _ in range(200):
            if i % 2:
                with gradcalc.no_grad():
                    seen.append((x * 2).requires_grad)
            else:
                seen.append((x * 2).requires_grad)
        return seen

    for i, seen in enumerate(run_threads(8, work)):
        assert seen == [not i % 2] * 200
