"""Why a call of a built-in failed, in the language's words: which argument is wrong, and what it takes.

This runs only on the way out of a failed call; the happy path never comes here. `call_error` binds the
arguments the user wrote to the built-in's parameters (as `:help NAME` shows them), checks each against what
its parameter takes (`EXPECT`, from the same annotations and PyTorch parameter names that decide what an
argument becomes, builtins.py), and names the first that does not fit, followed by the signature:

    norm: argument 'x' must be a tensor, not none. norm(x, p='fro', dim=none, keepdim=false, dtype=none)
    sum does not take an argument 'foo'. sum(x, dim=, keepdim=false, dtype=none)

The binding (`bind_arguments`), the wording of an argument of the wrong kind (`must_be`) and the format
(`wrong_call`: the problem, starting with the callable's name, then the signature) are every argument-checking
layer's: modules and optimizers (nn.py `Checked`) and the transforms (transforms.py `bind`) use them too.

When every argument fits, the failure is the engine's to explain (a shape mismatch, a dimension out of
range): its message stands, in PyTorch's words, once `failures.error_from` has made sure no Python or NumPy
insides show.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from gradcalc import DType, Tensor
from gradcalc.autograd import Node

from ..errors import ArgumentError, GradcalcError
from .convert import RawList, describe
from .failures import error_from, fallback, speaks_python, translate
from .signatures import OVERRIDES, PARAMETER_KINDS, engine_parameters, signature_text

if TYPE_CHECKING:
    from .builtins import Builtin

_EMPTY = inspect.Parameter.empty
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)

# PyTorch's names of parameters that take a tensor (a first parameter of another name may be anything)
TENSOR_NAMES = frozenset({
    "x", "input", "a", "t", "tensor", "self", "m", "v", "cond", "condition", "mat1", "mat2", "mat", "vec", "src",
    "source", "target", "weight", "index",
})


def call_error(b: Builtin, exc: BaseException, args: Sequence[object], kwargs: Mapping[str, object]) -> GradcalcError:
    """A failed call of built-in (or method) `b` with the language's values `args`, `kwargs`, as one
    GradcalcError: the argument that is wrong and the signature, else the engine's message."""
    if isinstance(exc, GradcalcError) and not isinstance(exc, ArgumentError):
        return exc  # in our words already: from the callee's own checks, or from a function it called
    if isinstance(exc, (RecursionError, MemoryError)):
        return error_from(exc, None)
    try:
        problem = diagnose(b, tuple(args), kwargs)
    except Exception:  # noqa: BLE001 - explaining must never be what fails
        problem = None
    if problem is not None:
        return wrong_call(problem, signature(b))
    message = translate(exc)
    if speaks_python(message):  # the engine's words were Python's: say what was given instead
        fallback.note(message, described=True)
        given = ", ".join(what(a) for a in args) or "no arguments"
        return wrong_call(f"{b.name} can't take {given}", signature(b))
    return error_from(exc, None)


def wrong_call(problem: str, signature: str) -> GradcalcError:
    """The one format of every wrong call's message, in every layer that checks arguments (built-ins and
    methods here, modules and optimizers in nn.py, transforms in transforms.py): the problem, starting with
    the callable's name, then its signature as `:help` shows it."""
    return GradcalcError(f"{problem}. {signature}")


def signature(b: Builtin) -> str:
    """The built-in's signature as `:help NAME` shows it."""
    return signature_text(b.name, b.engine_callable(), b.method)


# ---------------------------------------------------------------------------------------------------
# Binding: the arguments to the parameters, Python's rules in the language's words


def parameters(b: Builtin) -> list[inspect.Parameter]:
    return engine_parameters(b.engine_callable(), b.method)


def shown(name: str) -> str:
    """A parameter's name as the language shows it: a method's tensor is `x` in signatures, never `self`."""
    return "x" if name == "self" else name


def _names(params: list[inspect.Parameter]) -> str:
    return ", ".join(shown(p.name) for p in params)


def _quoted(names: list[str]) -> str:
    quoted = [f"'{shown(n)}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def bind(b: Builtin, args: tuple[object, ...], kwargs: Mapping[str, object]) -> tuple[dict[str, object], str | None]:
    """(parameter name -> argument, or a problem with how the call of built-in `b` is written)."""
    return bind_arguments(b.name, parameters(b), args, kwargs)


class Layout(NamedTuple):
    """A signature's parameters sorted for binding (worked out once by a callable checked on every call)."""

    params: list[inspect.Parameter]
    positional: list[inspect.Parameter]
    star: inspect.Parameter | None  # the `*args` parameter
    any_keyword: bool  # a `**kwargs` parameter takes any other name
    by_name: dict[str, inspect.Parameter]
    required: list[str]  # the names of the parameters without a default


def layout(params: list[inspect.Parameter]) -> Layout:
    """`params` sorted for `bind_arguments`."""
    return Layout(
        params,
        [p for p in params if p.kind not in _VARIADIC and p.kind is not inspect.Parameter.KEYWORD_ONLY],
        next((p for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None),
        any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params),
        {p.name: p for p in params if p.kind not in _VARIADIC and p.kind is not inspect.Parameter.POSITIONAL_ONLY},
        [p.name for p in params if p.kind not in _VARIADIC and p.default is _EMPTY],
    )


def bind_arguments(name: str, params: list[inspect.Parameter] | Layout, args: Sequence[object],
                   kwargs: Mapping[str, object], hints: bool = False) -> tuple[dict[str, object], str | None]:
    """(parameter name -> argument, or a problem with how the call is written): Python's rules for binding
    arguments to `params`, in the language's words, each problem starting with `name` (the callable as the
    user wrote it). Every layer that checks arguments (built-ins, modules and optimizers, transforms) binds
    here. `hints`: an argument given by position past the positional ones says which to give by name, and an
    unknown name suggests the closest parameter."""
    lay = params if isinstance(params, Layout) else layout(params)
    params, positional, star, takes_any_keyword, by_name, required = lay
    bound: dict[str, object] = {}
    if len(args) > len(positional) and star is None:
        given = f"{len(args)} {'was' if len(args) == 1 else 'were'} given"
        if not positional:
            return bound, f"{name} takes no arguments, but {given}"
        n = len(positional)
        count = f"{n} argument{'s' * (n != 1)}" if all(p.default is _EMPTY for p in positional) else (
            f"at most {n} argument{'s' * (n != 1)}"
        )
        keyword_only = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
        hint = f"; give {', '.join(k + '=' for k in keyword_only)} by name" if hints and keyword_only else ""
        return bound, f"{name} takes {count} ({_names(positional)}), but {given}{hint}"
    for p, a in zip(positional, args, strict=False):
        bound[p.name] = a
    if star is not None:
        bound[star.name] = tuple(args[len(positional):])
    for key, value in kwargs.items():
        if key not in by_name:
            if takes_any_keyword:
                continue
            close = _closest(key, list(by_name)) if hints else []
            hint = f" (did you mean '{shown(close[0])}='?)" if close else ""
            return bound, f"{name} does not take an argument '{key}'{hint}"
        if key in bound:
            return bound, f"{name}: argument '{shown(key)}' is given twice (by position and by name)"
        bound[key] = value
    missing = [key for key in required if key not in bound]
    if missing:
        return bound, f"{name} needs argument{'s' * (len(missing) > 1)} {_quoted(missing)}"
    return bound, None


def _closest(key: str, names: list[str]) -> list[str]:
    import difflib  # only a wrong call pays for it, not a cold start

    return difflib.get_close_matches(key, names, n=1)


def must_be(name: str, param: str, wants: str, given: str, each: bool = False) -> str:
    """The problem of an argument of the wrong kind: `norm: argument 'x' must be a tensor, not none`
    (`each`: one of the values a `*args` parameter collects)."""
    who = f"'{shown(param)}'" if each else f"argument '{shown(param)}'"
    return f"{name}: {who} must be {wants}, not {given}"


# ---------------------------------------------------------------------------------------------------
# What each parameter takes


class Expect(NamedTuple):
    """What a parameter takes: its description, and whether a value fits (element by element for lists)."""

    text: str
    fits: Callable[[object], bool]
    each: bool = False  # a list or tuple is checked element by element (`cat([a, b])`)


def _engine() -> tuple[type[Tensor], type[Node], type[DType]]:
    return Tensor, Node, DType


def _number(v: object) -> bool:
    return type(v) in (int, float)


def _tensorlike(v: object) -> bool:
    return _number(v) or type(v) is RawList or isinstance(v, _engine()[0])


def _whole(v: object) -> bool:
    if isinstance(v, bool) or type(v) is int:
        return True
    if type(v) is float:
        return v.is_integer()
    if isinstance(v, _engine()[0]):
        if v.ndim > 1 and v.numel() != 1:
            return False
        return all(float(x).is_integer() for x in v.reshape(-1).tolist())
    if isinstance(v, (list, tuple)):
        return all(_whole(x) and _scalar(x) for x in v)
    return False


def _scalar(v: object) -> bool:
    """One number (or a one-element tensor), not several."""
    return not isinstance(v, (list, tuple)) and not (isinstance(v, _engine()[0]) and v.numel() != 1)


def _data(v: object) -> bool:
    if isinstance(v, (list, tuple)):
        return all(_data(x) for x in v)
    return _number(v) or isinstance(v, bool) or isinstance(v, _engine()[0])


def what(v: object) -> str:
    """A value as a message names it: numbers by their value (`not 2.5`), the rest by their kind."""
    if _number(v):
        return str(int(v)) if type(v) is float and v.is_integer() and abs(v) < 1e16 else repr(v)
    return describe(v)


def _function(v: object) -> bool:
    return callable(v) and not isinstance(v, (type, _engine()[0]))


TENSOR = Expect("a tensor", _tensorlike)
TENSORS = Expect("a tensor or a list of tensors", _tensorlike, each=True)
WHOLE = Expect("a whole number", _whole)
WHOLES = Expect("whole numbers", _whole)
WHOLE_ONE = Expect("a whole number", lambda v: _whole(v) and _scalar(v))
NUMBER = Expect("a number", lambda v: _number(v) or isinstance(v, bool) or (
    isinstance(v, _engine()[0]) and v.numel() == 1 and not v.requires_grad))
BOUND = Expect("a number or a tensor", lambda v: _tensorlike(v) or isinstance(v, bool))
DATA = Expect("a number or a list of numbers", _data)
FUNCTION = Expect("a function", _function)
BOOLEAN = Expect("true or false", lambda v: isinstance(v, (bool, int)) or (
    isinstance(v, _engine()[0]) and v.numel() == 1 and not v.dtype.is_floating_point))
STRING = Expect("a string", lambda v: isinstance(v, str))
DTYPE = Expect("a dtype (float32, float64, int64 or bool)", lambda v: isinstance(v, _engine()[2]))
OPERAND = Expect("a tensor or a number", lambda v: _tensorlike(v) or isinstance(v, bool))
DIM_OR_TENSOR = Expect("a dimension or a tensor", lambda v: isinstance(v, _engine()[0]) or type(v) is RawList or (
    type(v) is int))
TARGET = Expect("a dtype, a tensor or a device", lambda v: isinstance(v, (str, bool, _engine()[0], _engine()[2])))
SINGLE = frozenset({"n", "m", "steps", "chunks", "diagonal", "dim0", "dim1", "start_dim", "end_dim", "length"})

BY_KIND = {"T": TENSOR, "L": TENSORS, "I": WHOLE, "*I": WHOLES, "N": NUMBER, "D": DATA, "F": FUNCTION}


def expectation(b: Builtin, p: inspect.Parameter, kind: str | None) -> Expect | None:
    """What parameter `p` of `b` takes, when that can be told (None: anything, as far as we know)."""
    parts = {s.strip() for s in str(p.annotation).split("|")} if p.annotation is not _EMPTY else set()
    if kind == "T" and not ("Tensor" in parts or p.name in TENSOR_NAMES or "T" in (
            PARAMETER_KINDS.get(p.name), OVERRIDES.get((b.name, p.name)))):
        kind = None  # a first parameter taken for a tensor by position only (`device(type)`)
    if kind == "N" and p.name in ("min", "max", "value", "fill_value"):
        return BOUND  # clamp's bounds, fill_'s value: numbers or tensors
    if kind == "I" and (parts - {"None"} == {"int"} or p.name in SINGLE):
        return WHOLE_ONE  # one dimension or size, not several
    if p.kind is inspect.Parameter.VAR_POSITIONAL and p.name == "target":
        return TARGET  # x.to(float32), x.to(other)
    if kind in BY_KIND:
        return BY_KIND[kind]
    if parts - {"None"} == {"bool"}:
        return BOOLEAN
    if parts - {"None"} == {"str"}:
        return STRING
    if p.name == "dtype":
        return DTYPE
    if p.name in ("b", "other"):
        return OPERAND
    if p.name == "dim":  # max(x, dim) or max(x, other)
        return DIM_OR_TENSOR
    if p.name in TENSOR_NAMES:
        return TENSOR
    if p.name == "type" and b.name == "device":
        return STRING
    return None


def _accepts_none(p: inspect.Parameter) -> bool:
    return p.default is None or "None" in str(p.annotation)


def diagnose(b: Builtin, args: tuple[object, ...], kwargs: Mapping[str, object]) -> str | None:
    """The first problem with a call of `b`, in the language's words (None when every argument fits)."""
    bound, problem = bind(b, args, kwargs)
    if problem is not None or b.target.startswith("py:"):
        return problem  # Python's own built-ins (range, len, float) check their argument themselves
    positional_kinds, keyword_kinds = b.spec()
    params = parameters(b)
    position = 0
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            kind = positional_kinds[-1] if positional_kinds and positional_kinds[-1].startswith("*") else None
        elif p.kind is inspect.Parameter.KEYWORD_ONLY or position >= len(positional_kinds):
            kind = keyword_kinds.get(p.name)
        else:
            kind = positional_kinds[position] if p.name not in kwargs else keyword_kinds.get(p.name)
            position += 1
        if p.name not in bound:
            continue
        value = bound[p.name]
        expect = expectation(b, p, kind)
        if expect is None:
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:  # `zeros(2, 3)` or `zeros([2, 3])`
            one = len(value) == 1 and isinstance(value[0], (list, tuple)) and expect is WHOLES
            values = value[0] if one else value
            for v in values:
                if not expect.fits(v) or (len(value) > 1 and not _scalar(v)):
                    return must_be(b.name, p.name, expect.text, what(v), each=True)
            continue
        if value is None and (_accepts_none(p) or repr(p.default) == "None") or (
                isinstance(value, str) and isinstance(p.default, str)):
            continue  # none where none is the default; a string where the default is one (norm's p='fro')
        if expect.each and isinstance(value, (list, tuple)) and type(value) is not RawList:
            for i, v in enumerate(value):
                if not (expect.fits(v) or (v is None and "None]" in str(p.annotation))):
                    return (f"{b.name}: argument '{shown(p.name)}' must be {expect.text}, "
                            f"but its element {i} is {what(v)}")
            continue
        if not expect.fits(value):
            return must_be(b.name, p.name, expect.text, what(value))
    return None
