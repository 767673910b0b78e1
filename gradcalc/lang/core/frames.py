"""What a running program is made of: scopes and the signals control flow returns.

The compiler turns statements into closures over a `Frame` (`Closure`); this module holds what those closures
share at run time: `Frame` (one scope's variables), the signals control flow returns instead of raising
(`BREAK`, `CONTINUE`, `RETURN`), and a condition's truth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import Loc
from ..values.failures import error_from

MISSING = object()  # a name not found in a scope (`vars.get(name, MISSING)`)


class Signal:
    """What a statement's closure returns to stop the block it is in: `break`, `continue`, `return`."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


BREAK = Signal("BREAK")
CONTINUE = Signal("CONTINUE")
RETURN = Signal("RETURN")


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


def truth(value: object, loc: Loc) -> bool:
    """A condition's truth: a one-element tensor by its value; several elements are an error."""
    try:
        return bool(value)
    except Exception as exc:
        raise error_from(exc, loc) from None
