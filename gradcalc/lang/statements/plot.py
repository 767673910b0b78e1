"""`plot`: a function of one name and its exact derivatives, in the terminal or to a file (LANGUAGE.md §8)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

from gradcalc.export.registry import translates

from ..core.compiler import Compiler, compiles
from ..core.expressions import ARG, VALUE
from ..core.frames import Closure, Frame
from ..errors import GradcalcError, Loc, SyntaxProblem
from ..syntax import ast as A
from ..syntax.ast import Stmt, span_of, start_of, statement, token_loc
from ..syntax.keywords import check_name
from ..syntax.source import source_text
from ..values.convert import describe
from ..values.engine import ENGINE

if TYPE_CHECKING:  # (the export's translator: the statements register their translations, not more)
    from gradcalc.export.script import Translator


@statement("plot_stmt")  # plot_stmt: PLOT testlist FOR NAME IN test [ORDER test] [TO test]
class Plot(Stmt):
    """plot EXPR[, EXPR ...] for NAME in [LO, HI] [order N] [to "FILE"]

Draws each EXPR as a function of NAME over [LO, HI], and with `order N` (0 to 3) its first N derivatives,
exact (by autograd, not finite differences). NAME is a new local name: the workspace is untouched.
  plot sin(x) for x in [-pi, pi]
  plot x**3 - 2*x for x in [-2, 2] order 2
  plot sin(x), cos(x) for x in [0, 2*pi] to "trig.svg"      (.svg or .png: needs pip install 'gradcalc[plot]')
On a terminal a braille line plot as wide as the terminal, ticks at round numbers, the lines y = 0 and x = 0
where 0 falls, one colour per curve (without colour: one marker per curve, `*`, `+`, ...); --format plain
prints the samples as rows `x f f' ...`, --format json one object. Points where a curve is not finite are
gaps. A file written is confirmed on standard error (`wrote trig.svg`)."""

    loc: Loc
    exprs: list[Any]  # the legend names the curves by their text (their spans)
    name: str
    lo: Any
    hi: Any
    order: Any
    path: Any

    @classmethod
    def lower(cls, kw: Any, exprs: Any, for_kw: Any, name: Any, in_kw: Any, bounds: Any, order_kw: Any,
              order: Any, to_kw: Any, path: Any) -> Plot:
        check_name(name)
        items = exprs.items if isinstance(exprs, A.TupleExpr) and not exprs.parens else [exprs]
        if isinstance(bounds, A.NumList) and bounds.problem is None and len(bounds.data) == 2 and all(
            isinstance(v, (int, float)) for v in bounds.data
        ):
            lo, hi = (A.Num(v, bounds.loc, bounds.end) for v in bounds.data)  # type: A.Node, A.Node
        elif isinstance(bounds, A.ListExpr) and len(bounds.items) == 2:
            lo, hi = bounds.items
        else:
            raise SyntaxProblem(f"the range of '{name}' is written [LO, HI]: `for {name} in [0, 1]`", start_of(bounds))
        return cls(token_loc(kw), items, str(name), lo, hi, order, path)


def _number(value: Any, what: str, loc: Loc) -> float:
    if isinstance(value, ENGINE.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GradcalcError(f"plot: {what} must be a number, not {describe(value)}", loc)
    if not math.isfinite(value):
        raise GradcalcError(f"plot: {what} must be finite, not {value}", loc)
    return float(value)


@compiles(Plot)
def compile_plot(c: Compiler, st: Plot) -> Closure:
    exprs = [c.expr(e, VALUE) for e in st.exprs]
    texts = [source_text(c.unit.source, span_of(e)) for e in st.exprs]  # as the user wrote them (the legend)
    lo_fn, hi_fn = c.expr(st.lo, ARG), c.expr(st.hi, ARG)
    order_fn = c.expr(st.order, ARG) if st.order is not None else None
    path_fn = c.expr(st.path, VALUE) if st.path is not None else None
    name, host = st.name, c.interp.host
    lo_loc, hi_loc = start_of(st.lo), start_of(st.hi)
    order_loc = start_of(st.order) if st.order is not None else st.loc
    path_loc = start_of(st.path) if st.path is not None else st.loc

    def run(f: Frame) -> None:
        from gradcalc.files import FileProblem  # (not on a cold start: loaded when a program first plots)
        from gradcalc.plotting import PlotError  # (as above: start-up)

        lo, hi = _number(lo_fn(f), "the low end of the range", lo_loc), _number(hi_fn(f), "the high end", hi_loc)
        if not lo < hi:
            raise GradcalcError(f"plot: the range [{lo:g}, {hi:g}] is empty: write [LO, HI] with LO < HI", lo_loc)
        order = 0 if order_fn is None else _number(order_fn(f), "order", order_loc)
        if order not in (0, 1, 2, 3):
            raise GradcalcError(f"plot: order is a whole number from 0 to 3, not {order:g}", order_loc)
        path = path_fn(f) if path_fn is not None else None
        if path is not None and not isinstance(path, str):
            raise GradcalcError(f"plot ... to needs a file name (a string), not {describe(path)}", path_loc)

        def curve(fn: Closure) -> Any:
            return lambda x: fn(Frame({name: x}, f))  # NAME is local: the workspace is untouched

        try:
            shown = host.plot([(t, curve(e)) for t, e in zip(texts, exprs, strict=True)], name, lo, hi, int(order),
                              path)
        except PlotError as exc:
            raise GradcalcError(f"plot: {exc}", path_loc if path is not None else st.loc) from None
        except FileProblem as exc:  # worded as every writer's file errors (gradcalc/files.py)
            raise GradcalcError(exc.message, path_loc) from None
        for message in shown:
            warnings.warn(message, UserWarning, stacklevel=1)

    return run



@translates(Plot)
def translate_plot(t: Translator, st: Plot) -> None:
    """A comment: the script draws nothing (matplotlib would, from the same functions)."""
    where = "into that file" if st.path is not None else ""
    t.comment(f"{t.text(st)}: gradcalc plots here{' ' + where if where else ''}")
