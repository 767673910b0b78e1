"""Syntax errors in words: `_translate` turns Lark's exceptions (raised on Lark's path) into
`SyntaxProblem`s that say what was expected ("expected an expression after '+'", "unclosed '(' opened at
1:5"...), and marks those that more lines could fix `incomplete` (the REPL then asks for another line).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from ...errors import Loc, SyntaxProblem
from ...habits import character_pointer, string_pointer, with_pointer, word_pointer
from ..grammar import keyword_terminals
from ..keywords import KEYWORD_SET
from ..shape import block_headers, expression_start, literals, operators, wants_expression
from .blocks import CLOSERS, OPENERS, _BlockState

if TYPE_CHECKING:
    from lark import Token
    from lark.exceptions import UnexpectedInput


# What the words of a message come from: the grammar (shape.py). An expression starts with one of
# `expression_start()`; `wants_expression()` are the tokens after which one must come ("expected an expression
# after 'plot'"); `block_headers()` the keywords that open a block.

# How a message names a terminal that is neither a keyword nor spelled as a literal in the grammar.
WORDS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "COMMAND": "a ':' command",
    "_NEWLINE": "the end of the line",
    "$END": "the end of the input",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the block",
}


@cache
def _keyword_words() -> dict[str, str]:
    return {terminal: word for terminal, word, _ in keyword_terminals()}


def _word(kind: str) -> str:
    if kind in WORDS:
        return WORDS[kind]
    literal = literals().get(kind)
    if literal is not None:  # `POW: "**"`
        return f"'{literal}'"
    return f"'{_keyword_words().get(kind, kind.lower())}'"  # a keyword: its word


def _describe(tok: Token, state: _BlockState) -> str:
    """The unexpected token, as the message names it."""
    kind = tok.type
    if kind == "NAME":
        return f"name '{tok}'"
    if kind == "NUMBER":
        return f"number {tok}"
    if kind == "STRING":
        return f"string {tok}"
    if kind == "_INDENT":
        return "indentation"
    if state.is_eof(tok):
        return "end of the input"
    if kind == "_NEWLINE":
        return "end of the line"
    if kind == "_DEDENT":
        return "end of the block"
    if str(tok) in KEYWORD_SET:
        return f"keyword '{tok}'"
    return _word(kind)


# After a complete expression the parser accepts any operator, a trailer, an assignment... : say "an
# operator" and "the end of the statement" rather than listing twenty tokens.
@cache
def _after_expression() -> frozenset[str]:
    """What the parser accepts after a complete expression (any operator, a trailer, an assignment...): a
    message says "an operator" and "the end of the statement" rather than listing twenty tokens."""
    return operators() | {"LPAR", "LSQB", "DOT", "ASSIGN", "AUG_ADD", "AUG_SUB", "AUG_MUL", "AUG_DIV", "COMMA",
                          "REQUIRES_GRAD"}


_STATEMENT_END = {"_NEWLINE", "SEMICOLON", "$END"}


def _expected_words(expected: set[str]) -> str:
    names = set(expected) - {"COMMENT", "WS"}
    parts: list[str] = []
    if {"NAME", "NUMBER", "LPAR"} <= names:
        names -= expression_start()
        parts.append("an expression")
    if len(names & operators()) >= 3:
        names -= _after_expression()
        parts.append("an operator")
    end = bool(names & _STATEMENT_END)
    names -= _STATEMENT_END
    parts.extend(sorted(_word(n) for n in names))
    if end:
        parts.append("the end of the statement")
    if not parts:
        return "something else"
    if len(parts) > 6:
        parts = parts[:5] + ["..."]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def _translate(exc: UnexpectedInput, state: _BlockState) -> SyntaxProblem:
    """A Lark exception as a SyntaxProblem in words; `incomplete` is set when more lines could fix it."""
    problem = _message(exc, state)
    problem.state = state
    return problem


def _parser_expects(exc: UnexpectedInput) -> set[str]:
    """The terminals the parser can really shift where it stopped: Lark's `UnexpectedToken.accepts`.

    A state's table row (`exc.expected`) also lists lookaheads that LALR merged in from other contexts
    (after `3` in `x = 3 foo` it would list ')' and ':'); `accepts` feeds each of them to a copy of the
    parser (its interactive parser) and keeps only those this input can continue with. The row stands in
    when `accepts` has nothing to say (an exception raised without an interactive parser).
    """
    accepts = getattr(exc, "accepts", None)  # UnexpectedToken's; None without an interactive parser
    return set(accepts or ()) or set(getattr(exc, "expected", ()) or ())


def _end_loc(state: _BlockState) -> Loc:
    """Just after the last character of the program (where an unexpected end of input is shown)."""
    lines = state.source.rstrip().split("\n")
    return Loc(len(lines), len(lines[-1]) + 1)


def _first_on_line(tok: Token, state: _BlockState) -> bool:
    line = state.source.split("\n")[tok.line - 1] if tok.line else ""
    return len(line) - len(line.lstrip()) + 1 == tok.column


def _message(exc: UnexpectedInput, state: _BlockState) -> SyntaxProblem:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF  # (Lark's path only: not on a cold start)

    if isinstance(exc, UnexpectedCharacters):
        char = state.source[exc.pos_in_stream] if exc.pos_in_stream is not None else "?"
        where = Loc(exc.line, exc.column)
        if char in "\"'":
            return SyntaxProblem("unterminated string (a string ends on the line it starts)", where)
        return SyntaxProblem(with_pointer(f"unexpected character {char!r}", character_pointer(char)), where)

    tok: Token | None = getattr(exc, "token", None)
    expected = _parser_expects(exc)
    if isinstance(exc, UnexpectedEOF) or tok is None or tok.type == "$END":
        return _at_end(state, expected)
    kind = tok.type
    where = Loc(tok.line, tok.column)
    eof = state.is_eof(tok)
    prev = state.before_last if state.last is tok else state.last

    if (  # f"loss {loss}": a string prefix glued to a string
        kind == "STRING"
        and prev is not None
        and prev.type == "NAME"
        and string_pointer(str(prev))
        and (prev.line, prev.column + len(prev)) == (tok.line, tok.column)
    ):
        where = Loc(prev.line, prev.column)
        return SyntaxProblem(f"gradcalc has no {prev}-strings: {string_pointer(str(prev))}", where)
    if prev is not None and prev.type == "NAME" and word_pointer(str(prev)):  # `lambda v: ...`
        return SyntaxProblem(f"unexpected '{prev}': {word_pointer(str(prev))}", Loc(prev.line, prev.column))
    if state.brackets and (eof or (tok.line > state.brackets[-1].line and _first_on_line(tok, state))):
        problem = _unclosed(state, where if not eof else _end_loc(state))
        problem.incomplete = eof
        return problem
    if kind in CLOSERS:
        if not state.brackets:
            return SyntaxProblem(f"unmatched '{tok}'", where)
        opener = state.brackets[-1]
        if OPENERS[opener.type] != kind:
            return SyntaxProblem(
                f"'{tok}' does not close the '{opener}' opened at {opener.line}:{opener.column}", where
            )
    if kind == "_INDENT":
        return SyntaxProblem("unexpected indentation", where)
    if "_INDENT" in expected:
        header = (
            state.line_start
            if eof or kind == "_DEDENT" or state.line_start is not tok
            else state.prev_line_start
        )
        problem = _expected_block(header, where)
        problem.incomplete = eof
        return problem
    if (
        prev is not None
        and prev.type != "NAME"
        and str(prev) in KEYWORD_SET
        and prev is state.line_start
        and kind in ("ASSIGN", "AUG_ADD", "AUG_SUB", "AUG_MUL", "AUG_DIV")
    ):
        return SyntaxProblem(
            f"'{prev}' is a keyword; it can't be used as a name", Loc(prev.line, prev.column)
        )
    if (
        kind == "ASSIGN"
        and "ASSIGN" not in expected
        and prev is not None
        and prev.type in ("NAME", "NUMBER", "STRING", "RPAR", "RSQB")
    ):
        return SyntaxProblem("unexpected '=' in an expression; use '==' to compare", where)
    if expected & expression_start() and "NAME" in expected and prev is not None and prev.type in wants_expression():
        return SyntaxProblem(f"expected an expression after '{prev}'", where if not eof else _end_loc(state))
    if eof:
        problem = SyntaxProblem(
            f"unexpected end of the input; expected {_expected_words(expected)}", _end_loc(state)
        )
        problem.incomplete = kind == "_DEDENT"
        return problem
    if kind == "NAME" and tok in KEYWORD_SET:
        return SyntaxProblem(f"'{tok}' is a keyword; it can't be used as a name", where)
    return SyntaxProblem(f"unexpected {_describe(tok, state)}; expected {_expected_words(expected)}", where)


def _unclosed(state: _BlockState, where: Loc) -> SyntaxProblem:
    opener = state.brackets[-1]
    return SyntaxProblem(f"unclosed '{opener}' opened at {opener.line}:{opener.column}", where)


def _expected_block(header: Token | None, where: Loc) -> SyntaxProblem:
    if header is not None and header.type in block_headers():
        return SyntaxProblem(f"expected an indented block after '{header}' on line {header.line}", where)
    return SyntaxProblem("expected an indented block", where)


def _at_end(state: _BlockState, expected: set[str]) -> SyntaxProblem:
    where = _end_loc(state)
    if state.brackets:
        problem = _unclosed(state, where)
    elif "_INDENT" in expected:
        problem = _expected_block(state.line_start, where)
    else:
        problem = SyntaxProblem(f"unexpected end of the input; expected {_expected_words(expected)}", where)
    problem.incomplete = True
    return problem
