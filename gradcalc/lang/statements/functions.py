"""Functions: `def`, and `function` (a custom autograd Function) with its `save` statement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.autograd.function import make_function
from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import VALUE
from ..core.frames import RETURN, Closure, Frame
from ..errors import GradcalcError, Loc, SyntaxProblem
from ..syntax import ast as A
from ..syntax.ast import Block, Param, Stmt, rule, start_of, statement, token_loc, walk_statements
from ..syntax.keywords import check_name
from ..values.engine import ENGINE
from ..values.functions import CustomFunction, UserFunction, bind_arguments
from .assign import Assign
from .control import For

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@rule("param")  # param: NAME [ASSIGN test]
def lower_param(name: Any, assign: Any, default: Any) -> Param:
    check_name(name)
    return Param(str(name), default, token_loc(name))


@rule("params")  # params: param ("," param)* ","?
def lower_params(*params: Param) -> list[Param]:
    seen = set()
    defaults = False
    for p in params:
        if p.name in seen:
            raise SyntaxProblem(f"parameter '{p.name}' is listed twice", p.loc)
        seen.add(p.name)
        if p.default is not None:
            defaults = True
        elif defaults:
            raise SyntaxProblem(f"parameter '{p.name}' without a default follows one with a default", p.loc)
    return list(params)


def _params(c: Compiler, params: list[Param]) -> tuple[list[str], list[Any]]:
    names = [p.name for p in params]
    defaults = [c.expr(p.default, VALUE) for p in params if p.default is not None]
    return names, defaults


@statement("def_stmt")  # def_stmt: DEF NAME "(" [params] ")" ":" suite
class Def(Stmt):
    """`def f(a, b=2): ...`: a function that closes over the scope it is defined in."""

    loc: Loc
    name: str
    params: list[Any]
    body: Block
    opens = frozenset({"function"})
    fresh = True

    @classmethod
    def lower(cls, kw: Any, name: Any, params: list[Any] | None, body: list[Any]) -> Def:
        check_name(name)
        return cls(token_loc(kw), str(name), params or [], body)


@compiles(Def)
def compile_def(c: Compiler, st: Def) -> Closure:
    names, defaults = _params(c, st.params)
    body = c.block(st.body)
    interp = c.interp
    fname = st.name

    def run(f: Frame) -> None:
        def call(bound: dict[str, Any]) -> Any:  # the body, in a new scope inside the one `def` ran in
            frame = Frame(bound, f)
            return frame.retval if body(frame) is RETURN else None

        f.vars[fname] = UserFunction(fname, names, [d(f) for d in defaults], call, interp)

    return run


@translates(Def)
def translate_def(t: Translator, st: Def) -> None:
    """`def f(a, b=2):` is Python's (a default is a value: `b=torch.tensor(2.)`); a name the body changes with
    `+=` that is not its own is declared `global` (or `nonlocal`), as the language finds it outside."""
    params = ", ".join(t.name(p.name) if p.default is None else f"{t.name(p.name)}={t.value(p.default)}"
                       for p in st.params)
    t.line(f"def {t.name(st.name)}({params}):")
    t.function_body({p.name for p in st.params}, st.body)


@statement("save_stmt")  # save_stmt: SAVE exprlist  (only in a function's forward block)
class Save(Stmt):
    loc: Loc
    exprs: list[Any]
    requires = ("forward", "`save` belongs in the forward block of a `function`")

    @classmethod
    def lower(cls, kw: Any, items: list[Any]) -> Save:
        for item in items:
            if not isinstance(item, A.Name):
                raise SyntaxProblem(
                    "`save` takes names (`save a, b`), so that backward can read them by name", start_of(item)
                )
        return cls(token_loc(kw), items)


@compiles(Save)
def compile_save(c: Compiler, st: Save) -> Closure:
    names = [(n.id, c.expr(n, VALUE)) for n in st.exprs]

    def run(f: Frame) -> None:
        if f.saved is None:
            raise GradcalcError("`save` belongs in the forward block of a `function`")
        f.saved.extend((name, fn(f)) for name, fn in names)

    return run


@translates(Save)
def translate_save(t: Translator, st: Save) -> None:
    """`save a, b` is `ctx.save_for_backward(a, b)` (with what earlier `save`s of the block saved)."""
    t.save([n.id for n in st.exprs])


@rule("forward_block")  # forward_block: FORWARD ":" suite
def lower_forward_block(kw: Any, body: list[Any]) -> list[Any]:
    return body


@rule("backward_block")  # backward_block: BACKWARD "(" [params] ")" ":" suite
def lower_backward_block(kw: Any, params: list[Any] | None, body: list[Any]) -> tuple[list[Param], list[Any], Loc]:
    for p in params or []:
        if p.default is not None:
            raise SyntaxProblem("backward's parameters (one gradient per output) take no defaults", p.loc)
    return (params or [], body, token_loc(kw))


@statement("function_stmt")  # function_stmt: FUNCTION NAME "(" [params] ")" ":" forward_block backward_block
class FunctionDef(Stmt):
    """A custom autograd Function: `forward` over `params`, `backward` over one gradient per output."""

    loc: Loc
    name: str
    params: list[Any]
    forward: Block
    grad_params: list[Any]
    backward: Block
    backward_loc: Loc
    fresh = True

    @classmethod
    def lower(cls, kw: Any, name: Any, params: list[Any] | None, forward: list[Any],
              backward: tuple[Any, ...]) -> FunctionDef:
        check_name(name)
        grad_params, body, where = backward
        return cls(token_loc(kw), str(name), params or [], forward, grad_params, body, where)

    def context_of(self, field: str, outer: frozenset[str]) -> frozenset[str]:
        return frozenset({"function", "forward"} if field == "forward" else {"function"})


def assigned_names(body: list[Any]) -> set[str]:
    """Names a block assigns (for the hint when backward reads a forward local that was not saved)."""
    out: set[str] = set()
    for st in walk_statements(body, into_functions=False):
        if isinstance(st, Assign):
            for t in st.targets:
                items = t.items if isinstance(t, A.TupleExpr) else [t]
                out.update(i.id for i in items if isinstance(i, A.Name))
        elif isinstance(st, For):
            out.update(st.names)
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


@compiles(FunctionDef)
def compile_function_def(c: Compiler, st: FunctionDef) -> Closure:
    names, defaults = _params(c, st.params)
    grad_names = [p.name for p in st.grad_params]
    forward = c.block(st.forward)
    backward = c.block(st.backward)
    interp = c.interp
    fname = st.name
    forward_locals = set(names) | assigned_names(st.forward)

    def run(f: Frame) -> None:
        scope = f
        default_values = [d(f) for d in defaults]

        def forward_fn(ctx: Any, *args: Any) -> Any:
            frame = Frame(bind_arguments(fname, names, default_values, args, {}), scope)
            frame.saved = []
            interp.depth += 1
            try:
                signal = forward(frame)
            finally:
                interp.depth -= 1
            saved = frame.saved
            tensors = [v for _, v in saved if v is None or isinstance(v, ENGINE.Tensor)]
            if tensors:  # (saving nothing would make the engine think the graph was freed)
                ctx.save_for_backward(*tensors)
            # other values (numbers) ride on ctx, as PyTorch's ctx.k = v
            ctx.gradcalc_saved = [(n, None if v is None or isinstance(v, ENGINE.Tensor) else (v,)) for n, v in saved]
            return frame.retval if signal is RETURN else None

        def backward_fn(ctx: Any, *grads: Any) -> Any:
            if len(grads) != len(grad_names):
                raise GradcalcError(
                    f"{fname}: backward takes {_count(len(grad_names), 'gradient')}, but forward "
                    f"returned {_count(len(grads), 'output')}; take one gradient per output",
                    st.backward_loc,
                )
            frame = Frame(dict(zip(grad_names, grads, strict=True)), scope)
            saved = getattr(ctx, "gradcalc_saved", ())
            # reading saved_tensors checks them for in-place changes made since forward
            tensors = iter(ctx.saved_tensors if any(o is None for _, o in saved) else ())
            for name, other in saved:
                frame.vars[name] = next(tensors) if other is None else other[0]
            frame.hints = {
                n: f"'{n}' belongs to {fname}'s forward block; `save {n}` there to use it in backward"
                for n in forward_locals
                if n not in frame.vars
            }
            interp.depth += 1
            try:
                signal = backward(frame)
            finally:
                interp.depth -= 1
            return frame.retval if signal is RETURN else None

        f.vars[fname] = CustomFunction(fname, make_function(fname, forward_fn, backward_fn))

    return run


@translates(FunctionDef)
def translate_function_def(t: Translator, st: FunctionDef) -> None:
    """`function f(x): forward: ... backward(g): ...` is a `torch.autograd.Function` subclass with static
    `forward(ctx, x)` and `backward(ctx, g)` (the saved names unpacked from `ctx.saved_tensors`), and `f` its
    `apply`."""
    t.custom_function(st.name, st.params, st.forward, st.grad_params, st.backward)
