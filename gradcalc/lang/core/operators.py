"""The operators of expressions, as the engine's (and Python's) functions: `BINARY` and `UNARY`."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any


def _mul(a: Any, b: Any) -> Any:
    # Python would repeat a string or tuple: `"ab" * 10**9` must not allocate gigabytes
    if isinstance(a, (str, tuple, list)) or isinstance(b, (str, tuple, list)):
        raise TypeError("unsupported operand")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int and (b > 64 or b < 0):
        return float(a) ** b  # a huge exponent of Python ints would compute for ever
    return a**b


BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": _mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "@": operator.matmul,
    "**": _pow,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
UNARY: dict[str, Callable[[Any], Any]] = {"-": operator.neg, "+": operator.pos}
