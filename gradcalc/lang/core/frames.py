"""What a running program is made of: scopes, control-flow signals, and the function values a program makes.

The compiler (compiler.py) turns statements into closures over a `Frame`; this module holds what those
closures share at run time: `Frame` (one scope's variables), the signals control flow returns instead of
raising (`BREAK`, `CONTINUE`, `RETURN`), `Unit` (where compiled code came from), and the values `def`,
`function` and `x.method` (without a call) make.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import GradcalcError, Loc
from ..values.builtins import Builtin, check_size

if TYPE_CHECKING:
    from .interpreter import Interpreter

MAX_CALL_DEPTH = 800  # nested calls of user functions (recursion)

MISSING = object()


class _Signal:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BREAK = _Signal("BREAK")
CONTINUE = _Signal("CONTINUE")
RETURN = _Signal("RETURN")


class Unit(NamedTuple):
    """Where compiled code came from: errors and warnings inside it point into this text."""

    filename: str
    source: str
    interactive: bool = False  # a one-line REPL input: its diagnostics may drop the location


class Frame:
    """The variables of one scope: the workspace at top level, or a call's locals (then `parent` is the
    scope the function was defined in: closures see it)."""

    __slots__ = ("vars", "parent", "retval", "saved", "hints")

    def __init__(self, vars: dict[str, Any], parent: Frame | None) -> None:
        self.vars = vars
        self.parent = parent
        self.retval: Any = None
        self.saved: list[tuple[str, Any]] | None = None  # `save`d names, in a custom function's forward
        self.hints: dict[str, str] | None = None  # why a name may be missing (a forward local not saved)


Closure = Callable[[Frame], Any]


class _EngineNames:
    """Engine objects looked up once, when the first program is compiled (not at import)."""

    Tensor: type
    tensor: Callable[..., Any]
    Node: type
    limits: Any

    def load(self) -> None:
        if hasattr(self, "Tensor"):
            return
        import gradcalc
        from gradcalc import Tensor
        from gradcalc.autograd import Node

        from ..values.builtins import LIMITS

        self.Tensor, self.tensor, self.Node, self.limits = Tensor, gradcalc.tensor, Node, LIMITS


ENGINE = _EngineNames()


def truth(value: Any, loc: Loc) -> bool:
    """A condition's truth: a one-element tensor by its value; several elements are an error."""
    from ..values.failures import error_from

    try:
        return bool(value)
    except Exception as exc:
        raise error_from(exc, loc) from None


# ---------------------------------------------------------------------------------------------------
# Functions made by `def` and `function`


class UserFunction:
    """A function written with `def`: parameters, a compiled body, and the scope it closes over."""

    __slots__ = ("name", "params", "defaults", "body", "scope", "interp", "__weakref__")

    def __init__(
        self,
        name: str,
        params: list[str],
        defaults: list[Any],
        body: Closure,
        scope: Frame,
        interp: Interpreter,
    ) -> None:
        self.name, self.params, self.defaults = name, params, defaults
        self.body, self.scope, self.interp = body, scope, interp

    def bind(self, args: tuple, kwargs: dict) -> dict[str, Any]:
        return bind_arguments(self.name, self.params, self.defaults, args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame = Frame(self.bind(args, kwargs), self.scope)
        interp = self.interp
        if interp.depth >= MAX_CALL_DEPTH:
            raise GradcalcError(
                f"too deep a recursion: more than {MAX_CALL_DEPTH} nested calls (in {self.name})"
            )
        interp.depth += 1
        try:
            signal = self.body(frame)
        finally:
            interp.depth -= 1
        return frame.retval if signal is RETURN else None

    def __repr__(self) -> str:
        return f"<function {self.name}>"


def bind_arguments(
    name: str, params: list[str], defaults: list[Any], args: tuple, kwargs: dict
) -> dict[str, Any]:
    """Python's rules for positional, keyword and default arguments, with our messages."""
    n = len(params)
    if len(args) > n:
        raise GradcalcError(
            f"{name}() takes {n} argument{'s' * (n != 1)} ({', '.join(params)}), but {len(args)} were given"
        )
    values = dict(zip(params, args, strict=False))
    for key, value in kwargs.items():
        if key not in params:
            raise GradcalcError(
                f"{name}() has no parameter '{key}' (its parameters: {', '.join(params) or 'none'})"
            )
        if key in values:
            raise GradcalcError(f"{name}() got two values for '{key}'")
        values[key] = value
    if len(values) < n:
        first_default = n - len(defaults)
        for i, p in enumerate(params):
            if p not in values:
                if i < first_default:
                    raise GradcalcError(f"{name}() is missing its argument '{p}'")
                values[p] = defaults[i - first_default]
    return values


class CustomFunction:
    """A `function` block: a custom autograd Function of the engine (made by its `make_function`), called
    through its `apply`."""

    __slots__ = ("name", "cls", "__weakref__")

    def __init__(self, name: str, cls: type) -> None:
        self.name, self.cls = name, cls

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise GradcalcError(f"{self.name}() takes its inputs by position, not by keyword")
        return self.cls.apply(*args)

    def __repr__(self) -> str:
        return f"<function {self.name} (a custom autograd function)>"


class BoundMethod:
    """`x.sum` without the call: a tensor method as a value (`f = x.sum; f()`)."""

    __slots__ = ("obj", "builtin")

    def __init__(self, obj: Any, builtin: Builtin) -> None:
        self.obj, self.builtin = obj, builtin

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return invoke_method(self.builtin, self.obj, args, kwargs)

    def __repr__(self) -> str:
        return f"<method {self.builtin.name} of a tensor>"


def invoke_method(b: Builtin, obj: Any, args: tuple | list, kwargs: dict) -> Any:
    """Call tensor method `b` on `obj`, arguments converted as the table says, the result's size checked."""
    try:
        if args or kwargs:
            converted, kw = b.convert(args, kwargs)
            result = getattr(obj, b.target)(*converted, **kw)
        else:
            result = getattr(obj, b.target)()
    except Exception as exc:
        from ..values.calls import call_error

        raise call_error(b, exc, args, kwargs) from None
    if type(result) is ENGINE.Tensor and result.numel() > ENGINE.limits.max_elements:
        check_size(result.numel(), f"x.{b.name}(...)")
    return result
