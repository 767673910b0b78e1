"""The engine's counters: each node's creation number, and each tensor's version counter.

Both live below the tensor and node modules, which both count: a node takes the next creation number when
made, a tensor bumps its version counter on every in-place change, and making a counter late (for a tensor
that older nodes may have saved without one) is noted against the creation numbers.
"""

from __future__ import annotations

from typing import Any

# Every node takes the next number when made (PyTorch's sequence_nr): the instrumented walk runs, among the
# nodes ready, the most recently made first, as PyTorch's does. Every creation site numbers its node: the
# hot ones inline `node._seq = SEQ[0] = SEQ[0] + 1` (half the cost of calling a counter), others call
# `next_seq()`. Not atomic across threads: numbers need only grow within a thread (PyTorch's are per thread).
SEQ = [0]


def next_seq() -> int:
    """The next creation number."""
    n = SEQ[0] = SEQ[0] + 1
    return n


# The creation number current when a version counter was last made for a tensor that existed before
# (`version_of`: an in-place change, a view, a .detach()). A node made before then may have saved such
# a tensor while it had no counter, so its `_versions` is None although the tensor may since have changed:
# the engine's pre-walk check looks into the saved values of nodes older than this (`node.may_be_stale`).
# While no counter was made late (a plain chain of operations), that costs the walk nothing.
LATE_COUNTER = [0]


class Version:
    """A version counter, shared by a tensor and its views/detached aliases; in-place ops bump it."""

    # `log`: set only while a front end keeps who changed what (provenance.py); an unset slot costs nothing
    __slots__ = ("value", "log")

    def __init__(self) -> None:
        self.value = 0


def version_of(t: Any) -> Version:
    """A tensor's version counter, made when first needed (an in-place change, a view, a saved output)."""
    v = t._vc
    if v is None:
        v = t._vc = Version()
        # nodes made before now may have saved `t` while it had no counter (their `_versions` say nothing
        # of it): backward's checks look into those (LATE_COUNTER)
        LATE_COUNTER[0] = SEQ[0]
    return v
