"""The engine's modules import one way: no cycle among them, counting imports inside functions too, and
every import inside a function says why it is not at the top of its file (it saves start-up time).

A cycle held together by a function-level import is still a cycle: whoever reads one module must read the
other, and import order becomes load-bearing. The graph is read from the source (the `ast`), not from a
running interpreter, so an import no test happens to execute counts as well.
"""

from __future__ import annotations

from tests import import_graph as G
from tests.import_graph import cycles

PACKAGE = "gradcalc.autograd"

# Cycles allowed for now, each with its reason; an allowance no cycle needs any more is an error (remove
# it), so that this list only shrinks.
# Cycles allowed, each with its reason (none now: the list only shrinks, and a new entry needs a reason)
ALLOWED_CYCLES: dict[frozenset[str], str] = {}
# Files whose function-level imports are not yet labelled, with the reason; the same rule: only shrinks.
UNLABELLED_ALLOWED: dict[str, str] = {}


def graph() -> dict[str, set[str]]:
    return G.graph(PACKAGE)


def test_the_cycle_finder_finds_cycles() -> None:
    """The finder itself, on graphs whose answer is known: a triangle with a tail, two separate pairs."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}) == [frozenset("abc")]
    found = cycles({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c", "a"}})
    assert sorted(map(sorted, found)) == [["a", "b"], ["c", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_counts_function_level_imports() -> None:
    """The reader sees an import inside a function (tensor.py's printing, loaded on the first repr) and
    resolves `from . import x` and `from .x import y` to modules."""
    g = graph()
    assert "printing" in g["tensor"]
    assert {"plan", "ordered"} <= g["engine"]
    assert "node" in g["plan"]


def test_no_import_cycles_in_the_engine() -> None:
    found = cycles(graph())
    unexpected = [sorted(c) for c in found if not any(c <= allowed for allowed in ALLOWED_CYCLES)]
    assert not unexpected, f"import cycles among gradcalc/autograd's modules: {unexpected}"
    stale = [sorted(a) for a in ALLOWED_CYCLES if not any(c <= a for c in found)]
    assert not stale, f"these allowed cycles are gone: remove them from ALLOWED_CYCLES: {stale}"


def test_function_level_imports_say_they_save_start_up_time() -> None:
    """An import inside a function is there to keep a module off the start-up path, and says so in a
    comment on its line (or the line above); any other belongs at the top of the file."""
    bad, unlabelled_files = [], set()
    for rel, line in G.unlabelled_imports(PACKAGE):
        unlabelled_files.add(rel)
        if rel not in UNLABELLED_ALLOWED:
            bad.append(f"{rel}:{line}")
    assert not bad, f"function-level imports that do not say they save start-up time: {sorted(set(bad))}"
    stale = sorted(set(UNLABELLED_ALLOWED) - unlabelled_files)
    assert not stale, f"these files need no allowance any more: remove them from UNLABELLED_ALLOWED: {stale}"
