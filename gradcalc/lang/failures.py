"""Exceptions raised while a statement runs, as located `GradcalcError`s in the language's words."""

from __future__ import annotations

from typing import Any

from .builtins import describe
from .errors import GradcalcError, Loc

OP_WORDS = {
    "+": "add",
    "-": "subtract",
    "*": "multiply",
    "/": "divide",
    "//": "floor-divide",
    "%": "take the remainder of",
    "@": "matrix-multiply",
    "**": "raise to a power",
}

# Python's own words for an operator applied to values it does not take
_PYTHON_OPERAND_WORDS = (
    "unsupported operand",
    "not supported between",
    "can only concatenate",
    "can't multiply",
    "must be str",
    "not iterable",
    "bad operand type",
)


def error_from(exc: BaseException, loc: Loc | None) -> GradcalcError:
    """An exception raised while running, as a located GradcalcError in our words."""
    if isinstance(exc, GradcalcError):
        if exc.loc is None:
            exc.loc = loc
        return exc
    if isinstance(exc, RecursionError):
        return GradcalcError("the computation is nested too deeply (Python's recursion limit)", loc)
    if isinstance(exc, MemoryError):
        return GradcalcError("out of memory: the result is too large (see --max-elements)", loc)
    if isinstance(exc, ZeroDivisionError):
        return GradcalcError("division by zero (of Python numbers; tensors give inf or nan)", loc)
    if isinstance(exc, OverflowError):
        return GradcalcError(f"a number is too large: {exc}", loc)
    message = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        message = f"no key {exc.args[0]!r}"
    if not message:
        message = f"the engine failed ({type(exc).__name__})"
    return GradcalcError(message, loc)


def operator_error(exc: Exception, sym: str, a: Any, b: Any, loc: Loc) -> GradcalcError:
    """An operator's failure: Python's complaint about operand types as ours, naming both operands."""
    text = str(exc)
    if isinstance(exc, TypeError) and any(w in text for w in _PYTHON_OPERAND_WORDS):
        if sym in ("==", "!=", "<", "<=", ">", ">="):
            return GradcalcError(f"can't compare {describe(a)} with {describe(b)} using '{sym}'", loc)
        verb = OP_WORDS.get(sym, f"apply '{sym}' to")
        return GradcalcError(f"can't {verb} {describe(a)} and {describe(b)} (operator '{sym}')", loc)
    return error_from(exc, loc)
