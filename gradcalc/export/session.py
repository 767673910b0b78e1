"""`:export torch FILE.py` and `:export notebook FILE.ipynb` in the REPL and the kernel: the session so far (the
top-level statements that ran without an error, as the Session recorded them) written as a PyTorch script or a
notebook, through gradcalc/files.py (one wording for file errors; the Session says `wrote FILE`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcalc import files

from . import FORMATS, SUFFIXES, WHAT, export
from .language import GradcalcError
from .source import Entry

USAGE = ":export torch FILE.py or :export notebook FILE.ipynb (without FILE: printed here)"


def session_entries(record: list[tuple[Any, Any, Any]]) -> list[Entry]:
    """A Session's record (statement, unit, where the unit's next statement starts) as entries, units numbered."""
    units: dict[int, int] = {}
    out = []
    for st, unit, end in record:
        number = units.setdefault(id(unit), len(units))
        out.append(Entry(st, unit.source, unit.filename, end, number))
    return out


def export_command(record: list[tuple[Any, Any, Any]], arg: str, show: Callable[[str], None]) -> str | None:
    """Run `:export ARG` over a Session's record: write the file (returns its path) or `show` the text (returns
    None). A GradcalcError for a wrong command; a files.FileProblem when the file can't be written."""
    fmt, _, path = arg.strip().partition(" ")
    path = path.strip()
    if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
        path = path[1:-1]
    if fmt not in FORMATS:
        raise GradcalcError(f":export {fmt}: the formats are {', '.join(FORMATS)}: {USAGE}" if fmt else
                            f":export needs a format: {USAGE}")
    if path:
        files.check_suffix(WHAT[fmt], path, (SUFFIXES[fmt],))
        files.check_place(WHAT[fmt], path)
    title = f"a gradcalc session as PyTorch, exported by :export torch {path or ''}".rstrip()
    text = export(session_entries(record), fmt, title)
    if not path:
        show(text if text.endswith("\n") else text + "\n")
        return None
    files.write(WHAT[fmt], path, text.encode("utf-8"))
    return path
