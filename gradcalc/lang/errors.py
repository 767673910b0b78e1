"""gradcalc's own error type, and how a diagnostic is shown to the user.

Every bad input ends as a `GradcalcError` carrying a location; `format_diagnostic` renders it (and
warnings) as `FILE:LINE:COL: error: MESSAGE`, then the source line and a caret under the column.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .core.origin import Origin
    from .syntax.parser.blocks import _BlockState
    from .tell.explain.rebound import Rebinding


class Loc(NamedTuple):
    """A position in the source: 1-based line and column."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


NOWHERE = Loc(0, 0)  # a diagnostic with no place in the source (e.g. an interrupt between statements)


class GradcalcError(Exception):
    """An error in the user's program: a syntax error, or a statement that failed while running.

    `loc` is where it happened (it may be filled in later, by the statement that catches it); `source` is
    the text the location refers to when it is not the program being run (a file run by `:load`).
    """

    # Set on the way out of the statement that failed (core/compiler.py, session.py), so only some errors have
    # them (readers use getattr): the innermost statement running, whether its unit is one REPL input, for an
    # interrupt whether it came before the statement began or after it had finished, and the rebound leaf whose
    # None `.grad` made it fail (tell/explain/rebound.py). Declared, not given defaults.
    origin: Origin | None
    interactive: bool
    before: bool
    finished: bool
    rebound: Rebinding

    def __init__(
        self, message: str, loc: Loc | None = None, *, filename: str | None = None, source: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.filename = filename
        self.source = source

    def __str__(self) -> str:
        return self.message


class ArgumentError(GradcalcError):
    """An argument that can't become what its parameter takes (convert.py): the call that failed names the
    built-in and the parameter (calls.py), which this error alone can't."""


class SyntaxProblem(GradcalcError):
    """An error found before anything runs: the program does not parse or cannot be lowered."""

    # Set by the parser (syntax/parser/) when it has them (readers use getattr): the block state the text left,
    # and whether more input would complete it (the REPL's continuation prompt). Declared, not given defaults.
    state: _BlockState
    incomplete: bool


class Interrupted(GradcalcError):
    """The user asked to stop (Ctrl-C, or `Session.interrupt`)."""

    def __init__(self, loc: Loc | None = None) -> None:
        super().__init__("interrupted", loc)


# What stops a program and must pass through any code that catches the failures of what it calls (the plot
# sampling a curve; a host drawing a figure): an interrupt.
STOPS: tuple[type[BaseException], ...] = (Interrupted, KeyboardInterrupt)


YELLOW = "\x1b[33m"
RED = "\x1b[31m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RESET = "\x1b[0m"


def format_diagnostic(
    kind: str, message: str, filename: str | None, loc: Loc | None, source: str | None, *, color: bool = False
) -> str:
    """`FILE:LINE:COL: kind: MESSAGE`, then the source line and a caret (when the location is known).

    Without a filename (a one-line REPL input) only `kind: MESSAGE` is shown: the user just typed the line.
    """
    has_place = loc is not None and loc.line > 0
    if filename is not None and has_place:
        assert loc is not None
        head = f"{filename}:{loc.line}:{loc.column}: {kind}: {message}"
    else:
        head = f"{kind}: {message}"
    if color:
        head = f"{YELLOW if kind == 'warning' else RED}{head}{RESET}"
    lines = [head]
    if filename is not None and has_place and source is not None:
        assert loc is not None
        text_lines = source.splitlines()
        if loc.line <= len(text_lines):
            text, column = _clipped(text_lines[loc.line - 1], loc.column)
            # keep tabs in the caret's indentation so it lines up under the column in any terminal
            pad = "".join(c if c == "\t" else " " for c in text[: column - 1])
            lines.append(text)
            lines.append(pad + "^")
    return "\n".join(lines) + "\n"


SHOWN_WIDTH = 100  # of a long source line, the part around the column is shown


def _clipped(text: str, column: int) -> tuple[str, int]:
    """A long source line cut to the part around `column` (marked with "..." where cut), and the column
    within what is shown: a 20,000-character line would bury the caret."""
    if len(text) <= SHOWN_WIDTH:
        return text, column
    start = max(0, min(column - 1 - SHOWN_WIDTH // 2, len(text) - SHOWN_WIDTH))
    end = start + SHOWN_WIDTH
    head = "..." if start > 0 else ""
    tail = "..." if end < len(text) else ""
    return head + text[start:end] + tail, column - start + len(head)


def close_matches(word: str, possibilities: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """difflib's close matches, imported only when a name is misspelt (kept off the start-up path)."""
    import difflib  # (only a misspelt name pays for it)

    return difflib.get_close_matches(word, possibilities, n=n, cutoff=cutoff)
