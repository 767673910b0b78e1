"""Backward observers: a front end (the language, narrating) sees every step of the backward passes run in
its thread (the records of `events.py`). Nobody observing costs one module-attribute read per backward."""

from __future__ import annotations

from _thread import _local as thread_local  # what threading.local is (`threading` itself is kept off the start-up path)
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from . import hooks

_local = thread_local()
active = 0  # observers registered in any thread: when 0, no thread-local lookup at all


def current() -> Callable[[Any], None] | None:
    """The innermost observer of this thread, or None."""
    if not active:
        return None
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def observe_backward(listener: Callable[[Any], None]) -> Iterator[None]:
    """Within the block, every backward/grad run in this thread calls `listener(event)` for each of its
    steps, in execution order (see `gradcalc.autograd.events`). Observers nest: the innermost one hears."""
    global active
    hooks.mark_seen()
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(listener)
    active += 1
    try:
        yield
    finally:
        active -= 1
        stack.pop()
