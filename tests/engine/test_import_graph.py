"""The engine's modules import one way: no cycle among them, counting imports inside functions too, and
every import inside a function says why it is not at the top of its file (it saves start-up time).

A cycle held together by a function-level import is still a cycle: whoever reads one module must read the
other, and import order becomes load-bearing. The graph is read from the source (the `ast`), not from a
running interpreter, so an import no test happens to execute counts as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "gradcalc.autograd"

# Cycles allowed for now, each with its reason; an allowance no cycle needs any more is an error (remove
# it), so that this list only shrinks.
# Cycles allowed, each with its reason (none now: the list only shrinks, and a new entry needs a reason)
ALLOWED_CYCLES: dict[frozenset[str], str] = {}
# Files whose function-level imports are not yet labelled, with the reason; the same rule: only shrinks.
UNLABELLED_ALLOWED: dict[str, str] = {}
# what a comment on a function-level import must mention
START_UP_WORDS = ("start-up", "startup", "start up", "cold start")


def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name relative to the package (`ops.shape`, `engine`)."""
    base = ROOT / PACKAGE.replace(".", "/")
    out = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts)] = path
    return out


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for each import of a module of the package by `name`;
    imports under `if TYPE_CHECKING:` do not run and are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    here = [PACKAGE] + ([name] if name else [])
    here_parts = ".".join(here).split(".")
    found: list[tuple[str, int, bool]] = []

    def resolve(target: str) -> str | None:
        if not target.startswith(PACKAGE):
            return None
        rel = target[len(PACKAGE) + 1:]
        while rel and rel not in mods:
            rel = rel.rpartition(".")[0]
        return rel if rel in mods else None

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = here_parts if is_pkg else here_parts[:-1]
                    base = base[: len(base) - (child.level - 1)]
                    prefix = ".".join(base + ([child.module] if child.module else []))
                else:
                    prefix = child.module or ""
                # `from P import a`: the module P.a when there is one, else P itself
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}".removeprefix(PACKAGE + ".") in mods
                           else prefix for a in child.names]
            for t in targets:
                r = resolve(t)
                if r is not None and r != name:
                    found.append((r, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, with an explicit stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[frozenset[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: {t for t, _, _ in imports(name, path, mods)} for name, path in mods.items()}


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
    mods = modules()
    base = ROOT / PACKAGE.replace(".", "/")
    bad, unlabelled_files = [], set()
    for path in mods.values():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    near = " ".join(lines[max(0, node.lineno - 2):node.end_lineno or node.lineno]).lower()
                    if not any(w in near for w in START_UP_WORDS):
                        rel = path.relative_to(base).as_posix()
                        unlabelled_files.add(rel)
                        if rel not in UNLABELLED_ALLOWED:
                            bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"function-level imports that do not say they save start-up time: {sorted(set(bad))}"
    stale = sorted(set(UNLABELLED_ALLOWED) - unlabelled_files)
    assert not stale, f"these files need no allowance any more: remove them from UNLABELLED_ALLOWED: {stale}"
