"""The registry of statement translations: `@translates(Record)` beside each statement's `@compiles(Record)`
(gradcalc/lang/statements/*.py), as the compile functions are registered beside their records.

A translation function takes the translator and the statement's record and writes the statement's PyTorch
lines through the translator (`t.line(...)`, `t.block(body)`, `t.expr(node)`: gradcalc/export/script.py).
This module imports nothing, so that the statements' modules can register their translations at no cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# statement record type -> its translation function (translator, record) -> None; filled by @translates
TRANSLATIONS: dict[type, Callable[[Any, Any], None]] = {}


def translates(kind: type) -> Callable[[Callable[[Any, Any], None]], Callable[[Any, Any], None]]:
    """Register the PyTorch translation of statement record `kind`."""

    def register(fn: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
        TRANSLATIONS[kind] = fn
        return fn

    return register
