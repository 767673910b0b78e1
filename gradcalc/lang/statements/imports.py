"""`import` and `from ... import`: the imports a PyTorch program starts with bind the language's namespaces
(LANGUAGE.md section 5): `import torch`, `import torch.nn as nn`, `from torch import nn, optim`,
`from torch.nn import functional as F`, `from torch.func import grad`. Nothing else can be imported."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.frames import Closure, Frame
from ..errors import GradcalcError, Loc
from ..habits import name_pointer
from ..syntax.ast import Name, Stmt, rule, statement, token_loc
from ..syntax.keywords import check_name
from ..values.namespace import NAMESPACES
from ..values.spaces import SPACES

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@rule("dotted_name")  # dotted_name: NAME ("." NAME)*
def lower_dotted_name(*names: Any) -> list[tuple[str, Loc]]:
    return [(n, token_loc(n)) for n in names]  # (the tokens: the statement's span ends at the last; see Import)


@rule("import_path")  # import_path: dotted_name [AS NAME]
def lower_import_path(path: list[Any], kw: Any, alias: Any) -> tuple[list[Any], str | None, Loc]:
    if alias is not None:
        check_name(alias)
    return path, alias, path[0][1]


@rule("import_name")  # import_name: NAME [AS NAME]
def lower_import_name(name: Any, kw: Any, alias: Any) -> tuple[list[Any], str | None, Loc]:
    bound = alias if alias is not None else name
    check_name(bound)
    return [(name, token_loc(name))], alias, token_loc(name)


@statement("import_stmt")  # import_stmt: IMPORT import_path ("," import_path)* | FROM dotted_name IMPORT ...
class Import(Stmt):
    """import torch; import torch.nn as nn; import torch.nn.functional as F; from torch import nn, optim;
    from torch.nn import functional as F; from torch.func import grad, vmap. The imports a PyTorch program
    starts with: each binds a namespace (or a namespace's member) to a name, as Python does. The namespaces are
    there without an import too (torch, nn, F, optim, autograd, func); nothing else can be imported."""

    loc: Loc
    source: list[Any]  # `from SOURCE import ...`: its dotted name as [(name, where)]; [] for `import ...`
    items: list[Any]  # (dotted name [(name, where)], the name it is bound to or None, where)

    @classmethod
    def lower(cls, kw: Any, *rest: Any) -> Import:
        parts = [_plain(r) for r in rest if not isinstance(r, str)]  # (not `import` or the brackets' tokens)
        if kw.type == "FROM":
            source, *items = parts
            return cls(token_loc(kw), source, items)
        return cls(token_loc(kw), [], parts)


def _plain(part: Any) -> Any:
    """A dotted name or an import item with its tokens as plain strings (the record holds no tokens)."""
    if isinstance(part, list):
        return [(str(name), where) for name, where in part]
    path, alias, where = part
    return [(str(name), at) for name, at in path], None if alias is None else str(alias), where


def _module(path: list[tuple[str, Loc]]) -> Any:
    """The namespace a dotted module name names (`torch.nn.functional`), or an error saying what can be imported."""
    spelled = ".".join(name for name, _ in path)
    found = NAMESPACES.get(spelled)
    if found is not None:
        return found
    first, where = path[0]
    if first != "torch":
        pointer = name_pointer(first)
        hint = "; the built-ins need no import" + (f" ({pointer})" if pointer else "")
        raise GradcalcError(f"can't import {spelled}: only torch and its modules can be imported (nothing else is "
                            f"part of gradcalc){hint}", where)
    for k in range(len(path) - 1, 0, -1):  # torch.nn.Linear: a member, not a module
        parent = NAMESPACES.get(".".join(name for name, _ in path[:k]))
        if parent is not None:
            name, at = path[k]
            if k == len(path) - 1 and parent.has(name):
                raise GradcalcError(f"can't import {spelled}: it is not a module; write from {parent.path} import "
                                    f"{name}", at)
            modules = ", ".join(p for p in SPACES)
            raise GradcalcError(f"can't import {spelled}: gradcalc has {modules} (and nothing else can be "
                                f"imported)", at)
    raise AssertionError("torch is a namespace")  # pragma: no cover - path[0] is torch: k = 1 finds it


@compiles(Import)
def compile_import(c: Compiler, st: Import) -> Closure:
    binders = [c.binder(Name(alias or (path[0][0] if not st.source else path[-1][0]), where))
               for path, alias, where in st.items]
    source = st.source
    items = st.items

    def values() -> list[Any]:
        """Every name's value, all found before any is bound (a failed import binds nothing)."""
        if source:
            module = _module(source)
            return [module.member(path[0][0], where) for path, _, where in items]
        out = []
        for path, alias, _ in items:
            module = _module(path)
            out.append(module if alias is not None else NAMESPACES["torch"])  # `import torch.nn` binds torch
        return out

    def run(f: Frame) -> None:
        for bind, value in zip(binders, values(), strict=True):
            bind(f, value)

    return run


@translates(Import)
def translate_import(t: Translator, st: Import) -> None:
    """Written as it is (it is PyTorch's), a name the script renames as it is renamed; an import of anything
    but torch's modules is an error when it runs, as in the language."""
    if any(value is None for _, value in t.import_bindings(st)):
        t.line("raise ImportError('gradcalc can import only torch and its modules')")
        return

    def alias(name: str | None) -> str:
        return "" if name is None else f" as {t.import_name(name)}"

    if st.source:
        names = ", ".join(path[0][0] + alias(name) for path, name, _ in st.items)
        t.line(f"from {'.'.join(n for n, _ in st.source)} import {names}")
    else:
        t.line("import " + ", ".join(".".join(n for n, _ in path) + alias(name) for path, name, _ in st.items))
