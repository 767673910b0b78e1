"""The instrumented walk: PyTorch's execution order, hooks, observers, and an undo log.

The engine takes this walk instead of its plain one when user code can run during backward (a hook, a
custom Function's backward, an observer) or anomaly mode is on. It runs the same plan (plan.py: the nodes,
their dependency counts, the targets, the checks made before) with the same steps at each node (adding up
gradients, accumulating into `.grad`, freeing saved values). It differs from the plain walk in three
ways, each of which costs time the plain walk does not spend:
- order: ready nodes run as PyTorch's CPU engine runs them, from a priority queue (AccumulateGrad first,
  otherwise the most recently made node first), with libstdc++'s heap algorithm so that even ties among
  AccumulateGrad nodes come out in PyTorch's order;
- hooks and observers run, on gradients that are always tensors;
- everything the walk changes (leaves' `.grad`, retained gradients, freed saved values) is logged, and
  restored when the walk fails, so that a failing backward changes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import saved
from .events import GradAccumulated, GradRetained, HookCall, NodeRun
from .interrupts import unsafe
from .node import STAMP, AccumulateGrad, Node
from .plan import Plan, accumulate_grad, add_to_buffer, check_nan, fill_retained, free
from .tensor import Tensor, version_of


class ReadyQueue:
    """PyTorch's ready queue: a `std::priority_queue` of nodes by sequence number, largest first.

    libstdc++'s push_heap/pop_heap, step for step: PyTorch's queue is not stable, and equal keys (all
    AccumulateGrad nodes share the largest number) come out in the order these exact steps give."""

    __slots__ = ("heap",)

    def __init__(self) -> None:
        self.heap: list[Node] = []

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, node: Node) -> None:
        h = self.heap
        h.append(node)
        self._sift_up(len(h) - 1, 0, node)

    def _sift_up(self, hole: int, top: int, value: Node) -> None:  # std::__push_heap
        h = self.heap
        key = value._seq
        parent = (hole - 1) // 2
        while hole > top and h[parent]._seq < key:
            h[hole] = h[parent]
            hole = parent
            parent = (hole - 1) // 2
        h[hole] = value

    def pop(self) -> Node:
        h = self.heap
        top = h[0]
        n = len(h)
        if n > 1:  # std::pop_heap: the last element goes into the hole the top leaves
            value = h[n - 1]
            h[n - 1] = top
            self._adjust(n - 1, value)
        h.pop()
        return top

    def _adjust(self, length: int, value: Node) -> None:  # std::__adjust_heap from the top
        h = self.heap
        hole = second = 0
        while second < (length - 1) // 2:
            second = 2 * (second + 1)
            if h[second]._seq < h[second - 1]._seq:
                second -= 1
            h[hole] = h[second]
            hole = second
        if length & 1 == 0 and second == (length - 2) // 2:
            second = 2 * (second + 1)
            h[hole] = h[second - 1]
            hole = second - 1
        self._sift_up(hole, 0, value)


class Task:
    """The backward pass this thread is walking (PyTorch's graph task), for hooks that need to know which
    nodes it will reach (register_multi_grad_hook)."""

    __slots__ = ("deps", "queued", "__weakref__")

    def __init__(self, deps: dict[Node, int], queued: Callable[[Node], bool]) -> None:
        self.deps, self.queued = deps, queued

    def will_reach(self, node: Node) -> bool:
        """Whether the walk will hand `node` its gradients (and run that node's tensor hooks)."""
        return node in self.deps and self.queued(node)


_task = threading.local()


def current_task() -> Task | None:
    """The backward pass this thread is in the middle of (the innermost), or None."""
    return getattr(_task, "task", None)


def _tensor(g: Any) -> Tensor:
    return g if type(g) is Tensor else Tensor._make(np.asarray(g), False, None)


def _snapshot(t: Tensor | None) -> Tensor | None:
    return None if t is None else Tensor._make(np.array(t._data, copy=True), False, None)


def _replacement(r: Any, g: Tensor, what: str) -> Tensor:
    """A tensor hook's return value, checked as PyTorch checks it."""
    if not isinstance(r, Tensor):
        raise TypeError(f"{what} returned a {type(r).__name__}; a hook must return a tensor or None")
    if r._data.shape != g._data.shape:
        raise RuntimeError(
            f"{what} changed the shape of the gradient from {list(g._data.shape)} to {list(r._data.shape)}; "
            "a hook must return a gradient of the same shape"
        )
    return r


def _replacements(r: Any, old: Sequence[Any], what: str) -> list[Any]:
    """A node hook's return value: a tuple of gradients, one per position of the one it was given."""
    if not isinstance(r, (tuple, list)):
        raise TypeError(
            f"{what} returned a {type(r).__name__}; it must return None or a tuple of {len(old)} gradients "
            "(None where there is none)"
        )
    if len(r) != len(old):
        raise RuntimeError(
            f"{what} returned {len(r)} gradients where it was given {len(old)}; it must return None or a "
            f"tuple of {len(old)} gradients (None where there is none)"
        )
    return [None if x is None else _tensor(x) for x in r]


class Log:
    """What the walk changed, to put back when it fails."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: list[tuple] = []

    def saved(self, node: Node) -> None:
        self.entries.append((0, node, node._saved, node._versions))

    def grad(self, t: Tensor) -> None:
        old = t._grad
        if old is None:
            self.entries.append((1, t, None, None, 0))
        else:
            self.entries.append((1, t, old, np.array(old._data, copy=True), old._version))

    @unsafe  # an undo stopped midway would leave half of what it puts back (interrupts.py)
    def undo(self) -> None:
        for entry in reversed(self.entries):
            if entry[0] == 0:
                _, node, saved, versions = entry
                node._saved, node._versions = saved, versions
            else:
                _, t, old, data, version = entry
                t._grad = old
                if old is not None:
                    if old._data.flags.writeable and old._data.shape == data.shape:
                        old._data[...] = data  # accumulation may have written into the old .grad
                    version_of(old).value = version
        self.entries.clear()


def walk(
    plan: Plan,
    *,
    accumulate: bool,
    retain_graph: bool,
    create_graph: bool,
    anomaly: bool,
    listener: Callable[[Any], None] | None,
) -> None:
    """Run the plan's nodes in PyTorch's order with hooks and observer; on failure restore what it changed
    (including what the plan's last check, `Plan.check_unused`, finds wrong after the walk)."""
    root_edges, deps, buffers, stored = plan.root_edges, plan.deps, plan.buffers, plan.stored
    capture, captured, wanted_leaves, needed = plan.capture, plan.captured, plan.wanted_leaves, plan.needed

    def runs(node: Node) -> bool:
        if type(node) is AccumulateGrad:
            return accumulate and (wanted_leaves is None or node in wanted_leaves)
        return needed is None or node in needed

    def queued(node: Node) -> bool:
        return runs(node) or node in capture

    log = Log()
    ready = ReadyQueue()
    outer, _task.task = current_task(), Task(deps, queued)  # deps' keys stay: only counts change
    # PyTorch's GraphRoot: with several roots, a first node hands each root its gradient, in order
    if len(root_edges) == 1:
        ready.push(root_edges[0])
    else:
        for n in root_edges:
            deps[n] += 1
        for n in root_edges:
            deps[n] -= 1
            if deps[n] == 0 and queued(n):
                ready.push(n)
    try:
        while ready:
            node = ready.pop()
            n_out = node.num_outputs
            got = buffers.pop(node, None)
            if got is None:
                grads: list[Any] = [None] * n_out
            elif n_out == 1:
                grads = [_tensor(got)]
            else:
                grads = [None if g is None else _tensor(g) for g in got]
            arrived = grads
            fired: list[HookCall] = []
            extras = node._extras
            if extras is not None:
                if extras.tensor_hooks:
                    grads = _run_tensor_hooks(extras.tensor_hooks, grads, fired)
                if extras.retained:
                    _retain(node, extras.retained, grads, stored, create_graph, log, listener)
            executes = runs(node)
            if node in capture:
                # as PyTorch: a node that runs gives grad() what arrived, one that only captures what its
                # tensor hooks made of it
                seen = arrived if executes else grads
                for nr, k in capture[node]:
                    captured[k] = seen[nr]
            if not executes:
                if listener is not None:
                    listener(NodeRun(node, tuple(grads), (), (), tuple(fired), (), False))
                _route(node, (), deps, buffers, ready, queued)
                continue
            if extras is not None and extras.pre_hooks:
                for fn in list(extras.pre_hooks.values()):
                    r = fn(tuple(grads))
                    if r is not None:
                        grads = _replacements(r, grads, f"the prehook of {node.name()}")
                    fired.append(HookCall("prehook", fn, r is not None))
            freed: tuple[str, ...] = ()
            if type(node) is AccumulateGrad:
                outs: list[Any] = []
                g = grads[0]
                leaf = node._leaf()
                if g is not None and leaf is not None:
                    log.grad(leaf)
                    before = _snapshot(leaf._grad) if listener is not None else None
                    accumulate_grad(node, g, stored, create_graph)
                    if listener is not None:
                        listener(GradAccumulated(leaf, node, g, before, _snapshot(leaf._grad)))
                    if extras is not None:
                        for fn in list(extras.post_accumulate.values()):
                            returned = fn(leaf)  # None, or the leaf itself (`lambda p: p.add_(...)`, as PyTorch)
                            if returned is not None and returned is not leaf:
                                raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                            fired.append(HookCall("post_accumulate_grad", fn, False))
            elif all(g is None for g in grads):
                outs = [None] * len(node._next)  # nothing arrived: nothing to compute, nothing passed on
            else:
                log.saved(node)
                names = _saved_names(node) if listener is not None and not retain_graph else ()
                packed = node._saved
                if STAMP.packing and packed:
                    # values packed by saved_tensors_hooks: unpacked here, in PyTorch's order, for the formula
                    node._saved = unpacked = saved.unpack_all(node, packed)
                r = node.apply(grads[0] if n_out == 1 else grads)
                if STAMP.packing and packed and node._saved is unpacked:
                    node._saved = packed  # kept packed (with retain_graph); freed below otherwise
                outs = [None if o is None else _tensor(o) for o in r]
                outs += [None] * (len(node._next) - len(outs))
                if not retain_graph and free(node):
                    freed = names
            if extras is not None and extras.post_hooks:
                for fn in list(extras.post_hooks.values()):
                    r = fn(tuple(outs), tuple(grads))
                    if r is not None:
                        outs = _replacements(r, outs, f"the hook of {node.name()}")
                    fired.append(HookCall("hook", fn, r is not None))
            if anomaly:
                check_nan(node, outs)
            if listener is not None:
                listener(NodeRun(node, tuple(grads), tuple(outs), node._next, tuple(fired), freed))
            _route(node, outs, deps, buffers, ready, queued, add_to_buffer)
        plan.check_unused()
    except BaseException:
        log.undo()
        raise
    finally:
        _task.task = outer


def _route(
    node: Node,
    outs: Sequence[Any],
    deps: dict[Node, int],
    buffers: dict[Node, Any],
    ready: ReadyQueue,
    queued: Callable[[Node], bool],
    add: Callable[..., None] | None = None,
) -> None:
    """Hand each gradient to the node it goes to; queue the nodes that have now heard from all inputs."""
    nrs = node._nrs
    for k, child in enumerate(node._next):
        if child is None:
            continue
        g = outs[k] if k < len(outs) else None
        if g is not None and add is not None:
            add(buffers, child, nrs[k] if nrs else 0, g, False)
        left = deps[child] - 1
        deps[child] = left
        if left == 0 and queued(child):
            ready.push(child)


def _run_tensor_hooks(tensor_hooks: dict, grads: list[Any], fired: list[HookCall]) -> list[Any]:
    grads = list(grads)
    for nr, hooks in tensor_hooks.items():
        g = grads[nr]
        if g is None or not hooks:
            continue  # as PyTorch: a tensor hook never sees a missing gradient
        for fn in list(hooks.values()):
            r = fn(g)
            if r is not None:
                g = _replacement(r, g, "a tensor hook")
            fired.append(HookCall("tensor", fn, r is not None))
        grads[nr] = g
    return grads


def _retain(
    node: Node,
    retained: dict,
    grads: list[Any],
    stored: set[int],
    create_graph: bool,
    log: Log,
    listener: Callable[[Any], None] | None,
) -> None:
    targets = []
    for nr, ref in retained.items():
        t = ref()
        if t is not None and grads[nr] is not None:
            log.grad(t)
            targets.append((nr, t, t._grad))
    fill_retained(node, grads[0] if node.num_outputs == 1 else grads, stored, create_graph)
    if listener is not None:
        for nr, t, before in targets:
            listener(GradRetained(t, node, grads[nr], before, _snapshot(t._grad)))


def _saved_names(node: Node) -> tuple[str, ...]:
    """The names of the tensors the node saved (what freeing releases): PyTorch's names where the node
    declares them, else positions ("0", "1", ...)."""
    saved = node._saved
    if not saved:
        return ()
    declared = [(name, spec.index) for name, spec in type(node).saved_names.items() if spec.index is not None]
    if declared:
        return tuple(name for name, i in declared if i < len(saved) and saved[i] is not None)
    return tuple(str(i) for i, t in enumerate(saved) if t is not None)
