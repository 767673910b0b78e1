"""The parser: an LALR(1) parser over grammar/gradcalc.lark, with Lark's tables, lowering as it parses.

Two ways to run the same tables, one result:

- The fast path, `_FastParser`: one loop that lexes (one compiled regex per parser state, as Lark's
  contextual lexer), turns indentation into blocks and shifts/reduces, applying `lower.Lowerer`'s callbacks
  as Lark's tree builder would. Its tables are extracted from Lark once and cached in the user's cache
  directory (`$XDG_CACHE_HOME/gradcalc/`, else `~/.cache/gradcalc/`) as plain data (marshal), so a cold
  start neither imports Lark nor unpickles its parser. A program it cannot take to the end (any syntax
  error, or an error a callback raises) is parsed again on the other path, which says what is wrong.
- Lark's path: Lark's LALR parser and contextual lexer, with `BlockPostLex` turning indentation into
  _INDENT/_DEDENT tokens and checking brackets, and Lark's own pickle cache. `parse()` turns its exceptions
  into `SyntaxProblem`s that say, in words, what was expected. Errors, their locations and the REPL's
  completeness answers all come from this path, so they are the same whichever path ran first.

`check_complete()` answers the REPL's question on Enter: run it, or ask for another line?
"""

from __future__ import annotations

import gc
import marshal
import os
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from . import ast as A
from .errors import Loc, SyntaxProblem
from .keywords import KEYWORD_SET
from .lower import Lowerer, Tok, check

if TYPE_CHECKING:  # Lark is imported only on its own path (importing it costs a cold start ~20 ms)
    from lark import Lark, Token
    from lark.exceptions import UnexpectedInput

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
        from lark import Token

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

    Lark's cache is a pickle, and the fast path's a marshal dump (neither is safe to load from untrusted
    files), so they are only read from a directory that the user owns and nobody else can write to (never
    a shared, world-writable place such as /tmp).
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
    """Lark's cache file (a pickle of its parser) for this grammar text, Lark version and Python version."""
    import hashlib

    import lark

    directory = cache_dir()
    if directory is None:
        return None
    key = f"{grammar}\0{lark.__version__}\0{sys.version_info[:2]}".encode()
    return os.path.join(directory, f"parser-{hashlib.sha256(key).hexdigest()[:20]}.lark")


def _read_grammar() -> str:
    with open(grammar_path(), encoding="utf-8") as f:
        return f.read()


_parser: Lark | None = None
_postlex: BlockPostLex | None = None
_build_lock = threading.Lock()


def get_parser() -> tuple[Lark, BlockPostLex]:
    """Lark's parser (built on first use, then kept for the process), and its post-lexer."""
    global _parser, _postlex
    if _parser is None:
        with _build_lock:
            if _parser is None:
                from lark import Lark

                grammar = _read_grammar()
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
# The fast path's tables: extracted from Lark's parser once, cached as plain data

TABLES_FORMAT = 1  # bump when the layout of the tables below changes


def lark_fingerprint() -> str:
    """Which Lark is installed, found without importing it: the path, size and modification time of its
    `__init__.py` (an upgrade rewrites it). The tables are Lark's, so a new Lark means new tables."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            spec = find_spec("lark", None)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin:
            try:
                info = os.stat(spec.origin)
            except OSError:
                break
            return f"{spec.origin}\0{info.st_size}\0{info.st_mtime_ns}"
    return "lark not found"


def tables_file(grammar: str, fingerprint: str) -> str | None:
    """The fast path's cache file for this grammar text, Lark and Python version (None: no cache directory).
    The name only tells versions apart; the file itself holds the full key and is checked against it."""
    import zlib  # not hashlib: loading OpenSSL would cost a cold start more than the cache saves

    directory = cache_dir()
    if directory is None:
        return None
    key = f"{grammar}\0{fingerprint}\0{sys.version_info[:2]}".encode()
    return os.path.join(directory, f"tables-{zlib.crc32(key):08x}-{len(key)}.marshal")


class Unsupported(Exception):
    """Lark's parser is not what the fast path expects (another Lark version, other options, a rule without
    a callback that would build a tree): parse with Lark."""


def extract_tables(parser: Lark) -> dict[str, Any]:
    """The fast path's tables, as plain data, from Lark's parser (its LALR table, its contextual lexer's
    regexes, its tree builder's child filters). Raises Unsupported if they are not the expected shape."""
    import re
    from functools import partial

    from lark.lexer import ContextualLexer, PatternStr, UnlessCallback
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild
    from lark.parsers.lalr_analysis import Shift

    try:
        lexer = parser.parser.lexer.lexer
        table = parser.parser.parser.parser.parse_table
        builders = parser._parse_tree_builder.rule_builders
        conf = parser.lexer_conf
    except AttributeError as exc:
        raise Unsupported(str(exc)) from None
    if not isinstance(lexer, ContextualLexer) or conf.re_module is not re or conf.g_regex_flags or conf.use_bytes:
        raise Unsupported("not the contextual lexer over `re` without flags")
    if conf.callbacks:
        raise Unsupported("lexer callbacks")

    rules: list[tuple] = []
    index: dict[Any, int] = {}
    for rule, chain in builders:
        expand1 = False
        include: list[tuple[int, bool, int]] | None = None
        append_none = 0
        for wrapper in chain:
            if wrapper is ExpandSingleChild:
                expand1 = True
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR:
                include = [(i, bool(expand), nones) for i, expand, nones in wrapper.args[0]]
                append_none = wrapper.args[1]
            elif isinstance(wrapper, partial) and wrapper.func is ChildFilterLALR_NoPlaceholders:
                include = [(i, bool(expand), 0) for i, expand in wrapper.args[0]]
            else:
                raise Unsupported(f"tree builder step {wrapper!r}")
        name = rule.alias or rule.options.template_source or rule.origin.name
        passed = range(len(rule.expansion)) if include is None else [i for i, _, _ in include]
        kept = sorted({rule.expansion[i].name for i in passed if rule.expansion[i].is_term})
        index[rule] = len(rules)
        rules.append((len(rule.expansion), rule.origin.name, name, expand1, include, append_none, kept))

    states = table.states
    if set(states) != set(range(len(states))):
        raise Unsupported("parser states are not 0..n-1")
    actions = []
    for state in range(len(states)):
        row = {}
        for term, (action, arg) in states[state].items():
            row[term] = arg if action is Shift else ~index[arg]  # >= 0: shift or goto; < 0: reduce
        actions.append(row)

    lexers: list[tuple] = []
    lexer_ids: dict[int, int] = {}
    lexer_of = []
    for state in range(len(states)):
        basic = lexer.lexers[state]
        if id(basic) not in lexer_ids:
            scanner = basic.scanner
            unless = {}
            for kind, callback in basic.callback.items():
                if not isinstance(callback, UnlessCallback):
                    raise Unsupported(f"lexer callback {callback!r}")
                words = {}
                for term in callback.scanner.terminals:
                    if not isinstance(term.pattern, PatternStr) or term.pattern.flags:
                        raise Unsupported(f"keyword terminal {term.name}")
                    words[term.pattern.value] = term.name
                unless[kind] = words
            patterns = [mre.pattern for mre in scanner._mres]
            lexer_ids[id(basic)] = len(lexers)
            lexers.append((patterns, unless, sorted(basic.newline_types), sorted(basic.ignore_types)))
        lexer_of.append(lexer_ids[id(basic)])

    return _plain({
        "format": TABLES_FORMAT,
        "terminals": sorted(t.name for t in parser.terminals),
        "start": table.start_states["start"],
        "end": table.end_states["start"],
        "actions": actions,
        "rules": rules,
        "lexers": lexers,
        "lexer_of": lexer_of,
    })


def _plain(value: Any) -> Any:
    """`value` made of exact builtin types, as marshal requires (a Lark built from the grammar, rather than
    loaded from its cache, names its rules with Tokens, which are str subclasses)."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    raise Unsupported(f"unexpected {type(value).__name__} in the tables")


def _load_tables(grammar: str, fresh: bool = False) -> dict[str, Any]:
    """The tables from the cache if it holds them for this grammar, Lark and Python (and not `fresh`); else
    made from Lark's parser and written to the cache (atomically: a reader never sees half a file)."""
    fingerprint = lark_fingerprint()
    target = tables_file(grammar, fingerprint)
    if target is not None and not fresh:
        try:
            with open(target, "rb") as f:
                data = marshal.loads(f.read())
            if (
                isinstance(data, dict)
                and data.get("format") == TABLES_FORMAT
                and data.get("grammar") == grammar
                and data.get("lark") == fingerprint
            ):
                return data
        except (OSError, EOFError, ValueError, TypeError):  # missing, or not ours: make it again
            pass
    data = extract_tables(get_parser()[0])
    data.update(grammar=grammar, lark=fingerprint)
    if target is not None:
        temporary = f"{target}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(temporary, "wb") as f:
                f.write(marshal.dumps(data))
            os.replace(temporary, target)
        except (OSError, ValueError):  # a cache that cannot be written is not an error
            try:
                os.remove(temporary)
            except OSError:
                pass
    return data


# ---------------------------------------------------------------------------------------------------
# The fast path


class _Bail(Exception):
    """The fast path stops: the input has an error that Lark's path will describe."""


def _reducer(
    callback: Callable[[list], Any] | None,
    include: list[tuple[int, bool, int]] | None,
    append_none: int,
    expand1: bool,
) -> Callable[[list], Any]:
    """A rule's reduction, as Lark composes it: filter the children (drop punctuation, inline `_rule`s, add
    None for a missing `[optional]`), then return a lone child of a `?rule`, else call the callback.

    An inlined rule (`_rule`, and Lark's helpers for `x*`) has no callback, and its value is the list of
    its children (what Lark's tree for it holds, and the only thing its parent reads of it)."""
    if callback is None:

        def callback(children: list) -> list:
            return children

    build = callback
    if expand1:

        def build(children: list) -> Any:
            return children[0] if len(children) == 1 else callback(children)

    if include is None:
        return build
    positions = [i for i, _, _ in include]
    shape = [(expand, nones) for _, expand, nones in include]
    if append_none or any(nones for _, nones in shape):
        pass  # the general case below
    elif not any(expand for expand, _ in shape):
        if len(positions) == 1:
            (only,) = positions
            return lambda children: build([children[only]])
        return lambda children: build([children[i] for i in positions])
    elif shape == [(True, 0), (False, 0)]:  # `_x: _x item`, the left recursion of `item*`
        inlined, item = positions

        def reduce_left(children: list) -> Any:
            filtered = children[inlined]  # as Lark: grow the inlined rule's list (linear, not quadratic)
            filtered.append(children[item])
            return build(filtered)

        return reduce_left
    elif shape == [(False, 0), (True, 0)]:  # `rule: first _x`
        first, inlined = positions
        return lambda children: build([children[first], *children[inlined]])

    def reduce(children: list) -> Any:
        filtered: list = []
        for i, expand, nones in include:
            if nones:
                filtered += [None] * nones
            if expand:
                if filtered:
                    filtered += children[i]
                else:  # as Lark: take the inlined rule's list
                    filtered = children[i]
            else:
                filtered.append(children[i])
        if append_none:
            filtered += [None] * append_none
        return build(filtered)

    return reduce


class _FastParser:
    """The tables of `extract_tables`, run by one loop: lexing, blocks, shifts and reductions.

    What it does matches, step for step, Lark's contextual lexer (the regex of the parser's current state;
    a NAME that spells a keyword the state accepts becomes that keyword), `BlockPostLex` and Lark's LALR
    parser with its tree builder. At the first thing Lark's path would report, it raises `_Bail`.
    """

    def __init__(self, data: dict[str, Any], lowerer: Any) -> None:
        if any(hasattr(lowerer, t) for t in data["terminals"]):  # Lark would call these on each such token
            raise Unsupported("a callback named as a terminal")
        self.start: int = data["start"]
        self.end: int = data["end"]
        self.actions: list[dict[str, int]] = data["actions"]
        self.lexer_of: list[int] = data["lexer_of"]
        self.lexers: list[tuple] = data["lexers"]
        self.scanners: list[tuple | None] = [None] * len(self.lexers)
        self.rules: list[tuple[int, str, Callable[[list], Any] | None]] = []  # None: the child passes up
        kept: set[str] = set()  # terminals that some rule passes to its callback: only these become tokens
        for size, origin, name, expand1, include, append_none, passed in data["rules"]:
            callback = getattr(lowerer, name, None)
            if include is None:
                always_one = size == 1
            else:  # one child, not an inlined rule's (which may bring any number)
                always_one = [(e, n) for _, e, n in include] == [(False, 0)] and not append_none
            if callback is None and not origin.startswith("_") and not (expand1 and always_one):
                raise Unsupported(f"rule {name!r} has no callback")  # Lark would build a Tree for it
            if origin.startswith("_") and (callback is not None or expand1):
                raise Unsupported(f"inlined rule {name!r} is not a plain list")  # its parent reads .children
            kept.update(passed)
            if expand1 and always_one and size == 1:  # a `?rule` of one symbol passes its value up unchanged:
                reduce = None  # no call, no list (half of all reductions)
            else:
                reduce = _reducer(callback, include, append_none, expand1)
            self.rules.append((size, origin, reduce))
        self.kept = frozenset(kept)

    def scanner(self, state: int) -> tuple:
        """The lexer of a parser state: (match, keyword maps, newline kinds, ignored kinds), compiled on
        first use (a cold start needs only a few of them)."""
        import re

        slot = self.lexer_of[state]
        made = self.scanners[slot]
        if made is None:
            patterns, unless, newline_types, ignore_types = self.lexers[slot]
            matchers = [re.compile(p).match for p in patterns]
            if len(matchers) == 1:
                match = matchers[0]
            else:  # Lark splits a regex with too many groups: the first that matches wins

                def match(text: str, pos: int) -> Any:
                    for one in matchers:
                        m = one(text, pos)
                        if m:
                            return m
                    return None

            made = self.scanners[slot] = (match, unless, frozenset(newline_types), frozenset(ignore_types))
        return made

    def parse(self, text: str) -> tuple[Any, bool]:
        """The lowered program of `text` (which ends with a newline), and whether it opened a block.

        One loop, with Lark's `ParserState.feed_token` written out in it: a function call per token or
        per reduction would be a good part of the time. (A long program makes ~3 reductions per token;
        half of them pass a `?rule`'s single child up unchanged, and only move the parser's state.)
        """
        actions = self.actions
        rules = self.rules
        scanners = self.scanners
        lexer_of = self.lexer_of
        kept = self.kept
        new_token = Tok
        state_stack = [self.start]
        value_stack: list = []
        pending: list[str] = []  # _INDENT/_DEDENT tokens to feed before lexing on (the last one first)
        pos = 0
        size_of_text = len(text)
        line = 1
        line_start = 0  # offset of the first character of the current line
        indents = [0]
        brackets: list[str] = []
        at_line_start = True
        started = False  # a token went to the parser
        opened_block = False
        while True:
            if pending:
                kind = pending.pop()
                tok = None
            elif pos < size_of_text:
                # -- the contextual lexer: the regex of the parser's state
                state = state_stack[-1]
                match, unless, newline_kinds, ignored = scanners[lexer_of[state]] or self.scanner(state)
                m = match(text, pos)
                if m is None:
                    raise _Bail
                kind = m.lastgroup
                start = pos
                pos = m.end()
                token_line = line
                column = start - line_start + 1
                if kind in newline_kinds:
                    count = text.count("\n", start, pos)
                    if count:
                        line += count
                        line_start = text.rindex("\n", start, pos) + 1
                if kind in ignored:
                    continue
                if kind in unless:  # a NAME that spells a keyword this state accepts is that keyword
                    kind = unless[kind].get(m.group(), kind)
                if kind == "_NEWLINE":
                    # -- BlockPostLex: blocks from indentation (none inside brackets)
                    if brackets:
                        continue
                    tok = None
                    started = at_line_start = True
                    width = len(m.group().rsplit("\n", 1)[1].expandtabs(8))
                    if width > indents[-1]:
                        if len(indents) > MAX_BLOCK_DEPTH:
                            raise _Bail
                        indents.append(width)
                        opened_block = True
                        pending.append("_INDENT")
                    elif width < indents[-1]:
                        while width < indents[-1]:
                            indents.pop()
                            pending.append("_DEDENT")
                        if width != indents[-1]:
                            raise _Bail
                else:
                    if at_line_start:
                        if not started and column > 1:
                            raise _Bail
                        at_line_start = False
                    if kind in OPENERS:
                        brackets.append(kind)
                    elif kind in CLOSERS:
                        if not brackets or OPENERS[brackets.pop()] != kind:
                            raise _Bail
                    if kind in kept:
                        tok = new_token(m.group())
                        tok.type = kind
                        tok.line = token_line
                        tok.column = column
                    else:
                        tok = None  # a terminal every rule drops (punctuation): no token to make
                    started = True
            elif len(indents) > 1:
                indents.pop()
                kind = "_DEDENT"
                tok = None
            else:
                break
            # -- the LALR parser: reduce as the table says, then shift
            while True:
                action = actions[state_stack[-1]].get(kind)
                if action is None:
                    raise _Bail
                if action >= 0:
                    state_stack.append(action)
                    value_stack.append(tok)
                    break
                size, origin, reduce = rules[~action]
                if reduce is None:  # a `?rule` passing its single child up
                    state_stack[-1] = actions[state_stack[-2]][origin]
                    continue
                if size == 1:
                    del state_stack[-1]
                    value_stack.append(reduce([value_stack.pop()]))
                elif size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                    value_stack.append(reduce(children))
                else:
                    value_stack.append(reduce([]))
                state_stack.append(actions[state_stack[-1]][origin])
        end_state = self.end
        while True:  # the end of the input: the last reductions, up to the start rule
            action = actions[state_stack[-1]].get("$END")
            if action is None or action >= 0:
                raise _Bail
            size, origin, reduce = rules[~action]
            if reduce is None:
                state_stack[-1] = actions[state_stack[-2]][origin]
            else:
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(reduce(children))
                state_stack.append(actions[state_stack[-1]][origin])
            if state_stack[-1] == end_state:
                return value_stack[-1], opened_block


_fast: _FastParser | None = None
_fast_unsupported = False
_fast_lock = threading.Lock()


def fast_parser() -> _FastParser | None:
    """The fast path's parser (made on first use, then kept), or None when Lark's parser is not what it
    expects and every parse goes through Lark."""
    global _fast, _fast_unsupported
    if _fast is None and not _fast_unsupported:
        with _fast_lock:
            if _fast is None and not _fast_unsupported:
                grammar = _read_grammar()
                try:
                    try:
                        _fast = _FastParser(_load_tables(grammar), Lowerer())
                    except (KeyError, IndexError, TypeError, ValueError):  # a cache file not of this layout
                        _fast = _FastParser(_load_tables(grammar, fresh=True), Lowerer())
                except Unsupported:
                    _fast_unsupported = True
    return _fast


# ---------------------------------------------------------------------------------------------------
# Parsing, and parse errors in words


# Above this many objects made inside `no_gc`, they go straight to the oldest generation (see there).
PROMOTE_AT = 50_000


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing and compiling allocate many objects and free none, and a
    collection every few hundred allocations would scan them all again (it halves parsing time).

    On the way out, when the block made many objects (a long script), they go straight to the oldest
    generation (gc.freeze, then gc.unfreeze, which moves the frozen objects there): a program lives as long
    as it runs, and left in the youngest generation its hundreds of thousands of objects would be scanned by
    the next collection of each generation in turn (a third of the time to parse and compile a long script).
    A small block (a REPL input) leaves them to the collector's usual course, whose bookkeeping decides when
    to look for cycles among old objects. Skipped if the process froze objects itself (unfreezing would thaw
    those).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_count()[0] >= PROMOTE_AT and not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def parse(source: str) -> A.Program:
    """Parse and lower a whole program; a SyntaxProblem says where and what was expected."""
    program, _ = _parse(source)
    return program


def _parse(source: str) -> tuple[A.Program, bool]:
    """The program, and whether it opened an indented block (for `check_complete`)."""
    text = source if source.endswith("\n") else source + "\n"
    fast = fast_parser()
    if fast is not None:
        try:
            with no_gc():
                program, opened_block = fast.parse(text)
        except Exception:  # noqa: BLE001 - any error: Lark's path finds it again, and says what it is
            pass
        else:
            check(program)
            return program, opened_block
    program, state = _parse_with_lark(text)
    return program, state.opened_block


def _parse_with_lark(text: str) -> tuple[A.Program, _BlockState]:
    from lark.exceptions import UnexpectedInput

    parser, postlex = get_parser()
    state = postlex.begin(text)
    try:
        with no_gc():
            program = parser.parse(text)
    except UnexpectedInput as exc:
        raise _translate(exc, state) from None
    except SyntaxProblem as exc:
        exc.state = state  # type: ignore[attr-defined]
        raise
    except RecursionError:
        raise SyntaxProblem("the program is nested too deeply to parse", Loc(1, 1)) from None
    check(program)
    return program, state


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
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF

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
        _, opened_block = _parse(text)
    except SyntaxProblem as exc:
        return "incomplete" if getattr(exc, "incomplete", False) else "invalid"
    except Exception:  # anything else the parser raises is an input it cannot take
        return "invalid"
    if opened_block and text.split("\n")[-1].strip():
        return "incomplete"
    return "complete"
