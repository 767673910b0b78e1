"""The REPL's key bindings, on top of prompt_toolkit's Emacs-style defaults.

- Enter runs the input when it is ready (see `blocks.ready_to_run`), and otherwise opens a continuation line,
  indented one level deeper after a `:`. With a completion selected in the menu, Enter only accepts it.
  Escape then Enter always runs the input.
- Tab at the start of a line indents to the next multiple of four; elsewhere it completes.
- Backspace in a line's indentation removes one level.
- Ctrl-C clears the input and Ctrl-D (on an empty input) quits: prompt_toolkit's defaults, which make
  `PromptSession.prompt` raise KeyboardInterrupt and EOFError.
"""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application.current import get_app
from prompt_toolkit.enums import DEFAULT_BUFFER
from prompt_toolkit.filters import Condition, emacs_insert_mode, has_focus, vi_insert_mode
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from gradcalc.repl.blocks import INDENT, continuation_indent, normalize_block, ready_to_run


def make_key_bindings(check_complete: Callable[[str], str]) -> KeyBindings:
    """Key bindings for the input buffer; `check_complete` is the language's completeness check."""
    bindings = KeyBindings()
    editing = has_focus(DEFAULT_BUFFER) & (emacs_insert_mode | vi_insert_mode)

    @Condition
    def in_indentation() -> bool:
        before = get_app().current_buffer.document.current_line_before_cursor
        return not before.strip(" ")

    @bindings.add("enter", filter=editing)
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
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
        else:
            buffer.insert_text("\n" + continuation_indent(buffer.document.text_before_cursor))

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

    return bindings
