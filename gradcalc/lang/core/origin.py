"""Where a node was made: the statement that was running, as `explain` and `graph` name it.

Each statement gets one `Origin` when it is compiled; running the statement puts it in the engine's
`STAMP.origin` (compiler.py's block runner), so every node recorded meanwhile keeps it (`node.origin`),
and every in-place change and `.grad` write is logged with it (autograd/provenance.py).

`str(origin)` is `line 3: y = a * b`, or only the statement's text for a one-line REPL input. The text is
found in the source only when first asked for (compiling a 10,000-line script computes none of it).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import Loc
from ..syntax.source import Unit


class Origin:
    """A statement of a program: its unit (file and text), where it starts, and its source text."""

    __slots__ = ("unit", "loc", "owner", "_text")

    def __init__(self, unit: Unit, loc: Loc, owner: Any = None) -> None:
        self.unit = unit
        self.loc = loc
        self.owner = owner  # a weak reference to the interpreter that compiled it (explain looks at its session's)
        self._text: str | None = None

    @property
    def line(self) -> int:
        """The statement's line in its unit (1-based)."""
        return self.loc.line

    @property
    def text(self) -> str:
        """The statement's source text (a compound statement's header without its colon), on one line."""
        if self._text is None:
            self._text = statement_text(self.unit.source, self.loc)
        return self._text

    def __str__(self) -> str:
        if self.unit.interactive:
            return self.text
        return f"line {self.loc.line}: {self.text}"

    def located(self) -> str:
        """`FILE:LINE:COL: text`: the longer form anomaly mode's message shows."""
        return f"{self.unit.filename}:{self.loc.line}:{self.loc.column}: {self.text}"

    def __repr__(self) -> str:
        return f"<origin {self}>"


@lru_cache(maxsize=8)
def _lines(source: str) -> list[str]:
    return source.splitlines()


MAX_TEXT = 120  # longer statements are cut with "..."


def statement_text(source: str, loc: Loc) -> str:
    """The text of the statement starting at `loc`: to the `;`, comment or end of line that ends it, across
    the lines its brackets span; a compound statement's header stops before its `:`."""
    lines = _lines(source)
    if not 0 < loc.line <= len(lines):
        return ""
    row, col = loc.line - 1, loc.column - 1
    first = lines[row][col:]
    if first.startswith(":"):  # a REPL command takes the rest of its line
        return first.strip()
    parts: list[str] = []
    depth = 0
    quote = ""
    text = first
    while True:
        end = len(text)
        stop = False
        i = 0
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch in "([":
                depth += 1
            elif ch in ")]":
                depth = max(0, depth - 1)
            elif ch == "#":
                end = i
                break
            elif depth == 0 and ch in ";:":
                end, stop = i, True
                break
            i += 1
        parts.append(text[:end].strip())
        if stop or depth == 0 or row + 1 >= len(lines):
            break
        row += 1
        text = lines[row]
        quote = ""
    out = " ".join(p for p in parts if p)
    return out if len(out) <= MAX_TEXT else out[: MAX_TEXT - 3] + "..."
