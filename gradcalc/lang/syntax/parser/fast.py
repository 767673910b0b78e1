"""The fast path: `_FastParser` runs the tables of tables.py in one loop that lexes, makes blocks from
indentation, shifts and reduces, applying `Lowerer`'s callbacks as Lark's tree builder would. It needs
neither Lark nor its pickle once the tables are cached; at the first thing Lark's path would report it
stops (`_Bail`), and the caller parses the input again on Lark's path.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..lower import Lowerer, Tok
from .blocks import CLOSERS, MAX_BLOCK_DEPTH, OPENERS
from .lark_path import _read_grammar
from .tables import Unsupported, load_tables

if TYPE_CHECKING:
    from .. import ast as A
    from .tables import Tables

    # what a rule's reduction does with its children (the values on the stack): its value
    Reduce = Callable[[list[object]], object]
    # a parser state's lexer: (match at a position, keyword maps by terminal, newline kinds, ignored kinds)
    Scanner = tuple[
        Callable[[str, int], re.Match[str] | None], dict[str, dict[str, str]], frozenset[str], frozenset[str]
    ]


class _Bail(Exception):
    """The fast path stops: the input has an error that Lark's path will describe."""


def _reducer(
    callback: Reduce | None,
    include: list[tuple[int, bool, int]] | None,
    append_none: int,
    expand1: bool,
) -> Reduce:
    """A rule's reduction, as Lark composes it: filter the children (drop punctuation, inline `_rule`s, add
    None for a missing `[optional]`), then return a lone child of a `?rule`, else call the callback.

    An inlined rule (`_rule`, and Lark's helpers for `x*`) has no callback, and its value is the list of
    its children (what Lark's tree for it holds, and the only thing its parent reads of it)."""
    if callback is None:

        def callback(children: list[object]) -> object:
            return children

    build = callback
    if expand1:

        def build(children: list[object]) -> object:
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

        def reduce_left(children: list[object]) -> object:
            filtered = children[inlined]  # as Lark: grow the inlined rule's list (linear, not quadratic)
            filtered.append(children[item])
            return build(filtered)

        return reduce_left
    elif shape == [(False, 0), (True, 0)]:  # `rule: first _x`
        first, inlined = positions
        return lambda children: build([children[first], *children[inlined]])

    def reduce(children: list[object]) -> object:
        filtered: list[object] = []
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

    What it does matches, step for step, Lark's contextual lexer (the regex of the parser's current state, its
    terminals in Lark's order, so a whole-word keyword before NAME; and Lark's `unless` retyping of a NAME that
    spells a string terminal, which the grammar's keywords, being regexes, do not need), `BlockPostLex` and
    Lark's LALR parser with its tree builder. At the first thing Lark's path would report, it raises `_Bail`.
    """

    def __init__(self, data: Tables, lowerer: Lowerer) -> None:
        if any(hasattr(lowerer, t) for t in data["terminals"]):  # Lark would call these on each such token
            raise Unsupported("a callback named as a terminal")
        self.start: int = data["start"]
        self.end: int = data["end"]
        self.actions: list[dict[str, int]] = data["actions"]
        self.lexer_of: list[int] = data["lexer_of"]
        self.lexers = data["lexers"]
        self.scanners: list[Scanner | None] = [None] * len(self.lexers)
        self.rules: list[tuple[int, str, Reduce | None]] = []  # None: the child passes up
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

    def scanner(self, state: int) -> Scanner:
        """The lexer of a parser state: (match, keyword maps, newline kinds, ignored kinds), compiled on
        first use (a cold start needs only a few of them)."""
        slot = self.lexer_of[state]
        made = self.scanners[slot]
        if made is None:
            patterns, unless, newline_types, ignore_types = self.lexers[slot]
            matchers = [re.compile(p).match for p in patterns]
            if len(matchers) == 1:
                match = matchers[0]
            else:  # Lark splits a regex with too many groups: the first that matches wins

                def match(text: str, pos: int) -> re.Match[str] | None:
                    for one in matchers:
                        m = one(text, pos)
                        if m:
                            return m
                    return None

            made = self.scanners[slot] = (match, unless, frozenset(newline_types), frozenset(ignore_types))
        return made

    def parse(self, text: str) -> tuple[A.Program, bool]:
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
        value_stack: list[object] = []
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
                if kind in unless:  # a NAME that spells a string terminal this state accepts is that terminal
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
# Why the fast path runs or not, in words (for `gradcalc --version` and GRADCALC_DEBUG_PARSER): where its
# tables came from ("cached", "made and cached"...), or why Lark's parser is not what it expects.
_fast_how = ""


def fast_parser() -> _FastParser | None:
    """The fast path's parser (made on first use, then kept), or None when Lark's parser is not what it
    expects and every parse goes through Lark."""
    global _fast, _fast_unsupported, _fast_how
    if _fast is None and not _fast_unsupported:
        with _fast_lock:
            if _fast is None and not _fast_unsupported:
                grammar = _read_grammar()
                try:
                    try:
                        data, how = load_tables(grammar)
                        _fast = _FastParser(data, Lowerer())
                    except (KeyError, IndexError, TypeError, ValueError):  # a cache file not of this layout
                        data, how = load_tables(grammar, fresh=True)
                        _fast = _FastParser(data, Lowerer())
                except Unsupported as exc:
                    _fast_unsupported = True
                    _fast_how = str(exc) or "Lark's parser is not what the fast path expects"
                else:
                    _fast_how = how
    return _fast


def fast_status() -> tuple[bool, str]:
    """Whether the fast path is in use (making its parser if need be), and, in words, where its tables came
    from ("cached", "made and cached", "made, not cached: <why>") or why it is not in use."""
    return fast_parser() is not None, _fast_how
