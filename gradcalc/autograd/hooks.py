"""Hooks on tensors and nodes, as PyTorch's: where they are kept, how they are registered and removed.

A node keeps its hooks (and its retained gradients) in one `Extras` object in its `_extras` slot, which is
None for a node nobody registered anything on: the walk reads that slot once per node, and that is all a
graph without hooks pays. A tensor hook is kept by the node that made the tensor *at registration time*
(a leaf's by its AccumulateGrad node), so that after an in-place change of the tensor, hooks registered
before see the gradient of the old value and hooks registered after see the new one, as in PyTorch.

`seen` becomes True once anything that can run user code during backward exists (a hook, a custom Function
node, an observer): only then does the engine look for such nodes in a graph before walking it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .grad_mode import STAMP
from .interrupts import GUARD

if TYPE_CHECKING:
    from .node import Node
    from .tensor import Tensor

seen = False
# True once any node was given an Extras (a hook, a retained gradient): until then the plain walk does not
# read each node's `_extras` (a read of a slot on nodes of many classes is never specialised: ~170
# instructions a node)
extras_made = False
# the live nodes that may run user code during backward (a hook, a custom Function's backward, packed saved
# values): the engine looks for these in a graph, rather than looking at every node of the graph
watched: weakref.WeakSet = weakref.WeakSet()


def mark_seen() -> None:
    """Note that user code may now run during backward (see the module docstring)."""
    global seen
    seen = True


def watch(node: Node) -> None:
    """Note that backward through `node` may run user code."""
    mark_seen()
    watched.add(node)


class RemovableHandle:
    """What registering a hook returns (PyTorch's `torch.utils.hooks.RemovableHandle`): `.remove()` takes
    the hook away; also a context manager that removes it on exit."""

    next_id = 0

    def __init__(self, hooks_dict: HookDict) -> None:
        self.hooks_dict_ref = weakref.ref(hooks_dict)  # the handle does not keep the node alive
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self) -> None:
        """Remove the hook (removing it twice does nothing)."""
        hooks = self.hooks_dict_ref()
        if hooks is not None and self.id in hooks:
            GUARD.changing = STAMP.origin
            del hooks[self.id]

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()

    def __repr__(self) -> str:
        return f"<RemovableHandle id={self.id}>"


class HookDict(dict):
    """An ordered dict of hooks by handle id (a subclass only so that handles may hold it weakly)."""


def _add(node: Node, hooks: HookDict, fn: Callable) -> RemovableHandle:
    if not callable(fn):
        raise TypeError(f"a hook must be callable, not {type(fn).__name__}")
    GUARD.changing = STAMP.origin  # a host lets the statement that registers it finish (interrupts.py)
    watch(node)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class Extras:
    """What a node carries beyond its formula, all optional: retained gradients and hooks.

    - `retained`: output number -> weak reference to the tensor whose `.grad` it fills (retain_grad);
    - `tensor_hooks`: output number -> hooks registered on the tensor made by that output (fn(grad));
    - `pre_hooks`: Node.register_prehook hooks (fn(grad_outputs));
    - `post_hooks`: Node.register_hook hooks (fn(grad_inputs, grad_outputs));
    - `post_accumulate`: a leaf's register_post_accumulate_grad_hook hooks (fn(tensor));
    - `metadata`: the user's dict (Node.metadata).
    """

    __slots__ = ("retained", "tensor_hooks", "pre_hooks", "post_hooks", "post_accumulate", "metadata")

    def __init__(self) -> None:
        self.retained: dict[int, weakref.ref] = {}
        self.tensor_hooks: dict[int, HookDict] = {}
        self.pre_hooks = HookDict()
        self.post_hooks = HookDict()
        self.post_accumulate = HookDict()
        self.metadata: dict | None = None  # Node.metadata, made on first read

    def has_hooks(self) -> bool:
        """Whether any hook (not just a retained gradient) is registered here."""
        return bool(
            self.pre_hooks or self.post_hooks or self.post_accumulate or any(self.tensor_hooks.values())
        )


def extras_of(node: Node) -> Extras:
    """The node's Extras, made on first need."""
    extras = node._extras
    if extras is None:
        global extras_made
        extras_made = True
        extras = node._extras = Extras()
    return extras


def retain(node: Node, nr: int, t: Tensor) -> None:
    """Fill `t.grad` with the gradient arriving at output `nr` of `node` (Tensor.retain_grad)."""
    extras_of(node).retained[nr] = weakref.ref(t)


def move_retained(old: Node | None, old_nr: int, node: Node, nr: int, t: Tensor) -> None:
    """`t` changed in place and now comes from (`node`, `nr`): its retained gradient moves with it (PyTorch
    keeps the gradient of the tensor's latest value); hooks registered earlier stay on `old`."""
    if old is not None and old._extras is not None:
        ref = old._extras.retained.get(old_nr)
        if ref is not None and ref() is t:
            del old._extras.retained[old_nr]
    retain(node, nr, t)


def register_tensor_hook(t: Tensor, fn: Callable) -> RemovableHandle:
    """`Tensor.register_hook`: fn(grad) runs when the gradient of `t` is computed; it may return a tensor
    to use instead."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = t.grad_fn if t.grad_fn is not None else t._accumulate_node()
    hooks = extras_of(node).tensor_hooks
    nr = t._output_nr if t.grad_fn is not None else 0
    d = hooks.get(nr)
    if d is None:
        d = hooks[nr] = HookDict()
    return _add(node, d, fn)


def register_post_accumulate_grad_hook(t: Tensor, fn: Callable) -> RemovableHandle:
    """`Tensor.register_post_accumulate_grad_hook`: fn(tensor) runs after backward updated `t.grad`."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    node = t._accumulate_node()
    return _add(node, extras_of(node).post_accumulate, fn)


def register_node_hook(node: Node, fn: Callable) -> RemovableHandle:
    """`Node.register_hook`: fn(grad_inputs, grad_outputs) runs after the node computed its gradients; it
    may return a tuple of gradients to pass on instead of grad_inputs."""
    return _add(node, extras_of(node).post_hooks, fn)


def register_node_prehook(node: Node, fn: Callable) -> RemovableHandle:
    """`Node.register_prehook`: fn(grad_outputs) runs before the node computes; it may return a tuple of
    gradients to use instead of grad_outputs."""
    return _add(node, extras_of(node).pre_hooks, fn)
