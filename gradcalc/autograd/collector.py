"""The cyclic garbage collector and recorded graphs: while the engine records many nodes, the young objects that
survive a collection go straight to the oldest generation.

A recorded graph lives until its backward, and it makes no reference cycle (node.py: nothing refers from a
node to the tensor it produced), yet each node and each tuple of its edges is an object the cyclic collector
tracks. CPython (3.11 to 3.13) runs a full collection, which walks every tracked object of the process, each
time the objects promoted into the oldest generation since the last one reach a quarter of those that one
kept: a graph that grows is walked again at every quarter of growth, about five times over in all. In the deep
chain of bench/engine.py (10^5 steps on 100-vectors, 3·10^5 nodes) and in its scalar chain, that was about half
the time of the forward pass.

So, after a young collection during which the engine made many nodes (`MADE_AT` or more: most of what
survived is graph), the young generations are moved to the oldest one at once (gc.freeze, then gc.unfreeze,
as lang/syntax/parser/collector.py does for a long program). There they are collected by every full collection as any
old object is, but they are not counted as promoted, so they do not bring the next one forward. Bounded: at
most about `GROWTH` times as many objects as the last full collection kept (`OBJECTS_PER_NODE` per node made,
at least `FLOOR`) move this way between two full collections; then the collector's usual bookkeeping resumes
and the next full collection comes. A growing graph is then walked by a full collection each time it triples,
about one and a half times over in all. Cyclic garbage among those objects waits for that one: at most about
twice the old generation's size of it, instead of a quarter. (With a budget of once the old generation, the
graph was walked each time it doubled, and where the last of those fell depended on the size of the process
before the graph: the deep chain of 10^6 steps took one more full collection, 0.8 s of 10, when start-up made
fewer objects.)

Nothing else changes: `gc.collect()` collects everything as before, nothing stays frozen, no collection is
added, and nothing is done while the collector is disabled (no collection runs then) or when the process froze
objects of its own (unfreezing would release them). The hook is one call per collection; while it moves
objects, it counts the old generation once after each full collection (`gc.get_objects(2)`).
"""

from __future__ import annotations

import gc
from typing import Any

from .counters import SEQ

# Nodes made since the last collection for its young survivors to count as graph: a young collection runs every
# 700 net allocations of tracked objects (CPython's default threshold), a node is two or three of them.
MADE_AT = 100
OBJECTS_PER_NODE = 2  # a node and the tuple of its edges (their saved tensors are extra)
SKIP = 1000  # young collections to let pass before looking again whether the process still has frozen objects
GROWTH = 2  # objects moved between two full collections, in units of what the last one kept (see above)
FLOOR = 100_000  # objects moved between two full collections, at least (before the first one: at import, ~30,000 exist)


class _Budget:
    """What the hook remembers between collections."""

    __slots__ = ("seq", "moved", "kept", "skip")

    def __init__(self) -> None:
        self.seq = 0  # SEQ at the last collection
        self.moved = 0  # objects moved (counted as nodes × OBJECTS_PER_NODE) since the last full collection
        self.kept: int | None = FLOOR  # objects the last full collection kept, at least FLOOR (None: not counted yet)
        self.skip = 0  # young collections left before looking at the frozen objects again


BUDGET = _Budget()


def after_collection(phase: str, info: dict[str, Any]) -> None:
    """The gc.callbacks hook (see the module docstring)."""
    if phase != "stop":
        return
    budget = BUDGET
    seq = SEQ[0]
    made = seq - budget.seq
    budget.seq = seq
    if info["generation"] == 2:  # a full collection: the count starts again from what it kept, counted when needed
        budget.moved, budget.kept = 0, None
        return
    # (after a young collection only: one of the middle generation has just counted its survivors as promoted)
    if info["generation"] == 0 and made >= MADE_AT:
        if budget.skip:
            budget.skip -= 1
            return
        if gc.get_freeze_count():  # the process froze objects: leave them (counting them walks them: look again later)
            budget.skip = SKIP
            return
        if budget.kept is None:  # one pass over the old objects, once per full collection, by a process that records
            budget.kept = max(FLOOR, len(gc.get_objects(2)))
        if budget.moved < GROWTH * budget.kept:
            budget.moved += made * OBJECTS_PER_NODE
            gc.freeze()
            gc.unfreeze()


def install() -> None:
    """Add the hook to gc.callbacks (once)."""
    if after_collection not in gc.callbacks:
        gc.callbacks.append(after_collection)
