"""The language reads the engine only through its public names (issue 19): nothing private of it.

Read from the source (`ast`) of `gradcalc/lang/`:
- every name imported from the engine (`gradcalc.autograd...`) comes from a public module and is one of its
  public names: PyTorch's modules (`autograd`, `graph`, `grad_mode`, `function`, `functional`,
  `forward_ad`), the front ends' `inspection` and the printer `printing`;
- no attribute of an engine object with a leading underscore is read or written (`t._data`,
  `node._next`, `getattr(t, "_vc")`), except PyTorch's own public ones (`_saved_self`, `_version`...).
  An engine private is any underscore name the engine's source defines; an attribute of the language's
  own objects (`self._keep`) is not one.

What a module still reads privately is listed in `ALLOWED`, with what replaces it. The list only shrinks: an
entry a module no longer needs is an error. `explain/` and `graph.py` (the tellers) are not on it: they
read the engine only through `gradcalc.autograd.inspection`, and tell its records apart by their types,
never by a class's name (`type(e).__name__ == "NodeRun"`).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANG = ROOT / "gradcalc" / "lang"
ENGINE = ROOT / "gradcalc" / "autograd"

# module -> the names the language may import from it (None: its __all__)
PUBLIC_MODULES: dict[str, set[str] | None] = {
    "gradcalc": None,
    "gradcalc.autograd": None,
    "gradcalc.autograd.inspection": None,  # what a front end reads of nodes, tensors, passes and errors
    "gradcalc.autograd.graph": None,  # PyTorch's torch.autograd.graph, plus origins and observers
    "gradcalc.autograd.grad_mode": {"restore_state", "save_state", "no_grad", "enable_grad", "set_grad_enabled",
                                    "inference_mode", "detect_anomaly", "set_detect_anomaly"},
    "gradcalc.autograd.function": {"Function", "FunctionCtx", "make_function"},
    "gradcalc.autograd.functional": None,
    "gradcalc.autograd.forward_ad": None,
    "gradcalc.autograd.printing": None,  # the engine's printer, which the language's renderer shares
    "gradcalc.autograd.interrupts": {"GUARD", "UNSAFE"},  # what a host that stops programs (Ctrl-C) reads
    "gradcalc.autograd.defaults": {"FLOAT64", "default_dtype"},  # a host's own default dtype, in its thread
    "gradcalc.autograd.spec": {"listen", "of", "OPS", "NODES"},  # the op specs the built-ins are derived from
    "gradcalc.autograd.tensor": {"Tensor", "DType", "Size", "is_parameter"},
}
# PyTorch's public names with a leading underscore (`grad_fn._saved_self`, `t._version`), and NamedTuple's
TORCH_PUBLIC = {"_version", "_base", "_is_view", "_sequence_nr", "_replace", "_fields", "_asdict"}
TORCH_PUBLIC_PREFIXES = ("_saved_", "_raw_saved_")

# file -> what it may still read, each with what replaces it in gradcalc.autograd.inspection
ALLOWED: dict[str, dict[str, str]] = {
    # the op-spec work (issue 19) owns builtins.py; the engine's table of functions becomes the spec's registry
    "values/builtins.py": {
        "import gradcalc.autograd.ops": "the op spec's registry of issue 19, not inspection",
    },
}


def engine_privates() -> set[str]:
    """Every name with one leading underscore the engine's source defines: functions, classes, module and
    class attributes, attributes set on objects, `__slots__` entries."""
    out: set[str] = set()

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    for path in ENGINE.rglob("*.py"):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and private(n.name):
                out.add(n.name)
            elif isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and private(n.attr):
                out.add(n.attr)
            elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and private(n.id):
                out.add(n.id)
            elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in n.targets):
                for e in getattr(n.value, "elts", []):
                    if isinstance(e, ast.Constant) and isinstance(e.value, str) and private(e.value):
                        out.add(e.value)
    return out - TORCH_PUBLIC


def _public_names(module: str) -> set[str]:
    allowed = PUBLIC_MODULES[module]
    if allowed is not None:
        return allowed
    return set(getattr(importlib.import_module(module), "__all__", ()))


def _is_torch_public(attr: str) -> bool:
    return attr in TORCH_PUBLIC or attr.startswith(TORCH_PUBLIC_PREFIXES)


def engine_modules() -> set[str]:
    """The dotted names of the engine's modules (`gradcalc.autograd.ops.shape`)."""
    out = set()
    for path in ENGINE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


def reads(path: Path, privates: set[str], package: str) -> list[tuple[str, int]]:
    """What the module at `path` (in `package`) reads of the engine that is not public: "import MODULE",
    "from MODULE import NAME" or ".ATTR", with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = engine_modules()
    found: list[tuple[str, int]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            base = package.split(".")
            module = (".".join(base[: len(base) - (n.level - 1)] + ([n.module] if n.module else []))
                      if n.level else n.module or "")
            if module != "gradcalc" and not module.startswith("gradcalc.autograd"):
                continue  # the language's own modules, the libraries on the engine (nn, optim, func)
            for a in n.names:
                sub = f"{module}.{a.name}"
                if module == "gradcalc" and sub != "gradcalc.autograd" and _is_module(sub):
                    continue  # a library beside the engine (plotting, nn, func...)
                if sub in modules:  # `from gradcalc.autograd import provenance`: a module
                    if sub not in PUBLIC_MODULES:
                        found.append((f"import {sub}", n.lineno))
                elif module not in PUBLIC_MODULES:
                    found.append((f"import {module}", n.lineno))
                elif a.name.startswith("_") or a.name not in _public_names(module):
                    found.append((f"from {module} import {a.name}", n.lineno))
        elif isinstance(n, ast.Import):
            for a in n.names:
                if a.name.startswith("gradcalc.autograd") and a.name not in PUBLIC_MODULES:
                    found.append((f"import {a.name}", n.lineno))
        elif isinstance(n, ast.Attribute):
            if n.attr in privates and not _is_torch_public(n.attr) and not _own(n.value):
                found.append((f".{n.attr}", n.lineno))
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id in ("getattr", "hasattr", "setattr", "delattr") and len(n.args) >= 2
              and isinstance(n.args[1], ast.Constant) and n.args[1].value in privates and not _own(n.args[0])):
            found.append((f".{n.args[1].value}", n.lineno))
    return found


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _own(receiver: ast.expr) -> bool:
    """An attribute of the language's own object (`self._keep`): not the engine's."""
    return isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")


def test_the_scan_finds_private_reads(tmp_path: Path) -> None:
    """The scan itself, on a module written to break every rule once (and to keep them once)."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from gradcalc.autograd.node import Node\n"
        "from gradcalc.autograd import provenance, functional, Node as N\n"
        "from gradcalc.autograd.inspection import saved, _typed\n"
        "from gradcalc.autograd.graph import observe_backward\n"
        "from ..autograd import engine\n"
        "from .names import Names\n"
        "def f(t, node):\n"
        "    self._next = 1\n"
        "    return t._data, node._next, getattr(t, '_vc', None), node._saved_self, t._version\n",
        encoding="utf-8",
    )
    found = {what for what, _ in reads(probe, engine_privates(), "gradcalc.lang")}
    assert found == {"import gradcalc.autograd.node", "import gradcalc.autograd.provenance",
                     "from gradcalc.autograd.inspection import _typed", "import gradcalc.autograd.engine",
                     "._data", "._next", "._vc"}


def test_the_language_reads_nothing_private_of_the_engine() -> None:
    privates = engine_privates()
    bad, stale = [], []
    for path in sorted(LANG.rglob("*.py")):
        rel = path.relative_to(LANG).as_posix()
        package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
        found = reads(path, privates, package)
        allowed = ALLOWED.get(rel, {})
        bad += [f"{rel}:{line}: {what}" for what, line in found if what not in allowed]
        stale += [f"{rel}: {what}" for what in allowed if what not in {w for w, _ in found}]
    assert not bad, "the language reads the engine's privates (use gradcalc.autograd.inspection):\n" + "\n".join(bad)
    assert not stale, "no longer read: remove from ALLOWED:\n" + "\n".join(stale)
    assert set(ALLOWED) <= {p.relative_to(LANG).as_posix() for p in LANG.rglob("*.py")}


TELLERS = ("tell/explain/", "tell/graph.py")  # what explain and graph tell: nothing of theirs may be on the list


def test_the_tellers_have_no_allowance() -> None:
    assert not [rel for rel in ALLOWED if rel.startswith(TELLERS)]


def class_name_tests(path: Path) -> list[int]:
    """The lines of `path` that test what an object is by its class's name (`type(x).__name__ == ...`, or
    `x.__class__.__name__` anywhere)."""
    found = []
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Attribute) and n.attr == "__name__" and (
                (isinstance(n.value, ast.Call) and getattr(n.value.func, "id", None) == "type")
                or (isinstance(n.value, ast.Attribute) and n.value.attr == "__class__")):
            found.append(n.lineno)
    return found


def test_the_tellers_tell_records_apart_by_type_not_by_name(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f(e):\n    return type(e).__name__ == 'NodeRun' or e.__class__.__name__\n", encoding="utf-8")
    assert class_name_tests(probe) == [2, 2]
    tellers = [p for p in LANG.rglob("*.py") if p.relative_to(LANG).as_posix().startswith(TELLERS)]
    assert len(tellers) > 5
    bad = [f"{p.relative_to(LANG).as_posix()}:{line}" for p in tellers for line in class_name_tests(p)]
    assert not bad, "use isinstance with inspection's records (or the language's classes):\n" + "\n".join(bad)


# what the tellers import of the engine: what they read, how a tensor prints, the statement running (STAMP)
TELLERS_READ = {"gradcalc.autograd.inspection", "gradcalc.autograd.printing", "gradcalc.autograd.graph"}


def test_the_tellers_read_the_engine_through_inspection() -> None:
    for path in LANG.rglob("*.py"):
        rel = path.relative_to(LANG).as_posix()
        if not rel.startswith(TELLERS):
            continue
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = ([n.module or ""] if isinstance(n, ast.ImportFrom) and not n.level
                       else [a.name for a in n.names] if isinstance(n, ast.Import) else [])
            for module in modules:
                if module == "gradcalc.autograd" or module.startswith("gradcalc.autograd."):
                    assert module in TELLERS_READ, f"{rel}:{n.lineno}: imports {module}"


def test_every_replacement_named_in_the_allow_list_exists() -> None:
    """The allow-list's replacements are real parts of the inspection API (the way off the list)."""
    from gradcalc.autograd import inspection

    for rel, entries in ALLOWED.items():
        for replacement in entries.values():
            if "not inspection" in replacement or replacement.startswith("public Tensor API"):
                continue
            names = re.findall(r"(?<![.\w])([A-Za-z_]\w*)\(", replacement) + re.findall(r"\b([A-Z]\w+)\.", replacement)
            assert names, f"{rel}: {replacement!r} names no replacement"
            for name in names:
                assert hasattr(inspection, name), f"{rel}: {name} is not in gradcalc.autograd.inspection"
