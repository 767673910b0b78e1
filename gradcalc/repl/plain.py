"""A line-reading REPL without prompt_toolkit, for `gradcalc -i` when standard input or output is not a
terminal (prompt_toolkit would print a warning and escape codes there).

It reads a line at a time and runs the input by the same rule as the terminal REPL (`blocks.ready_to_run`:
a block ends with an empty line). Prompts go to the `prompts` stream (standard error, as Python does), so
standard output holds only values.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from gradcalc.lang import check_complete
from gradcalc.repl.blocks import normalize_block, ready_to_run
from gradcalc.repl.interrupt import run_input

if TYPE_CHECKING:
    from gradcalc.lang import Session

PROMPT = ">>> "
CONTINUATION = "... "


def _write(stream: TextIO | None, text: str) -> None:
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass


def run_plain_repl(session: Session, stdin: TextIO | None, *, prompts: TextIO | None,
                   err: TextIO | None = None) -> int:
    """Read, run, print until end of input or `:quit`; returns the exit status (0).

    `err` receives the REPL's own messages (the Session prints its errors itself): standard error by default.
    """
    if stdin is None:
        return 0
    messages: TextIO = sys.stderr if err is None else err
    reconfigure = getattr(stdin, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(errors="replace")  # a stray non-UTF-8 byte shows as U+FFFD and a syntax error
        except (OSError, ValueError):
            pass
    pending: str | None = None
    while not session.quit_requested:
        _write(prompts, PROMPT if pending is None else CONTINUATION)
        try:
            line = stdin.readline()
            if not line:  # end of input: run what is pending, as if an empty line had ended it
                _write(prompts, "\n")
                if pending is not None and pending.strip():
                    run_input(session, normalize_block(pending), messages)
                break
            line = line.rstrip("\n").rstrip("\r")
            text = line if pending is None else pending + "\n" + line
            if ready_to_run(text, check_complete):
                pending = None
                run_input(session, normalize_block(text), messages)
            else:
                pending = text
        except KeyboardInterrupt:  # Ctrl-C while reading: drop the input, keep the workspace
            _write(prompts, "\n")
            pending = None
    return 0
