"""Namespace values: PyTorch's module prefixes (`torch.`, `nn.`, `F.`, `optim.`, `autograd.`, `func.` and the
modules inside them) as values whose attributes are the language's built-ins, split as PyTorch splits them
(LANGUAGE.md section 5).

spaces.py writes down PyTorch's module tree; what each namespace holds is derived here, in this order, so that a
built-in added to the language's tables appears in its namespace without a line here:

1. its child namespaces (`torch.nn.functional` is `nn.functional`);
2. the language's own forms of a namespace's functions (`OWN`): `func`'s transforms (func_namespace.py) and
   `autograd.backward` (whose bare name is the `backward` statement's keyword, so no built-in has it);
3. the built-ins whose engine target lives there (builtins.FUNCTIONS: `sin` is torch's, `autograd.grad`
   autograd's, `nn:nn.Linear` nn's, `nn:optim.Adam` optim's, `nn:nn.functional.mse_loss` F's);
4. torch's dtypes (the engine's DType values) and the predefined constants (torch.pi);
5. what the engine module that mirrors the namespace exports (`__all__`), where the language has it: a built-in
   of that name (`autograd.functional.jacobian`, `torch.manual_seed`; inside torch.nn and torch.optim the
   engine's own callable, checked as nn.py checks every module, so `F.relu(x, inplace=true)` is
   nn.functional's relu), a function of torch.nn or torch.optim (`nn.init.xavier_uniform_`), or the very
   engine object another namespace holds (`torch.vmap` is `func.vmap`).
Whatever else the engine module exports is PyTorch's but not the language's: an error naming it (with a habit's
pointer where there is one: `nn.Module`, `autograd.Function`). The grad modes (`torch.no_grad`) are blocks, for
`with`. A name another namespace holds says where it lives (`F.Adam`: `optim.Adam`); a misspelling gets a
did-you-mean. The engine modules load when a namespace first resolves a name (a plain run loads none).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import textwrap
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, TypeAlias, cast

import gradcalc
from gradcalc.autograd.tensor import DType

from ..errors import GradcalcError, Loc, close_matches
from ..habits import member_pointer
from ..syntax.keywords import GRAD_MODES
from .builtins import CONSTANTS, FUNCTIONS, Builtin
from .convert import describe
from .signatures import signature_text
from .spaces import FUNCTION_SPACES, PREDEFINED, SPACES, engine_module, is_checked

if TYPE_CHECKING:
    from types import ModuleType


class NamespaceFunction:
    """`func.grad` as a value: calling it binds the arguments (with our messages) and runs the function."""

    __slots__ = ("label", "fn")

    def __init__(self, label: str, fn: Callable[..., object]) -> None:
        self.label, self.fn = label, fn

    def __call__(self, *args: object, **kwargs: object) -> object:
        from .transforms import bind  # (transforms load when a program first calls one: not on a cold start)

        bind(self.label, self.fn, args, kwargs)
        return self.fn(*args, **kwargs)

    @property
    def doc(self) -> str:
        """`:help func.grad`: the signature and the docstring."""
        return f"{signature_text(self.label, self.fn)}: {' '.join((inspect.getdoc(self.fn) or '').split())}"

    def __repr__(self) -> str:
        return f"<built-in function {self.label}>"


class Missing:
    """The type of `_MISSING`: no such member."""


_MISSING = Missing()
# what a namespace's member is: a namespace, a built-in, a transform, a dtype or a constant (torch.pi)
Member: TypeAlias = "Namespace | Builtin | NamespaceFunction | DType | float"


class Namespace:
    """A namespace value: PyTorch module `path` (torch.nn), named `label` (nn). Its members are resolved on first
    use (see the module docstring) and kept, so `F.relu is F.relu`."""

    __slots__ = ("path", "label", "_resolved", "_names")

    def __init__(self, path: str, label: str) -> None:
        self.path, self.label = path, label
        self._resolved: dict[str, Member] = {}
        self._names: list[str] | None = None

    # -- members -------------------------------------------------------------------------------------------
    def member(self, attr: str, loc: Loc | None = None) -> Member:
        """`nn.Linear`: the member's value; an error saying why when there is none (see the module docstring)."""
        value = self._lookup(attr)
        if isinstance(value, Missing):
            raise GradcalcError(_missing_message(self, attr), loc)
        return value

    def _lookup(self, attr: str) -> Member | Missing:
        """The member, or `_MISSING`; a member found is kept."""
        value = self._resolved.get(attr, _MISSING)
        if isinstance(value, Missing):
            value = _resolve(self, attr)
            if not isinstance(value, Missing):
                self._resolved[attr] = value
        return value

    def call(
        self, attr: str, args: Sequence[object], kwargs: dict[str, object], loc: Loc | None = None
    ) -> object:
        """`nn.Linear(1, 1)`: the member, called."""
        fn = self.member(attr, loc)
        if isinstance(fn, Namespace) or not callable(fn):
            raise GradcalcError(f"{self.label}.{attr} is {describe(fn)}, not a function: it can't be called", loc)
        return fn(*args, **kwargs)

    def names(self) -> list[str]:
        """Every member's name (for completion and `:help`), sorted."""
        if self._names is None:
            candidates = set(_children(self.path)) | set(_own(self.path)) | set(_homed().get(self.path, ()))
            candidates |= set(_extras(self.path)) | set(_exported(self.path))
            self._names = sorted(n for n in candidates if not n.startswith("_") and self.has(n))
        return self._names

    def has(self, attr: str) -> bool:
        """Whether `attr` is a member (without raising)."""
        return not isinstance(self._lookup(attr), Missing)

    def has_block(self, mode: str) -> bool:
        """Whether `with NAMESPACE.mode():` is PyTorch's (`torch.no_grad`, `torch.autograd.detect_anomaly`)."""
        return mode in GRAD_MODES and mode in _exported(self.path)

    # -- help ------------------------------------------------------------------------------------------------
    def page(self) -> str:
        """`:help nn`: what the namespace is and what it holds."""
        names = self.names()
        spaces = [n for n in names if isinstance(self.member(n), Namespace)]
        rest = [n for n in names if n not in spaces]
        label = self.label
        lines = [f"{label}: PyTorch's {self.path}, as gradcalc has it: {label}.NAME (:help {label}.NAME)"]
        if spaces:
            shown = []
            for n in spaces:
                child = cast(Namespace, self.member(n))  # (a child namespace)
                spelled = f"{self.label}.{n}"
                shown.append(spelled if child.label == spelled else f"{spelled} ({child.label})")
            lines.append(f"namespaces: {' '.join(shown)}")
        lines += textwrap.wrap(f"members: {' '.join(rest) if rest else '(none in gradcalc yet)'}", 110,
                               subsequent_indent="  ")
        return "\n".join(lines)

    @property
    def described_as(self) -> str:
        """How messages name it (convert.describe)."""
        return f"the namespace {self.label}"

    def __repr__(self) -> str:
        return f"<module '{self.path}'>"


def member_kind(value: Member) -> str:
    """What a member is, in a word (the completion menu's note)."""
    if isinstance(value, Namespace):
        return "namespace"
    if isinstance(value, float):
        return "constant"
    return "built-in" if callable(value) else "dtype"


def page_of(value: Member, name: str) -> str:
    """The `:help` page of a namespace member."""
    if isinstance(value, Namespace):
        return value.page()
    doc = getattr(value, "doc", None)
    if isinstance(doc, str):
        return doc
    if isinstance(value, float):
        return f"{name}: the constant {value!r}"
    return f"{name}: the dtype {value}"


# ---------------------------------------------------------------------------------------------------------
# The namespaces, and the names of the language bound to them

NAMESPACES: dict[str, Namespace] = {path: Namespace(path, label) for path, label in SPACES.items()}
# the predefined names: torch, nn, F, optim, autograd, func (interpreter.py binds them)
PREDEFINED_NAMESPACES: dict[str, Namespace] = {ns.label: ns for ns in NAMESPACES.values() if ns.label in PREDEFINED}
FUNC = NAMESPACES["torch.func"]  # the torch.func transforms: func.grad(f), func.jacrev(f), ...


def lookup_path(dotted: str) -> Member | Missing:
    """A member reached from a predefined namespace by its dotted spelling (`nn.Linear`, `torch.nn.functional`,
    `F.relu`), as `:help` reads it; `_MISSING` when there is none."""
    first, *rest = dotted.split(".")
    value: Member | Missing = PREDEFINED_NAMESPACES.get(first, _MISSING)
    for part in rest:
        if not isinstance(value, Namespace) or not value.has(part):
            return _MISSING
        value = value.member(part)
    return value


def help_page(topic: str) -> str | None:
    """`:help nn.Linear`, `:help F.relu`, `:help torch.sin`, `:help torch.nn`: the member's page (a built-in's
    is the short name's), or None when `topic` is no namespace member."""
    value = lookup_path(topic)
    if isinstance(value, Missing):
        return None
    return page_of(value, topic.rsplit(".", 1)[-1])


# ---------------------------------------------------------------------------------------------------------
# Resolving a member (the module docstring's rules, in order)


@cache
def _children(path: str) -> dict[str, str]:
    """Child namespaces: name -> path."""
    prefix = path + "."
    return {p[len(prefix):]: p for p in SPACES if p.startswith(prefix) and "." not in p[len(prefix):]}


def _autograd_backward() -> Builtin:
    return Builtin("backward", "autograd.backward")


def _func_members() -> dict[str, Builtin | NamespaceFunction]:
    from .func_namespace import MEMBERS  # (the transforms load when a program first reads func.: not a cold start)

    return {name: NamespaceFunction(f"func.{name}", fn) for name, fn in MEMBERS.items()}


# The language's own forms (rule 2): path -> a function making the members (called on first use).
OWN: dict[str, Callable[[], dict[str, Builtin | NamespaceFunction]]] = {
    "torch.func": _func_members,
    "torch.autograd": lambda: {"backward": _autograd_backward()},
}
_own_made: dict[str, dict[str, Builtin | NamespaceFunction]] = {}


def _own(path: str) -> dict[str, Builtin | NamespaceFunction]:
    make = OWN.get(path)
    if make is None:
        return {}
    made = _own_made.get(path)
    if made is None:
        made = _own_made[path] = make()
    return made


def _own_member(path: str, name: str) -> Builtin | NamespaceFunction | Missing:
    return _own(path).get(name, _MISSING)


_homed_index: dict[str, dict[str, Builtin]] | None = None


def _homed() -> dict[str, dict[str, Builtin]]:
    """Rule 3: namespace path -> {name: built-in} for the built-ins whose engine target lives there."""
    global _homed_index
    if _homed_index is None:
        index: dict[str, dict[str, Builtin]] = {}
        for name, b in FUNCTIONS.items():
            target = b.target.removeprefix("nn:")
            if ":" in target:  # a method, Python's own, or a transform of the language's: no engine home
                continue
            *module, last = target.split(".")
            if last == name and ".".join(["torch", *module]) in SPACES:
                index.setdefault(".".join(["torch", *module]), {})[name] = b
        _homed_index = index
    return _homed_index


@cache
def _extras(path: str) -> dict[str, DType | float]:
    """Rule 4: torch's dtypes and constants."""
    if path != "torch":
        return {}
    dtypes = {n: v for n, v in vars(gradcalc).items() if isinstance(v, DType) and not n.startswith("_")}
    return {**dtypes, **CONSTANTS}


def _engine(path: str) -> ModuleType | None:
    """The engine module mirroring `path`, imported; None when the engine has none (yet)."""
    name = engine_module(path)
    module = sys.modules.get(name)
    if module is None:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            return None
    return module


def _exported(path: str) -> tuple[str, ...]:
    """What the engine module mirroring `path` exports (its `__all__`)."""
    module = _engine(path)
    return tuple(getattr(module, "__all__", ())) if module is not None else ()


def _resolve(ns: Namespace, name: str) -> Member | Missing:
    path = ns.path
    value: Member | Missing
    child = _children(path).get(name)
    if child is not None:
        return NAMESPACES[child]
    value = _own_member(path, name)
    if not isinstance(value, Missing):
        return value
    value = _homed().get(path, {}).get(name, _MISSING)
    if not isinstance(value, Missing):
        return value
    value = _extras(path).get(name, _MISSING)
    if not isinstance(value, Missing):
        return value
    if name.startswith("_") or name not in _exported(path):
        return _MISSING
    if is_checked(path):
        engine_object = getattr(_engine(path), name, None)
        if name in FUNCTIONS or inspect.isfunction(engine_object):
            return Builtin(name, f"nn:{engine_module(path).removeprefix('gradcalc.')}.{name}")
    elif path in FUNCTION_SPACES and callable(getattr(_engine(path), name, None)):
        # torch.linalg: each function its engine module exports is a built-in under it (linalg.solve), named as
        # PyTorch names it (`linalg_solve`: how it prints, and its messages)
        return _space_function(path, name)
    elif name in FUNCTIONS:
        return FUNCTIONS[name]
    return _alias(path, name)


@cache
def _space_function(path: str, name: str) -> Builtin:
    """The built-in for function `name` of FUNCTION_SPACES namespace `path` (one object per name)."""
    return Builtin(f"{path.rsplit('.', 1)[-1]}_{name}", f"{engine_module(path).removeprefix('gradcalc.')}.{name}")


def _alias(path: str, name: str) -> Member | Missing:
    """Rule 5's last case: the engine object another namespace holds as its own (`torch.vmap` is func.vmap)."""
    engine_object = getattr(_engine(path), name, None)
    if engine_object is None:
        return _MISSING
    for other in SPACES:
        if other == path:
            continue
        value = _own_member(other, name)
        if isinstance(value, Missing):
            value = _homed().get(other, {}).get(name, _MISSING)
        if not isinstance(value, Missing) and getattr(_engine(other), name, None) is engine_object:
            return value
    return _MISSING


# ---------------------------------------------------------------------------------------------------------
# Why a name is not a member


def home_of(name: str) -> Namespace | None:
    """The namespace a built-in or namespace function lives in, by its name (for `F.Adam`: optim)."""
    for path, names in _homed().items():
        if name in names:
            return NAMESPACES[path]
    for path in SPACES:
        if name in _own(path) or name in _children(path):
            return NAMESPACES[path]
    return None


def _missing_message(ns: Namespace, name: str) -> str:
    spelled = f"{ns.label}.{name}"
    if ns.has_block(name):
        return (f"{spelled} is a block, not a value: write `with {spelled}():` (or `with {name}:`) and the "
                f"statements to run in it, indented below")
    pointer = member_pointer(spelled)
    if name in _exported(ns.path):
        message = f"{spelled} is PyTorch's, but not part of gradcalc's language"
        return f"{message}: {pointer}" if pointer else message
    home = home_of(name)
    if home is not None and home is not ns:
        return f"{ns.label} has no '{name}': it is {home.label}.{name}"
    close = close_matches(name, ns.names(), n=1, cutoff=0.7)
    if close:
        return f"{ns.label} has no '{name}'; did you mean {ns.label}.{close[0]}?"
    message = f"gradcalc has no {spelled}"
    if pointer:
        return f"{message}: {pointer}"
    names = ns.names()
    if len(names) <= 40:
        return f"{message}; {ns.label} has: {', '.join(names) if names else 'nothing yet'}"
    return f"{message} (:help {ns.label} lists what it has)"
