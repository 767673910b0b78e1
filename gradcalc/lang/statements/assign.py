"""Statements that bind or change values: `x = v` (with `requires_grad`), `x += v`, `del x`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import OPERAND, VALUE
from ..core.frames import Closure, Frame
from ..core.operators import BINARY
from ..errors import GradcalcError, Loc, SyntaxProblem
from ..limits import check_size
from ..syntax import ast as A
from ..syntax.ast import Stmt, start_of, statement, token_loc
from ..tell.explain.rebound import note as note_rebinding
from ..values.convert import as_tensor, describe
from ..values.engine import ENGINE
from ..values.failures import operator_error

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator

IN_PLACE = {"+": "add_", "-": "sub_", "*": "mul_", "/": "div_"}

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


def check_target(node: A.Node, what: str = "assign to") -> None:
    """Assignable: a name, `x[i]`, `x.grad`-like attributes, or a tuple of those (`a, b = t`)."""
    if isinstance(node, (A.Name, A.Index, A.Attribute)):
        return
    if isinstance(node, A.TupleExpr) and what == "assign to":
        for item in node.items:
            if isinstance(item, A.TupleExpr):
                raise SyntaxProblem("nested tuples can't be assigned to; unpack one level at a time", item.loc)
            check_target(item, what)
        return
    words = _TARGET_WORDS.get(type(node), "this expression")
    raise SyntaxProblem(f"can't {what} {words}; the left side must be a name, x[i] or x.attribute", start_of(node))


@statement("assign")  # assign: testlist (ASSIGN testlist)+ REQUIRES_GRAD?
class Assign(Stmt):
    """`a = b = v`: targets are names, `x[i]`, `x.attribute` or tuples of those; `x = v requires_grad` makes
    a new leaf."""

    loc: Loc
    targets: list[Any]
    value: Any
    requires_grad: bool

    @classmethod
    def lower(cls, *children: Any) -> Assign:
        parts = [c for c in children if not isinstance(c, str)]
        flags = [c for c in children if isinstance(c, str) and getattr(c, "type", "") == "REQUIRES_GRAD"]
        *targets, value = parts
        for t in targets:
            check_target(t)
        if flags and (len(targets) != 1 or not isinstance(targets[0], A.Name) or isinstance(value, A.TupleExpr)):
            raise SyntaxProblem(
                "`requires_grad` after an assignment makes one new leaf: write `x = EXPR requires_grad` with a "
                "single name",
                token_loc(flags[0]),
            )
        return cls(start_of(targets[0]), targets, value, bool(flags))


@compiles(Assign)
def compile_assign(c: Compiler, st: Assign) -> Closure:
    value = c.expr(st.value, VALUE)
    binders = [c.binder(t) for t in st.targets]
    if st.requires_grad:
        plain = value
        where = st.value
        target = st.targets[0].id
        source = where.id if isinstance(where, A.Name) else "(...)"

        def value(f: Frame) -> Any:  # x = EXPR requires_grad  ==  x = (EXPR).requires_grad_()
            v = as_tensor(plain(f))
            if not isinstance(v, ENGINE.Tensor):
                raise GradcalcError(f"`requires_grad` needs a tensor, not {describe(v)}", start_of(where))
            if v.grad_fn is not None:  # PyTorch would accept it silently; LANGUAGE.md says it is an error
                raise GradcalcError(
                    f"`requires_grad` makes a new leaf, but this tensor was computed "
                    f"(grad_fn={v.grad_fn.name()}): write `{target} = {source}.detach() requires_grad`",
                    start_of(where),
                )
            return v.requires_grad_()

    if len(binders) == 1:
        bind = binders[0]
        if isinstance(st.targets[0], A.Name):
            name = st.targets[0].id
            Tensor = ENGINE.Tensor

            def run_name(f: Frame) -> None:
                v = value(f)
                variables = f.vars
                if type(v) is Tensor and v.grad_fn is not None:
                    old: Any = variables.get(name)
                    if type(old) is Tensor and old.grad_fn is None and old.requires_grad:
                        note_rebinding(name, old, v)  # `w = w - lr * w.grad`: explain tells it (rebound.py)
                variables[name] = v

            return run_name

        def run_one(f: Frame) -> None:
            bind(f, value(f))

        return run_one

    guard, stamp = c.guard, c.stamp

    def run_many(f: Frame) -> None:
        v = value(f)
        guard.changing = stamp.origin  # every target or none under an interrupt (autograd/interrupts.py)
        for bind in binders:
            bind(f, v)

    return run_many


@translates(Assign)
def translate_assign(t: Translator, st: Assign) -> None:
    """`x = v`; `x = 3 requires_grad` is `x = torch.tensor(3., requires_grad=True)` (a literal) or
    `x = (EXPR).requires_grad_()`; `g[mask] = 0` assigns the number."""
    targets = " = ".join(t.target(x) for x in st.targets)
    value = st.value
    if st.requires_grad:
        if t.is_literal_argument(value):
            text = t.tensor_literal(value)[:-1] + ", requires_grad=True)"
        else:
            text = f"{t.postfix(value)}.requires_grad_()"
    elif all(type(x) is A.Index for x in st.targets) and t.is_literal(value):
        text = t.operand(value)  # a scalar fill, as the language's x[i] = 0 is
    else:
        text = t.value(value)
    t.line(f"{targets} = {text}")


@statement("aug_assign")  # aug_assign: test (AUG_ADD | AUG_SUB | AUG_MUL | AUG_DIV) test
class AugAssign(Stmt):
    """`x += v` (also -= *= /=): in place on a tensor (`x.add_(v)`), a new value otherwise."""

    loc: Loc
    target: Any
    op: str  # "+", "-", "*", "/"
    value: Any

    @classmethod
    def lower(cls, target: Any, op: Any, value: Any) -> AugAssign:
        if isinstance(target, A.TupleExpr):
            raise SyntaxProblem(f"'{op}' needs a single target", token_loc(op))
        check_target(target, f"use '{op}' on")
        return cls(start_of(target), target, str(op)[0], value)


@compiles(AugAssign)
def compile_aug_assign(c: Compiler, st: AugAssign) -> Closure:
    value = c.expr(st.value, OPERAND)
    method = IN_PLACE[st.op]
    op = BINARY[st.op]
    sym = st.op + "="
    target = st.target
    interp = c.interp
    current = c.expr(target, VALUE)
    bind = c.binder(target)
    if isinstance(target, A.Index):
        # x[i] += v is x[i] = x[i] + v (the same values; PyTorch records it through a view)

        def run_item(f: Frame) -> None:
            old = current(f)
            v = value(f)
            try:
                new = op(old, v)
            except Exception as exc:
                raise operator_error(exc, st.op, old, v, target.loc) from None
            bind(f, new)

        return run_item
    loc = st.loc

    def run(f: Frame) -> None:
        old = current(f)
        v = value(f)
        if isinstance(old, ENGINE.Tensor):
            if isinstance(v, ENGINE.Tensor) and old.numel() * v.numel() > interp.max_elements:
                check_size(v.numel(), "the right side")
            try:
                getattr(old, method)(v)  # in place: x += 1 is x.add_(1)
            except Exception as exc:
                raise operator_error(exc, sym, old, v, loc) from None
            return
        if isinstance(target, A.Attribute) and type(old) not in (int, float):  # opt.lr *= 0.5 is a new number
            raise GradcalcError(f"'{sym}' changes a tensor in place, but .{target.name} is {describe(old)}", loc)
        try:
            new = op(old, v)
        except Exception as exc:
            raise operator_error(exc, st.op, old, v, loc) from None
        bind(f, new)

    return run


@translates(AugAssign)
def translate_aug_assign(t: Translator, st: AugAssign) -> None:
    """`x += v` is Python's (in place on a tensor); `x[i] += v` is `x[i] = x[i] + v`, as the language runs it."""
    if isinstance(st.target, A.Index):
        item = t.target(st.target)
        t.line(f"{item} = {t.value(A.Chain(st.target, [(st.op, st.value, st.loc)], st.loc))}")
        return
    t.line(f"{t.target(st.target)} {st.op}= {t.operand(st.value)}")


@statement("del_stmt")  # del_stmt: DEL exprlist
class Del(Stmt):
    loc: Loc
    names: list[Any]

    @classmethod
    def lower(cls, kw: Any, items: list[Any]) -> Del:
        for item in items:
            if not isinstance(item, A.Name):
                raise SyntaxProblem("`del` removes names from the workspace: `del x, y`", start_of(item))
        return cls(token_loc(kw), items)


@compiles(Del)
def compile_del(c: Compiler, st: Del) -> Closure:
    names = [(n.id, n.loc) for n in st.names]
    interp = c.interp
    guard, stamp = c.guard, c.stamp

    def run(f: Frame) -> None:
        for name, loc in names:
            if name not in f.vars:
                if interp.is_predefined(name):
                    raise GradcalcError(f"'{name}' is predefined, not a variable: it can't be deleted", loc)
                raise GradcalcError(f"name '{name}' is not defined", loc)
        guard.changing = stamp.origin  # all the names or none under an interrupt (autograd/interrupts.py)
        for name, _ in names:
            del f.vars[name]

    return run


@translates(Del)
def translate_del(t: Translator, st: Del) -> None:
    t.line("del " + ", ".join(t.name(n.id) for n in st.names))
    t.forget([n.id for n in st.names])
