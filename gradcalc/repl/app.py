"""The terminal REPL: a prompt_toolkit prompt session over a language `Session`.

Syntax highlighting (the Pygments lexer), completion, persistent history with auto-suggestion, a bottom
toolbar showing the grad mode and how many workspace tensors require grad, and the key bindings of
`keys`. Values and messages are printed by the Session between prompts.

`run_repl` takes prompt_toolkit's input and output, so that tests drive it with `create_pipe_input()` and
`DummyOutput()` inside the test process.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.filters import to_filter
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import History
from prompt_toolkit.input import Input
from prompt_toolkit.lexers import PygmentsLexer
from prompt_toolkit.output import Output
from prompt_toolkit.shortcuts import CompleteStyle
from prompt_toolkit.styles import Style

from gradcalc.lang import BUILTINS, KEYWORDS, check_complete
from gradcalc.repl.completer import GradcalcCompleter
from gradcalc.repl.history import make_history
from gradcalc.repl.interrupt import run_input
from gradcalc.repl.keys import make_key_bindings
from gradcalc.repl.lexer import GradcalcLexer

if TYPE_CHECKING:
    from gradcalc.lang import Session

PROMPT = ">>> "
CONTINUATION = "... "

STYLE = Style.from_dict(
    {
        "prompt": "bold",
        "prompt.continuation": "",
        "bottom-toolbar": "reverse",
        "bottom-toolbar.mode": "bold",
        "bottom-toolbar.hint": "italic",
    }
)


def banner() -> str:
    """The line printed before the first prompt."""
    from gradcalc import __version__

    return f"gradcalc {__version__}: autograd as PyTorch does it. Type :help for help, Ctrl-D to quit."


def toolbar_text(session: Session) -> StyleAndTextTuples:
    """The bottom toolbar: the grad mode and the number of workspace tensors that require grad."""
    try:
        mode, count = session.status()
    except Exception:  # noqa: BLE001 - the toolbar must never break the prompt
        return [("class:bottom-toolbar", " gradcalc ")]
    tensors = "tensor requires" if count == 1 else "tensors require"
    return [
        ("class:bottom-toolbar", " mode: "),
        ("class:bottom-toolbar.mode", mode),
        ("class:bottom-toolbar", f" | {count} {tensors} grad | "),
        ("class:bottom-toolbar.hint", ":help  :vars  Ctrl-D quits "),
    ]


def _continuation(width: int, line_number: int, wrap_count: int) -> StyleAndTextTuples:
    return [("class:prompt.continuation", CONTINUATION.rjust(width))]


def build_prompt_session(
    session: Session,
    *,
    history: History,
    input: Input | None = None,  # noqa: A002 - prompt_toolkit's name
    output: Output | None = None,
) -> PromptSession[str]:
    """A prompt session wired to `session`: its completer, toolbar and completeness check."""
    prompt_session: PromptSession[str] = PromptSession(
        message=[("class:prompt", PROMPT)],
        multiline=True,
        prompt_continuation=_continuation,
        lexer=PygmentsLexer(GradcalcLexer),
        completer=GradcalcCompleter(session, KEYWORDS, BUILTINS),
        complete_while_typing=True,
        complete_style=CompleteStyle.COLUMN,
        auto_suggest=AutoSuggestFromHistory(),
        history=history,
        key_bindings=make_key_bindings(check_complete),
        bottom_toolbar=lambda: toolbar_text(session),
        style=STYLE,
        include_default_pygments_style=True,
        reserve_space_for_menu=6,
        input=input,
        output=output,
    )
    # Up searches the history by the text before the cursor, as IPython's does. Set on the buffer itself:
    # PromptSession's own `enable_history_search=True` would also turn off completion while typing (its menu
    # would take the Up key; keys.py gives Up to the history unless a completion is chosen).
    prompt_session.default_buffer.enable_history_search = to_filter(True)
    return prompt_session


def run_repl(
    session: Session,
    *,
    input: Input | None = None,  # noqa: A002 - prompt_toolkit's name
    output: Output | None = None,
    history: History | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    show_banner: bool = True,
) -> int:
    """Read, run, print until Ctrl-D or `:quit`; returns the exit status (0)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    note = None
    if history is None:
        history, note = make_history()
    prompt_session = build_prompt_session(session, history=history, input=input, output=output)
    if show_banner:
        out.write(banner() + "\n")
        out.flush()
    if note is not None:
        err.write(f"gradcalc: {note}\n")
        err.flush()
    while not session.quit_requested:
        try:
            text = prompt_session.prompt()
            run_input(session, text, err)
        except KeyboardInterrupt:
            continue  # Ctrl-C at the prompt, or between two inputs: the line is dropped, the workspace kept
        except EOFError:
            break  # Ctrl-D
    return 0
