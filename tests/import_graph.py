"""Reading a package's import graph from its source (the `ast`, not a running interpreter, so that an import no
test happens to execute counts as well), for the tests that keep imports running one way
(tests/engine/test_import_graph.py, tests/lang/test_lang_layers.py)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what a comment on a function-level import must mention (on its line or the line above)
START_UP_WORDS = ("start-up", "startup", "start up", "cold start")


def modules(package: str) -> dict[str, Path]:
    """Every module of `package` by its dotted name relative to the package (`ops.shape`, `engine`; `` for the
    package's own __init__)."""
    base = ROOT / package.replace(".", "/")
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


def imports(package: str, name: str, path: Path, mods: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(module imported, line, inside a function) for each import of a module of `package` by module `name`;
    imports under `if TYPE_CHECKING:` do not run and are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    here = [package] + ([name] if name else [])
    here_parts = ".".join(here).split(".")
    found: list[tuple[str, int, bool]] = []

    def resolve(target: str) -> str | None:
        if target != package and not target.startswith(package + "."):
            return None
        rel = target[len(package) + 1:]
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
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}".removeprefix(package + ".") in mods
                           else prefix for a in child.names]
            for t in targets:
                r = resolve(t)
                if r is not None and r != name:
                    found.append((r, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (at its top or inside its functions)."""
    mods = modules(package)
    return {name: {t for t, _, _ in imports(package, name, path, mods)} for name, path in mods.items()}


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


def unlabelled_imports(package: str) -> list[tuple[str, int]]:
    """(file relative to the package, line) of each import inside a function whose comment (on its line or
    the line above) does not say it saves start-up time."""
    base = ROOT / package.replace(".", "/")
    bad = []
    for path in modules(package).values():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    near = " ".join(lines[max(0, node.lineno - 2):node.end_lineno or node.lineno]).lower()
                    if not any(w in near for w in START_UP_WORDS):
                        bad.append((path.relative_to(base).as_posix(), node.lineno))
    return sorted(set(bad))
