"""An explanation in words (`explain T.grad`, bare `explain`): built once the session's format and colour are
known; with `--format json` one object `{"event": "explain", "about": ..., "reason": ..., "text": ...}`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .style import Style


class Report:
    """`build(style)` gives the lines; `about` is what was explained ("grad", "error"), `reason` a word for
    the case (e.g. "not_leaf", "freed")."""

    def __init__(self, about: str, reason: str, build: Callable[[Style], list[str]], **extra: Any) -> None:
        self.about, self.reason, self.build, self.extra = about, reason, build, extra

    def render(self, fmt: str, color: bool) -> str:
        if fmt == "json":
            text = "\n".join(self.build(Style("torch", False)))
            return json.dumps({"event": "explain", "about": self.about, "reason": self.reason, **self.extra,
                               "text": text}, allow_nan=True)
        return "\n".join(self.build(Style(fmt, color)))


def statement(origin: Any) -> str:
    """`line 4 (`backward b`)`, or `` `backward b` `` for a one-line REPL input: where a statement is."""
    if origin is None:
        return "a statement"
    text = getattr(origin, "text", None)
    if text is None:
        return str(origin)
    if getattr(origin.unit, "interactive", False):
        return f"`{text}`"
    return f"line {origin.line} (`{text}`)"


def at(origin: Any) -> str:
    """`at line 4 (`backward b`)`, or `in `backward b`` for a one-line REPL input: where something happened."""
    if origin is not None and getattr(getattr(origin, "unit", None), "interactive", False):
        return f"in {statement(origin)}"
    return f"at {statement(origin)}"


def sentence(text: str) -> str:
    """`text` with a capital first letter (a sentence may begin with `line 4 (...)`)."""
    return text[:1].upper() + text[1:]


def owned(origin: Any, interp: Any) -> bool:
    """Whether `origin` is a statement of this session (the engine's history is shared by a process)."""
    owner = getattr(origin, "owner", None)
    return owner is not None and owner() is interp
