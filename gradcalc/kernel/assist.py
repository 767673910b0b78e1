"""What the kernel answers while the user types: completion (Tab), inspection (Shift-Tab) and, for consoles,
whether the input is complete. Each is the REPL's own answer:

- completion: the REPL's completer (`repl/completer.py`) on the cursor's line, so its candidates -- workspace
  names, keywords and built-ins; attributes and methods after a dot; commands after `:` (on any line of a
  cell, as a cell may run commands on any line), file names after `:load ` -- are the kernel's;
- inspection: `:help NAME`'s page for the name at the cursor, or for the function whose call the cursor is
  in (`sin(x|`); a dotted name finds its last part's page (`torch.sin`, `x.backward`); a workspace name
  that has no page shows its value;
- is_complete: the REPL's Enter rule (`repl/blocks.py`): an open bracket or a block not yet ended by an
  empty line is incomplete, with the indentation of the next line.
"""

from __future__ import annotations

import re
from typing import Any

from gradcalc.lang.session import Session

# Jupyter's completion types (JupyterLab shows them as icons) for the REPL completer's kinds
KINDS = {"keyword": "keyword", "built-in": "function", "variable": "instance", "method": "function",
         "attribute": "instance", "command": "magic"}
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.]")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NO_PAGE = "no help on "  # how help_text answers a name it has no page for


def _line_at(code: str, cursor_pos: int) -> tuple[str, int, int]:
    """The cursor's line, where it starts in `code`, and the cursor's column in it."""
    start = code.rfind("\n", 0, cursor_pos) + 1
    end = code.find("\n", cursor_pos)
    line = code[start:] if end < 0 else code[start:end]
    return line, start, cursor_pos - start


def complete(session: Session, code: str, cursor_pos: int) -> dict[str, Any]:
    """A complete_reply's content: the REPL completer's candidates at `cursor_pos`."""
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from gradcalc.lang import BUILTINS, KEYWORDS
    from gradcalc.repl.completer import GradcalcCompleter

    line, start, column = _line_at(code, cursor_pos)
    completer = GradcalcCompleter(session, KEYWORDS, BUILTINS)
    found = list(completer.get_completions(Document(line, column), CompleteEvent(completion_requested=True)))
    begin = cursor_pos + min((c.start_position for c in found), default=0)
    # Jupyter replaces one span for all matches: each match starts where the earliest one does
    matches = [code[begin:cursor_pos + c.start_position] + c.text for c in found]
    types = [
        {"start": begin, "end": cursor_pos, "text": text, "type": KINDS.get(c.display_meta_text, "")}
        for text, c in zip(matches, found, strict=True)
    ]
    return {"status": "ok", "matches": matches, "cursor_start": begin, "cursor_end": cursor_pos,
            "metadata": {"_jupyter_types_experimental": types}}


def name_at(code: str, cursor_pos: int) -> str | None:
    """The name to inspect at `cursor_pos`: as IPython does, the function whose call the cursor is inside
    (`sin(x|`), else the dotted name the cursor is on or just after (`x.backward|`)."""
    line, _, column = _line_at(code, cursor_pos)
    depth = 0
    for index in range(column - 1, -1, -1):  # back to the bracket of a call the cursor is in
        char = line[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth == 0:
                callee = re.search(r"[A-Za-z_][A-Za-z0-9_.]*$", line[:index].rstrip()) if char == "(" else None
                if callee is not None:
                    return callee.group(0).strip(".")
                break  # a bracket that is not a call: look at the name at the cursor
            depth -= 1
    left = column
    while left > 0 and _NAME_CHARS.match(line[left - 1]):
        left -= 1
    right = column
    while right < len(line) and _NAME_CHARS.match(line[right]):
        right += 1
    token = line[left:right].strip(".")
    word = _DOTTED.match(token) if token and not token[0].isdigit() else None
    return word.group(0) if word else None


def inspect(session: Session, code: str, cursor_pos: int) -> str | None:
    """The text Shift-Tab shows at `cursor_pos`: a `:help` page, or a workspace value; None for nothing."""
    from gradcalc.lang.tell.help import help_text

    name = name_at(code, cursor_pos)
    if not name:
        return None
    workspace = session.workspace
    if "." not in name and name in workspace:
        from gradcalc.lang.tell.render import render

        try:
            return f"{name} = {render(workspace[name], session.format)}"
        except Exception:  # noqa: BLE001 - a value that can't be shown has nothing to inspect
            return None
    parts = name.split(".")
    for first in range(len(parts)):  # torch.nn.Linear: its own page, then nn.Linear's, then Linear's
        page = help_text(".".join(parts[first:]))
        if not page.startswith(_NO_PAGE):
            return page
    return None


def is_complete(code: str) -> dict[str, str]:
    """An is_complete_reply's content: complete, invalid, or incomplete with the next line's indent."""
    from gradcalc.lang import check_complete
    from gradcalc.repl.blocks import continuation_indent, ready_to_run

    if check_complete(code) == "invalid":
        return {"status": "invalid"}
    if ready_to_run(code, check_complete):
        return {"status": "complete"}
    return {"status": "incomplete", "indent": continuation_indent(code)}
