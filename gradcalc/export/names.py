"""PyTorch's spelling of the language's built-ins, attributes and blocks, derived from the tables the language's
own names come from (LANGUAGE.md §5: the language's namespaces are PyTorch's modules).

- A built-in whose engine target is a path (`sin`, `autograd.grad`, `nn:nn.Linear`, `nn:optim.lr_scheduler.StepLR`)
  is that path under `torch`, spelled with the name PyTorch programs bind its module to (spaces.py's `SPACES`:
  `torch.sin`, `autograd.grad`, `nn.Linear`, `optim.lr_scheduler.StepLR`).
- A built-in the language implements itself (`py:`, `lang:` targets) is the member of the namespace that holds
  that very built-in (`torch.manual_seed`, `autograd.functional.jacobian`), else Python's own (`range`, `len`).
- `view(x, ...)`, `expand(x, ...)` (`method:` targets) are methods of their first argument.
- `with no_grad:` is the block of the first predefined namespace that has it (`torch.no_grad()`,
  `autograd.detect_anomaly()`).

Where the engine's name is not PyTorch's, `SPELLINGS` says PyTorch's (tests/export/test_export_names.py checks
every built-in, method and attribute against PyTorch, and that this table holds exactly the differences).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from typing import Any

from .language import (
    FUNCTIONS,
    METHODS,
    MODULE_METHODS,
    NAMESPACES,
    PREDEFINED_NAMESPACES,
    SPACES,
    Builtin,
    Checked,
    derive_spec,
    engine_object,
)

# The engine's names that PyTorch spells otherwise: built-in function -> PyTorch's function, tensor method ->
# PyTorch's function of the tensor (`x.softplus()` is `F.softplus(x)`), language attribute -> PyTorch's.
SPELLINGS: dict[str, str] = {
    "softplus": "torch.nn.functional.softplus",
    # torch has one too, but not documented, without nn.functional's (and the language's) size_average, reduce
    "binary_cross_entropy_with_logits": "torch.nn.functional.binary_cross_entropy_with_logits",
}
METHOD_SPELLINGS: dict[str, str] = {"softplus": "torch.nn.functional.softplus"}
ATTRIBUTE_SPELLINGS: dict[str, str] = {"version": "_version"}  # LANGUAGE.md §3: PyTorch's `_version`

# What a `py:` built-in gives that PyTorch's namesake does not: torch.manual_seed returns its generator, the
# language's `seed`/`manual_seed` returns nothing (so an expression statement of it prints nothing).
RETURNS_NOTHING = frozenset({"py:manual_seed"})


@dataclass(frozen=True)
class Spelled:
    """How PyTorch spells a built-in: `text` (`torch.sin`, `nn.Linear`, `range`), or `method` (`view`: a method of
    the first argument); `label` is the namespace name the text starts with (to import), if any."""

    text: str
    label: str | None = None
    method: str | None = None


def spelled_path(path: str) -> Spelled:
    """`torch.nn.functional.mse_loss` -> `F.mse_loss` (label F): a PyTorch path spelled with the name its module is
    bound to (SPACES), the longest module that has one."""
    parts = path.split(".")
    for k in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:k])
        label = SPACES.get(module)
        if label is not None:
            return Spelled(".".join([label, *parts[k:]]), label.split(".")[0])
    return Spelled(path, "torch" if parts[0] == "torch" else None)


@cache
def builtin_spelling(b: Builtin) -> Spelled:
    """PyTorch's spelling of built-in `b` (see the module docstring)."""
    if b.name in SPELLINGS and not b.method:
        return spelled_path(SPELLINGS[b.name])
    target = b.target.removeprefix("nn:")
    if target.startswith("method:"):
        return Spelled("", None, target[len("method:"):])
    if ":" not in target:
        return spelled_path(f"torch.{target}")
    for path, ns in NAMESPACES.items():
        if ns.has(b.name) and ns.member(b.name) is b:
            return spelled_path(f"{path}.{b.name}")
    return Spelled(b.name)  # Python's own: range, len, float


def label_import(label: str) -> str:
    """The import line that binds namespace name `label`: `import torch`, `import torch.nn as nn`."""
    path = next(p for p, lab in SPACES.items() if lab == label)
    return f"import {path}" if path == label else f"import {path} as {label}"


def block_spelling(mode: str) -> Spelled:
    """`with no_grad:` as PyTorch writes it: `torch.no_grad`, `autograd.detect_anomaly`."""
    for ns in PREDEFINED_NAMESPACES.values():
        if ns.has_block(mode):
            return Spelled(f"{ns.label}.{mode}", ns.label)
    return Spelled(f"torch.{mode}", "torch")  # pragma: no cover - every grad mode has a home (namespace.py)


# ---------------------------------------------------------------------------------------------------------
# What each argument of a built-in becomes (convert.py's kinds), and what a call returns


# nn.py's argument kinds (modules, losses, optimizers) as convert.py's: a number where a whole number or a
# number is wanted, a tensor where a tensor is; the rest as written ("P": Python's value, a list literal a list)
_NN_KINDS = {"tensor": "T", "whole": "I", "wholes": "I", "number": "N", "pair": "P"}


@cache
def argument_kinds(b: Builtin) -> tuple[tuple[str, ...], dict[str, str]]:
    """(the kinds of the positional parameters, a `*K` repeating; the kinds by keyword) of built-in `b`: the
    language's own (builtins.py derives them from the engine's signatures), or, for modules, losses and
    optimizers, nn.py's checked kinds (the language passes their arguments as they are, and nn.py converts them)."""
    if b.target.startswith("nn:"):
        return _nn_kinds(b)
    if b.target.startswith("lang:"):
        return ("*T",), {}  # the transforms: a function, then tensors (transforms.py makes numbers tensors)
    try:
        return b.spec()
    except Exception:  # noqa: BLE001 - a built-in the engine lacks: its arguments as written
        return ("*P",), {}


def _nn_kinds(b: Builtin) -> tuple[tuple[str, ...], dict[str, str]]:
    try:
        found = Checked(b.name, engine_object(b.target[len("nn:"):]))
    except Exception:  # noqa: BLE001 - not a checked callable: its arguments as written
        return ("*P",), {}
    kinds = {name: _NN_KINDS.get(kind, "P") for name, (kind, _) in found.kinds.items()}
    positional = []
    for p in found.signature.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            positional.append("*" + kinds.get(p.name, "P"))
        elif p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            positional.append(kinds.get(p.name, "P"))
    return tuple(positional), kinds


@cache
def method_kinds(name: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """The argument kinds of tensor method `name` (as builtins.py derives them)."""
    b = METHODS.get(name)
    if b is None:
        return ("*P",), {}
    try:
        return derive_spec(name, b.engine_callable(), True)
    except Exception:  # noqa: BLE001
        return ("*P",), {}


def kind_at(kinds: tuple[tuple[str, ...], dict[str, str]], position: int | None, keyword: str | None) -> str:
    """The kind of the argument at `position` (or named `keyword`)."""
    positional, by_name = kinds
    if keyword is not None:
        return by_name.get(keyword, "A")
    assert position is not None
    if position < len(positional) and not positional[position].startswith("*"):
        return positional[position]
    star = next((k for k in positional if k.startswith("*")), None)
    return star[1:] if star is not None else "A"


_RETURNS = {"Tensor": "tensor", "Tensor | None": "tensor", "int": "int", "float": "float", "bool": "bool",
            "Size": "shape", "Size | int": "int",
            "float | int | bool": "float"}


@cache
def method_returns(name: str) -> str | None:
    """What tensor method `name` returns (from the engine's annotation): "tensor", "int", "float", ... or None."""
    b = METHODS.get(name)
    if b is None:
        return None
    try:
        return _returned(str(inspect.signature(b.engine_callable()).return_annotation))
    except (TypeError, ValueError):
        return None


def _returned(annotation: str) -> str | None:
    return "tuple" if annotation.startswith("tuple") else _RETURNS.get(annotation)


@cache
def attribute_returns(name: str) -> str | None:
    """What tensor attribute `name` is (from the engine property's annotation)."""
    from gradcalc.autograd.tensor import Tensor

    prop = inspect.getattr_static(Tensor, name, None)
    annotation = getattr(getattr(prop, "fget", None), "__annotations__", {}).get("return")
    return _returned(str(annotation)) if annotation is not None else None


@cache
def builtin_returns(b: Builtin) -> str | None:
    """What built-in `b` returns: "tensor" for the engine's operations, "int"/"float" for Python's, a module or
    optimizer for nn's classes (from the engine's annotations and objects)."""
    target = b.target
    if target == "py:len":
        return "int"
    if target == "py:float":
        return "float"
    if target.startswith("nn:"):
        try:
            obj = engine_object(target[len("nn:"):])
        except Exception:  # noqa: BLE001
            return None
        return _class_kind(obj)
    if ":" in target:
        return None
    try:
        annotation = str(inspect.signature(b.resolve()).return_annotation)
    except Exception:  # noqa: BLE001
        return None
    return _returned(annotation)


def _class_kind(obj: Any) -> str | None:
    if not isinstance(obj, type):
        return "tensor"  # nn.functional's functions
    import gradcalc.nn
    import gradcalc.optim

    if issubclass(obj, gradcalc.nn.Module):
        return "module"
    if issubclass(obj, gradcalc.optim.Optimizer):
        return "optimizer"
    return None


@cache
def iterator_methods() -> frozenset[str]:
    """A module's methods that are generators in PyTorch (`parameters()`), which the language gives as lists:
    the export writes `list(net.parameters())` where the list is kept or shown."""
    import gradcalc.nn

    methods = [getattr(gradcalc.nn.Module, n, None) for n in MODULE_METHODS]
    return frozenset(n for n, m in zip(MODULE_METHODS, methods, strict=True)
                     if m is not None and str(inspect.signature(m).return_annotation).startswith("Iterator"))


def function_names() -> list[str]:
    """Every built-in function's name (for the tests' check against PyTorch)."""
    return sorted(FUNCTIONS)


# The engine's modules whose functions draw random numbers (ops/random.py's factories and fills, nn.init's)
_DRAWING_MODULES = ("gradcalc.autograd.ops.random", "gradcalc.nn.init")
_NOT_DRAWING = frozenset({"manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "zeros_", "ones_",
                          "constant_", "eye_", "dirac_", "calculate_gain"})


@cache
def draws(b: Builtin) -> bool:
    """Whether calling built-in `b` draws random numbers: a random factory, an nn.init fill, or a module whose
    parameters start random (it has `reset_parameters`)."""
    if b.name in _NOT_DRAWING:
        return False
    try:
        fn = b.resolve() if not b.target.startswith("nn:") else None
        if fn is None:
            fn = engine_object(b.target[len("nn:"):])
    except Exception:  # noqa: BLE001
        return False
    if isinstance(fn, type):
        return hasattr(fn, "reset_parameters")
    return getattr(fn, "__module__", "") in _DRAWING_MODULES


@cache
def method_draws(name: str) -> bool:
    """Whether tensor method `name` draws random numbers (`x.uniform_()`)."""
    b = METHODS.get(name)
    if b is None:
        return False
    try:
        return getattr(b.engine_callable(), "__module__", "") in _DRAWING_MODULES
    except Exception:  # noqa: BLE001
        return False


@cache
def returns_none(kind: str | None, name: str, args: bool = False) -> bool:
    """Whether method `name` of a value of `kind` ("tensor", "module", "optimizer"; None: a tensor's, when it has
    the method) gives None, by the engine's annotation: `x.retain_grad()`, `opt.zero_grad()`; `args`: it is
    given arguments."""
    if kind in ("tensor", "scalar", None) and name in METHODS:
        from gradcalc.autograd.tensor import Tensor

        owner: Any = Tensor
    elif kind == "module":
        import gradcalc.nn

        owner = gradcalc.nn.Module
    elif kind == "optimizer":
        import gradcalc.optim

        owner = gradcalc.optim.Optimizer
    else:
        return False
    if kind == "optimizer" and name == "step" and not args:
        return True  # step(closure=None) returns the closure's loss: None without one
    method = getattr(owner, name, None)
    if method is None:
        return False
    try:
        return str(inspect.signature(method).return_annotation) == "None"
    except (TypeError, ValueError):
        return False
