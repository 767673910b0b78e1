"""The parser: Lark's LALR parser over grammar/gradcalc.lark, built once and cached on disk.

- `BlockPostLex` turns indentation into _INDENT/_DEDENT tokens (Python's rules) and checks brackets.
- `get_parser()` builds the Lark parser with `lower.Lowerer` applied inline, so parsing returns the
  lowered program directly. The analysed grammar is cached in the user's cache directory
  (`$XDG_CACHE_HOME/gradcalc/`, else `~/.cache/gradcalc/`), in a file keyed by the grammar's hash and
  Lark's version, so a cold start does not rebuild the tables.
- `parse()` turns Lark's exceptions into `SyntaxProblem`s that say, in words, what was expected.
- `check_complete()` answers the REPL's question on Enter: run it, or ask for another line?
"""

from __future__ import annotations

import gc
import hashlib
import os
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lark import PostLex

from . import ast as A
from .errors import Loc, SyntaxProblem
from .keywords import KEYWORD_SET
from .lower import Lowerer, check

MAX_BLOCK_DEPTH = 100  # as Python's own parser: deeper indentation is an error, not a deep recursion later

OPENERS = {"LPAR": "RPAR", "LSQB": "RSQB"}
CLOSERS = {"RPAR", "RSQB"}


# ---------------------------------------------------------------------------------------------------
# Blocks from indentation


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
        tok = Token(kind, value, 0, 1, 1) if near is None else Token.new_borrow_pos(kind, value, near)
        if line is not None:
            tok.line, tok.column = line, column
        if eof:
            self.eof_tokens.add(id(tok))
        return tok


def _at(tok: Token) -> Loc:
    return Loc(tok.line, tok.column)


class BlockPostLex(PostLex):
    """Lark's post-lexer for Python-style blocks. Its per-parse state is thread-local, so one cached parser
    serves any number of threads."""

    always_accept = ("_NEWLINE",)

    def __init__(self) -> None:
        self._local = threading.local()

    def begin(self, source: str) -> _BlockState:
        state = self._local.state = _BlockState(source)
        return state

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return self._local.state.run(stream)


# ---------------------------------------------------------------------------------------------------
# Building and caching the parser


def grammar_path() -> str:
    """grammar/gradcalc.lark: beside the package in a source tree, inside it in an installed wheel.
    (os.path rather than pathlib: importing pathlib would cost every cold start a few milliseconds.)"""
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    for candidate in (os.path.join(here, "grammar", "gradcalc.lark"),
                      os.path.join(os.path.dirname(here), "grammar", "gradcalc.lark")):
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError("gradcalc's grammar (grammar/gradcalc.lark) is missing from the installation")


def cache_dir() -> str | None:
    """The user's private cache directory for gradcalc, made with mode 0700; None when unusable.

    Lark's cache is a pickle, so it is only read from a directory that the user owns and nobody else can
    write to (never a shared, world-writable place such as /tmp).
    """
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not base or not os.path.isabs(base):
        home = os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    path = os.path.join(base, "gradcalc")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        info = os.stat(path)
    except OSError:
        return None
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return path


def cache_file(grammar: str) -> str | None:
    """The cache file for this grammar text, Lark version and Python version."""
    import lark

    directory = cache_dir()
    if directory is None:
        return None
    key = f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()
    return os.path.join(directory, f"parser-{hashlib.sha256(key).hexdigest()[:20]}.lark")


_parser: Lark | None = None
_postlex: BlockPostLex | None = None
_build_lock = threading.Lock()


def get_parser() -> tuple[Lark, BlockPostLex]:
    """The parser (built on first use, then kept for the process), and its post-lexer."""
    global _parser, _postlex
    if _parser is None:
        with _build_lock:
            if _parser is None:
                with open(grammar_path(), encoding="utf-8") as f:
                    grammar = f.read()
                postlex = BlockPostLex()
                options = dict(
                    parser="lalr",
                    lexer="contextual",
                    postlex=postlex,
                    transformer=Lowerer(),
                    maybe_placeholders=True,
                    propagate_positions=False,
                )
                target = cache_file(grammar)
                try:
                    parser = Lark(grammar, cache=str(target) if target else False, **options)
                except OSError:  # an unreadable or unwritable cache is not an error: build without it
                    parser = Lark(grammar, **options)
                _postlex, _parser = postlex, parser
    assert _postlex is not None
    return _parser, _postlex


# ---------------------------------------------------------------------------------------------------
# Parsing, and parse errors in words


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing and compiling allocate many objects and free none, and a
    collection every few hundred allocations would scan them all again (it halves parsing time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse(source: str) -> A.Program:
    """Parse and lower a whole program; a SyntaxProblem says where and what was expected."""
    program, _ = _parse(source)
    return program


def _parse(source: str) -> tuple[A.Program, _BlockState]:
    text = source if source.endswith("\n") else source + "\n"
    parser, postlex = get_parser()
    state = postlex.begin(text)
    try:
        with no_gc():
            program = _run_lalr(parser, text)
    except UnexpectedInput as exc:
        raise _translate(exc, state) from None
    except SyntaxProblem as exc:
        exc.state = state  # type: ignore[attr-defined]
        raise
    except RecursionError:
        raise SyntaxProblem("the program is nested too deeply to parse", Loc(1, 1)) from None
    check(program)
    return program, state


class _Driver:
    """Lark's LALR parse loop, over Lark's own tables, lexer and callbacks, without its per-token overhead.

    `ParserState.feed_token` looks a rule's callback up by hashing the Rule (a Python `__hash__`) and runs an
    `assert` comparing rules (a Python `__eq__`) on every reduction; on a long program that is a fifth of
    the parse. This loop precomputes, per parser state and on first visit, what each terminal does. It
    raises Lark's own exceptions, with Lark's ParserState, so error reporting is unchanged. If Lark's
    internals are not what this expects, `_run_lalr` falls back to `Lark.parse`.
    """

    def __init__(self, parser: Lark) -> None:
        from lark.parsers.lalr_analysis import Shift
        from lark.parsers.lalr_parser_state import ParseConf, ParserState

        self.frontend = parser.parser
        inner = self.frontend.parser.parser
        self.conf = ParseConf(inner.parse_table, inner.callbacks, "start")
        self.ParserState = ParserState
        self.Shift = Shift
        self.rows: dict[int, dict[str, tuple]] = {}

    def row(self, state: int) -> dict[str, tuple]:
        """What each terminal does in `state`: (True, next state) or (False, (size, rule name, callback))."""
        conf = self.conf
        out = {}
        for term, (action, arg) in conf.states[state].items():
            if action is self.Shift:
                out[term] = (True, arg)
            else:
                out[term] = (False, (len(arg.expansion), arg.origin.name, conf.callbacks[arg]))
        self.rows[state] = out
        return out

    def parse(self, text: str) -> Any:
        conf = self.conf
        states = conf.states
        rows = self.rows
        lexer_thread = self.frontend._make_lexer_thread(text)
        parser_state = self.ParserState(conf, lexer_thread)
        state_stack = parser_state.state_stack
        value_stack = parser_state.value_stack
        token = None
        for token in lexer_thread.lex(parser_state):
            kind = token.type
            while True:
                row = rows.get(state_stack[-1]) or self.row(state_stack[-1])
                entry = row.get(kind)
                if entry is None:
                    expected = {t for t in states[state_stack[-1]] if t.isupper()}
                    raise UnexpectedToken(token, expected, state=parser_state)
                if entry[0]:
                    state_stack.append(entry[1])
                    value_stack.append(token)
                    break
                size, origin, callback = entry[1]
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(callback(children))
                state_stack.append(states[state_stack[-1]][origin][1])
        end = Token.new_borrow_pos("$END", "", token) if token else Token("$END", "", 0, 1, 1)
        return parser_state.feed_token(end, True)  # Lark's own loop for the last reductions


_driver: _Driver | None = None


def _run_lalr(parser: Lark, text: str) -> A.Program:
    global _driver
    if _driver is None:
        try:
            _driver = _Driver(parser)
        except (AttributeError, ImportError, KeyError, TypeError):  # another Lark: its own loop
            return parser.parse(text)
    return _driver.parse(text)


EXPR_START = {
    "NAME",
    "NUMBER",
    "STRING",
    "LPAR",
    "LSQB",
    "PLUS",
    "MINUS",
    "NOT",
    "TRUE",
    "TRUE_TITLE",
    "FALSE",
    "FALSE_TITLE",
    "NONE",
    "NONE_TITLE",
}
OPERATORS = {
    "POW",
    "STAR",
    "SLASH",
    "DSLASH",
    "PERCENT",
    "AT",
    "PLUS",
    "MINUS",
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "AND",
    "OR",
}
# Tokens after which an expression must come: the error then says "expected an expression after 'X'".
WANTS_EXPRESSION = OPERATORS | {
    "ASSIGN",
    "AUG_ADD",
    "AUG_SUB",
    "AUG_MUL",
    "AUG_DIV",
    "COMMA",
    "LPAR",
    "LSQB",
    "NOT",
    "IF",
    "ELIF",
    "WHILE",
    "IN",
    "BACKWARD",
    "GRADIENT",
    "RETAIN_GRAD",
    "ZERO_GRAD",
    "DEL",
    "GRAPH",
    "TO",
    "SEED",
    "SAVE",
    "REQUIRES_GRAD",
}
BLOCK_HEADERS = {"IF", "ELIF", "ELSE", "FOR", "WHILE", "WITH", "DEF", "FUNCTION", "FORWARD", "BACKWARD"}

WORDS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a string",
    "COMMAND": "a ':' command",
    "_NEWLINE": "the end of the line",
    "$END": "the end of the input",
    "_INDENT": "an indented block",
    "_DEDENT": "the end of the block",
    "POW": "'**'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "DSLASH": "'//'",
    "PERCENT": "'%'",
    "AT": "'@'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "EQ": "'=='",
    "NE": "'!='",
    "LT": "'<'",
    "LE": "'<='",
    "GT": "'>'",
    "GE": "'>='",
    "ASSIGN": "'='",
    "AUG_ADD": "'+='",
    "AUG_SUB": "'-='",
    "AUG_MUL": "'*='",
    "AUG_DIV": "'/='",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "DOT": "'.'",
    "COLON": "':'",
    "SEMICOLON": "';'",
    "TRUE_TITLE": "'True'",
    "FALSE_TITLE": "'False'",
    "NONE_TITLE": "'None'",
}


def _word(kind: str) -> str:
    if kind in WORDS:
        return WORDS[kind]
    return f"'{kind.lower()}'"  # keywords: the terminal is the keyword in capitals


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
_AFTER_EXPRESSION = OPERATORS | {
    "LPAR",
    "LSQB",
    "DOT",
    "ASSIGN",
    "AUG_ADD",
    "AUG_SUB",
    "AUG_MUL",
    "AUG_DIV",
    "COMMA",
    "REQUIRES_GRAD",
}
_STATEMENT_END = {"_NEWLINE", "SEMICOLON", "$END"}


def _expected_words(expected: set[str]) -> str:
    names = set(expected) - {"COMMENT", "WS"}
    parts: list[str] = []
    if {"NAME", "NUMBER", "LPAR"} <= names:
        names -= EXPR_START
        parts.append("an expression")
    if len(names & OPERATORS) >= 3:
        names -= _AFTER_EXPRESSION
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
    problem.state = state  # type: ignore[attr-defined]
    return problem


def _parser_expects(exc: UnexpectedInput) -> set[str]:
    """The terminals the parser can really shift where it stopped.

    A state's table row also lists lookaheads that LALR merged in from other contexts (after `3` in
    `x = 3 foo` it would list ')' and ':'); running each candidate through the reductions on a copy of
    the state stack keeps only those this input can continue with.
    """
    from lark.parsers.lalr_analysis import Shift

    fallback = set(getattr(exc, "expected", ()) or ())
    parser_state = getattr(exc, "state", None)
    try:
        states = parser_state.parse_conf.states  # type: ignore[union-attr]
        end_state = parser_state.parse_conf.end_state  # type: ignore[union-attr]
        start = parser_state.state_stack  # type: ignore[union-attr]
    except AttributeError:
        return fallback
    accepted = set()
    for term in states[start[-1]]:
        if not term.isupper() and term != "$END":
            continue
        stack = list(start)
        while True:
            entry = states[stack[-1]].get(term)
            if entry is None:
                break
            action, arg = entry
            if action is Shift:
                accepted.add(term)
                break
            if len(arg.expansion):
                del stack[-len(arg.expansion) :]
            goto = states[stack[-1]].get(arg.origin.name)
            if goto is None:
                break
            stack.append(goto[1])
            if term == "$END" and stack[-1] == end_state:
                accepted.add(term)
                break
    return accepted or fallback


def _end_loc(state: _BlockState) -> Loc:
    """Just after the last character of the program (where an unexpected end of input is shown)."""
    lines = state.source.rstrip().split("\n")
    return Loc(len(lines), len(lines[-1]) + 1)


def _first_on_line(tok: Token, state: _BlockState) -> bool:
    line = state.source.split("\n")[tok.line - 1] if tok.line else ""
    return len(line) - len(line.lstrip()) + 1 == tok.column


def _message(exc: UnexpectedInput, state: _BlockState) -> SyntaxProblem:
    if isinstance(exc, UnexpectedCharacters):
        char = state.source[exc.pos_in_stream] if exc.pos_in_stream is not None else "?"
        where = Loc(exc.line, exc.column)
        if char in "\"'":
            return SyntaxProblem("unterminated string (a string ends on the line it starts)", where)
        return SyntaxProblem(f"unexpected character {char!r}", where)

    tok: Token | None = getattr(exc, "token", None)
    expected = _parser_expects(exc)
    if isinstance(exc, UnexpectedEOF) or tok is None or tok.type == "$END":
        return _at_end(state, expected)
    kind = tok.type
    where = Loc(tok.line, tok.column)
    eof = state.is_eof(tok)
    prev = state.before_last if state.last is tok else state.last

    if state.brackets and (eof or (tok.line > state.brackets[-1].line and _first_on_line(tok, state))):
        problem = _unclosed(state, where if not eof else _end_loc(state))
        problem.incomplete = eof  # type: ignore[attr-defined]
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
        problem.incomplete = eof  # type: ignore[attr-defined]
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
    if expected & EXPR_START and "NAME" in expected and prev is not None and prev.type in WANTS_EXPRESSION:
        return SyntaxProblem(f"expected an expression after '{prev}'", where if not eof else _end_loc(state))
    if eof:
        problem = SyntaxProblem(
            f"unexpected end of the input; expected {_expected_words(expected)}", _end_loc(state)
        )
        problem.incomplete = kind == "_DEDENT"  # type: ignore[attr-defined]
        return problem
    if kind == "NAME" and tok in KEYWORD_SET:
        return SyntaxProblem(f"'{tok}' is a keyword; it can't be used as a name", where)
    return SyntaxProblem(f"unexpected {_describe(tok, state)}; expected {_expected_words(expected)}", where)


def _unclosed(state: _BlockState, where: Loc) -> SyntaxProblem:
    opener = state.brackets[-1]
    return SyntaxProblem(f"unclosed '{opener}' opened at {opener.line}:{opener.column}", where)


def _expected_block(header: Token | None, where: Loc) -> SyntaxProblem:
    if header is not None and header.type in BLOCK_HEADERS:
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
    problem.incomplete = True  # type: ignore[attr-defined]
    return problem


# ---------------------------------------------------------------------------------------------------
# The REPL's question


def check_complete(text: str) -> str:
    """ "complete" (run it), "incomplete" (an open block or bracket: ask for another line) or "invalid".

    As in Python's REPL, input that opened an indented block is complete only once it ends with an
    empty line.
    """
    if not text.strip():
        return "complete"
    try:
        _, state = _parse(text)
    except SyntaxProblem as exc:
        return "incomplete" if getattr(exc, "incomplete", False) else "invalid"
    except Exception:  # anything else the parser raises is an input it cannot take
        return "invalid"
    if state.opened_block and text.split("\n")[-1].strip():
        return "incomplete"
    return "complete"
