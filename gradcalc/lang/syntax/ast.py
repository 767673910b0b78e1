"""The lowered program: small record classes, made once from the parse tree and then compiled to closures.

Expressions keep the location of what an error there should point at (the operator of a binary operation,
the "(" of a call, the name of an attribute); statements keep the location of their first token. Every record
also knows its span, where its text starts and ends (`span_of`): a statement carries it (`span`, and `head`,
its header before the `:` for a compound statement), an expression the ends that its children do not tell
(the `)` of a call, the end of a number), so that `source_text(span)` quotes what the user wrote.
A sequence of operators of one precedence (`a + b - c + ...`) is one `Chain`, not a left-leaning tree, so
a 100,000-term sum is neither deep to lower nor deep to run.

This module holds the expression records and what every record shares: `@record` (fields by annotation, in
order), the statement registry (`@statement("rule")`: a record that one grammar rule lowers to, in the
style of Lark's examples/advanced/create_ast.py), and the one generic walk over a record's children that
every pass uses (`children`, `blocks`, `walk_statements`, `start_of`, `span_of`, `check`). The statement records
themselves live beside their compile functions, one family per module of `gradcalc.lang.statements`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, dataclass_transform

from ..errors import Loc, SyntaxProblem
from .source import Span

R = TypeVar("R", bound=type)
F = TypeVar("F", bound=Callable[..., object])


if TYPE_CHECKING:

    class Token(Protocol):
        """A token as lowering sees it: a str (the matched text) that names its terminal and where it starts (the
        parser's `Tok`, Lark's `Token`)."""

        type: str
        line: int
        column: int

        def __len__(self) -> int: ...


_RECORDS: list[type[Node]] = []  # records whose __init__ is not made yet (see finish_records)


@dataclass_transform()
def record(cls: R) -> R:
    """Like `@dataclass` for these records: the annotated names are the fields (in order), a class attribute
    is a field's default. The `__init__`s are made by `finish_records` in one batch per module, because
    generating them one class at a time (as dataclasses does) costs more than the rest of a cold start."""
    _RECORDS.append(cls)
    return cls


class Node:
    """Base of all lowered nodes: a record with a `loc`, compared and shown field by field."""

    _fields: tuple[str, ...] = ()
    loc: Loc
    leftmost: str | None = None  # the field holding the node's leftmost part, if it does not start itself
    enclosed: Span | None = None  # (not a field) the brackets around it, when it is written in parentheses

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
    end: Loc


@record
class NumList(Node):
    """A list literal of numbers (at any depth): a float64 tensor. `problem` says why it is ragged."""

    data: list[Any]
    loc: Loc
    end: Loc  # after its `]`
    problem: str | None = None


@record
class Str(Node):
    value: str
    loc: Loc
    end: Loc


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
    end: Loc  # after its `]`


@record
class TupleExpr(Node):
    leftmost = "items"
    items: list[Node]
    loc: Loc
    parens: bool = False  # written `(a, b)`: `print(a, b)` prints its items, as Python 3 does


@record
class Chain(Node):
    """`first op1 x1 op2 x2 ...` for operators of one precedence level, evaluated left to right."""

    leftmost = "first"  # where the expression starts (start_of)

    first: Node
    ops: list[tuple[str, Node, Loc]]
    loc: Loc


@record
class Power(Node):
    """`base ** exponent` (right-associative)."""

    leftmost = "base"  # where the expression starts (start_of)

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
    leftmost = "left"
    op: str
    left: Node
    right: Node
    loc: Loc


@record
class BoolOp(Node):
    leftmost = "values"
    op: str  # "and" / "or"
    values: list[Node]
    loc: Loc


@record
class Not(Node):
    operand: Node
    loc: Loc


@record
class Call(Node):
    leftmost = "func"
    func: Node
    args: list[Node]
    kwargs: list[tuple[str, Node]]
    loc: Loc
    end: Loc  # after its `)`


@record
class Attribute(Node):
    leftmost = "obj"
    obj: Node
    name: str
    loc: Loc


@record
class Index(Node):
    leftmost = "obj"
    obj: Node
    index: Node  # an expression, a Slice, or a TupleExpr of them
    loc: Loc
    end: Loc  # after its `]`


@record
class Slice(Node):
    """`start:stop:step` in an index; `loc` is the index's `[` (where its errors point), `first` where the
    slice's own text starts."""

    start: Node | None
    stop: Node | None
    step: Node | None
    loc: Loc
    first: Loc
    end: Loc




def finish_records() -> None:
    """Make the `__init__` of every record declared since the last call (each module of records ends with it)."""
    sources = []
    defaults: dict[str, object] = {}
    for cls in _RECORDS:
        fields = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = fields
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
        setattr(cls, "__init__", defaults[f"{cls.__name__}_init"])  # noqa: B010 - (a checker forbids assigning a method)
    _RECORDS.clear()


@record
class Param(Node):
    """A parameter of `def`, `function` or a custom function's `backward`: `name` or `name=default`."""

    name: str
    default: Node | None
    loc: Loc


@record
class Program(Node):
    body: list[Node]
    loc: Loc = Loc(1, 1)


finish_records()


# ---------------------------------------------------------------------------------------------------
# Statements: the base record, the registry of grammar rules, the generic walk


class Stmt(Node):
    """Base of statement records. A statement record declares, besides its fields (the rule's kept children,
    in order; its first field `loc` is where the statement starts):
    - `requires`: (context, message) when it is only valid inside a loop, a function or a forward block;
    - `opens`: the contexts its blocks add (`loop` for `for`/`while`), and `fresh` when its blocks start a
      new function scope (the loop around a `def` does not reach into its body);
    - its blocks: fields annotated `Block` (a list of statements), or lists of records that hold them.
    """

    requires: tuple[str, str] | None = None
    opens: frozenset[str] = frozenset()
    fresh: bool = False
    # what the parser lowered it from (not fields): its rule's children, and a compound statement's `:`;
    # `span` and `head` are found from them when first asked for (parsing a long program computes none)
    _raw: list[object] | None = None
    _colon: Token | None = None

    @property
    def span(self) -> Span | None:
        """Where the statement's text starts and ends (None for a record the parser did not make)."""
        raw = self._raw
        if raw is None:
            return None
        start, end = _first_start(raw), _last_end(raw)
        return Span(start, end) if start is not None and end is not None else None

    @property
    def head(self) -> Span | None:
        """Its header's span: up to the `:` of a compound statement; the whole span for a simple one (how an
        origin quotes it)."""
        span = self.span
        if span is None or self._colon is None:
            return span
        return Span(span.start, token_loc(self._colon))

    def context_of(self, field: str, outer: frozenset[str]) -> frozenset[str]:
        """The contexts the statements of block `field` run in."""
        return self.opens if self.fresh else outer | self.opens


Block = list[Node]  # a field annotated `Block` holds a list of statements (the generic walk finds them by it)

# grammar rule -> its lowering (children -> record); the Lowerer (lower.py) calls these
RULES: dict[str, Callable[[list[object]], object]] = {}
# grammar rule -> the statement record it makes (its docstring is the statement's `:help` page, if it has none)
STATEMENT_RECORDS: dict[str, type[Stmt]] = {}

S = TypeVar("S", bound=type[Stmt])


@dataclass_transform()
def statement(rule: str) -> Callable[[S], S]:
    """Declare `cls` the record that grammar rule `rule` lowers to.

    Its lowering is `cls.lower(*children)` when the class defines `lower`; otherwise the rule's kept
    children map onto the fields in order (create_ast's style), a token becoming its `Loc` for a field
    annotated `Loc`, its text for `str`, and a missing optional list (`[exprlist]`) an empty list. The record
    gets its span from the children either way; a compound statement's `:` (COLON, kept for it) marks where
    its header ends, and is not passed on."""

    def register(cls: S) -> S:
        record(cls)
        STATEMENT_RECORDS[rule] = cls
        custom = cls.__dict__.get("lower")
        if custom is not None:
            bound = custom.__get__(None, cls)

            def lower(children: list[object]) -> Stmt:
                st: Stmt = bound(*children)
                st._raw = children  # (its span, when asked for)
                return st

            RULES[rule] = lower
        else:
            positional = _positional(cls)

            def lower_positional(children: list[object]) -> Stmt:
                st = positional(children)
                st._raw = children
                return st

            RULES[rule] = lower_positional
        return cls

    return register


def with_colon(lower: Callable[[list[object]], object]) -> Callable[[list[object]], object]:
    """The lowering of a compound statement's rule, whose header's `:` is a kept token (COLON): it marks where
    the header ends (the record's `head`), and is not passed on (the Lowerer installs this for those rules)."""

    def lowered(children: list[object]) -> object:
        for i, c in enumerate(children):
            if isinstance(c, str) and getattr(c, "type", None) == "COLON":
                st = cast(Stmt, lower(children[:i] + children[i + 1 :]))  # (a statement's rule makes its record)
                st._colon = cast("Token", c)
                return st
        return lower(children)

    return lowered


def rule(name: str) -> Callable[[F], F]:
    """Declare the lowering of a rule that is part of a statement (`backward_flag`, `elif_clause`)."""

    def register(fn: F) -> F:
        RULES[name] = lambda children: fn(*children)
        return fn

    return register


def _positional(cls: type[Stmt]) -> Callable[[list[object]], Stmt]:
    annotations = cls.__dict__.get("__annotations__", {})
    converters: list[Callable[[Any], object] | None] = []  # (Any: each takes what its field's child is)
    for kind in annotations.values():
        kind = str(kind)
        if kind == "Loc":
            converters.append(token_loc)
        elif kind == "str":
            converters.append(str)
        elif kind.startswith(("list", "Block")):
            converters.append(lambda v: [] if v is None else v)
        else:
            converters.append(None)

    def lower(children: list[object]) -> Stmt:
        return cls(*[c if f is None else f(c) for f, c in zip(converters, children, strict=True)])

    return lower


def token_loc(tok: Any) -> Loc:  # (Any: a Token; the statements' lowerings pass what they narrowed to str)
    """Where a token starts."""
    return tuple.__new__(Loc, (tok.line, tok.column))  # Loc(...) without the NamedTuple's Python-level __new__


def token_end(tok: Token) -> Loc:
    """Just after a token's last character (no token spans lines)."""
    return tuple.__new__(Loc, (tok.line, tok.column + len(tok)))


def children(node: Node) -> Iterator[Node]:
    """The records directly inside `node`, in field order (through lists and tuples of them)."""
    for f in node._fields:
        yield from _records_in(getattr(node, f))


def _records_in(value: object) -> Iterator[Node]:
    if isinstance(value, Node):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (Node, list, tuple)):
                yield from _records_in(item)


def blocks(st: Node) -> Iterator[tuple[str, list[Node]]]:
    """The statement blocks of a statement, with the name of the field that holds each."""
    for f, kind in type(st).__dict__.get("__annotations__", {}).items():
        value = getattr(st, f)
        if str(kind) == "Block":
            if value is not None:
                yield f, value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, Node) and not isinstance(item, Stmt):
                    for _, inner in blocks(item):
                        yield f, inner


def walk_statements(body: list[Node], into_functions: bool = True) -> Iterator[Node]:
    """Every statement of `body` and of the blocks inside it (without recursion); `into_functions=False`
    stays out of the bodies of `def` and `function` (they are scopes of their own)."""
    stack = [iter(body)]
    while stack:
        st = next(stack[-1], None)
        if st is None:
            stack.pop()
            continue
        yield st
        if into_functions or not getattr(st, "fresh", False):
            stack.extend(iter(b) for _, b in reversed(list(blocks(st))))


def start_of(node: Any) -> Loc:
    """Where an expression begins (its leftmost token), found without recursion."""
    while True:
        field = node.leftmost
        if field is None or (field == "items" and (node.parens or not node.items)):
            return cast(Loc, node.loc)
        node = getattr(node, field)
        if isinstance(node, list):
            node = node[0]


def span_start(node: Node) -> Loc:
    """Where a record's text begins: its leftmost token, or the bracket it is enclosed in (`(a + b) * c`)."""
    current: Any = node
    while True:
        if current.enclosed is not None:
            return cast(Loc, current.enclosed.start)
        if isinstance(current, Stmt) and current.span is not None:
            return current.span.start
        if type(current) is Slice:
            return current.first
        field = current.leftmost
        if field is None or (field == "items" and not current.items):
            return cast(Loc, current.loc)
        current = getattr(current, field)
        if isinstance(current, list):
            current = current[0]


_CONST_WIDTH = {True: 4, False: 5, None: 4}  # true/True, false/False, none/None


def span_end(node: Node) -> Loc:
    """Just after a record's last character: its own end (a number's, a call's `)`), or that of its last
    part (`a + b` ends where `b` does), found without recursion."""
    current: Any = node
    while True:
        if current.enclosed is not None:
            return cast(Loc, current.enclosed.end)
        kind = type(current)
        if kind is Name or kind is Attribute:
            text = current.id if kind is Name else current.name
            return Loc(current.loc.line, current.loc.column + len(text))
        if kind is Const:
            return Loc(current.loc.line, current.loc.column + _CONST_WIDTH[current.value])
        if kind is Param and current.default is None:
            return Loc(current.loc.line, current.loc.column + len(current.name))
        if isinstance(current, Stmt) and current.span is not None:
            return current.span.end
        end = getattr(current, "end", None)
        if isinstance(end, Loc):
            return end
        last = _last_record(current)
        if last is None:
            return cast(Loc, current.loc)
        current = last


def span_of(node: Node) -> Span:
    """Where a record's text starts and ends (`source_text(source, span_of(node))` is what the user wrote)."""
    if isinstance(node, Stmt) and node.span is not None:
        return node.span
    return Span(span_start(node), span_end(node))


def _last_record(node: Node) -> Node | None:
    for f in reversed(node._fields):
        found = _last_in(getattr(node, f))
        if found is not None:
            return found
    return None


def _last_in(value: object) -> Node | None:
    if isinstance(value, Node):
        return value
    if isinstance(value, (list, tuple)) and not isinstance(value, Loc):
        for item in reversed(value):
            found = _last_in(item)
            if found is not None:
                return found
    return None


def _first_start(children: Sequence[object]) -> Loc | None:
    """Where the first of a rule's children (tokens, records, lists of them) begins."""
    for c in children:
        if isinstance(c, Node):
            return span_start(c)
        if isinstance(c, str):
            if hasattr(c, "line"):
                return token_loc(cast("Token", c))
        elif isinstance(c, (list, tuple)) and not isinstance(c, Loc):
            found = _first_start(c)
            if found is not None:
                return found
    return None


def _last_end(children: Sequence[object]) -> Loc | None:
    """Just after the last of a rule's children."""
    for c in reversed(children):
        if isinstance(c, Node):
            return span_end(c)
        if isinstance(c, str):
            if hasattr(c, "line"):
                return token_end(cast("Token", c))
        elif isinstance(c, (list, tuple)) and not isinstance(c, Loc):
            found = _last_end(c)
            if found is not None:
                return found
    return None


def check(program: Program) -> None:
    """Raise a SyntaxProblem for statements out of place (`break` outside a loop, `return` outside a
    function, `save` outside a forward block): each statement record says what it requires and opens."""
    stack: list[tuple[list[Any], frozenset[str]]] = [(program.body, frozenset())]
    while stack:
        body, ctx = stack.pop()
        for st in body:
            need = type(st).requires
            if need is not None and need[0] not in ctx:
                raise SyntaxProblem(need[1], st.loc)
            for field, inner in blocks(st):
                stack.append((inner, st.context_of(field, ctx)))
