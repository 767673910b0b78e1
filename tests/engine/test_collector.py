"""The collector hook (autograd/collector.py): after a young collection during which many nodes were recorded, the
young generations go straight to the oldest one; never when the process froze objects itself, never beyond the
budget, and everything stays collectable by a full collection."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import gradcalc
from gradcalc.autograd import collector


@contextmanager
def _quiet_collector() -> Iterator[None]:
    """No automatic collection inside (the test runs the collections it means), and the budget restored after."""
    enabled = gc.isenabled()
    saved = (collector.BUDGET.seq, collector.BUDGET.moved, collector.BUDGET.kept, collector.BUDGET.skip)
    gc.disable()
    try:
        yield
    finally:
        collector.BUDGET.seq, collector.BUDGET.moved, collector.BUDGET.kept, collector.BUDGET.skip = saved
        if enabled:
            gc.enable()


def _chain(n: int, x: gradcalc.Tensor | None = None) -> gradcalc.Tensor:
    y = gradcalc.tensor(0.5, requires_grad=True) if x is None else x
    for _ in range(n):
        y = y * 1.0001
    return y


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation))


def test_the_hook_is_installed_once() -> None:
    collector.install()
    assert gc.callbacks.count(collector.after_collection) == 1


def test_a_young_collection_after_many_nodes_moves_them_to_the_oldest_generation() -> None:
    with _quiet_collector():
        gc.collect(0)  # what was young before goes to the middle generation, and the hook counts from here
        collector.BUDGET.moved = 0
        n = 3 * collector.MADE_AT
        x = gradcalc.tensor(0.5, requires_grad=True)
        y = _chain(n, x)
        node = y.grad_fn
        gc.collect(0)  # the nodes survive: to the middle generation, then (the hook) to the oldest
        assert _in_generation(node, 2)
        assert not gc.get_objects(1) and not gc.get_freeze_count()
        assert collector.BUDGET.moved >= n * collector.OBJECTS_PER_NODE
        y.backward()  # the graph is whole: d(x * c**n)/dx = c**n
        assert abs(x.grad.item() - 1.0001**n) <= 1e-12 * n


def test_few_nodes_leave_the_collector_as_it_was() -> None:
    with _quiet_collector():
        gc.collect(0)
        y = _chain(collector.MADE_AT // 4)
        node = y.grad_fn
        gc.collect(0)
        assert _in_generation(node, 1)


def test_nothing_moves_beyond_the_budget() -> None:
    with _quiet_collector():
        gc.collect(0)
        collector.BUDGET.moved = collector.GROWTH * collector.BUDGET.kept  # spent
        y = _chain(3 * collector.MADE_AT)
        gc.collect(0)
        assert _in_generation(y.grad_fn, 1)
        gc.collect()  # a full collection: the budget starts again from what it kept, counted at the next move
        assert collector.BUDGET.moved == 0 and collector.BUDGET.kept is None
        y = _chain(3 * collector.MADE_AT, y)
        gc.collect(0)
        assert collector.BUDGET.kept >= collector.FLOOR and _in_generation(y.grad_fn, 2)


def test_objects_the_process_froze_stay_frozen() -> None:
    with _quiet_collector():
        gc.collect(0)
        collector.BUDGET.skip = 0
        gc.freeze()
        try:
            frozen = gc.get_freeze_count()
            assert frozen
            collector.BUDGET.moved = 0
            y = _chain(3 * collector.MADE_AT)
            gc.collect(0)
            assert gc.get_freeze_count() == frozen
            assert _in_generation(y.grad_fn, 1)
            assert collector.BUDGET.skip == collector.SKIP  # (counting frozen objects walks them: not every time)
        finally:
            gc.unfreeze()
        collector.BUDGET.skip = 0  # once the process has unfrozen them, the hook moves graphs again
        y = _chain(3 * collector.MADE_AT, y)
        gc.collect(0)
        assert _in_generation(y.grad_fn, 2)


def test_cyclic_garbage_moved_with_a_graph_is_still_collected() -> None:
    class Cycle:
        pass

    with _quiet_collector():
        gc.collect(0)
        collector.BUDGET.moved = 0
        c = Cycle()
        c.me = c  # a reference cycle, young and alive while the graph is recorded
        ref = weakref.ref(c)
        y = _chain(3 * collector.MADE_AT)
        gc.collect(0)
        assert _in_generation(c, 2)  # moved with the graph
        del c
        gc.collect(0)
        gc.collect(1)
        assert ref() is not None  # old now: only a full collection looks at it, as for any old object
        gc.collect()
        assert ref() is None
        del y
