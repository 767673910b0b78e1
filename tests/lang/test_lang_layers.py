"""The language's packages import one way (docs/contributing.md): syntax < values < tell < core < statements <
the session, over a few base modules; no module imports one of a higher layer, there is no cycle among the
modules (counting imports inside functions), and an import inside a function says it saves start-up time.

The graph is read from the source (tests/import_graph.py), so an import no test runs counts as well.
"""

from __future__ import annotations

from tests import import_graph as G

PACKAGE = "gradcalc.lang"

# Lowest first. A module may import from its own layer and those before it, never from a later one.
LAYERS: list[tuple[str, set[str]]] = [
    ("base", {"errors", "limits", "habits"}),  # what every layer says and checks
    ("syntax", {"syntax"}),  # the grammar, the parser, the records: nothing of compiling or values
    ("values", {"values"}),  # the values other than tensors, and how they are called
    ("tell", {"tell"}),  # what the language tells: printing, :help, :vars, explain, graph, names, saved values
    ("core", {"core"}),  # frames, the compiler, the interpreter, origins
    ("statements", {"statements"}),  # each statement's record and compile function
    ("top", {"session", ""}),  # the session, and the package's public names
]
# Files whose function-level imports are not labelled yet, with the reason (the list only shrinks).
UNLABELLED_ALLOWED: dict[str, str] = {}


def layer_of(module: str) -> int:
    """The index in LAYERS of the layer a module of the package belongs to (by its first component)."""
    top = module.split(".")[0]
    for i, (_, parts) in enumerate(LAYERS):
        if top in parts:
            return i
    raise AssertionError(f"gradcalc/lang/{top} belongs to no layer: add it to LAYERS")


def test_every_module_has_a_layer() -> None:
    for module in G.modules(PACKAGE):
        layer_of(module)


def test_imports_run_down_the_layers() -> None:
    mods = G.modules(PACKAGE)
    upward = []
    for name, path in mods.items():
        for target, line, _ in G.imports(PACKAGE, name, path, mods):
            if layer_of(target) > layer_of(name):
                upward.append(f"{path.relative_to(G.ROOT)}:{line}: {LAYERS[layer_of(name)][0]} imports "
                              f"{target} ({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports against the layers (docs/contributing.md):\n" + "\n".join(upward)


def test_the_layer_check_sees_an_import_up() -> None:
    """The check itself: an import of core/ from syntax/ (or of the session from anywhere) would be flagged."""
    assert layer_of("core.compiler") > layer_of("syntax.lower")
    assert layer_of("session") > layer_of("statements.plot") > layer_of("core.compiler") > layer_of("tell.render")
    assert layer_of("tell.render") > layer_of("values.builtins") > layer_of("syntax.parser.fast") > layer_of("errors")


def test_no_import_cycles_among_the_modules() -> None:
    found = G.cycles(G.graph(PACKAGE))
    assert not found, f"import cycles in gradcalc/lang: {[sorted(c) for c in found]}"


def test_the_graph_counts_function_level_imports() -> None:
    """The reader sees imports inside functions (builtins' transforms, loaded on a first transform) and
    resolves `from . import x` and `from .x import y` to modules."""
    g = G.graph(PACKAGE)
    assert "values.transforms" in g["values.builtins"]
    assert "core.compiler" in g["session"]
    assert "syntax.ast" in g["syntax.lower"]


def test_function_level_imports_say_they_save_start_up_time() -> None:
    bad, files = [], set()
    for rel, line in G.unlabelled_imports(PACKAGE):
        allowance = next((a for a in UNLABELLED_ALLOWED if rel == a or rel.startswith(a)), None)
        if allowance is None:
            bad.append(f"{rel}:{line}")
        else:
            files.add(allowance)
    assert not bad, f"function-level imports that do not say they save start-up time: {bad}"
    stale = sorted(set(UNLABELLED_ALLOWED) - files)
    assert not stale, f"these need no allowance any more: remove them from UNLABELLED_ALLOWED: {stale}"
