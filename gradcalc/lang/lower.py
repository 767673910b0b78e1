"""Lowering: from the grammar's rules to the records of `ast.py`.

`Lowerer` has one callback per rule (or alias) of grammar/gradcalc.lark. The parser applies them while
it parses (parser.py's table-driven parser, or Lark's LALR parser with `transformer=`), bottom-up and
without recursion, so no parse tree is ever built and a deeply nested input lowers as easily as a flat
one. `check` then walks the statements once for what depends on context (`break` outside a loop, `save`
outside a forward block, ...).

This module does not import Lark: a token is anything that is a `str` with `type`, `line` and `column`
attributes, which both Lark's `Token` and parser.py's `Tok` are (and no other child of a rule is a str).
"""

from __future__ import annotations

from typing import Any

from . import ast as A
from .errors import Loc, SyntaxProblem
from .keywords import KEYWORD_SET

COMMANDS = ("help", "vars", "reset", "load", "quit")
GRAD_MODES = ("no_grad", "enable_grad", "inference_mode", "detect_anomaly")

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


_new_tuple = tuple.__new__


class Tok(str):
    """A token of parser.py's own parser: the matched text, the terminal's name and where it starts. (Lark's
    `Token` carries the same attributes; the callbacks take either.)"""

    type: str
    line: int
    column: int


Token = Tok  # the name the callbacks' annotations use: a Tok, or Lark's Token on Lark's error path


def loc(tok: Token) -> Loc:
    return _new_tuple(Loc, (tok.line, tok.column))  # Loc(...) without the NamedTuple's Python-level __new__


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
    """Integers stay Python ints as operands (`x ** 2`, `zeros(2, 3)`); the rest are floats."""
    if text.isdigit():
        return int(text)
    return float(text)


class _Keyword:
    """A `name=value` argument, on its way from `keyword` to `arguments`."""

    __slots__ = ("name", "value", "loc")

    def __init__(self, name: str, value: A.Node, where: Loc) -> None:
        self.name, self.value, self.loc = name, value, where


def _flatten_statements(children: list) -> list[A.Node]:
    """Statements of a block: a line of simple statements arrives as a list."""
    out: list[A.Node] = []
    for c in children:
        if isinstance(c, list):
            out.extend(c)
        elif isinstance(c, A.Node):
            out.append(c)
    return out


def _tokens(children: list, *types: str) -> list[Token]:
    return [c for c in children if isinstance(c, str) and c.type in types]


def _nodes(children: list) -> list:
    return [c for c in children if not isinstance(c, str)]


_TARGET_WORDS = {
    A.Call: "a function call",
    A.Num: "a number",
    A.NumList: "a list literal",
    A.Str: "a string",
    A.Const: "a constant",
    A.Chain: "an operation",
    A.Power: "an operation",
    A.Unary: "an operation",
    A.Compare: "a comparison",
    A.BoolOp: "an operation",
    A.Not: "an operation",
    A.ListExpr: "a list",
}


def _check_target(node: A.Node, what: str = "assign to") -> None:
    """Assignable: a name, `x[i]`, `x.grad`-like attributes, or a tuple of those (`a, b = t`)."""
    if isinstance(node, (A.Name, A.Index, A.Attribute)):
        return
    if isinstance(node, A.TupleExpr) and what == "assign to":
        for item in node.items:
            if isinstance(item, A.TupleExpr):
                raise SyntaxProblem(
                    "nested tuples can't be assigned to; unpack one level at a time", item.loc
                )
            _check_target(item, what)
        return
    words = _TARGET_WORDS.get(type(node), "this expression")
    raise SyntaxProblem(
        f"can't {what} {words}; the left side must be a name, x[i] or x.attribute", A.start_of(node)
    )


class Lowerer:
    """One callback per grammar rule; each returns an `ast` node (or a piece of one). A rule without a
    callback here must be inlined (`_rule`) or always have one child (`?rule`): parser.py checks."""

    # -- program and blocks ----------------------------------------------------------------------
    def start(self, children: list) -> A.Program:
        return A.Program(_flatten_statements(children))

    def simple_line(self, children: list) -> list[A.Node]:
        return [c for c in children if isinstance(c, A.Node)]

    def suite(self, children: list) -> list[A.Node]:
        return _flatten_statements(children)

    # -- simple statements -----------------------------------------------------------------------
    def expr_stmt(self, children: list) -> A.ExprStmt:
        expr = children[0]
        return A.ExprStmt(expr, A.start_of(expr))

    def assign(self, children: list) -> A.Assign:
        parts = _nodes(children)
        requires_grad = bool(_tokens(children, "REQUIRES_GRAD"))
        *targets, value = parts
        for t in targets:
            _check_target(t)
        if requires_grad:
            if len(targets) != 1 or not isinstance(targets[0], A.Name) or isinstance(value, A.TupleExpr):
                raise SyntaxProblem(
                    "`requires_grad` after an assignment makes one new leaf: write `x = EXPR "
                    "requires_grad` with a single name",
                    loc(_tokens(children, "REQUIRES_GRAD")[0]),
                )
        return A.Assign(targets, value, requires_grad, A.start_of(targets[0]))

    def aug_assign(self, children: list) -> A.AugAssign:
        target, op, value = children
        if isinstance(target, A.TupleExpr):
            raise SyntaxProblem(f"'{op}' needs a single target", loc(op))
        _check_target(target, f"use '{op}' on")
        return A.AugAssign(target, str(op)[0], value, A.start_of(target))

    def backward_flag(self, children: list) -> tuple[str, Any, Loc]:
        tok = children[0]
        return (str(tok), children[1] if len(children) > 1 else None, loc(tok))

    def backward_stmt(self, children: list) -> A.Backward:
        tok, expr, *flags = children
        seen: dict[str, Any] = {}
        for name, value, where in flags:
            if name in seen:
                raise SyntaxProblem(f"`{name}` is given twice", where)
            seen[name] = value
        return A.Backward(
            expr, seen.get("gradient"), "retain_graph" in seen, "create_graph" in seen, loc(tok)
        )

    def exprlist(self, children: list) -> list[A.Node]:
        return list(children)

    def retain_grad_stmt(self, children: list) -> A.RetainGrad:
        return A.RetainGrad(children[1], loc(children[0]))

    def zero_grad_stmt(self, children: list) -> A.ZeroGrad:
        return A.ZeroGrad(children[1], loc(children[0]))

    def del_stmt(self, children: list) -> A.Del:
        for item in children[1]:
            if not isinstance(item, A.Name):
                raise SyntaxProblem("`del` removes names from the workspace: `del x, y`", A.start_of(item))
        return A.Del(children[1], loc(children[0]))

    def print_stmt(self, children: list) -> A.Print:
        args = children[1] if len(children) > 1 else []
        if len(args) == 1 and isinstance(args[0], A.TupleExpr) and args[0].parens:
            args = args[0].items  # print(a, b) prints "a b", as in Python 3
        return A.Print(args, loc(children[0]))

    def graph_stmt(self, children: list) -> A.Graph:
        nodes = _nodes(children)
        return A.Graph(nodes[0], nodes[1] if len(nodes) > 1 else None, loc(children[0]))

    def seed_stmt(self, children: list) -> A.Seed:
        return A.Seed(children[1], loc(children[0]))

    def save_stmt(self, children: list) -> A.Save:
        for item in children[1]:
            if not isinstance(item, A.Name):
                raise SyntaxProblem(
                    "`save` takes names (`save a, b`), so that backward can read them by name",
                    A.start_of(item),
                )
        return A.Save(children[1], loc(children[0]))

    def return_stmt(self, children: list) -> A.Return:
        return A.Return(children[1] if len(children) > 1 else None, loc(children[0]))

    def break_stmt(self, children: list) -> A.Break:
        return A.Break(loc(children[0]))

    def continue_stmt(self, children: list) -> A.Continue:
        return A.Continue(loc(children[0]))

    def pass_stmt(self, children: list) -> A.Pass:
        return A.Pass(loc(children[0]))

    def command(self, children: list) -> A.Command:
        tok = children[0]
        name, _, arg = str(tok)[1:].strip().partition(" ")
        if name not in COMMANDS:
            known = ", ".join(":" + c for c in COMMANDS)
            raise SyntaxProblem(f"unknown command ':{name}'; the commands are {known}", loc(tok))
        return A.Command(name, arg.strip(), loc(tok))

    # -- compound statements ---------------------------------------------------------------------
    def if_stmt(self, children: list) -> A.If:
        tok, cond, body, *rest = children
        branches = [(cond, body)]
        orelse = None
        for clause in rest:
            if clause[0] == "elif":
                branches.append((clause[1], clause[2]))
            else:
                orelse = clause[1]
        return A.If(branches, orelse, loc(tok))

    def elif_clause(self, children: list) -> tuple:
        return ("elif", children[1], children[2])

    def else_clause(self, children: list) -> tuple:
        return ("else", children[1])

    def for_stmt(self, children: list) -> A.For:
        names = [t for t in _tokens(children, "NAME")]
        for t in names:
            _check_name(t)
        iterable, body = _nodes(children)
        return A.For([str(t) for t in names], iterable, body, loc(children[0]))

    def while_stmt(self, children: list) -> A.While:
        return A.While(children[1], children[2], loc(children[0]))

    def with_stmt(self, children: list) -> A.With:
        return A.With(str(children[1]), children[-1], loc(children[0]))

    def param(self, children: list) -> A.Param:
        _check_name(children[0])
        return A.Param(str(children[0]), children[2] if len(children) > 2 else None, loc(children[0]))

    def params(self, children: list) -> list[A.Param]:
        seen = set()
        defaults = False
        for p in children:
            if p.name in seen:
                raise SyntaxProblem(f"parameter '{p.name}' is listed twice", p.loc)
            seen.add(p.name)
            if p.default is not None:
                defaults = True
            elif defaults:
                raise SyntaxProblem(
                    f"parameter '{p.name}' without a default follows one with a default", p.loc
                )
        return list(children)

    def def_stmt(self, children: list) -> A.Def:
        tok, name = children[0], children[1]
        _check_name(name)
        params = children[2] if len(children) == 4 else []
        return A.Def(str(name), params, children[-1], loc(tok))

    def forward_block(self, children: list) -> tuple:
        return ("forward", children[1], loc(children[0]))

    def backward_block(self, children: list) -> tuple:
        params = children[1] if len(children) == 3 else []
        for p in params:
            if p.default is not None:
                raise SyntaxProblem("backward's parameters (one gradient per output) take no defaults", p.loc)
        return ("backward", params, children[-1], loc(children[0]))

    def function_stmt(self, children: list) -> A.FunctionDef:
        tok, name = children[0], children[1]
        _check_name(name)
        params = children[2] if len(children) == 5 else []
        forward, backward = children[-2], children[-1]
        return A.FunctionDef(str(name), params, forward[1], backward[1], backward[2], loc(tok), backward[3])

    # -- expressions -----------------------------------------------------------------------------
    def tuple(self, children: list) -> A.TupleExpr:
        return A.TupleExpr(list(children), A.start_of(children[0]))

    def test(self, children: list) -> A.Node:
        if len(children) == 1 and not isinstance(children[0], _Prefixed):
            return children[0]
        return _apply_precedence(children)

    def operand(self, children: list) -> A.Node | _Prefixed:
        k = 0
        while isinstance(children[k], str) and children[k].type in PREFIX:
            k += 1
        node = children[k]
        for kind, *rest in children[k + 1 :]:
            if kind == "call":
                args, kwargs, where = rest
                node = A.Call(node, args, kwargs, where)
            elif kind == "index":
                index, where = rest
                node = A.Index(node, index, where)
            else:
                name, where = rest
                if name.startswith("_"):
                    raise SyntaxProblem(
                        f"attribute '{name}' is not accessible: names starting with '_' are Python internals",
                        where,
                    )
                node = A.Attribute(node, name, where)
        return _Prefixed(children[:k], node) if k else node

    def call(self, children: list) -> tuple:
        args, kwargs = children[1] if len(children) > 1 else ([], [])
        return ("call", args, kwargs, loc(children[0]))

    def arguments(self, children: list) -> tuple[list, list]:
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

    def keyword(self, children: list) -> _Keyword:
        name, _, value = children
        return _Keyword(str(name), value, loc(name))

    def index(self, children: list) -> tuple:
        where = loc(children[0])
        items = children[1]
        for item in items:
            if isinstance(item, A.Slice):
                item.loc = where
        index = (
            items[0] if len(items) == 1 and not isinstance(items, _Multi) else A.TupleExpr(list(items), where)
        )
        return ("index", index, where)

    def subscripts(self, children: list) -> list:
        return _Multi(children) if len(children) > 1 else list(children)

    def slice(self, children: list) -> A.Slice:
        start, stop, step = (children + [None, None, None])[:3]
        return A.Slice(start, stop, step, Loc(0, 0))

    def attribute(self, children: list) -> tuple:
        return ("attr", str(children[0]), loc(children[0]))

    # -- atoms -----------------------------------------------------------------------------------
    def name(self, children: list) -> A.Name:
        tok = children[0]
        _check_name(tok)
        return A.Name(str(tok), loc(tok))

    def number(self, children: list) -> A.Num:
        tok = children[0]
        return A.Num(_number_value(str(tok)), loc(tok))

    def string(self, children: list) -> A.Str:
        tok = children[0]
        return A.Str(_string_value(str(tok)), loc(tok))

    def true(self, children: list) -> A.Const:
        return A.Const(True, loc(children[0]))

    def false(self, children: list) -> A.Const:
        return A.Const(False, loc(children[0]))

    def none(self, children: list) -> A.Const:
        return A.Const(None, loc(children[0]))

    def empty_tuple(self, children: list) -> A.TupleExpr:
        return A.TupleExpr([], Loc(0, 0), parens=True)

    def parens(self, children: list) -> A.Node:
        inner = children[0]
        if isinstance(inner, A.TupleExpr):
            inner.parens = True
        return inner

    def list(self, children: list) -> A.Node:
        where = loc(children[0])
        items = children[1:]
        if all(isinstance(i, (A.Num, A.NumList)) for i in items):
            return _numeric_list(items, where)
        return A.ListExpr(list(items), where)


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


def _apply_precedence(items: list) -> A.Node:
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
        return A.Num(-operand.value if tok.type == "MINUS" else operand.value, loc(tok))
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


def _check_name(tok: Token) -> None:
    if str(tok) in KEYWORD_SET:
        raise SyntaxProblem(f"'{tok}' is a keyword; it can't be used as a name", loc(tok))


def _numeric_list(items: list, where: Loc) -> A.NumList:
    """A tensor literal, checked for a rectangular shape (ragged lists are an error when run)."""
    if not items:
        return A.NumList([], where)
    if all(isinstance(i, A.Num) for i in items):
        return A.NumList([i.value for i in items], where)
    if any(isinstance(i, A.Num) for i in items):
        return A.NumList([], where, "a list literal mixes numbers and lists (ragged lists are an error)")
    first = items[0]
    for k, item in enumerate(items):
        if item.problem:
            return A.NumList([], where, item.problem)
        if _shape(item.data) != _shape(first.data):
            return A.NumList(
                [],
                where,
                f"a ragged list literal: row {k} has shape {list(_shape(item.data))}, "
                f"but row 0 has shape {list(_shape(first.data))}",
            )
    return A.NumList([i.data for i in items], where)


def _shape(data: list) -> tuple[int, ...]:
    shape = []
    while isinstance(data, list):
        shape.append(len(data))
        data = data[0] if data else None
    return tuple(shape)


# ---------------------------------------------------------------------------------------------------
# Context checks, once per program


class _Context:
    __slots__ = ("loop", "function", "forward")

    def __init__(self, loop: bool = False, function: bool = False, forward: bool = False) -> None:
        self.loop, self.function, self.forward = loop, function, forward


def check(program: A.Program) -> None:
    """Raise a SyntaxProblem for statements out of place: `break`/`continue` outside a loop, `return`
    outside a function, `save` outside a forward block."""
    _check_block(program.body, _Context())


def _check_block(body: list[A.Node], ctx: _Context) -> None:
    for st in body:
        kind = type(st)
        if kind in (A.Break, A.Continue) and not ctx.loop:
            word = "break" if kind is A.Break else "continue"
            raise SyntaxProblem(f"`{word}` outside a loop", st.loc)
        if kind is A.Return and not ctx.function:
            raise SyntaxProblem("`return` outside a function", st.loc)
        if kind is A.Save and not ctx.forward:
            raise SyntaxProblem("`save` belongs in the forward block of a `function`", st.loc)
        if kind is A.If:
            for _, b in st.branches:
                _check_block(b, ctx)
            if st.orelse:
                _check_block(st.orelse, ctx)
        elif kind in (A.For, A.While):
            _check_block(st.body, _Context(True, ctx.function, ctx.forward))
        elif kind is A.With:
            _check_block(st.body, ctx)
        elif kind is A.Def:
            _check_block(st.body, _Context(function=True))
        elif kind is A.FunctionDef:
            _check_block(st.forward, _Context(function=True, forward=True))
            _check_block(st.backward, _Context(function=True))
