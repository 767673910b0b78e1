"""The language's modules, losses and optimizers: callables of gradcalc.nn, nn.functional and gradcalc.optim
behind checked signatures.

builtins.py declares which names the language takes from the engine (`NN_BUILTINS`); each of those built-ins
resolves here on its first call, so that a plain run imports neither gradcalc.nn nor gradcalc.optim. The
methods of modules and optimizers (objects.py) are checked the same way. `Checked` wraps one engine callable:

- the parameters it shows are the engine's, less the implementation's own (`device=`, `foreach=`, ...:
  `HIDDEN`); a parameter that comes after a hidden one is taken by name only, so that an argument given by
  position never lands where PyTorch would put another;
- each argument is checked against the engine's annotation (`int`, `float`, `bool`, `str`, `Tensor`, a pair
  of numbers, a function, a module, a dict) or, where the annotation says nothing, against PyTorch's name for
  the parameter (`params` a list of tensors, `dtype` a dtype, `state_dict` a dict): `ANNOTATION_KINDS`,
  `NAMED_KINDS`;
- the arguments are bound as every built-in's are (calls.py `bind_arguments`, with hints: which arguments
  to give by name, the closest parameter name), and a wrong call says what is wrong, then the signature as
  `:help NAME` shows it (calls.py's one format).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from gradcalc import DType, Tensor

from ..errors import GradcalcError
from .calls import BOOLEAN, FUNCTION, NUMBER, STRING, TENSOR, WHOLE, bind_arguments, layout, must_be, wrong_call
from .convert import RawList, as_tensor, describe
from .signatures import signature_text
from .surfaces import OBJECT_CALLS

if TYPE_CHECKING:
    from gradcalc.nn import Module
    from gradcalc.optim import Optimizer

# PyTorch's parameters that only say how a computation runs (or are deprecated): not the language's.
HIDDEN = frozenset({
    "device", "size_average", "reduce", "foreach", "capturable", "differentiable", "fused", "_stacklevel",
    "generator", "memo", "destination", "memory_format",
    "_weight", "_freeze",  # Embedding's private ones (from_pretrained's way in)
})

# Why a hidden parameter is not the language's (said when one is given).
HIDDEN_WHY: dict[str, str] = {
    "device": "gradcalc runs on the CPU only: leave device= out",
    "size_average": "it is deprecated in PyTorch: use reduction=",
    "reduce": "it is deprecated in PyTorch: use reduction=",
    "memory_format": "gradcalc has one memory layout: leave it out",
    **dict.fromkeys(
        ("foreach", "capturable", "differentiable", "fused"),
        "it only chooses how PyTorch runs the update (gradcalc has one way): leave it out",
    ),
}

# What an argument must be, from the engine's annotation ...
ANNOTATION_KINDS: dict[str, str] = {
    "Tensor": "tensor", "int": "whole", "float": "number", "bool": "bool", "str": "string",
    "tuple[float, float]": "pair", "Module": "module", "Optimizer": "optimizer", "Iterable[int]": "wholes",
}
# ... or, where the annotation says nothing (`Any`), from PyTorch's name for the parameter.
NAMED_KINDS: dict[str, str] = {"params": "parameters", "dtype": "dtype", "state_dict": "dict", "milestones": "wholes"}
# (built-in, parameter): how the language shows and checks a parameter the engine declares as `*args`.
RENAMED: dict[tuple[str, str], tuple[str, str]] = {
    ("Sequential", "args"): ("modules", "module"),
    ("Identity", "args"): ("ignored", "any"),  # PyTorch's Identity takes any arguments and uses none of them
    # the containers' contents: annotated as Python's iterables and mappings, which say nothing a user reads
    ("ModuleList", "modules"): ("modules", "modules"),
    ("ModuleDict", "modules"): ("modules", "named modules"),
    ("ParameterList", "values"): ("values", "parameters"),
    ("ParameterDict", "parameters"): ("parameters", "named tensors"),
}

# What each kind takes, in the words every wrong call uses (calls.py's where the kinds are the same).
WANTS: dict[str, str] = {
    "tensor": TENSOR.text,
    "whole": WHOLE.text,
    "number": NUMBER.text,
    "bool": BOOLEAN.text,
    "string": STRING.text,
    "pair": "a pair of numbers such as (0.9, 0.999)",
    "function": FUNCTION.text,
    "module": "a module (such as Linear(1, 8) or Tanh())",
    "optimizer": "an optimizer (such as SGD(net.parameters(), lr=0.1))",
    "parameters": "a list of tensors (net.parameters(), or [w, b])",
    "dtype": "a dtype (float32 or float64)",
    "dict": "a dict (what state_dict() returns)",
    "wholes": "a list of whole numbers such as [30, 80]",
    "modules": "a list of modules (such as [Linear(2, 2), Tanh()])",
    "named modules": "a list of (name, module) pairs (such as [(\"act\", Tanh())]) or a dict of them",
    "named tensors": "a list of (name, tensor) pairs (such as [(\"w\", zeros(2))]) or a dict of them",
    "size": "a whole number or a tuple of them such as (3, 3)",
    "padding": "a whole number, a tuple of them, or \"same\" or \"valid\"",
}
# Annotations of a size given as one number or one per dimension (a kernel's, a stride...), and of a padding,
# which may also be PyTorch's word for one ("same", "valid").
SIZE_PARTS = frozenset({"int", "tuple[int, ...]"})
PADDING_PARTS = SIZE_PARTS | {"str"}


class WrongArgument(Exception):
    """An argument of the wrong kind (the caller words the message)."""


def shown(value: object) -> str:
    """A value as a message shows it: numbers and strings as written, anything else by its kind."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    return describe(value)


# ---------------------------------------------------------------------------------------------------
# Argument kinds


def _tensor(v: object) -> Tensor:
    if type(v) in (int, float, RawList):
        return as_tensor(v)
    if isinstance(v, Tensor):
        return v
    raise WrongArgument


def _one_number(v: object) -> int | float:
    """A Python number, or the value of a one-element tensor that does not require grad."""
    if isinstance(v, bool):
        raise WrongArgument
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, Tensor) and v.numel() == 1 and not v.requires_grad and v.dtype.is_floating_point:
        return v.item()
    raise WrongArgument


def _whole(v: object) -> int:
    x = _one_number(v)
    if isinstance(x, float):
        if not x.is_integer():
            raise WrongArgument
        return int(x)
    return x


def _bool(v: object) -> bool:
    if isinstance(v, bool):
        return v
    raise WrongArgument


def _string(v: object) -> str:
    if isinstance(v, str):
        return v
    raise WrongArgument


def _pair(v: object) -> tuple[int | float, int | float]:
    if isinstance(v, Tensor) and v.ndim == 1:
        v = tuple(v.unbind())
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return (_one_number(v[0]), _one_number(v[1]))
    raise WrongArgument


def _function(v: object) -> Callable[..., object]:
    if callable(v) and not isinstance(v, (Tensor, type)) and type(v) not in OBJECT_CALLS:
        return v  # (a module is called on tensors, not as a function of no arguments)
    raise WrongArgument


def _module(v: object) -> Module:
    from gradcalc.nn import Module  # (the engine's nn loads when a program first makes a module: not a cold start)

    if isinstance(v, Module):
        return v
    raise WrongArgument


def _wholes(v: object) -> list[int]:
    if isinstance(v, Tensor) and v.ndim == 1:
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_whole(x) for x in v]
    raise WrongArgument


def _size(v: object) -> int | tuple[int | None, ...]:
    """A whole number, or a tuple of them (none inside keeps a dim, where an adaptive pooling takes one)."""
    if isinstance(v, Tensor) and v.ndim == 1:
        v = tuple(v.unbind())
    if isinstance(v, (list, tuple)):
        return tuple(None if x is None else _whole(x) for x in v)
    return _whole(v)


def _padding(v: object) -> str | int | tuple[int | None, ...]:
    return v if isinstance(v, str) else _size(v)


def _modules(v: object) -> list[Module]:
    if isinstance(v, Tensor) and v.ndim == 1 and v.numel() == 0 and v.grad_fn is None:
        return []  # `[]` is an empty tensor in the language
    if isinstance(v, (list, tuple)):
        return [_module(m) for m in v]
    raise WrongArgument


def _named(check: Callable[[object], object]) -> Callable[[object], list[tuple[str, object]]]:
    """(name, value) pairs from a dict or a list of pairs, each value checked."""

    def convert(v: object) -> list[tuple[str, object]]:
        if isinstance(v, Tensor) and v.ndim == 1 and v.numel() == 0 and v.grad_fn is None:
            return []
        items = list(v.items()) if isinstance(v, dict) else v
        if not isinstance(items, (list, tuple)):
            raise WrongArgument
        out = []
        for pair in items:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[0], str):
                raise WrongArgument
            out.append((pair[0], check(pair[1])))
        return out

    return convert


def _optimizer(v: object) -> Optimizer:
    from gradcalc.optim import Optimizer  # (loads when a program first makes an optimizer: not a cold start)

    if isinstance(v, Optimizer):
        return v
    raise WrongArgument


def _parameters(v: object) -> list[Tensor]:
    if isinstance(v, Tensor) and v.ndim == 1 and v.numel() == 0 and v.grad_fn is None:
        return []  # `[]` is an empty tensor in the language: the engine then says the list is empty
    if isinstance(v, (list, tuple)) and all(isinstance(p, Tensor) for p in v):
        return [p for p in v if isinstance(p, Tensor)]  # (all of them: checked above)
    raise WrongArgument


def _dtype(v: object) -> DType:
    if isinstance(v, DType) and v.is_floating_point:
        return v
    raise WrongArgument


def _dict(v: object) -> dict[object, object]:
    if isinstance(v, dict):
        return v
    raise WrongArgument


CONVERT: dict[str, Callable[[object], object]] = {
    "tensor": _tensor, "whole": _whole, "number": _one_number, "bool": _bool, "string": _string,
    "pair": _pair, "function": _function, "module": _module, "optimizer": _optimizer, "parameters": _parameters,
    "dtype": _dtype, "wholes": _wholes, "size": _size, "padding": _padding,
    "dict": _dict, "any": lambda v: v,
    "modules": _modules, "named modules": _named(_module), "named tensors": _named(_tensor),
}


def kind_of(owner: str, p: inspect.Parameter) -> tuple[str, bool]:
    """(the kind of argument parameter `p` of `owner` takes, whether none is allowed too)."""
    annotation = "" if p.annotation is inspect.Parameter.empty else str(p.annotation)
    parts = [s.strip() for s in annotation.split("|")] if annotation else []
    optional = "None" in parts or (p.default is None)
    parts = [s for s in parts if s != "None"]
    renamed = RENAMED.get((owner, p.name))
    if renamed is not None:
        return renamed[1], optional
    if p.name in NAMED_KINDS and parts in ([], ["Any"]):
        return NAMED_KINDS[p.name], optional
    if len(parts) > 1 and "int" in parts and set(parts) <= PADDING_PARTS:
        return ("size" if set(parts) <= SIZE_PARTS else "padding"), optional
    if len(parts) == 1:
        only = parts[0]
        if only in ANNOTATION_KINDS:
            return ANNOTATION_KINDS[only], optional
        if only.startswith("Callable"):
            return "function", optional
        if only.startswith("dict"):
            return "dict", optional
    return "any", optional


# ---------------------------------------------------------------------------------------------------
# Checked callables


class Checked:
    """An engine callable as the language calls it: the parameters it shows, each argument checked, and
    messages that name `text` (the signature as `:help` shows it)."""

    def __init__(self, name: str, fn: Callable[..., object], method: bool = False, prefix: str = "") -> None:
        self.name, self.fn = name, fn
        params = list(inspect.signature(fn).parameters.values())
        if method:
            params = params[1:]
        shown_params: list[inspect.Parameter] = []
        self.kinds: dict[str, tuple[str, bool]] = {}
        self.var: str | None = None  # the shown name of a `*args` parameter
        by_position = True
        for p in params:
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                continue
            if p.name in HIDDEN:
                by_position = False
                continue
            shown_name = RENAMED.get((name, p.name), (p.name, ""))[0]
            self.kinds[shown_name] = kind_of(name, p)
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                self.var = shown_name
                shown_params.append(p.replace(name=shown_name, annotation=inspect.Parameter.empty))
                by_position = False
                continue
            if p.kind is inspect.Parameter.KEYWORD_ONLY:
                by_position = False
            kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if by_position else inspect.Parameter.KEYWORD_ONLY
            shown_params.append(p.replace(kind=kind, annotation=inspect.Parameter.empty))
        self.layout = layout(shown_params)
        self.label = prefix + name  # how a message names it: `Linear`, `SGD.step`
        self.signature = inspect.Signature(shown_params)
        self.text = prefix + signature_text(name, self)

    @property
    def __signature__(self) -> inspect.Signature:  # what inspect.signature (and signature_text) reads
        return self.signature

    def fail(self, problem: str) -> GradcalcError:
        """A wrong call, `problem` starting with the callable's name (calls.py's one format)."""
        return wrong_call(problem, self.text)

    def bind(self, args: Sequence[object], kwargs: Mapping[str, object]) -> tuple[list[object], dict[str, object]]:
        """The arguments, checked and converted: (the `*args` values, the others by name)."""
        for key in kwargs:
            if key in HIDDEN_WHY and key not in self.kinds:
                raise self.fail(f"{self.label} does not take an argument '{key}'; {HIDDEN_WHY[key]}")
        values, problem = bind_arguments(self.label, self.layout, args, kwargs, hints=True)
        if problem is not None:
            raise self.fail(problem)
        rest = list(values.pop(self.var, ())) if self.var is not None else []
        for key, value in values.items():
            values[key] = self.convert(key, value)
        if self.var is not None:
            rest = [self.convert(self.var, v, each=True) for v in rest]
        return rest, values

    def convert(self, key: str, value: object, each: bool = False) -> object:
        kind, optional = self.kinds[key]
        if value is None and optional:
            return None
        try:
            return CONVERT[kind](value)
        except WrongArgument:
            wants = WANTS[kind] + (" or none" if optional else "")
            raise self.fail(must_be(self.label, key, wants, shown(value), each)) from None

    def __call__(self, *args: object, **kwargs: object) -> object:
        rest, values = self.bind(args, kwargs)
        return self.fn(*rest, **values)

    def call_on(self, obj: object, args: Sequence[object], kwargs: Mapping[str, object]) -> object:
        """Call the method on `obj`, the arguments checked."""
        rest, values = self.bind(args, kwargs)
        return self.fn(obj, *rest, **values)
