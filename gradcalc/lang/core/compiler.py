"""The compiler: a unit's statements to closures, the block runner, and the statements' compile registry.

Each statement is compiled by the one function registered for its record with `@compiles` (in
`gradcalc.lang.statements`, beside the record); expressions by `ExpressionCompiler` (expressions.py). Control
flow returns signals (BREAK, CONTINUE, RETURN) rather than raising exceptions; an error becomes a
`GradcalcError` located at the statement that failed when nothing more precise located it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from gradcalc.autograd.graph import STAMP
from gradcalc.autograd.interrupts import GUARD

from ..errors import GradcalcError
from ..syntax import ast as A
from ..syntax.source import Unit
from ..tell.explain.rebound import LAST_NONE
from ..tell.explain.rebound import annotate as annotate_none
from ..values.builtins import ATTRIBUTES, SETTABLE
from ..values.convert import as_tensor, describe
from ..values.dispatch import assign_other_attribute, assign_other_item
from ..values.engine import ENGINE as _T
from ..values.failures import error_from
from .expressions import VALUE, ExpressionCompiler
from .frames import Closure, Frame
from .origin import Origin

if TYPE_CHECKING:
    from types import CodeType

    from gradcalc import Tensor

    from .interpreter import Interpreter

# statement record -> its compile function (Any: each takes the record of its own kind)
STATEMENTS: dict[type[A.Node], Callable[[Compiler, Any], Closure]] = {}
S = TypeVar("S", bound=A.Node)


def compiles(kind: type[S]) -> Callable[[Callable[[Compiler, S], Closure]], Callable[[Compiler, S], Closure]]:
    """Register the compile function of statement record `kind`."""

    def register(fn: Callable[[Compiler, S], Closure]) -> Callable[[Compiler, S], Closure]:
        STATEMENTS[kind] = fn
        return fn

    return register



class Compiler(ExpressionCompiler):
    """Compiles the nodes of one unit (a program, or a file run by :load) into closures."""

    def __init__(self, interp: Interpreter, unit: Unit) -> None:
        super().__init__()
        self.interp = interp
        self.unit = unit
        self.stamp = STAMP
        self.guard = GUARD
        self.owner = weakref.ref(interp)  # what origins name as their session (a weak reference: no cycle)
        STAMP.on = True  # nodes keep their origin from now on (node.STAMP)

    def statement_runner(self, st: A.Node) -> Closure:
        """One statement as run at top level: located errors, the interrupt check, the current position."""
        return self.block([st])

    def block(self, body: list[A.Node]) -> Closure:
        """Statements run in order. Each one, while it runs, is the engine's origin (lang/origin.py): the nodes
        it records and the changes it makes remember it; the block puts back the origin it found (a call's
        body runs inside the calling statement)."""
        interp = self.interp
        unit = self.unit
        stamp = self.stamp
        last_none = LAST_NONE
        steps = [
            ((st.loc, unit), st.loc, Origin(unit, st.loc, self.owner, st), STATEMENTS[type(st)](self, st))
            for st in body
        ]

        def run_block(f: Frame) -> object:  # (a Signal, or None: the block ran to its end)
            outer = stamp.origin
            for pos, loc, origin, step in steps:
                if interp.stop_requested:  # a Ctrl-C deferred to the next statement (repl/interrupt.py)
                    interp.stop_requested = False
                    stamp.origin = outer
                    raise interrupted_at(origin, before=True)
                interp.current = pos
                stamp.origin = origin
                try:
                    signal = step(f)
                except GradcalcError as exc:
                    if exc.loc is None:
                        exc.loc = loc
                    if exc.filename is None:
                        exc.filename, exc.source = unit.filename, unit.source
                        exc.interactive = unit.interactive
                    if getattr(exc, "origin", None) is None:
                        exc.origin = origin  # the innermost statement (explain)
                        if last_none.origin is origin:  # it read a rebound leaf's .grad as None: say so
                            annotate_none(exc)
                    stamp.origin = outer
                    raise
                except KeyboardInterrupt as exc:  # Ctrl-C: the innermost statement it stopped is named
                    stamp.origin = outer
                    if getattr(exc, "origin", None) is None:
                        exc.origin = origin  # type: ignore[attr-defined]
                    raise
                except SystemExit:
                    stamp.origin = outer
                    raise
                except Exception as exc:
                    err = error_from(exc, loc)
                    err.filename, err.source = unit.filename, unit.source
                    err.interactive = unit.interactive
                    err.origin = origin
                    if last_none.origin is origin:
                        annotate_none(err)
                    stamp.origin = outer
                    raise err from None
                if signal is not None:
                    stamp.origin = outer
                    return signal
            stamp.origin = outer
            return None

        return run_block

    # the code of every block runner's loop: where a Ctrl-C finds the statement that runs (lang/session.py)
    RUNNER_CODE: CodeType | None = None

    def binder(self, target: A.Node) -> Callable[[Frame, object], None]:
        """How to store a value into an assignment target."""
        if isinstance(target, A.Name):
            name = target.id

            def bind_name(f: Frame, v: object) -> None:
                f.vars[name] = v

            return bind_name
        if isinstance(target, A.Index):
            obj = self.expr(target.obj, VALUE)
            idx = self.index_expr(target.index)
            loc = target.loc

            def bind_item(f: Frame, v: object) -> None:
                o = obj(f)
                i = idx(f)
                if not isinstance(o, _T.Tensor):
                    assign_other_item(o, i, v, loc)  # net[0] = Linear(1, 8); an error for anything else
                    return
                if isinstance(v, _T.Tensor) and v.ndim == 0 and not v.requires_grad:
                    v = v.item()  # g[mask] = 0: a scalar fill
                try:
                    o[i] = v
                except Exception as exc:
                    what = f"can't assign {describe(v)} into {describe(o)} at index {describe(i)}"
                    raise error_from(exc, loc, what) from None

            return bind_item
        if isinstance(target, A.Attribute):
            obj = self.expr(target.obj, VALUE)
            attr, loc = target.name, target.loc

            def bind_attr(f: Frame, v: object) -> None:
                o = obj(f)
                if not isinstance(o, _T.Tensor) and assign_other_attribute(o, attr, v, loc):
                    return  # a module's parameter or submodule, an optimizer's lr
                if not isinstance(o, _T.Tensor) or attr not in SETTABLE:
                    settable = ", ".join(f"x.{s}" for s in SETTABLE)
                    raise GradcalcError(
                        f"can't assign to .{attr}; only {settable} of a tensor can be assigned", loc
                    )
                if attr != "requires_grad":
                    v = as_tensor(v) if v is not None else None
                try:
                    setattr(o, ATTRIBUTES[attr], v)
                except Exception as exc:
                    raise error_from(exc, loc, f"can't assign {describe(v)} to .{attr}") from None

            return bind_attr
        assert isinstance(target, A.TupleExpr)
        parts = [self.binder(t) for t in target.items]
        n = len(parts)
        loc = target.loc
        guard, stamp = self.guard, self.stamp

        def bind_tuple(f: Frame, v: Any) -> None:  # (Any: a value that does not unpack is the error below)
            try:
                items = list(v)
            except Exception:
                raise GradcalcError(f"can't unpack {describe(v)} into {n} names", loc) from None
            if len(items) != n:
                raise GradcalcError(f"can't unpack {len(items)} values into {n} names", loc)
            guard.changing = stamp.origin  # all names or none under an interrupt (autograd/interrupts.py)
            for bind, item in zip(parts, items, strict=True):
                bind(f, item)

        return bind_tuple

    def tensors(self, exprs: list[A.Node], what: str) -> Callable[[Frame], list[Tensor]]:
        fns = [(self.expr(e, VALUE), A.start_of(e)) for e in exprs]

        def values(f: Frame) -> list[Tensor]:
            out = []
            for fn, loc in fns:
                v = fn(f)
                if not isinstance(v, _T.Tensor):
                    raise GradcalcError(f"{what} needs tensors, not {describe(v)}", loc)
                out.append(v)
            return out

        return values

    def _params(self, params: list[A.Param]) -> tuple[list[str], list[Closure]]:
        names = [p.name for p in params]
        defaults = [self.expr(p.default, VALUE) for p in params if p.default is not None]
        return names, defaults

    # -- expressions -----------------------------------------------------------------------------


def interrupted_at(origin: Origin, before: bool = False) -> KeyboardInterrupt:
    """The KeyboardInterrupt that stops the program at `origin`'s statement (`before` it began: a Ctrl-C that
    waited for a statement boundary); the session reports it as `Interrupted`."""
    exc = KeyboardInterrupt()
    exc.origin = origin  # type: ignore[attr-defined]
    exc.before = before  # type: ignore[attr-defined]
    return exc


Compiler.RUNNER_CODE = next(
    c for c in Compiler.block.__code__.co_consts if getattr(c, "co_name", None) == "run_block"
)
