"""Where a statement is, in the words `explain` and `graph` use: every phrase that names a statement's place
is made here, from one function, `place`.

An origin (lang/origin.py) is the statement that was running when something happened: a node made, a
backward run, a tensor changed in place. Its place is its line in its unit (`line 4`); a one-line REPL input
has none of its own (its text says which it is). The phrases built on it:

| function    | says                                     | for a one-line REPL input | used by                   |
|-------------|------------------------------------------|---------------------------|---------------------------|
| `statement` | `line 4 (`backward b`)`                  | `` `backward b` ``        | explain's sentences       |
| `at`        | `at line 4 (`backward b`)`               | ``in `backward b` ``      | explain's sentences       |
| `made`      | `line 3: y = a * b`                      | `y = a * b`               | a narrated step, graph    |
| `short`     | `line 3`                                 | `y = a * b`               | a statement named before  |
| `number`    | 3                                        | 1                         | JSON's `"line"`           |

A line number alone is ambiguous across the units one session runs (notebook cells, multi-line REPL inputs,
`:load`ed files): `place` names the unit where it is not the one running now (`line 4 of lib.gc`, `line 2 of
In[5]`: the origin's `where()`, core/origin.py), and every phrase above follows.
"""

from __future__ import annotations


def place(origin: object) -> str | None:
    """Where the statement `origin` is (`line 4`); None for a one-line REPL input (its text is its place)
    and for what is not a statement of the language."""
    unit = getattr(origin, "unit", None)
    line = getattr(origin, "line", None)
    if unit is None or line is None or getattr(unit, "interactive", False):
        return None
    where = getattr(origin, "where", None)
    return where() if callable(where) else f"line {line}"


def number(origin: object) -> int | None:
    """The statement's line in its unit (JSON's `"line"`); None when unknown."""
    line = getattr(origin, "line", None)
    return line if isinstance(line, int) else None


def _text(origin: object) -> str | None:
    text = getattr(origin, "text", None)
    return text if isinstance(text, str) else None


def statement(origin: object) -> str:
    """`line 4 (`backward b`)`, or `` `backward b` `` for a one-line REPL input: where a statement is."""
    if origin is None:
        return "a statement"
    text = _text(origin)
    if text is None:
        return str(origin)
    where = place(origin)
    return f"`{text}`" if where is None else f"{where} (`{text}`)"


def at(origin: object) -> str:
    """`at line 4 (`backward b`)`, or `in `backward b`` for a one-line REPL input: where something happened."""
    if origin is not None and _text(origin) is not None and place(origin) is None:
        return f"in {statement(origin)}"
    return f"at {statement(origin)}"


def made(origin: object) -> str:
    """`line 3: y = a * b`, or the text alone of a one-line REPL input: where a node was made."""
    text = _text(origin)
    if text is None:
        return str(origin)
    where = place(origin)
    return text if where is None else f"{where}: {text}"


def short(origin: object) -> str:
    """`line 3`: a statement named in full before (the text of a one-line REPL input, which has no line)."""
    where = place(origin)
    return where if where is not None else made(origin)


def sentence(text: str) -> str:
    """`text` with a capital first letter (a sentence may begin with `line 4 (...)`)."""
    return text[:1].upper() + text[1:]
