"""Lowering: from the grammar's rules to the records of `ast.py` and `statements/`.

`Lowerer` has one callback per rule (or alias) of grammar/gradcalc.lark. The parser applies them while
it parses (the parser's table-driven parser, or Lark's LALR parser with `transformer=`), bottom-up and
without recursion, so no parse tree is ever built and a deeply nested input lowers as easily as a flat
one. `check` (ast.py) then walks the statements once for what depends on context (`break` outside a
loop, `save` outside a forward block, ...).

This module does not import Lark: a token is anything that is a `str` with `type`, `line` and `column`
attributes, which both Lark's `Token` and the parser's `Tok` are (and no other child of a rule is a str).
"""

from __future__ import annotations

from typing import TypeAlias

from ..errors import Loc, SyntaxProblem
from ..limits import MAX_DIMS, too_many_dims
from . import ast as A
from .keywords import check_name
from .shape import rules, statement_rules
from .source import Span

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}




class Tok(str):
    """A token of the parser's own parser: the matched text, the terminal's name and where it starts. (Lark's
    `Token` carries the same attributes; the callbacks take either.)"""

    type: str
    line: int
    column: int


Token = Tok  # the name the callbacks' annotations use: a Tok, or Lark's Token on Lark's error path


loc = A.token_loc
end = A.token_end

# what a rule's callback receives: its tokens, what the callbacks of its sub-rules returned, and None for an
# optional part left out
Children: TypeAlias = "list[object]"


def _string_value(text: str) -> str:
    """The value of a string literal: quotes removed, backslash escapes (\\n \\t \\\\ \\" \\') applied."""
    body = text[1:-1]
    if "\\" not in body:
        return body
    out = []
    i = 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _number_value(text: str) -> int | float:
    """Integers stay Python ints as operands (`x ** 2`, `zeros(2, 3)`); the rest are floats, and so is an
    integer past float64's range (it would not convert: it is inf, as `1e400` is)."""
    if text.isdigit() and len(text) <= 308:
        return int(text)
    return float(text)


class _Keyword:
    """A `name=value` argument, on its way from `keyword` to `arguments`."""

    __slots__ = ("name", "value", "loc")

    def __init__(self, name: str, value: A.Node, where: Loc) -> None:
        self.name, self.value, self.loc = name, value, where


def _flatten_statements(children: Children) -> list[A.Node]:
    """Statements of a block: a line of simple statements arrives as a list."""
    out: list[A.Node] = []
    for c in children:
        if isinstance(c, list):
            out.extend(c)
        elif isinstance(c, A.Node):
            out.append(c)
    return out


def _tokens(children: Children, *types: str) -> list[Token]:
    return [c for c in children if isinstance(c, str) and c.type in types]


def _nodes(children: Children) -> list[object]:
    return [c for c in children if not isinstance(c, str)]


class Lowerer:
    """One callback per grammar rule; each returns an `ast` node (or a piece of one). A rule without a
    callback here must be inlined (`_rule`) or always have one child (`?rule`): the parser package checks.

    The program's structure and the expressions are lowered here; each statement's rule is lowered by its
    record (`A.RULES`, filled by `@statement` and `@rule` when gradcalc.lang.statements loads), installed on
    each Lowerer as it is made (the parser makes one per process)."""

    def __init__(self) -> None:
        missing = [name for name in statement_rules() if name not in A.STATEMENT_RECORDS]
        if missing:
            raise RuntimeError(f"no statement record for the grammar's {', '.join(missing)}: the statements register "
                               "their records when gradcalc.lang.statements is imported, before anything is parsed")
        bodies = rules()
        for name, lower in A.RULES.items():
            if "COLON" in bodies.get(name, ""):  # a compound statement's header ends at its `:`
                lower = A.with_colon(lower)
            setattr(self, name, lower)  # the parser calls `lowerer.RULE(children)`

    # -- program and blocks ----------------------------------------------------------------------
    def start(self, children: Children) -> A.Program:
        return A.Program(_flatten_statements(children))

    def simple_line(self, children: Children) -> list[A.Node]:
        return [c for c in children if isinstance(c, A.Node)]

    def suite(self, children: Children) -> list[A.Node]:
        return _flatten_statements(children)

    def exprlist(self, children: Children) -> list[A.Node]:
        return list(children)

    # -- expressions -----------------------------------------------------------------------------
    def tuple(self, children: Children) -> A.TupleExpr:
        return A.TupleExpr(list(children), A.start_of(children[0]))

    def test(self, children: Children) -> A.Node:
        if len(children) == 1 and not isinstance(children[0], _Prefixed):
            return children[0]
        return _apply_precedence(children)

    def operand(self, children: Children) -> A.Node | _Prefixed:
        k = 0
        while isinstance(children[k], str) and children[k].type in PREFIX:
            k += 1
        node = children[k]
        for kind, *rest in children[k + 1 :]:
            if kind == "call":
                args, kwargs, where, end = rest
                node = A.Call(node, args, kwargs, where, end)
            elif kind == "index":
                index, where, end = rest
                node = A.Index(node, index, where, end)
            else:
                name, where = rest
                if name.startswith("_") and not name.startswith("_saved_"):  # PyTorch's grad_fn._saved_self
                    raise SyntaxProblem(
                        f"attribute '{name}' is not accessible: names starting with '_' are Python internals",
                        where,
                    )
                node = A.Attribute(node, name, where)
        return _Prefixed(children[:k], node) if k else node

    def call(self, children: Children) -> tuple[str, list[A.Node], list[tuple[str, A.Node]], Loc, Loc]:
        args, kwargs = children[1] if len(children) > 2 else ([], [])
        return ("call", args, kwargs, loc(children[0]), end(children[-1]))

    def arguments(self, children: Children) -> tuple[list[A.Node], list[tuple[str, A.Node]]]:
        args: list[A.Node] = []
        kwargs: list[tuple[str, A.Node]] = []
        for c in children:
            if isinstance(c, _Keyword):
                if any(name == c.name for name, _ in kwargs):
                    raise SyntaxProblem(f"keyword argument '{c.name}' is given twice", c.loc)
                kwargs.append((c.name, c.value))
            elif kwargs:
                raise SyntaxProblem("a positional argument can't follow a keyword argument", A.start_of(c))
            else:
                args.append(c)
        return args, kwargs

    def keyword(self, children: Children) -> _Keyword:
        name, _, value = children
        return _Keyword(str(name), value, loc(name))

    def index(self, children: Children) -> tuple[str, A.Node, Loc, Loc]:
        where = loc(children[0])
        items = children[1]
        for item in items:
            if isinstance(item, A.Slice):
                item.loc = where
        index = (
            items[0] if len(items) == 1 and not isinstance(items, _Multi) else A.TupleExpr(list(items), where)
        )
        return ("index", index, where, end(children[2]))

    def subscripts(self, children: Children) -> list[object]:
        return _Multi(children) if len(children) > 1 else list(children)

    def slice(self, children: Children) -> A.Slice:
        start, colon, stop, second, step = children  # (the colons are kept for the slice's span)
        first = A.span_start(start) if start is not None else loc(colon)
        last = step if step is not None else second if second is not None else stop if stop is not None else colon
        return A.Slice(start, stop, step, Loc(0, 0), first, end(last) if isinstance(last, str) else A.span_end(last))

    def attribute(self, children: Children) -> tuple[str, str, Loc]:
        return ("attr", str(children[0]), loc(children[0]))

    # -- atoms -----------------------------------------------------------------------------------
    def name(self, children: Children) -> A.Name:
        tok = children[0]
        check_name(tok)
        return A.Name(str(tok), loc(tok))

    def number(self, children: Children) -> A.Num:
        tok = children[0]
        return A.Num(_number_value(str(tok)), loc(tok), end(tok))

    def string(self, children: Children) -> A.Str:
        tok = children[0]
        return A.Str(_string_value(str(tok)), loc(tok), end(tok))

    def true(self, children: Children) -> A.Const:
        return A.Const(True, loc(children[0]))

    def false(self, children: Children) -> A.Const:
        return A.Const(False, loc(children[0]))

    def none(self, children: Children) -> A.Const:
        return A.Const(None, loc(children[0]))

    def empty_tuple(self, children: Children) -> A.TupleExpr:
        empty = A.TupleExpr([], Loc(0, 0), parens=True)
        empty.enclosed = Span(loc(children[0]), end(children[1]))
        return empty

    def parens(self, children: Children) -> A.Node:
        inner = children[1]
        if isinstance(inner, A.TupleExpr):
            inner.parens = True
        inner.enclosed = Span(loc(children[0]), end(children[2]))  # (the outermost brackets, for its span)
        return inner

    def list(self, children: Children) -> A.Node:
        where, closed = loc(children[0]), end(children[-1])
        items = children[1:-1]
        if all(isinstance(i, (A.Num, A.NumList)) for i in items):
            return _numeric_list(items, where, closed)
        return A.ListExpr(list(items), where, closed)


# ---------------------------------------------------------------------------------------------------
# Operator precedence: a `test` arrives as a flat sequence (operand op operand op ...), and this table
# (binding power, right-associative?) builds the tree with an explicit stack, so no input nests Python.

PRECEDENCE: dict[str, tuple[int, bool]] = {
    "or": (1, False),
    "and": (2, False),
    "==": (4, False),
    "!=": (4, False),
    "<": (4, False),
    "<=": (4, False),
    ">": (4, False),
    ">=": (4, False),
    "+": (5, False),
    "-": (5, False),
    "*": (6, False),
    "/": (6, False),
    "//": (6, False),
    "%": (6, False),
    "@": (6, False),
    "**": (8, True),
}
PREFIX: dict[str, int] = {"NOT": 3, "MINUS": 7, "PLUS": 7}  # `not x` binds looser than ==, `-x` than **
_GROUPS = {
    "+": "sum",
    "-": "sum",
    "*": "product",
    "/": "product",
    "//": "product",
    "%": "product",
    "@": "product",
}
_COMPARISONS = frozenset(("==", "!=", "<", "<=", ">", ">="))


class _Prefixed:
    """An operand with prefix operators (`-x`, `not x`): they apply after any tighter binary operator."""

    __slots__ = ("ops", "node")

    def __init__(self, ops: list[Token], node: A.Node) -> None:
        self.ops, self.node = ops, node


def _apply_precedence(items: list[object]) -> A.Node:
    """Build the expression tree of `operand (op operand)*` by operator precedence (shunting-yard)."""
    out: list[A.Node] = []
    stack: list[tuple[int, bool, Token]] = []  # (binding power, is prefix, operator token)
    made: set[int] = set()  # ids of Chain/Compare/BoolOp nodes built here (not parenthesized ones)

    def reduce_top() -> None:
        _, prefix, tok = stack.pop()
        if prefix:
            out.append(_prefix(tok, out.pop()))
        else:
            right = out.pop()
            out.append(_binary(str(tok), out.pop(), right, loc(tok), made))

    for i, item in enumerate(items):
        if i % 2:  # a binary operator
            sym = str(item)
            power, right_assoc = PRECEDENCE[sym]
            while stack and (stack[-1][0] > power or (stack[-1][0] == power and not right_assoc)):
                reduce_top()
            stack.append((power, False, item))
        elif isinstance(item, _Prefixed):
            stack.extend((PREFIX[t.type], True, t) for t in item.ops)
            out.append(item.node)
        else:
            out.append(item)
    while stack:
        reduce_top()
    return out[0]


def _prefix(tok: Token, operand: A.Node) -> A.Node:
    if tok.type == "NOT":
        return A.Not(operand, loc(tok))
    if isinstance(operand, A.Num):  # -1 is a literal: [-1, 2] is a tensor, and -1 an operand
        return A.Num(-operand.value if tok.type == "MINUS" else operand.value, loc(tok), A.span_end(operand))
    return A.Unary(str(tok), operand, loc(tok))


def _binary(sym: str, left: A.Node, right: A.Node, where: Loc, made: set[int]) -> A.Node:
    if sym in ("or", "and"):
        if isinstance(left, A.BoolOp) and left.op == sym and id(left) in made:
            left.values.append(right)
            return left
        node: A.Node = A.BoolOp(sym, [left, right], where)
    elif sym in _COMPARISONS:
        if isinstance(left, A.Compare) and id(left) in made:
            raise SyntaxProblem(
                "comparisons can't be chained (they are elementwise on tensors): write (a < b) and (b < c)",
                where,
            )
        node = A.Compare(sym, left, right, where)
    elif sym == "**":
        return A.Power(left, right, where)
    else:
        group = _GROUPS[sym]
        if isinstance(left, A.Chain) and id(left) in made and _GROUPS[left.ops[0][0]] == group:
            left.ops.append((sym, right, where))
            return left
        node = A.Chain(left, [(sym, right, where)], where)
    made.add(id(node))
    return node


class _Multi(list):
    """Subscripts written with a comma (`x[0,]`, `x[1:, ::2]`): an index tuple even with one item."""


def _numeric_list(items: list[object], where: Loc, closed: Loc) -> A.NumList:
    """A tensor literal, checked for a rectangular shape (ragged lists are an error when run)."""
    if not items:
        return A.NumList([], where, closed)
    if all(isinstance(i, A.Num) for i in items):
        return A.NumList([i.value for i in items], where, closed)
    if any(isinstance(i, A.Num) for i in items):
        return A.NumList([], where, closed, "a list literal mixes numbers and lists (ragged lists are an error)")
    first = items[0]
    for item in items:
        if item.problem:
            return A.NumList([], where, closed, item.problem)
    if len(_shape(first.data)) >= MAX_DIMS:  # (and no deeper literal costs more: its problem passes up as it is)
        return A.NumList([], where, closed,
                         too_many_dims(cause=f"a list literal nested more than {MAX_DIMS} deep"))
    for k, item in enumerate(items):
        if _shape(item.data) != _shape(first.data):
            return A.NumList(
                [],
                where,
                closed,
                f"a ragged list literal: row {k} has shape {list(_shape(item.data))}, "
                f"but row 0 has shape {list(_shape(first.data))}",
            )
    return A.NumList([i.data for i in items], where, closed)


def _shape(data: list[object]) -> tuple[int, ...]:
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        data = data[0] if data else None
    return tuple(shape)




check = A.check
