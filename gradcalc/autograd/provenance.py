"""Who changed what, kept for a front end that explains afterwards (the language's `explain`).

Written only while a front end's origin is set (`node.STAMP.origin`: the statement the language is
running), so a plain Python program pays one attribute test per event and keeps nothing. What is kept, each
as cheaply as the gradient-descent benchmark of bench/interpreter.py allows:

- **in-place changes**, on the tensor's version counter (`Version.log`, shared with views and detached
  aliases): runs `[origin, first, last]` saying that `origin` produced versions `first..last`, the last
  `RUNS` runs;
- **backward and grad() calls**: the last `KEPT` that succeeded, numbered, with their origin, flags, root
  nodes, inputs, and the `.grad`s they wrote (leaves by their AccumulateGrad node, retained non-leaves
  weakly). The roots of a call that freed its graph are held (only nodes stay alive: their saved values are
  gone), so that a later "backward through freed values" can be traced to the call that freed them; the
  roots of a call that kept its graph are held weakly (holding them would keep its saved values alive);
- **`.grad` set** (`x.grad = ...`, `zero_grad`): per tensor, the last time only (its origin and the number
  of the last call before it), on the leaf's AccumulateGrad node or, for other tensors, here.

So "which backward calls added into x.grad" is answered from the last `KEPT` calls: older history is gone,
and the front end says so.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .grad_mode import STAMP
from .interrupts import unsafe
from .reasons import failure, worded  # noqa: F401 - where the engine's modules have always found them

if TYPE_CHECKING:
    from .node import Node
    from .tensor import Tensor, Version

RUNS = 16  # runs of in-place changes kept per version counter
KEPT = 32  # backward/grad calls kept

# what the backward running now wrote .grad into (committed when it succeeds: a failed backward changes
# nothing, and leaves nothing here either): leaves' AccumulateGrad nodes, weak references to retained
# non-leaves
touched: list[Any] = []
SERIAL = [0]  # the number of the last call kept


class Call:
    """One backward or grad() call that succeeded (made from the kept tuple when asked for: a class rather
    than a NamedTuple, whose making would cost every cold start)."""

    __slots__ = ("serial", "origin", "accumulate", "retain_graph", "create_graph", "roots", "inputs", "wrote")

    def __init__(self, fields: tuple) -> None:
        (self.serial, self.origin, self.accumulate, self.retain_graph, self.create_graph, self.roots,
         self.inputs, self.wrote) = fields
        # accumulate: backward (into .grad) rather than grad(); roots: the root nodes (weak references when the
        # graph was kept); inputs: weak references to grad()'s inputs; wrote: the .grads written
        # (AccumulateGrad nodes, weak references to other tensors)

    def root_nodes(self) -> list[Node]:
        """The root nodes still alive."""
        out = []
        for r in self.roots:
            node = r() if isinstance(r, weakref.ref) else r
            if node is not None:
                out.append(node)
        return out

    def input_tensors(self) -> list[Tensor | None]:
        """The inputs (None for one that died)."""
        return [r() for r in self.inputs]

    def wrote_into(self, t: Tensor) -> bool:
        """Whether this call wrote into `t.grad`."""
        acc = t._accumulator
        return any(w() is t if type(w) is weakref.ref else w is acc for w in self.wrote)


calls: deque[tuple] = deque(maxlen=KEPT)  # Call's fields, as plain tuples


# -- in-place changes ----------------------------------------------------------------------------------
def changed(counter: Version) -> None:
    """An in-place change just bumped `counter`: the running origin produced its new version."""
    origin = STAMP.origin
    v = counter.value
    log = getattr(counter, "log", None)
    if log is None:
        counter.log = [[origin, v, v]]
        return
    last = log[-1]
    if last[0] is origin and last[2] == v - 1:
        last[2] = v
        return
    log.append([origin, v, v])
    if len(log) > RUNS:
        del log[0]


def changes(counter: Version | None) -> list[tuple[Any, int, int]]:
    """The runs `(origin, first version, last version)` of in-place changes kept for `counter`, oldest first
    (a version above the counter's present value was undone by a failed backward: not shown)."""
    if counter is None:
        return []
    now = counter.value
    return [(o, a, min(b, now)) for o, a, b in getattr(counter, "log", None) or () if a <= now]


# -- .grad set -------------------------------------------------------------------------------------------
# id(tensor) -> (a weak reference to it, (origin, serial)) for tensors without an AccumulateGrad node. Keyed
# by id, not a WeakKeyDictionary: that compares keys with `==`, which for tensors is elementwise.
_set_log: dict[int, tuple[weakref.ref, tuple[Any, int, bool]]] = {}


@unsafe  # a weak reference's callback (interrupts.py)
def _forget(ref: weakref.ref, key: int = 0) -> None:
    entry = _set_log.get(key)
    if entry is not None and entry[0] is ref:
        del _set_log[key]


def grad_set(t: Tensor, origin: Any, to_none: bool) -> None:
    """`t.grad = value` ran (zero_grad, an optimizer step's reset, the user) in `origin`."""
    acc = t._accumulator
    if acc is not None:
        acc.log = (origin, SERIAL[0], to_none)
        return
    key = id(t)
    _set_log[key] = (weakref.ref(t, lambda r, k=key: _forget(r, k)), (origin, SERIAL[0], to_none))


def last_set(t: Tensor) -> tuple[Any, int, bool] | None:
    """`(origin, number of the last call before it, whether it set None)` of the last `t.grad = ...`."""
    acc = t._accumulator
    found = getattr(acc, "log", None) if acc is not None else None
    entry = _set_log.get(id(t))
    if entry is not None and entry[0]() is t and (found is None or entry[1][1] > found[1]):
        found = entry[1]  # set before the tensor had an AccumulateGrad node, and not since
    return found


def grad_writes(t: Tensor) -> tuple[tuple[Any, int, bool] | None, list[Call]]:
    """What made `t.grad` what it is: its last set (or None) and the calls kept since that wrote into it."""
    cleared = last_set(t)
    after = cleared[1] if cleared is not None else -1
    return cleared, [c for c in recent() if c.serial > after and c.wrote_into(t)]


# -- backward and grad() calls ---------------------------------------------------------------------------
def ran(
    origin: Any, roots: list[Node], accumulate: bool, retain_graph: bool, create_graph: bool,
    inputs: Sequence[Tensor] | None,
) -> None:
    """A backward or grad() call succeeded: keep it (`roots` is the caller's list, kept as it is), with the
    `.grad`s it wrote. Kept as a plain tuple (this runs once per backward of a training loop); `recent()`
    gives them as `Call`s."""
    n = SERIAL[0] = SERIAL[0] + 1
    wrote = tuple(touched)
    touched.clear()
    if retain_graph:
        roots = [weakref.ref(r) for r in roots]
    calls.append((n, origin, accumulate, retain_graph, create_graph, roots,
                  () if inputs is None else tuple(weakref.ref(t) for t in inputs), wrote))


def recent() -> list[Call]:
    """The calls kept, oldest first."""
    return [Call(c) for c in calls]


def reaches(roots: Sequence[Node], target: Node, limit: int = 1_000_000) -> bool:
    """Whether `target` is in the graph below `roots` (an explicit stack; at most `limit` nodes looked at)."""
    seen: set[int] = set()
    stack = list(roots)
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is target:
            return True
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(n for n in node._next if n is not None)
    return False
