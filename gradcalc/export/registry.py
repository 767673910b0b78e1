"""The registry of statement translations: `@translates(Record)` beside each statement's `@compiles(Record)`
(gradcalc/lang/statements/*.py), as the compile functions are registered beside their records.

A translation function takes the translator and the statement's record and writes the statement's PyTorch
lines through the translator (`t.line(...)`, `t.block(body)`, `t.expr(node)`: gradcalc/export/script.py).
This module imports nothing, so that the statements' modules can register their translations at no cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

# statement record type -> its translation function (translator, record) -> None; filled by @translates
TRANSLATIONS: dict[type, Callable[[Any, Any], None]] = {}

F = TypeVar("F", bound=Callable[..., None])


def translates(kind: type) -> Callable[[F], F]:
    """Register the PyTorch translation of statement record `kind` (a function of the translator and a record)."""

    def register(fn: F) -> F:
        TRANSLATIONS[kind] = fn
        return fn

    return register
