"""Statements that show things: an expression statement, `print`, and the REPL's `:` commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import VALUE
from ..core.frames import Closure, Frame
from ..errors import Loc, SyntaxProblem
from ..syntax.ast import Call, Stmt, TupleExpr, start_of, statement, token_loc
from ..syntax.keywords import COMMANDS

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@statement("expr_stmt")  # expr_stmt: testlist
class ExprStmt(Stmt):
    """An expression on its own: its value prints (a call's none does not)."""

    loc: Loc
    expr: Any

    @classmethod
    def lower(cls, expr: Any) -> ExprStmt:
        return cls(start_of(expr), expr)


@compiles(ExprStmt)
def compile_expr_stmt(c: Compiler, st: ExprStmt) -> Closure:
    ev = c.expr(st.expr, VALUE)
    show = c.interp.host.show
    is_call = isinstance(st.expr, Call)

    def run(f: Frame) -> None:
        show(ev(f), is_call)

    return run


@translates(ExprStmt)
def translate_expr_stmt(t: Translator, st: ExprStmt) -> None:
    """`y` prints y as gradcalc does (the script's `_show`), and y becomes `_`/`ans`."""
    t.show(st.expr)


@statement("print_stmt")  # print_stmt: PRINT [exprlist]
class Print(Stmt):
    loc: Loc
    args: list[Any]

    @classmethod
    def lower(cls, kw: Any, args: list[Any] | None) -> Print:
        args = args or []
        if len(args) == 1 and isinstance(args[0], TupleExpr) and args[0].parens:
            args = args[0].items  # print(a, b) prints "a b", as in Python 3
        return cls(token_loc(kw), args)


@compiles(Print)
def compile_print(c: Compiler, st: Print) -> Closure:
    fns = [c.expr(a, VALUE) for a in st.args]
    emit = c.interp.host.print_values

    def run(f: Frame) -> None:
        emit([fn(f) for fn in fns])

    return run


@translates(Print)
def translate_print(t: Translator, st: Print) -> None:
    """`print a, b` is the script's `_print(a, b)`: strings as they are, values as gradcalc shows them."""
    t.print_values(st.args)


@statement("command")  # COMMAND -> command: `:help [topic]`, `:vars`, `:reset`, `:load FILE`, `:quit`
class Command(Stmt):
    loc: Loc
    name: str
    arg: str

    @classmethod
    def lower(cls, tok: Any) -> Command:
        name, _, arg = str(tok)[1:].strip().partition(" ")
        if name not in COMMANDS:
            known = ", ".join(":" + c for c in COMMANDS)
            raise SyntaxProblem(f"unknown command ':{name}'; the commands are {known}", token_loc(tok))
        return cls(token_loc(tok), name, arg.strip())


@compiles(Command)
def compile_command(c: Compiler, st: Command) -> Closure:
    host = c.interp.host
    name, arg = st.name, st.arg

    def run(f: Frame) -> None:
        host.command(name, arg)

    return run


# What a command does, for the comment that stands for it in an exported script
COMMAND_NOTES = {
    "help": "gradcalc's help (nothing runs)",
    "vars": "gradcalc shows the workspace as a table here",
    "export": "gradcalc exported the session here",
}


@translates(Command)
def translate_command(t: Translator, st: Command) -> None:
    """`:quit` ends the script; `:load FILE` is FILE's statements, written in its place; the others are comments."""
    if st.name == "quit":
        t.line("raise SystemExit  # :quit")
    elif st.name == "load":
        t.load(st.arg)
    elif st.name == "reset":
        t.reset()
    else:
        t.comment(f":{st.name} {st.arg}".rstrip() + f": {COMMAND_NOTES[st.name]}")
