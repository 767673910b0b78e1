"""A program or a session as a notebook for the gradcalc kernel (LANGUAGE.md §10): one code cell per top-level
statement or block (the statements that share a line share a cell), each with the text it was written in, and
the comments between them as markdown cells. nbformat (the `jupyter` extra) makes and checks the notebook."""

from __future__ import annotations

import json
from typing import Any

from .language import Loc
from .source import Entry, code_and_comments, statement_source


def _markdown(lines: list[str]) -> list[str]:
    """Comment lines as markdown cells' texts: a run of comment lines is one cell, a blank line ends it."""
    cells: list[list[str]] = []
    run: list[str] = []
    for line in lines:
        text = line.strip()
        if text.startswith("#"):
            body = text[1:]
            run.append(body[1:] if body.startswith(" ") else body)
        elif run:
            cells.append(run)
            run = []
    if run:
        cells.append(run)
    return ["\n".join(cell).strip("\n") for cell in cells if any(s.strip() for s in cell)]


def cells(entries: list[Entry]) -> list[tuple[str, str]]:
    """(kind, text) of each cell: "markdown" for comments, "code" for the statements of one line or one block."""
    out: list[tuple[str, str]] = []
    seen_units: set[int] = set()
    k = 0
    while k < len(entries):
        first = entries[k]
        if first.unit not in seen_units:  # the comments before a unit's first statement
            seen_units.add(first.unit)
            before = statement_source(first.source, Loc(1, 1), first.statement.loc)
            out += [("markdown", m) for m in _markdown(before.split("\n"))]
        group = [first]
        while (k + len(group) < len(entries) and entries[k + len(group)].unit == first.unit
               and entries[k + len(group)].statement.loc.line == first.statement.loc.line):
            group.append(entries[k + len(group)])
        k += len(group)
        codes, trailing = [], []
        for entry in group:
            code, trailing = code_and_comments(statement_source(entry.source, entry.statement.loc, entry.end))
            codes.append(code)
        out.append(("code", "; ".join(codes)))
        out += [("markdown", m) for m in _markdown(trailing)]
    return out


def notebook(entries: list[Entry]) -> str:
    """The notebook (nbformat v4, validated) of `entries`, as JSON text."""
    try:
        import nbformat
        from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    except ImportError:
        from .language import GradcalcError

        raise GradcalcError("exporting a notebook needs nbformat: pip install 'gradcalc[jupyter]'") from None
    made: list[Any] = []
    for n, (kind, text) in enumerate(cells(entries), start=1):
        cell = new_markdown_cell(text) if kind == "markdown" else new_code_cell(text)
        cell["id"] = f"cell-{n}"  # stable ids: exporting the same program twice gives the same file
        made.append(cell)
    from gradcalc.kernel.install import DISPLAY_NAME, LANGUAGE_INFO, NAME  # (the kernel's spec: no ipykernel)

    kernelspec = {"name": NAME, "display_name": DISPLAY_NAME, "language": LANGUAGE_INFO["name"]}
    nb = new_notebook(cells=made, metadata={"kernelspec": kernelspec, "language_info": LANGUAGE_INFO})
    nbformat.validate(nb)
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
