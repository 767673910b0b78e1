"""The REPL's key bindings, on top of prompt_toolkit's Emacs-style defaults.

- Enter runs the input when it is ready (see `blocks.ready_to_run`), and otherwise opens a continuation line,
  indented one level deeper after a `:`. With a completion selected in the menu, Enter only accepts it.
  Escape then Enter always runs the input.
- The indentation Enter supplies is a proposal: when the first key typed on the new line is a space, the
  proposal goes and the spaces typed make the indentation (typing `    return x` by habit gives 4 spaces,
  not 8). Tab at the start of a line indents to the next multiple of four; elsewhere it completes.
- Typing the `:` of `else:`, `elif c:` (or a function's `backward(g):`) moves the line out to its `if`
  (its `forward:`); Enter does the same for a line that still needs it.
- Up searches the history for inputs that start with what is typed before the cursor, as IPython's does
  (prompt_toolkit's history search; an empty input walks the whole history). In a multi-line input it moves
  up a line first; with a completion chosen in the menu it moves in the menu.
- Backspace in a line's indentation removes one level.
- Ctrl-C clears the input and Ctrl-D (on an empty input) quits: prompt_toolkit's defaults, which make
  `PromptSession.prompt` raise KeyboardInterrupt and EOFError.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application.current import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.document import Document
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, emacs_insert_mode, has_focus, vi_insert_mode
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from gradcalc.repl.blocks import (
    INDENT,
    continuation_indent,
    header_indent,
    indentation,
    normalize_block,
    ready_to_run,
)


def reindent_line(buffer: Buffer, indent: str) -> None:
    """Give the cursor's line the indentation `indent`, keeping the cursor on the same character."""
    doc = buffer.document
    start = doc.cursor_position + doc.get_start_of_line_position()
    old = indentation(doc.current_line)
    if old == indent:
        return
    text = doc.text[:start] + indent + doc.text[start + len(old):]
    cursor = max(start, doc.cursor_position + len(indent) - len(old))
    buffer.document = Document(text, cursor)


def dedent_header(buffer: Buffer) -> None:
    """Move an `else:`/`elif c:`/`backward(g):` line out to the statement it continues (never deeper)."""
    doc = buffer.document
    text = doc.text[: doc.cursor_position + doc.get_end_of_line_position()]
    indent = header_indent(text)
    if indent is not None and len(indent) < len(indentation(doc.current_line)):
        reindent_line(buffer, indent)


def make_key_bindings(check_complete: Callable[[str], str]) -> KeyBindings:
    """Key bindings for the input buffer; `check_complete` is the language's completeness check."""
    bindings = KeyBindings()
    editing = has_focus(DEFAULT_BUFFER) & (emacs_insert_mode | vi_insert_mode)
    # The buffer as Enter left it after proposing an indentation: (text, cursor position), or None. While the
    # buffer is exactly so, nothing has been typed on the new line yet.
    proposed: list[tuple[str, int] | None] = [None]

    @Condition
    def in_indentation() -> bool:
        before = get_app().current_buffer.document.current_line_before_cursor
        return not before.strip(" ")

    @Condition
    def on_proposed_indent() -> bool:
        buffer = get_app().current_buffer
        return proposed[0] == (buffer.text, buffer.cursor_position)

    @bindings.add("enter", filter=editing)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        proposed[0] = None
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.complete_state = None  # keep the chosen completion, close the menu
            return
        text = buffer.document.text
        try:
            ready = ready_to_run(text, check_complete)
        except Exception:  # noqa: BLE001 - a checker failure must not break the prompt: let the run report it
            ready = True
        if ready:
            buffer.text = normalize_block(text)
            buffer.validate_and_handle()
            return
        dedent_header(buffer)
        buffer.insert_text("\n" + continuation_indent(buffer.document.text_before_cursor))
        proposed[0] = (buffer.text, buffer.cursor_position)

    @bindings.add(" ", filter=editing & on_proposed_indent)
    def _typed_indent(event: KeyPressEvent) -> None:
        # The first key on the new line is a space: the user indents by hand, so the proposal goes.
        buffer = event.current_buffer
        proposed[0] = None
        reindent_line(buffer, "")
        buffer.insert_text(" " * event.arg)

    @bindings.add(":", filter=editing)
    def _colon(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        buffer.insert_text(":" * event.arg)
        dedent_header(buffer)

    @bindings.add("tab", filter=editing & in_indentation)
    def _indent(event: KeyPressEvent) -> None:
        column = event.current_buffer.document.cursor_position_col
        event.current_buffer.insert_text(" " * (len(INDENT) - column % len(INDENT)))

    @bindings.add("backspace", filter=editing & in_indentation)
    def _dedent(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        column = buffer.document.cursor_position_col
        if column == 0:
            buffer.delete_before_cursor(1)  # join with the line above, as Backspace always does
            return
        buffer.delete_before_cursor((column - 1) % len(INDENT) + 1)

    @bindings.add("up", filter=editing)
    def _up(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is None:
            buffer.cancel_completion()  # the menu shown while typing: Up is for the history, as in IPython
        buffer.auto_up(count=event.arg)  # the buffer's history search filters by the text before the cursor

    return bindings
