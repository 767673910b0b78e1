"""`observe_backward`: the records a front end receives, step by step, for small known graphs."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import gradcalc
from gradcalc.autograd.events import GradAccumulated, GradRetained, NodeRun
from gradcalc.autograd.graph import observe_backward


def test_records_of_a_small_backward() -> None:
    x = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    x.grad = gradcalc.tensor([10.0, 10.0])
    y = x * x
    y.retain_grad()
    s = y.sum()
    events: list[Any] = []
    with observe_backward(events.append):
        s.backward()
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["NodeRun", "GradRetained", "NodeRun", "GradAccumulated", "NodeRun"]
    sum_run, retained, mul_run, acc, acc_run = events
    assert sum_run.node is s.grad_fn and sum_run.to == (y.grad_fn,) and sum_run.freed == ()
    assert isinstance(retained, GradRetained) and retained.tensor is y and retained.before is None
    assert np.array_equal(retained.after._data, [1.0, 1.0])
    assert mul_run.node is y.grad_fn and mul_run.freed == ("other", "self")
    assert [np.asarray(g._data).tolist() for g in mul_run.grad_inputs] == [[1.0, 2.0], [1.0, 2.0]]
    assert mul_run.to == (x.grad_fn or y.grad_fn.next_functions[0][0],) * 2
    assert isinstance(acc, GradAccumulated) and acc.tensor is x
    assert acc.before._data.tolist() == [10.0, 10.0] and acc.after._data.tolist() == [12.0, 14.0]
    assert isinstance(acc_run, NodeRun) and acc_run.grad_inputs == ()
    s2 = (x * x).sum()
    s2.backward()  # adds into x.grad in place: the records kept their values
    assert acc.after._data.tolist() == [12.0, 14.0] and x.grad._data.tolist() == [14.0, 18.0]


def test_hooks_that_fired_are_in_the_record() -> None:
    x = gradcalc.tensor(2.0, requires_grad=True)
    y = x * 3
    hook = y.register_hook(lambda g: g * 2)
    events: list[Any] = []
    with observe_backward(events.append):
        y.backward()
    (run,) = [e for e in events if type(e) is NodeRun and e.node is y.grad_fn]
    assert [(h.kind, h.replaced) for h in run.hooks] == [("tensor", True)]
    assert run.grad_outputs[0]._data == 2.0  # after the hook
    hook.remove()


def test_nobody_listens_outside_the_block_or_in_other_threads() -> None:
    events: list[Any] = []
    x = gradcalc.tensor(2.0, requires_grad=True)
    heard_in_thread: list[Any] = []

    def other() -> None:
        (x * 2).backward()
        heard_in_thread.extend(events)

    with observe_backward(events.append):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert heard_in_thread == []
    (x * 2).backward()
    assert events == []
