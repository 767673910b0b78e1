"""Where a node was made: the statement that was running, as `explain` and `graph` name it.

Each statement gets one `Origin` when it is compiled; running the statement puts it in the engine's
`STAMP.origin` (the compiler's block runner), so every node recorded meanwhile keeps it (`node.origin`),
and every in-place change and `.grad` write is logged with it (autograd/provenance.py).

An origin names its statement by line, and by its unit too (`line 3 of lib.gc`: a `:load`ed file, another
notebook cell `In[5]`, an earlier REPL input `<stdin>`) when that is not the unit running now, so that
`line 3` is never ambiguous: `where()`, and `str(origin)`, `line 3: y = a * b` (a one-line REPL input
has no line to speak of: its text alone). The text is the statement's span in its source (its header, for a
compound statement), found only when first asked for (compiling a 10,000-line script computes none of it).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from ..errors import Loc
from ..syntax.source import Span, Unit, source_text

if TYPE_CHECKING:
    from .interpreter import Interpreter

MAX_TEXT = 120  # longer statements are cut with "..."


class Origin:
    """A statement of a program: its unit (file and text), where it starts, its header's span, and the
    interpreter that compiled it (`owner`, a weak reference: which session's statement it is, and which unit
    that session is running now)."""

    __slots__ = ("unit", "loc", "owner", "_statement", "_head", "_text")

    def __init__(self, unit: Unit, loc: Loc, owner: weakref.ref[Interpreter] | None = None,
                 statement: Any = None) -> None:  # (Any: a statement record, whose `head` it reads)
        self.unit = unit
        self.loc = loc
        self.owner = owner
        self._statement = statement  # its record, until its header's span is first asked for
        self._head: Span | None = None
        self._text: str | None = None

    @property
    def head(self) -> Span:
        """The span of the statement's header (the whole statement for a simple one)."""
        if self._head is None:
            found = self._statement.head if self._statement is not None else None
            self._head = found if found is not None else Span(self.loc, self.loc)
            self._statement = None  # (the record is not kept alive for this any longer)
        return self._head

    @property
    def line(self) -> int:
        """The statement's line in its unit (1-based)."""
        return self.loc.line

    @property
    def text(self) -> str:
        """The statement's source text (a compound statement's header without its colon), on one line."""
        if self._text is None:
            text = source_text(self.unit.source, self.head)
            self._text = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."
        return self._text

    def running(self) -> Unit | None:
        """The unit its interpreter is running now (None once that interpreter is gone)."""
        interp = self.owner() if self.owner is not None else None
        return getattr(interp, "unit", None)

    def in_running_unit(self, running: Unit | None = None) -> bool:
        """Whether the statement is in the unit running now (`running`, by default its interpreter's), or in
        one of the same name: the REPL's inputs are all `<stdin>`, and `line 3 of <stdin>` would tell a reader
        nothing `line 3` does not."""
        now = running if running is not None else self.running()
        return now is not None and (self.unit is now or self.unit.filename == now.filename)

    def where(self, running: Unit | None = None) -> str:
        """`line 3` in the unit running now, else `line 3 of lib.gc` (`of In[5]`): its line, and its unit when
        that is not `running` (by default the unit its interpreter is running now) by name."""
        if self.in_running_unit(running):
            return f"line {self.loc.line}"
        return f"line {self.loc.line} of {self.unit.filename}"

    def __str__(self) -> str:
        if self.unit.interactive:
            return self.text
        return f"{self.where()}: {self.text}"

    def located(self) -> str:
        """`FILE:LINE:COL: text`: the longer form anomaly mode's message shows."""
        return f"{self.unit.filename}:{self.loc.line}:{self.loc.column}: {self.text}"

    def __repr__(self) -> str:
        return f"<origin {self}>"
