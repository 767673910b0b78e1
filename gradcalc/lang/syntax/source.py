"""Source text: where a program came from (`Unit`), a record's extent in it (`Span`), and the text of a span
(`source_text`: how `explain`, the legend of a plot and an origin quote what the user wrote)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from ..errors import Loc


class Unit(NamedTuple):
    """Where compiled code came from: errors and warnings inside it point into this text.

    `filename` is the script's path, `<stdin>`, `<expr>`, a `:load`ed file's path, or what a host names its
    inputs (a notebook's cell `In[5]`)."""

    filename: str
    source: str
    interactive: bool = False  # a one-line REPL input: its diagnostics may drop the location


class Span(NamedTuple):
    """Where a record's text starts and where it ends (just after its last character); lines and columns
    count from 1, as `Loc`s do."""

    start: Loc
    end: Loc


@lru_cache(maxsize=8)
def _lines(source: str) -> list[str]:
    return source.split("\n")


# a string literal (the grammar's STRING), or a comment: on each line of a span, comments are left out
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|(#.*)')


def _without_comment(line: str) -> str:
    for m in _STRING_OR_COMMENT.finditer(line):
        if m.group(1) is not None:
            return line[: m.start()]
    return line


def source_text(source: str, span: Span) -> str:
    """The text of `span` in `source`, on one line: a span over several lines (open brackets) has each line's
    part stripped, comments left out, and the parts joined by a space (`f(a,  # first` / `b)` is `f(a, b)`)."""
    lines = _lines(source)
    (first, col), (last, end) = span.start, span.end
    if not 0 < first <= last <= len(lines):
        return ""
    if first == last:
        return lines[first - 1][col - 1 : end - 1].strip()
    parts = [lines[first - 1][col - 1 :]] + lines[first : last - 1] + [lines[last - 1][: end - 1]]
    return " ".join(p for p in (_without_comment(part).strip() for part in parts) if p)
