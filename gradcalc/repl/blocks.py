"""When Enter runs the input, and how a continuation line is indented.

Pure functions on text, shared by the terminal REPL and the plain line-reading REPL. The rule follows
Python's REPL: the input runs as soon as the language's completeness check says it is complete, except
that a block (a line ending in `:`) is ended by an empty line.
"""

from __future__ import annotations

from collections.abc import Callable

INDENT = "    "
_DEDENT_AFTER = ("return", "break", "continue")


def scan(line: str) -> tuple[int | None, bool]:
    """Where `line`'s `#` comment starts (None if it has none) and whether the line ends inside a string
    literal (`"..."` or `'...'`, with backslash escapes): a `#` inside a string starts no comment."""
    quote = ""
    escaped = False
    for index, char in enumerate(line):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            return index, False
    return None, bool(quote)


def code_part(line: str) -> str:
    """`line` without its `#` comment."""
    comment, _ = scan(line)
    return line if comment is None else line[:comment]


def opens_block(line: str) -> bool:
    """True when `line` ends in `:` (outside a comment), so that the next lines are its indented body."""
    code = code_part(line).rstrip()
    return code.endswith(":") and not code.lstrip().startswith(":")


def is_command(text: str) -> bool:
    """True for a one-line REPL command such as `:vars` or `:help backward`."""
    stripped = text.strip()
    return stripped.startswith(":") and "\n" not in stripped


def ready_to_run(text: str, check_complete: Callable[[str], str]) -> bool:
    """True when pressing Enter at the end of `text` should run it rather than open a continuation line.

    Empty input, REPL commands, complete input and invalid input (to show its syntax error) run; incomplete
    input continues; input that opened a block continues until its last line is empty.
    """
    if not text.strip() or is_command(text):
        return True
    lines = text.split("\n")
    last_blank = not lines[-1].strip()
    status = check_complete(text)
    if status == "invalid":
        return True
    has_block = any(opens_block(line) for line in lines)
    if status == "incomplete":
        return False
    return not (has_block and not last_blank)


def continuation_indent(text_before_cursor: str) -> str:
    """The indentation of the line that Enter opens after `text_before_cursor`: one level deeper after a
    `:`, one level shallower after `return`, `break` or `continue`, otherwise the same as the line above."""
    line = text_before_cursor.split("\n")[-1]
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    code = code_part(line).strip()
    if opens_block(line):
        return indent + INDENT
    if code.split(" ", 1)[0] in _DEDENT_AFTER:
        return indent[: max(0, len(indent) - len(INDENT))]
    return indent


def normalize_block(text: str) -> str:
    """The text to run and store in history: trailing blank lines of a block reduced to one newline."""
    stripped = text.rstrip()
    if "\n" in stripped and any(opens_block(line) for line in stripped.split("\n")):
        return stripped + "\n"
    return stripped
