"""What the grammar's rules say about the language, read from grammar/gradcalc.lark's text: the statements and
the keywords each starts with, the tokens after which an expression must come, the headers of blocks, the
compound statements and the clauses that continue them. Every list of these elsewhere (the parser's messages,
`:help`, the REPL's blocks, the tests' token lists) is derived from here, so that a rule added to the grammar
is known everywhere without a word more.

A rule's body is read as Lark's EBNF: alternatives (`|`), sequences, groups `( )`, optional parts `[ ]`, and
the repetitions `?`, `*`, `+`; `-> alias` names an alternative. Only what these questions need is kept.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from .grammar import grammar_text, keyword_terminals

_RULE = re.compile(r"^\??([a-z_][a-z0-9_]*)[ \t]*:(.*(?:\n[ \t]+\S.*)*)", re.M)
_TERMINAL = re.compile(r'^([A-Z][A-Z0-9_]*)[ \t]*:[ \t]*"([^"\n]+)"', re.M)
_COMMENT = re.compile(r"//[^\n]*")
_TOKEN = re.compile(r'"[^"]*"|[A-Za-z_][A-Za-z0-9_]*|->|\S')


class Item(NamedTuple):
    """One element of a sequence: a symbol (a rule, a terminal, or a literal's terminal) or a group of
    alternatives, with its repetition (`""`, `"?"`, `"*"` or `"+"`; `[x]` is `x?`)."""

    symbol: str  # "" for a group
    group: tuple[tuple[Item, ...], ...]  # the group's alternatives (sequences)
    repeat: str


Seq = tuple[Item, ...]


@cache
def rules() -> dict[str, str]:
    """Each rule of the grammar -> its body's text (comments dropped)."""
    text = grammar_text()
    return {m[1]: _COMMENT.sub("", m[2]).strip() for m in _RULE.finditer(text)}


@cache
def literals() -> dict[str, str]:
    """Each terminal spelled as a literal (`LPAR: "("`) -> its text."""
    return {m[1]: m[2] for m in _TERMINAL.finditer(grammar_text())}


@cache
def _terminal_of_literal() -> dict[str, str]:
    """A literal's text -> the terminal that spells it (`"("` is LPAR), as Lark matches them."""
    return {text: name for name, text in literals().items()}


def alternatives(body: str) -> list[str]:
    """A rule body's top-level alternatives, as text (each may end in `-> alias`)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return [p for p in parts if p]


def _parse(tokens: list[str], pos: int, closer: str) -> tuple[tuple[Seq, ...], int]:
    """Alternatives from `tokens[pos]` up to `closer` (or the end); an alias ends its alternative."""
    alts: list[Seq] = []
    seq: list[Item] = []
    while pos < len(tokens) and tokens[pos] != closer:
        tok = tokens[pos]
        pos += 1
        if tok == "|":
            alts.append(tuple(seq))
            seq = []
            continue
        if tok == "->":
            pos += 1  # the alias' name
            continue
        if tok in ("(", "["):
            group, pos = _parse(tokens, pos, ")" if tok == "(" else "]")
            pos += 1  # the closer
            item = Item("", group, "?" if tok == "[" else "")
        else:
            symbol = _terminal_of_literal().get(tok[1:-1], tok) if tok.startswith('"') else tok
            item = Item(symbol, (), "")
        if pos < len(tokens) and tokens[pos] in ("?", "*", "+") and item.repeat == "":
            item = item._replace(repeat=tokens[pos])
            pos += 1
        seq.append(item)
    alts.append(tuple(seq))
    return tuple(alts), pos


@cache
def parsed() -> dict[str, tuple[Seq, ...]]:
    """Each rule -> its alternatives, parsed."""
    return {name: _parse(_TOKEN.findall(body), 0, "")[0] for name, body in rules().items()}


def _is_rule(symbol: str) -> bool:
    """Rules are in lower case (`test`, `_import_names`), terminals in capitals (`NAME`, `_NEWLINE`)."""
    return symbol.lstrip("_")[:1].islower()


@cache
def _nullable() -> frozenset[str]:
    """The rules that can match nothing."""
    grammar = parsed()
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, alts in grammar.items():
            if name not in found and any(_seq_nullable(seq, found) for seq in alts):
                found.add(name)
                changed = True
    return frozenset(found)


def _item_nullable(item: Item, nullable: set[str] | frozenset[str]) -> bool:
    if item.repeat in ("?", "*"):
        return True
    if item.symbol:
        return item.symbol in nullable
    return any(_seq_nullable(seq, nullable) for seq in item.group)


def _seq_nullable(seq: Seq, nullable: set[str] | frozenset[str]) -> bool:
    return all(_item_nullable(item, nullable) for item in seq)


@cache
def first_sets() -> dict[str, frozenset[str]]:
    """Each rule -> the terminals it can start with."""
    grammar = parsed()
    first: dict[str, set[str]] = {name: set() for name in grammar}
    changed = True
    while changed:
        changed = False
        for name, alts in grammar.items():
            before = len(first[name])
            for seq in alts:
                first[name] |= _seq_first(seq, first)
            changed = changed or len(first[name]) != before
    return {name: frozenset(terminals) for name, terminals in first.items()}


def _item_first(item: Item, first: dict[str, set[str]] | dict[str, frozenset[str]]) -> set[str]:
    if item.symbol:
        return set(first.get(item.symbol, ())) if item.symbol in first else {item.symbol}
    out: set[str] = set()
    for seq in item.group:
        out |= _seq_first(seq, first)
    return out


def _seq_first(seq: Seq, first: dict[str, set[str]] | dict[str, frozenset[str]]) -> set[str]:
    out: set[str] = set()
    nullable = _nullable()
    for item in seq:
        out |= _item_first(item, first)
        if not _item_nullable(item, nullable):
            break
    return out


Path = tuple[tuple[Seq, int, str], ...]


def _occurrences(seq: Seq, path: Path = ()) -> list[tuple[str, Path]]:
    """Every symbol in `seq` (at any depth), with the path that leads to it: (sequence, index, repeat of the
    group the sequence belongs to) from the innermost out."""
    out: list[tuple[str, Path]] = []
    for i, item in enumerate(seq):
        here = ((seq, i, ""), *path)
        if item.symbol:
            out.append((item.symbol, here))
        else:
            for inner in item.group:
                out += _occurrences(inner, ((inner, -1, item.repeat), *here))
    return out


def _next_required(path: Path) -> Item | None:
    """After the symbol at `path`: the first item that must come (not optional) before the rule ends, or None."""
    nullable = _nullable()
    for seq, index, _ in path:
        if index < 0:
            continue  # a group's own sequence: what follows the group is in the next step of the path
        for item in seq[index + 1 :]:
            if not _item_nullable(item, nullable):
                return item
    return None


# ---------------------------------------------------------------------------------------------------
# What the parser's messages and the REPL need


@cache
def expression_rules() -> frozenset[str]:
    """The rules of the expression grammar: those `test` reaches, and those that must begin with one of them
    (`exprlist: test ("," test)*`), statements aside (`expr_stmt`)."""
    grammar = parsed()
    found: set[str] = set()
    todo = ["test"]
    while todo:
        name = todo.pop()
        if name in found or name not in grammar:
            continue
        found.add(name)
        for symbol, _ in (o for seq in grammar[name] for o in _occurrences(seq)):
            if _is_rule(symbol):
                todo.append(symbol)
    statements = set(statement_rules())
    changed = True
    while changed:
        changed = False
        for name, alts in grammar.items():
            if name not in found and name not in statements and all(seq and _starts_with(seq, found) for seq in alts):
                found.add(name)
                changed = True
    return frozenset(found)


def _starts_with(seq: Seq, names: set[str]) -> bool:
    first = seq[0]
    return first.repeat in ("", "+") and bool(first.symbol) and first.symbol in names


@cache
def expression_start() -> frozenset[str]:
    """The terminals an expression can start with."""
    return first_sets()["test"]


@cache
def operators() -> frozenset[str]:
    """The binary operators: the terminals of rule `test` itself (`test: operand ((OR | AND ...) operand)*`)."""
    return frozenset(s for seq in parsed()["test"] for s, _ in _occurrences(seq) if not _is_rule(s))


@cache
def wants_expression() -> frozenset[str]:
    """The terminals after which an expression must come, somewhere in the grammar (`+`, `=`, `backward`,
    `plot`, `in`...): where the parser expects one after them, the message says "expected an expression
    after X". Not those after which one may come (`print`, `return`, `explain` alone are statements)."""
    wanted: set[str] = set()
    expressions = expression_rules()
    for alts in parsed().values():
        for seq in alts:
            for symbol, path in _occurrences(seq):
                if _is_rule(symbol) or symbol in wanted:
                    continue
                item = _next_required(path)
                if item is not None and item.symbol in expressions:
                    wanted.add(symbol)
    return frozenset(wanted)


def _first_keyword(seq: Seq) -> str | None:
    words = {terminal: word for terminal, word, _ in keyword_terminals()}
    first = seq[0] if seq else None
    return words.get(first.symbol) if first is not None and first.symbol else None


def _has_block(seq: Seq) -> bool:
    return any(s in ("suite", "_INDENT") for s, _ in _occurrences(seq))


@cache
def block_headers() -> frozenset[str]:
    """The terminals of the keywords that open a block (`if`, `else`, `forward`...): the first keyword of
    each rule whose sequence holds a block."""
    words = {word: terminal for terminal, word, _ in keyword_terminals()}
    found: set[str] = set()
    for alts in parsed().values():
        for seq in alts:
            word = _first_keyword(seq)
            if word is not None and _has_block(seq):
                found.add(words[word])
    return frozenset(found)


# ---------------------------------------------------------------------------------------------------
# The statements


@cache
def statement_rules() -> tuple[str, ...]:
    """The grammar's statements, in its order: each alternative of `simple` and `compound`, by its rule's name
    (or the alias an alternative is given: `BREAK -> break_stmt`)."""
    found: list[str] = []
    for group in ("simple", "compound"):
        for alternative in alternatives(rules().get(group, "")):
            name = alternative.split("->")[-1].strip()
            if name not in found:
                found.append(name)
    return tuple(found)


def statement_body(rule: str) -> str:
    """The body of statement `rule`: its rule's, or for an alias in `simple` what it aliases (`BREAK`)."""
    simple = {a.split("->")[-1].strip(): a.split("->")[0].strip()
              for a in alternatives(rules().get("simple", "")) if "->" in a}
    return simple.get(rule) or rules().get(rule, "")


@cache
def statement_keywords() -> dict[str, tuple[str, ...]]:
    """Each statement rule -> the keywords it starts with (`if_stmt` -> `("if",)`; none for `assign`)."""
    out: dict[str, tuple[str, ...]] = {}
    for rule in statement_rules():
        starts: list[str] = []
        for seq in _parse(_TOKEN.findall(statement_body(rule)), 0, "")[0]:
            word = _first_keyword(seq)
            if word is not None and word not in starts:
                starts.append(word)
        out[rule] = tuple(starts)
    return out


@cache
def compound_keywords() -> frozenset[str]:
    """The keywords that start a compound statement (a statement with blocks: `if`, `for`, `def`...)."""
    compound = [a.split("->")[-1].strip() for a in alternatives(rules().get("compound", ""))]
    return frozenset(word for rule in compound for word in statement_keywords().get(rule, ()))


@cache
def continuations() -> dict[str, tuple[str, ...]]:
    """A clause's keyword -> the keywords of the clauses it may follow at the same indentation (`else` after
    `if` or `elif`; a custom function's `backward` after its `forward`): the clauses before it in its
    statement's rule, after the last indentation the rule opens (the header's own keyword counts when its
    block, a `suite`, is closed before the clause)."""
    grammar = parsed()
    out: dict[str, list[str]] = {}
    for alts in grammar.values():
        for seq in alts:
            head = _first_keyword(seq)
            if head is None or not _has_block(seq):
                continue
            before: list[str] = []
            for item in seq:
                symbols = [item.symbol] if item.symbol else [s for g in item.group for s, _ in _occurrences(g)]
                for symbol in symbols:
                    if symbol == "_INDENT":
                        before = []  # the clauses after it are inside the header's block
                    elif symbol == "suite":
                        before.append(head)
                    elif symbol in grammar and any(_has_block(s) for s in grammar[symbol]):
                        clause = next((w for s in grammar[symbol] if (w := _first_keyword(s))), None)
                        if clause is None:
                            continue
                        if before:
                            follows = out.setdefault(clause, [])
                            follows += [w for w in before if w not in follows]
                        if clause not in before:
                            before.append(clause)
                        if item.repeat in ("*", "+") and clause in out and clause not in out[clause]:
                            out[clause].append(clause)  # elif after elif
    return {clause: tuple(follows) for clause, follows in out.items()}
