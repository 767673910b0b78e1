"""`gradcalc.autograd.graph`: the backward graph as PyTorch's `torch.autograd.graph` shows it, plus what a
front end needs to narrate it (observers, origins).

- `Node`: the base class of every `grad_fn` (`name()`, `next_functions`, `metadata`, `register_hook`,
  `register_prehook`, `saved`, `origin`);
- `observe_backward(listener)`: hear every step of backward (records in `gradcalc.autograd.events`);
- `origin(obj)` / `set_origin(obj)`: stamp the nodes made meanwhile with what the front end is running.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .hooks import RemovableHandle
from .listen import observe_backward
from .node import Node, set_origin

__all__ = ["Node", "RemovableHandle", "observe_backward", "origin", "set_origin"]


@contextmanager
def origin(obj: Any) -> Iterator[None]:
    """Within the block, every node made keeps `obj` as its `origin` (restored after, also on errors)."""
    previous = set_origin(obj)
    try:
        yield
    finally:
        set_origin(previous)
