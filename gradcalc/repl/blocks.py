"""When Enter runs the input, and how a continuation line is indented.

Pure functions on text, shared by the terminal REPL and the plain line-reading REPL. The rule follows
Python's REPL: the input runs as soon as the language's completeness check says it is complete, except
that a block (a line ending in `:`, or a compound statement on one line) is ended by an empty line, even
when a line of it is wrong: the whole block then gets one syntax error and nothing of it runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gradcalc.lang.syntax.shape import compound_keywords, continuations

INDENT = "    "
_DEDENT_AFTER = ("return", "break", "continue")
# From the grammar (gradcalc/lang/syntax/shape.py): the words that start a compound statement, whose input is
# a block collected until an empty line whether or not its header is right (`def f(x)` without the colon gets
# its error once the block is complete); and the clauses that continue a statement of a line above them
# (`else:` and `elif c:` an `if`, a custom function's `backward(g):` its `forward:`), each with the words of
# the lines it may continue.
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BACKWARD_HEADER = re.compile(r"backward\s*\(")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')  # the grammar's STRING


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


def first_word(line: str) -> str:
    """The name the line's code starts with ("" when it starts with something else)."""
    found = _WORD.match(code_part(line).lstrip())
    return found[0] if found else ""


def indentation(line: str) -> str:
    """The line's leading blanks."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def open_brackets(text: str) -> int:
    """How many `(` and `[` are still open at the end of `text` (strings and comments aside)."""
    depth = 0
    for line in text.split("\n"):
        for char in _STRING.sub('""', code_part(line)):
            if char in "([":
                depth += 1
            elif char in ")]":
                depth = max(0, depth - 1)
    return depth


def is_block(lines: list[str]) -> bool:
    """Whether the input is a block, ended only by an empty line: a line of it ends in `:`, or it starts with
    a compound statement's word (`if c: x = 1` on one line, which an `else:` may follow, as in Python)."""
    return any(opens_block(line) for line in lines) or first_word(lines[0]) in compound_keywords()


def is_command(text: str) -> bool:
    """True for a one-line REPL command such as `:vars` or `:help backward`."""
    stripped = text.strip()
    return stripped.startswith(":") and "\n" not in stripped


def ready_to_run(text: str, check_complete: Callable[[str], str]) -> bool:
    """True when pressing Enter at the end of `text` should run it rather than open a continuation line.

    Empty input, REPL commands, complete input and invalid input (to show its syntax error) run; incomplete
    input continues. A block continues until its last line is empty, whatever its lines hold: a syntax
    error in one of them is reported once the block is complete, for the whole block, so that the lines
    after the wrong one do not run on their own at top level. An empty line inside open brackets continues.
    """
    if not text.strip() or is_command(text):
        return True
    lines = text.split("\n")
    if is_block(lines):
        if lines[-1].strip():
            return False
        return open_brackets(text) == 0 or check_complete(text) != "incomplete"
    return check_complete(text) != "incomplete"


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


def header_indent(text_before_cursor: str) -> str | None:
    """The indentation the last line should have when it continues a statement opened above it: `else:` and
    `elif c:` that of the nearest enclosing `if`/`elif`, a function's `backward(g):` that of its `forward:`.
    None for any other line, or when no such line encloses it (then it stays as it is)."""
    lines = text_before_cursor.split("\n")
    line = lines[-1]
    code = code_part(line).strip()
    word = first_word(code)
    openers = continuations().get(word)
    if openers is None or not code.endswith(":"):
        return None
    if word == "backward" and not _BACKWARD_HEADER.match(code):
        return None  # `backward y` is a statement of its own
    # Walk up the lines that enclose this one (each shallower than all below it): the first that opens
    # the statement this line continues gives the indentation.
    limit = len(indentation(line)) + 1
    for above in reversed(lines[:-1]):
        if not code_part(above).strip():
            continue
        indent = indentation(above)
        if len(indent) >= limit:
            continue
        limit = len(indent)
        if first_word(above) in openers:
            return indent
        if not indent:
            break
    return None


def normalize_block(text: str) -> str:
    """The text to run and store in history: trailing blank lines of a block reduced to one newline."""
    stripped = text.rstrip()
    if "\n" in stripped and is_block(stripped.split("\n")):
        return stripped + "\n"
    return stripped
