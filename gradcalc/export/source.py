"""What is exported: top-level statements, each with the text it came from.

A program file is one unit; a session is the units it ran (each REPL input or cell), of which only the
statements that did not fail are kept. `Entry` holds one top-level statement with its unit's text and where the
next statement of that unit starts, so that its own text can be cut out of the unit (`statement_source`: the one
place that reads a statement's text; records carry only where they start).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .language import A, Loc


@dataclass(frozen=True)
class Entry:
    """A top-level statement to export: its record, its unit's text and name, where the unit's next top-level
    statement starts (None: the statement runs to the unit's end), and which unit it came from."""

    statement: Any
    source: str
    filename: str
    end: Loc | None
    unit: int = 0


def entries(program: A.Program, source: str, filename: str, unit: int = 0) -> list[Entry]:
    """A whole program's top-level statements as entries."""
    body = program.body
    return [Entry(st, source, filename, body[k + 1].loc if k + 1 < len(body) else None, unit)
            for k, st in enumerate(body)]


def _offset(lines: list[str], loc: Loc) -> int:
    return sum(len(line) + 1 for line in lines[: loc.line - 1]) + loc.column - 1


def statement_source(source: str, start: Loc, end: Loc | None) -> str:
    """The text of the statement that starts at `start` in `source`, up to where the next one starts (`end`;
    None: the end of `source`): with the comments and blank lines after it, which `code_and_comments` splits off.
    A statement's record starts at its first token that is not a bracket (`(a * b).sum()` starts at `a`): the
    brackets opened before it on its line are its own too."""
    lines = source.split("\n")
    a = _start(source, lines, start)
    b = _start(source, lines, end) if end is not None else len(source)
    return source[a:b]


def _start(source: str, lines: list[str], loc: Loc) -> int:
    """Where the statement that starts at `loc` begins: with the brackets opened before its first token."""
    a = _offset(lines, loc)
    line_start = a - (loc.column - 1)
    while a > line_start and source[a - 1] in "( \t":
        a -= 1
    while a < len(source) and source[a] in " \t":
        a += 1
    return a


def code_and_comments(text: str) -> tuple[str, list[str]]:
    """A statement's text split into its code (without the `;` that separates it from the next statement on
    its line) and the comment or blank lines that follow it at the top level (column 0)."""
    lines = text.rstrip("\n").split("\n")
    trailing: list[str] = []
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].startswith("#")):
        trailing.insert(0, lines.pop())
    code = "\n".join(lines).rstrip()
    if code.endswith(";"):
        code = code[:-1].rstrip()
    return code, trailing


def own_text(entry: Entry, st: Any | None = None) -> str:
    """The code of `st` (a statement of `entry`, at any depth; the entry's own by default): its first line for a
    block statement, without what follows it."""
    st = entry.statement if st is None else st
    starts = sorted({s.loc for s in A.walk_statements([entry.statement])} | ({entry.end} if entry.end else set()))
    later = [loc for loc in starts if loc > st.loc]
    code, _ = code_and_comments(statement_source(entry.source, st.loc, later[0] if later else entry.end))
    if next(A.blocks(st), None) is not None:  # a block statement: its header
        code = code.split("\n")[0]
    return code.strip()
