"""The lowered program: small record classes, made once from the parse tree and then compiled to closures.

Expressions keep the location of what an error there should point at (the operator of a binary operation,
the "(" of a call, the name of an attribute); statements keep the location of their first token.
A sequence of operators of one precedence (`a + b - c + ...`) is one `Chain`, not a left-leaning tree, so
a 100,000-term sum is neither deep to lower nor deep to run.
"""

from __future__ import annotations

from typing import Any

from .errors import Loc

_RECORDS: list[type] = []


def record(cls: type) -> type:
    """Like `@dataclass` for these records: the annotated names are the fields (in order), a class attribute
    is a field's default. The `__init__`s of all records are made by `_make_inits` in one batch, because
    generating them one class at a time (as dataclasses does) costs more than the rest of a cold start."""
    _RECORDS.append(cls)
    return cls


class Node:
    """Base of all lowered nodes: a record with a `loc`, compared and shown field by field."""

    _fields: tuple[str, ...] = ()
    loc: Loc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = object.__hash__


# ---------------------------------------------------------------------------------------------------
# Expressions


@record
class Num(Node):
    """A number literal: a float64 0-d tensor as a value, a Python number as an operand or argument."""

    value: int | float
    loc: Loc


@record
class NumList(Node):
    """A list literal of numbers (at any depth): a float64 tensor. `problem` says why it is ragged."""

    data: list
    loc: Loc
    problem: str | None = None


@record
class Str(Node):
    value: str
    loc: Loc


@record
class Const(Node):
    """`true`, `false`, `none`."""

    value: bool | None
    loc: Loc


@record
class Name(Node):
    id: str
    loc: Loc


@record
class ListExpr(Node):
    """A list holding other expressions (`[a, b]`): a list value, as `cat`, `stack` and `grad` take."""

    items: list[Node]
    loc: Loc


@record
class TupleExpr(Node):
    items: list[Node]
    loc: Loc
    parens: bool = False  # written `(a, b)`: `print(a, b)` prints its items, as Python 3 does


@record
class Chain(Node):
    """`first op1 x1 op2 x2 ...` for operators of one precedence level, evaluated left to right."""

    first: Node
    ops: list[tuple[str, Node, Loc]]
    loc: Loc


@record
class Power(Node):
    """`base ** exponent` (right-associative)."""

    base: Node
    exponent: Node
    loc: Loc


@record
class Unary(Node):
    op: str  # "-" or "+"
    operand: Node
    loc: Loc


@record
class Compare(Node):
    op: str
    left: Node
    right: Node
    loc: Loc


@record
class BoolOp(Node):
    op: str  # "and" / "or"
    values: list[Node]
    loc: Loc


@record
class Not(Node):
    operand: Node
    loc: Loc


@record
class Call(Node):
    func: Node
    args: list[Node]
    kwargs: list[tuple[str, Node]]
    loc: Loc


@record
class Attribute(Node):
    obj: Node
    name: str
    loc: Loc


@record
class Index(Node):
    obj: Node
    index: Node  # an expression, a Slice, or a TupleExpr of them
    loc: Loc


@record
class Slice(Node):
    start: Node | None
    stop: Node | None
    step: Node | None
    loc: Loc


# ---------------------------------------------------------------------------------------------------
# Statements


@record
class ExprStmt(Node):
    expr: Node
    loc: Loc


@record
class Assign(Node):
    targets: list[Node]  # Name, Index, Attribute, or TupleExpr of those; `a = b = v` has two
    value: Node
    requires_grad: bool
    loc: Loc


@record
class AugAssign(Node):
    target: Node
    op: str  # "+", "-", "*", "/"
    value: Node
    loc: Loc


@record
class Backward(Node):
    expr: Node
    gradient: Node | None
    retain_graph: bool
    create_graph: bool
    loc: Loc


@record
class RetainGrad(Node):
    exprs: list[Node]
    loc: Loc


@record
class ZeroGrad(Node):
    exprs: list[Node]
    loc: Loc


@record
class Del(Node):
    names: list[Name]
    loc: Loc


@record
class Print(Node):
    args: list[Node]
    loc: Loc


@record
class Graph(Node):
    expr: Node
    path: Node | None
    loc: Loc


@record
class Seed(Node):
    expr: Node
    loc: Loc


@record
class Save(Node):
    exprs: list[Node]
    loc: Loc


@record
class Return(Node):
    value: Node | None
    loc: Loc


@record
class Break(Node):
    loc: Loc


@record
class Continue(Node):
    loc: Loc


@record
class Pass(Node):
    loc: Loc


@record
class Command(Node):
    """A REPL command line: `:help [topic]`, `:vars`, `:reset`, `:load FILE`, `:quit`."""

    name: str
    arg: str
    loc: Loc


@record
class If(Node):
    branches: list[tuple[Node, list[Node]]]  # (condition, body) for `if` and each `elif`
    orelse: list[Node] | None
    loc: Loc


@record
class For(Node):
    names: list[str]
    iterable: Node
    body: list[Node]
    loc: Loc


@record
class While(Node):
    cond: Node
    body: list[Node]
    loc: Loc


@record
class With(Node):
    mode: str  # no_grad, enable_grad, inference_mode, detect_anomaly
    body: list[Node]
    loc: Loc


@record
class Param(Node):
    name: str
    default: Node | None
    loc: Loc


@record
class Def(Node):
    name: str
    params: list[Param]
    body: list[Node]
    loc: Loc


@record
class FunctionDef(Node):
    """A custom autograd Function: `forward` over `params`, `backward` over one gradient per output."""

    name: str
    params: list[Param]
    forward: list[Node]
    grad_params: list[Param]
    backward: list[Node]
    loc: Loc
    backward_loc: Loc = Loc(0, 0)


@record
class Program(Node):
    body: list[Node]
    loc: Loc = Loc(1, 1)


def _make_inits() -> None:
    sources = []
    defaults: dict[str, Any] = {}
    for cls in _RECORDS:
        fields = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = fields  # type: ignore[attr-defined]
        params = []
        for f in fields:
            if f in cls.__dict__:
                defaults[f"{cls.__name__}_{f}"] = cls.__dict__[f]
                params.append(f"{f}={cls.__name__}_{f}")
            else:
                params.append(f)
        body = "".join(f"\n    self.{f} = {f}" for f in fields)
        sources.append(f"def {cls.__name__}_init(self, {', '.join(params)}):{body}\n")
    exec("\n".join(sources), defaults)
    for cls in _RECORDS:
        cls.__init__ = defaults[f"{cls.__name__}_init"]  # type: ignore[misc]


_make_inits()


def start_of(node: Any) -> Loc:
    """Where an expression begins (its leftmost token), found without recursion."""
    while True:
        if isinstance(node, Chain):
            node = node.first
        elif isinstance(node, Power):
            node = node.base
        elif isinstance(node, (Call,)):
            node = node.func
        elif isinstance(node, (Attribute, Index)):
            node = node.obj
        elif isinstance(node, Compare):
            node = node.left
        elif isinstance(node, BoolOp):
            node = node.values[0]
        elif isinstance(node, TupleExpr) and node.items and not node.parens:
            node = node.items[0]
        else:
            return node.loc
