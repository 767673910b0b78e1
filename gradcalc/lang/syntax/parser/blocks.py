"""Blocks from indentation, for Lark's path: `BlockPostLex` turns the lexer's _NEWLINE tokens into
_INDENT/_DEDENT tokens (as Python's tokenizer does), drops line breaks inside brackets and checks that
brackets match. `_BlockState` keeps what one parse has seen, which the error messages read afterwards.

The fast path (fast.py) does the same in its own loop, with the limit and bracket pairs defined here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...errors import Loc, SyntaxProblem

if TYPE_CHECKING:  # Lark is imported only on its own path (importing it costs a cold start ~20 ms)
    from lark import Token

MAX_BLOCK_DEPTH = 100  # as Python's own parser: deeper indentation is an error, not a deep recursion later

OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB"}
CLOSERS = {"RPAR", "RSQB"}


class _BlockState:
    """What one parse's token stream has seen: open brackets, the indentation stack, the last tokens."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.brackets: list[Token] = []
        self.indents = [0]
        self.last: Token | None = None  # the token handed to the parser most recently
        self.before_last: Token | None = None
        self.line_start: Token | None = None  # the first token of the current logical line
        self.prev_line_start: Token | None = None
        self.opened_block = False  # an _INDENT was produced (the REPL then waits for an empty line)
        self.eof_tokens: set[int] = set()  # ids of the tokens made at the end of the input

    def is_eof(self, tok: Token) -> bool:
        """True for the tokens that only close the input: more lines could still come before them."""
        if tok.type == "$END" or id(tok) in self.eof_tokens:
            return True
        return tok.type == "_NEWLINE" and (tok.end_pos or 0) >= len(self.source)

    def _push(self, tok: Token) -> Token:
        self.before_last, self.last = self.last, tok
        return tok

    def run(self, stream: Iterator[Token]) -> Iterator[Token]:
        at_line_start = True
        indents = self.indents
        brackets = self.brackets
        for tok in stream:
            kind = tok.type
            if kind == "_NEWLINE":
                if brackets:
                    continue  # inside ( or [ a line break is only whitespace
                yield self._push(tok)
                at_line_start = True
                indent_text = tok.value.rsplit("\n", 1)[1]
                width = len(indent_text.expandtabs(8))
                where = {"line": tok.end_line, "column": tok.end_column, "eof": self.is_eof(tok)}
                if width > indents[-1]:
                    if len(indents) > MAX_BLOCK_DEPTH:
                        raise SyntaxProblem(f"blocks nested more than {MAX_BLOCK_DEPTH} deep", _at(tok))
                    indents.append(width)
                    self.opened_block = True
                    yield self._push(self._synth("_INDENT", indent_text, tok, **where))
                else:
                    while width < indents[-1]:
                        indents.pop()
                        yield self._push(self._synth("_DEDENT", indent_text, tok, **where))
                    if width != indents[-1]:
                        raise SyntaxProblem(
                            "this line's indentation matches no enclosing block",
                            Loc(tok.end_line, tok.end_column),
                        )
                continue
            if at_line_start:
                if self.last is None and tok.column > 1:
                    raise SyntaxProblem("unexpected indentation", Loc(tok.line, tok.column))
                self.prev_line_start, self.line_start = self.line_start, tok
                at_line_start = False
            if kind in OPENERS:
                brackets.append(tok)
            elif kind in CLOSERS:
                if not brackets:
                    raise SyntaxProblem(f"unmatched '{tok}'", _at(tok))
                opener = brackets.pop()
                if OPENERS[opener.type] != kind:
                    raise SyntaxProblem(
                        f"'{tok}' does not close the '{opener}' opened at {opener.line}:{opener.column}",
                        _at(tok),
                    )
            yield self._push(tok)
        last = self.last
        while len(indents) > 1:
            indents.pop()
            yield self._push(self._synth("_DEDENT", "", last, eof=True))

    def _synth(
        self,
        kind: str,
        value: str,
        near: Token | None,
        *,
        line: int | None = None,
        column: int | None = None,
        eof: bool = False,
    ) -> Token:
        """An _INDENT/_DEDENT token placed at the start of the line it belongs to."""
        from lark import Token  # (Lark's path only: not on a cold start)

        tok = Token(kind, value, 0, 1, 1) if near is None else Token.new_borrow_pos(kind, value, near)
        if line is not None:
            tok.line, tok.column = line, column
        if eof:
            self.eof_tokens.add(id(tok))
        return tok


def _at(tok: Token) -> Loc:
    return Loc(tok.line, tok.column)


class BlockPostLex:
    """Lark's post-lexer for Python-style blocks (Lark only calls `process` and reads `always_accept`, so
    this needs not import Lark for its `PostLex` base). Its per-parse state is thread-local, so one cached
    parser serves any number of threads."""

    always_accept = ("_NEWLINE",)

    def __init__(self) -> None:
        self._local = threading.local()

    def begin(self, source: str) -> _BlockState:
        state = self._local.state = _BlockState(source)
        return state

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return self._local.state.run(stream)
