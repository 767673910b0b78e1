"""The engine: which walk runs a backward pass, and the plain walk, the fast one.

`run_backward` serves `Tensor.backward`, `autograd.backward` and `autograd.grad`. It plans the pass
(plan.py: the nodes below the roots, how many edges lead into each, the targets, and the checks that make
a failing call change nothing), then hands the plan to one of the walks:
- the plain walk below, in the cheapest order: a node runs once every node that feeds it a gradient has
  run; the gradients arriving at a node are added up in a buffer; each node's saved values are released
  as the walk passes it unless `retain_graph`;
- the instrumented walk (ordered.py) when user code can run during the walk (hooks, a custom Function's
  backward, an observer, saved-tensor unpack hooks) or anomaly mode is on: PyTorch's order, hooks,
  observers, and an undo log for failures. It runs the same nodes in another order.
(The third walk, batched.py's, runs rows of cotangents for a Jacobian; its callers go to it directly.)
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from . import grad_mode, hooks, listen, provenance, saved
from .grad_mode import ALTERED, set_walk, state
from .heap import KEPT, keep_freed_memory
from .interrupts import GUARD
from .node import FREED, NOTHING, STAMP, AccumulateGrad, Node, release_saved
from .plan import (
    Plan,
    accumulate_grad,
    add_to_buffer,
    arrays,
    check_nan,
    fill_retained,
    free,
    plan_pass,
    roots_of,
    sum_grads,
    tensors,
    unused_error,
)
from .tensor import Tensor

__all__ = ["roots_of", "run_backward", "run_plan", "unused_error", "warn_create_graph_cycle"]


def run_backward(
    roots: list[tuple[Tensor, Tensor]],
    *,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Tensor] | None = None,
    accumulate: bool = True,
    allow_unused: bool = True,
) -> list[Tensor | None] | None:
    """Run the pass. With `accumulate`, add gradients into leaves' `.grad` (only into `inputs` when given);
    otherwise return the gradients that reach `inputs` (None for an input no gradient reached)."""
    if STAMP.origin is not None:  # a front end running: it keeps a record of this call (provenance.py)
        provenance.touched.clear()
    return run_plan(plan_pass(roots, inputs, accumulate, allow_unused), retain_graph, create_graph, accumulate)


def run_plan(plan: Plan, retain_graph: bool, create_graph: bool, accumulate: bool) -> list[Tensor | None] | None:
    """Run a planned pass (`run_backward`'s second half; grad() of one output and one input plans its own,
    plan.plan_one): the walk that suits it, with the thread's grad-mode state set for the walk and restored."""
    if not KEPT[0]:  # a process that trains keeps the memory its steps free and take again (heap.py)
        keep_freed_memory()
    origin = STAMP.origin
    anomaly = grad_mode.anomaly_seen and state.anomaly and state.check_nan
    # user code may run during the walk (a hook, a custom Function, an observer), or anomaly mode may stop
    # it: then the instrumented walk, in PyTorch's order, which undoes what it did when it fails
    listener = listen.current() if listen.active else None
    instrumented = anomaly or (hooks.seen and (listener is not None or _runs_user_code(plan.deps)))

    # a host may stop the walk midway (interrupts.py): then the plain walk changes nothing until it is done
    # (`Held` keeps the gradients it will write and the nodes it will free, for one last step)
    held = Held() if GUARD.atomic and not instrumented else None
    # every value is computed before the thread's state changes: the `try` below restores it on every path
    release = not retain_graph and not create_graph and held is None  # held: no saved array reused midway
    want = None if plan.needed is None else plan.wanted()
    if ALTERED:  # (grad_mode.ALTERED: while it is empty, every thread's state is the default, unread)
        recording, releasing, wanted = state.grad_enabled, state.releasing, state.wanted
    else:
        recording, releasing, wanted = True, False, None
    record = True if create_graph else False  # bool(), without a call
    # thread-local writes cost more than the rest of a small grad(): made, and undone, only when they change
    # something, or when user code runs in the walk (it may change them: they are restored after it too)
    changes = recording is not record or releasing is not release or wanted is not want or instrumented
    if changes:
        set_walk(record, release, want)
    try:
        if instrumented:
            from . import ordered  # (here, off the start-up path: hooks, observers and anomaly mode need it)

            ordered.walk(plan, accumulate=accumulate, retain_graph=retain_graph, create_graph=create_graph,
                         anomaly=anomaly, listener=listener)
        else:
            plain_walk(plan, accumulate, retain_graph, create_graph, anomaly, held)
            if held is not None:
                held.commit(plan.stored, create_graph)
    finally:
        if changes:
            set_walk(recording, releasing, wanted)
    if origin is not None:
        provenance.ran(origin, plan.root_nodes, accumulate, retain_graph, create_graph, plan.inputs)
    return plan.captured if not accumulate else None


def plain_walk(plan: Plan, accumulate: bool, retain_graph: bool, create_graph: bool, anomaly: bool,
               held: Held | None = None) -> None:
    """Run the plan's nodes, each once every node that feeds it has run, from a stack: the last node made
    ready runs next. The hottest loop of the engine: plan.py's steps at a node are written inline where a
    call would cost (adding to a buffer, freeing saved values), and say so. With `held`, what outlives the
    walk (`.grad` writes, freeing) is held back for `held.commit` (interrupts.GUARD.atomic)."""
    deps, buffers, stored = plan.deps, plan.buffers, plan.stored  # (three at most: more pack a tuple)
    capture, captured = plan.capture, plan.captured
    wanted_leaves, needed = plan.wanted_leaves, plan.needed
    root_nodes = plan.root_nodes
    extras = hooks.extras_made  # (no user code runs in this walk: nobody makes one midway)
    raw = not create_graph  # a plain backward runs formulas on bare arrays where the node allows it
    # The node made ready last, with its gradient, kept out of `ready` and `buffers`: it is the one the
    # stack would give next anyway, and a chain of operations then costs no stack or buffer traffic.
    carry: Node | None = None
    carried: Any = None
    if len(root_nodes) == 1:  # a single root has no edge into it: it runs first
        ready: list[Node] = []
        carry = root_nodes[0]
        carried = buffers.pop(carry, None)
    else:  # of several, those no other root leads to
        ready = [node for node in root_nodes if deps[node] == 0]
    while True:
        if carry is not None:
            node = carry
            grads = carried
            carry = carried = None
        elif ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
        else:
            break
        nexts = node._next
        if grads is None:  # no gradient reached this node: it still counts as done for its inputs
            outs: Any = ()
        else:
            if extras and node._extras is not None:
                if held is not None:
                    held.writes.append((fill_retained, node, tensors(grads)))
                else:
                    fill_retained(node, tensors(grads), stored, create_graph)
            if capture and node in capture:
                for nr, k in capture[node]:
                    if type(grads) is Tensor:  # (grad()'s commonest: one output, recorded under create_graph)
                        captured[k] = grads
                    else:
                        captured[k] = tensors(grads) if node.num_outputs == 1 else tensors(grads)[nr]
            if type(node) is AccumulateGrad:
                if accumulate and (wanted_leaves is None or node in wanted_leaves):
                    if held is not None:
                        held.writes.append((accumulate_grad, node, grads))
                    else:
                        accumulate_grad(node, grads, stored, create_graph)
                continue
            if needed is not None and node not in needed:
                outs = ()
            elif raw and node.raw_ok:
                kind = type(grads)
                if kind is Tensor:  # a root's gradient; a 0-d one as a NumPy scalar, as saved values are
                    grads = grads._data if grads._data.ndim else grads._data[()]
                outs = node.apply(grads if kind is not list else arrays(grads))
            else:
                outs = node.apply(grads if type(grads) is Tensor else tensors(grads))
            grads = None  # hold no gradient into the next node's formula
            if anomaly:
                check_nan(node, outs)
            if not retain_graph:
                # plan.free, inline: released; a node that saved nothing can run again, as in PyTorch
                saved_values = node._saved
                if saved_values and held is not None:
                    held.freeing.append(node)
                elif saved_values:
                    node._saved = FREED
                    if saved_values is NOTHING:  # a product with a number: both slots empty (release_saved's)
                        node._empty = 3
                    else:
                        for t in saved_values:  # an empty slot (rare) is remembered by release_saved
                            if t is None:
                                release_saved(node, saved_values)
                                break
        if not outs:  # nothing passed on: the inputs only count this node as done
            for child in nexts:
                if child is not None:
                    left = deps[child] - 1
                    deps[child] = left
                    if not left:  # ready: it runs next, and the one made ready before it goes on the stack
                        if carry is not None:
                            if carried is not None:
                                buffers[carry] = carried
                            ready.append(carry)
                        carry, carried = child, buffers.pop(child, None)
            continue
        k = 0
        for child in nexts:
            if child is not None:
                g = outs[k]
                left = deps[child] - 1
                deps[child] = left
                if g is not None:  # plan.add_to_buffer, inline (the buffer and `outs` hold the arrays there)
                    if child.num_outputs == 1:
                        if child in buffers:  # (a test, not `buffers.get`: most edges find no buffer, and a call costs)
                            old = buffers[child]
                            g = sum_grads(old, g, raw, True)
                            old = None
                            if left:
                                buffers[child] = g
                            else:
                                del buffers[child]
                        elif left:
                            buffers[child] = g
                    else:
                        nrs = node._nrs  # (read only here: a slot read on nodes of many classes costs)
                        add_to_buffer(buffers, child, nrs[k] if nrs else 0, g, raw)
                        g = buffers.pop(child) if not left else None
                elif not left:
                    g = buffers.pop(child, None)
                if not left:  # ready: as above
                    if carry is not None:
                        if carried is not None:
                            buffers[carry] = carried
                        ready.append(carry)
                    carry, carried = child, g
                g = None
            k += 1
        outs = None


class Held:
    """What a walk that a host may stop midway (interrupts.GUARD.atomic) holds back until it is done: the
    gradients it will write into `.grad`s and retained tensors, in the order it reached them, and the nodes
    whose saved values it will free."""

    __slots__ = ("writes", "freeing")

    def __init__(self) -> None:
        self.writes: list[tuple[Any, Node, Any]] = []
        self.freeing: list[Node] = []

    def commit(self, stored: set[int], create_graph: bool) -> None:
        """The walk's last step: write and free what it held back. The host lets it finish (`changing`)."""
        if not (self.writes or self.freeing):
            return
        GUARD.changing = STAMP.origin
        for write, node, grads in self.writes:
            write(node, grads, stored, create_graph)
        for node in self.freeing:
            if node._saved and node._saved is not FREED:
                free(node)


def _runs_user_code(deps: dict[Node, int]) -> bool:
    """Whether a node of the graph has a hook, a user-written backward or packed saved values: looked for
    among the watched nodes (hooks.watched) or among the graph's, whichever are fewer."""
    watched = hooks.watched
    candidates: Any = deps if len(watched) >= len(deps) else [n for n in list(watched) if n in deps]
    for node in candidates:
        if node.user_code:
            return True
        extras = node._extras
        if extras is not None and extras.has_hooks():
            return True
        if STAMP.packing and saved.is_packed(node):
            return True
    return False


def warn_create_graph_cycle() -> None:
    """backward(create_graph=True)'s warning, as PyTorch gives it (a reference cycle through `.grad`)."""
    warnings.warn(
        "backward with create_graph makes a reference cycle between each leaf and its .grad (which now "
        "remembers how it was computed); prefer grad(..., create_graph=true), or set the leaves' .grad to "
        "None after use (zero_grad) to break the cycle",
        UserWarning,
        stacklevel=3,
    )
