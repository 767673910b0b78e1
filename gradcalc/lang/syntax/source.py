"""Source text: where a program came from (`Unit`), and the text of a record's span (`source_text`)."""

from __future__ import annotations

from typing import NamedTuple


class Unit(NamedTuple):
    """Where compiled code came from: errors and warnings inside it point into this text."""

    filename: str
    source: str
    interactive: bool = False  # a one-line REPL input: its diagnostics may drop the location
