"""`gradcalc.autograd.graph`: the backward graph as PyTorch's `torch.autograd.graph` shows it, plus what a
front end needs to narrate it (observers, origins).

- `Node`: the base class of every `grad_fn` (`name()`, `next_functions`, `metadata`, `register_hook`,
  `register_prehook`, `saved` (name -> value, or `FREED`), `origin`, `_sequence_nr()`, `_saved_<name>`);
- `observe_backward(listener)`: hear every step of backward (records in `gradcalc.autograd.events`);
- `origin(obj)` / `set_origin(obj)`: stamp the nodes made meanwhile with what the front end is running;
  `STAMP.origin` is what they set, for a front end that sets it once per statement (the language's block
  runner) without a call;
- PyTorch's `saved_tensors_hooks`, `save_on_cpu`, `allow_mutation_on_saved_tensors`, `increment_version`,
  `register_multi_grad_hook`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from . import provenance, saved
from .grad_mode import STAMP
from .hooks import RemovableHandle
from .listen import observe_backward
from .node import Node, set_origin
from .ordered import current_task
from .tensor import Tensor, version_of

# what `Node.saved` shows for a saved tensor backward released
FREED = saved.FREED_VALUE

__all__ = [
    "FREED", "STAMP", "Node", "RemovableHandle", "allow_mutation_on_saved_tensors", "increment_version",
    "observe_backward", "origin", "register_multi_grad_hook", "save_on_cpu", "saved_tensors_hooks", "set_origin",
]


@contextmanager
def origin(obj: Any) -> Iterator[None]:
    """Within the block, every node made keeps `obj` as its `origin` (restored after, also on errors)."""
    previous = set_origin(obj)
    try:
        yield
    finally:
        set_origin(previous)


class saved_tensors_hooks:  # noqa: N801 (PyTorch's name)
    """Within the block, every tensor an operation saves for backward is given to `pack_hook(tensor)`, and
    what that returns is kept instead; backward (or reading `grad_fn._saved_*`) calls `unpack_hook(packed)`,
    which must return a tensor of the same value. Tensors are packed in PyTorch's order (for `a * b`:
    `other`, then `self`). Blocks nest; hooks are per thread, as in PyTorch."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self) -> saved_tensors_hooks:
        saved.push_pair(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc: Any) -> None:
        saved.pop_pair()


class save_on_cpu(saved_tensors_hooks):  # noqa: N801
    """PyTorch's context manager that moves saved tensors to CPU memory. gradcalc has CPU memory only, so
    the hooks are the identity: accepted so that PyTorch programs run unchanged."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


class allow_mutation_on_saved_tensors:  # noqa: N801
    """Within the block, a tensor saved for backward may be changed in place afterwards: backward uses the
    value it had when saved (PyTorch clones it on the first change; gradcalc keeps a copy when saving, so
    memory for saved tensors doubles inside the block)."""

    def __enter__(self) -> allow_mutation_on_saved_tensors:
        def pack(t: Tensor) -> tuple[Tensor, Any, int]:
            return (t, t._data.copy(), 0 if t._vc is None else t._vc.value)

        def unpack(packed: tuple[Tensor, Any, int]) -> Tensor:
            t, copy, version = packed
            if (0 if t._vc is None else t._vc.value) == version:
                return t
            return Tensor._make(copy, False, None)

        saved.push_pair(pack, unpack, checked=False)
        return self

    def __exit__(self, *exc: Any) -> None:
        saved.pop_pair()


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Bump the in-place version counter, as an in-place change would (backward through a node that saved
    the tensor before then is an error)."""
    for t in [tensor] if isinstance(tensor, Tensor) else tensor:
        counter = version_of(t)
        counter.value += 1
        if STAMP.origin is not None:  # a front end keeps who changed what (provenance.py)
            provenance.changed(counter)


class _MultiHandle:
    """The handle of register_multi_grad_hook: `.remove()` removes the hook from every tensor."""

    def __init__(self, handles: list[RemovableHandle]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _MultiHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Tensor], fn: Callable[[Any], None], *, mode: str = "all"
) -> _MultiHandle:
    """A hook on several tensors at once (PyTorch's). mode="all": after a backward computed the gradients of
    all of them that it reaches, `fn(grads)` with one entry per tensor (None for those it does not reach).
    mode="any": `fn(grad)` once per backward, with the first gradient computed among them."""
    if mode not in ("all", "any"):
        raise ValueError(f'register_multi_grad_hook: mode must be "all" or "any", not {mode!r}')
    tensors = list(tensors)
    states: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def state_of(task: Any) -> dict:
        st = states.get(task)
        if st is None:
            reached = sum(
                1 for t in tensors
                if t._requires_grad and task.will_reach(t.grad_fn if t.grad_fn is not None else t._accumulate_node())
            )
            st = states[task] = {"grads": [None] * len(tensors), "left": reached, "fired": False}
        return st

    def hook_for(i: int) -> Callable[[Tensor], None]:
        def hook(g: Tensor) -> None:
            task = current_task()
            if task is None:
                return
            st = state_of(task)
            if mode == "any":
                if not st["fired"]:
                    st["fired"] = True
                    fn(g)
                return
            st["grads"][i] = g
            st["left"] -= 1
            if st["left"] == 0:
                fn(tuple(st["grads"]))

        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors) if t._requires_grad])
