"""The gradcalc language (LANGUAGE.md): a Lark grammar lowered onto the autograd engine.

`Session` runs source text over a workspace (the REPL, scripts and pipes share it); `check_complete`
answers the REPL's Enter key; `KEYWORDS` and `BUILTINS` feed completion and highlighting.

Importing this package is light: the parser and the engine (NumPy) load when first needed, and Lark
only when the parser's cached tables must be made or a syntax error described (see the parser package).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import GradcalcError
from .syntax.keywords import KEYWORDS
from .values.builtins import BUILTINS

if TYPE_CHECKING:
    from .session import Session
    from .syntax.parser import check_complete

__all__ = ["BUILTINS", "KEYWORDS", "GradcalcError", "Session", "check_complete"]


def __getattr__(name: str) -> object:
    if name == "Session":
        from .session import Session  # (loaded when first asked for: off the REPL's start-up)

        return Session
    if name == "check_complete":  # (imported when first asked for: off the REPL's start-up)
        from . import statements  # noqa: F401 - the parser lowers to the statements' records (start-up: as above)
        from .syntax.parser import check_complete

        return check_complete
    raise AttributeError(f"module 'gradcalc.lang' has no attribute {name!r}")
