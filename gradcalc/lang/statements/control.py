"""Control flow: `if`/`elif`/`else`, `for`, `while`, `break`, `continue`, `pass`, `return`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import VALUE
from ..core.frames import BREAK, CONTINUE, RETURN, Closure, Frame, truth
from ..errors import GradcalcError, Loc
from ..syntax import ast as A
from ..syntax.ast import Block, Node, Stmt, record, rule, start_of, statement, token_loc
from ..syntax.keywords import check_name
from ..values.convert import describe
from ..values.engine import ENGINE

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@record
class Branch(Node):
    """One `if` or `elif` branch: its condition and its block."""

    cond: Any
    body: Block
    loc: Loc


@rule("elif_clause")  # elif_clause: ELIF test ":" suite
def lower_elif(kw: Any, cond: Any, body: list[Any]) -> Branch:
    return Branch(cond, body, token_loc(kw))


@rule("else_clause")  # else_clause: ELSE ":" suite
def lower_else(kw: Any, body: list[Any]) -> list[Any]:
    return body


@statement("if_stmt")  # if_stmt: IF test ":" suite elif_clause* [else_clause]
class If(Stmt):
    loc: Loc
    branches: list[Any]  # Branch per `if` and `elif`
    orelse: Block  # None when there is no `else`

    @classmethod
    def lower(cls, kw: Any, cond: Any, body: list[Any], *rest: Any) -> If:
        *elifs, orelse = rest
        return cls(token_loc(kw), [Branch(cond, body, token_loc(kw)), *elifs], orelse)


@compiles(If)
def compile_if(c: Compiler, st: If) -> Closure:
    branches = [(c.expr(b.cond, VALUE), start_of(b.cond), c.block(b.body)) for b in st.branches]
    orelse = c.block(st.orelse) if st.orelse else None

    def run(f: Frame) -> Any:
        for cond, loc, body in branches:
            if truth(cond(f), loc):
                return body(f)
        if orelse is not None:
            return orelse(f)
        return None

    return run


@translates(If)
def translate_if(t: Translator, st: If) -> None:
    for k, branch in enumerate(st.branches):
        t.line(f"{'elif' if k else 'if'} {t.value(branch.cond)}:")
        t.block(branch.body)
    if st.orelse:
        t.line("else:")
        t.block(st.orelse)


@statement("for_stmt")  # for_stmt: FOR NAME ("," NAME)* IN testlist ":" suite
class For(Stmt):
    loc: Loc
    names: list[str]
    iterable: Any
    body: Block
    opens = frozenset({"loop"})

    @classmethod
    def lower(cls, kw: Any, *children: Any) -> For:
        names = [t for t in children if isinstance(t, str) and getattr(t, "type", "") == "NAME"]
        for t in names:
            check_name(t)
        iterable, body = [c for c in children if not isinstance(c, str)]
        return cls(token_loc(kw), [str(t) for t in names], iterable, body)


@compiles(For)
def compile_for(c: Compiler, st: For) -> Closure:
    iterable = c.expr(st.iterable, VALUE)
    body = c.block(st.body)
    names = st.names
    where = start_of(st.iterable)
    single = names[0] if len(names) == 1 else None
    interp = c.interp
    unpack = c.binder(A.TupleExpr([A.Name(n, st.loc) for n in names], st.loc)) if single is None else None

    def run(f: Frame) -> Any:
        seq = iterable(f)
        if isinstance(seq, ENGINE.Tensor) and seq.ndim == 0:
            raise GradcalcError("can't loop over a 0-d tensor; it has no first dimension", where)
        try:
            it = iter(seq)
        except TypeError:
            raise GradcalcError(f"can't loop over {describe(seq)}", where) from None
        try:
            for item in it:
                if single is not None:
                    f.vars[single] = item
                elif unpack is not None:
                    unpack(f, item)
                signal = body(f)
                if signal is not None:
                    if signal is BREAK:
                        break
                    if signal is CONTINUE:
                        continue
                    return signal
        finally:
            interp.loop_ended(f, names)
        return None

    return run


@translates(For)
def translate_for(t: Translator, st: For) -> None:
    t.line(f"for {', '.join(t.name(n) for n in st.names)} in {t.iterable(st.iterable)}:")
    t.block(st.body)


@statement("while_stmt")  # while_stmt: WHILE test ":" suite
class While(Stmt):
    loc: Loc
    cond: Any
    body: Block
    opens = frozenset({"loop"})


@compiles(While)
def compile_while(c: Compiler, st: While) -> Closure:
    cond = c.expr(st.cond, VALUE)
    body = c.block(st.body)
    loc = start_of(st.cond)

    def run(f: Frame) -> Any:
        while truth(cond(f), loc):
            signal = body(f)
            if signal is not None:
                if signal is BREAK:
                    break
                if signal is CONTINUE:
                    continue
                return signal
        return None

    return run


@translates(While)
def translate_while(t: Translator, st: While) -> None:
    t.line(f"while {t.value(st.cond)}:")
    t.block(st.body)


@statement("break_stmt")  # BREAK -> break_stmt
class Break(Stmt):
    loc: Loc
    requires = ("loop", "`break` outside a loop")


@statement("continue_stmt")  # CONTINUE -> continue_stmt
class Continue(Stmt):
    loc: Loc
    requires = ("loop", "`continue` outside a loop")


@statement("pass_stmt")  # PASS -> pass_stmt
class Pass(Stmt):
    loc: Loc


@compiles(Break)
def compile_break(c: Compiler, st: Break) -> Closure:
    return lambda f: BREAK


@compiles(Continue)
def compile_continue(c: Compiler, st: Continue) -> Closure:
    return lambda f: CONTINUE


@compiles(Pass)
def compile_pass(c: Compiler, st: Pass) -> Closure:
    return lambda f: None


@statement("return_stmt")  # return_stmt: RETURN [testlist]
class Return(Stmt):
    loc: Loc
    value: Any
    requires = ("function", "`return` outside a function")


@compiles(Return)
def compile_return(c: Compiler, st: Return) -> Closure:
    ev = c.expr(st.value, VALUE) if st.value is not None else None

    def run(f: Frame) -> Any:
        f.retval = ev(f) if ev is not None else None
        return RETURN

    return run


@translates(Break)
def translate_break(t: Translator, st: Break) -> None:
    t.line("break")


@translates(Continue)
def translate_continue(t: Translator, st: Continue) -> None:
    t.line("continue")


@translates(Pass)
def translate_pass(t: Translator, st: Pass) -> None:
    t.line("pass")


@translates(Return)
def translate_return(t: Translator, st: Return) -> None:
    t.line("return" if st.value is None else f"return {t.value(st.value)}")
