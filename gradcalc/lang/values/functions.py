"""The function values a program makes: `def` (a `UserFunction`), `function` (a custom autograd Function,
`CustomFunction`), and `x.sum` without the call (a `BoundMethod`); and how a tensor method is called.

A `UserFunction` runs its body through the closure its `def` statement compiled (statements/functions.py):
what a call binds and how deep calls may nest are decided here, the frame and the `return` there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from ..errors import GradcalcError
from ..limits import check_size
from .engine import ENGINE

if TYPE_CHECKING:
    from gradcalc import Tensor
    from gradcalc.autograd.function import Function

    from ..errors import Loc
    from ..syntax.source import Unit
    from .builtins import Builtin

MAX_CALL_DEPTH = 800  # nested calls of user functions (recursion)


class CallDepth(Protocol):
    """What a function value needs of the interpreter that runs it: how deep calls are nested now, and the
    statement running (hooks.py puts it back after a hook)."""

    depth: int
    current: tuple[Loc, Unit] | None


class UserFunction:
    """A function written with `def`: its name, parameters and default values, and `run`, which runs its body
    on the bound arguments in a new scope inside the one it was defined in, and gives what it returned."""

    __slots__ = ("name", "params", "defaults", "run", "interp", "__weakref__")

    def __init__(
        self,
        name: str,
        params: list[str],
        defaults: list[object],
        run: Callable[[dict[str, object]], object],
        interp: CallDepth,
    ) -> None:
        self.name, self.params, self.defaults = name, params, defaults
        self.run, self.interp = run, interp

    def bind(self, args: tuple[object, ...], kwargs: dict[str, object]) -> dict[str, object]:
        return bind_arguments(self.name, self.params, self.defaults, args, kwargs)

    def __call__(self, *args: object, **kwargs: object) -> object:
        bound = self.bind(args, kwargs)
        interp = self.interp
        if interp.depth >= MAX_CALL_DEPTH:
            raise GradcalcError(
                f"too deep a recursion: more than {MAX_CALL_DEPTH} nested calls (in {self.name})"
            )
        interp.depth += 1
        try:
            return self.run(bound)
        finally:
            interp.depth -= 1

    def __repr__(self) -> str:
        return f"<function {self.name}>"


def bind_arguments(
    name: str, params: list[str], defaults: list[object], args: tuple[object, ...], kwargs: dict[str, object]
) -> dict[str, object]:
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

    def __init__(self, name: str, cls: type[Function]) -> None:  # the engine's Function class (its apply)
        self.name, self.cls = name, cls

    def __call__(self, *args: object, **kwargs: object) -> object:
        if kwargs:
            raise GradcalcError(f"{self.name}() takes its inputs by position, not by keyword")
        return self.cls.apply(*args)

    def __repr__(self) -> str:
        return f"<function {self.name} (a custom autograd function)>"


class BoundMethod:
    """`x.sum` without the call: a tensor method as a value (`f = x.sum; f()`)."""

    __slots__ = ("obj", "builtin")

    def __init__(self, obj: Tensor, builtin: Builtin) -> None:
        self.obj, self.builtin = obj, builtin

    def __call__(self, *args: object, **kwargs: object) -> object:
        return invoke_method(self.builtin, self.obj, args, kwargs)

    @property
    def described_as(self) -> str:
        """How messages name it (convert.describe)."""
        return f"the method {self.builtin.name} of a tensor"

    def __repr__(self) -> str:
        return f"<method {self.builtin.name} of a tensor>"


def invoke_method(b: Builtin, obj: Tensor, args: Sequence[object], kwargs: dict[str, object]) -> object:
    """Call tensor method `b` on `obj`, arguments converted as the table says, the result's size checked."""
    try:
        if args or kwargs:
            converted, kw = b.convert(args, kwargs)
            result = getattr(obj, b.target)(*converted, **kw)
        else:
            result = getattr(obj, b.target)()
    except Exception as exc:
        from .calls import call_error  # (a failed call only: not loaded on a cold start)

        raise call_error(b, exc, args, kwargs) from None
    if type(result) is ENGINE.Tensor and result.numel() > ENGINE.limits.max_elements:
        check_size(result.numel(), f"x.{b.name}(...)")
    return result
