"""The language's Session as the kernel runs it: the same Session the REPL and scripts use, whose output
becomes a cell's outputs (outputs.py) and whose `graph` and `plot` are drawn inline when they can be.

- `graph y`: Graphviz's drawing as SVG when its `dot` program is installed, with the REPL's text tree as the
  output's `text/plain` (uncoloured); the text tree alone otherwise (coloured, as the REPL prints it).
- `plot ...`: matplotlib's PNG when matplotlib is installed (the `plot` extra), with the braille plot as
  its `text/plain`; the braille plot alone otherwise. 80 columns wide, as for output that is not a terminal.
- `explain`: coloured (the session is), as in the REPL; Jupyter renders the ANSI colours of a stream.
- warnings: the stderr stream, uncoloured; errors: the cell's error, coloured as the REPL colours them.
"""

from __future__ import annotations

import base64
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from gradcalc.lang.errors import STOPS, GradcalcError
from gradcalc.lang.session import Session
from gradcalc.repl.interrupt import sigint_interrupts

from .outputs import Outputs

PLOT_WIDTH = 80  # columns of a braille plot: what the REPL draws when its output is not a terminal
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class KernelSession(Session):
    """A Session whose output is the running cell's (see the module docstring)."""

    def __init__(self, outputs: Outputs) -> None:
        super().__init__(out=outputs.channel("stdout"), err=outputs.channel("stderr"), color=True)  # type: ignore[arg-type]
        self.outputs = outputs
        self._inline_file: str | None = None  # the file a graph is being drawn into for the cell, not a program's

    def run_cell(self, code: str, filename: str) -> bool:
        """Run a cell as a piece of a script named `filename`; True when nothing failed. The value of its
        last statement, when that is an expression, is the cell's result."""
        ok = False
        try:
            result = ends_with_expression(code)
            self.quit_requested = False  # a `:quit` of an earlier cell stopped that cell only
            # the kernel's interrupt is a SIGINT, handled as Ctrl-C in the REPL: the statement it stops
            # changes nothing, and the session goes on (atomic)
            with sigint_interrupts(self):
                ok = self.run(code, filename)
        except KeyboardInterrupt:  # outside a statement, where the Session does not catch it
            self.diagnostic("error", "interrupted", "error: interrupted\n")
            result = False
        finally:
            self.outputs.finish(ok and result)
        return ok

    # -- the Host's outputs ------------------------------------------------------------------------
    def show(self, value: Any, is_call: bool = False) -> None:
        with self.outputs.value():
            super().show(value, is_call)

    def diagnostic(self, kind: str, message: str, text: str) -> None:
        if kind == "error":
            self.outputs.error(message, text)
        else:
            super().diagnostic(kind, message, _ANSI.sub("", text))

    def graph(self, tensor: Any, path: str | None) -> None:
        if path is not None:
            super().graph(tensor, path)
            return
        with self.outputs.capture() as text:
            super().graph(tensor, None)
        tree = "".join(text)
        svg = self._drawn_graph(tensor)
        if svg is None:
            self.outputs.write("stdout", tree)
        else:
            self.outputs.display({"image/svg+xml": svg, "text/plain": _ANSI.sub("", tree).rstrip("\n")})

    def wrote(self, path: str) -> None:
        if path != self._inline_file:  # the drawing shown inline is the kernel's own file, not the program's
            super().wrote(path)

    def _drawn_graph(self, tensor: Any) -> str | None:
        """The graph drawn by Graphviz as SVG (the same drawing as `graph y to "y.svg"`); None without it."""
        if shutil.which("dot") is None:
            return None
        with tempfile.TemporaryDirectory(prefix="gradcalc-") as directory:
            path = Path(directory) / "graph.svg"
            self._inline_file = str(path)
            try:
                super().graph(tensor, str(path))
                svg = path.read_text(encoding="utf-8")
            except (GradcalcError, OSError, UnicodeDecodeError):  # dot failed: the text tree says it all
                return None
            finally:
                self._inline_file = None
        start = svg.find("<svg")  # the drawing without its XML prolog, as HTML embeds it
        return svg[start:] if start >= 0 else None

    def plot(self, exprs: list[tuple[str, Any]], name: str, lo: float, hi: float, order: int,
             path: str | None) -> list[str]:
        if path is not None or self.format != "torch":
            return super().plot(exprs, name, lo, hi, order, path)
        from gradcalc import plotting as P

        figure = P.make_figure(exprs, name, lo, hi, order, P.samples_for_width(PLOT_WIDTH), propagate=STOPS)
        rendered = P.render_terminal(figure, PLOT_WIDTH, color=self.color)
        if not rendered.text:  # nothing finite to draw: the warnings say so
            return list(rendered.warnings)
        png = _plot_image(figure)
        if png is None:
            self.outputs.write("stdout", rendered.text.rstrip("\n") + "\n")
        else:
            self.outputs.display({"image/png": png, "text/plain": _ANSI.sub("", rendered.text).rstrip("\n")})
        return list(rendered.warnings)


def _plot_image(figure: Any) -> str | None:
    """The figure as a PNG drawn by matplotlib (as `plot ... to "f.png"` draws it), in base64; None when
    matplotlib is missing or fails."""
    from gradcalc.files import FileProblem
    from gradcalc.plotting import PlotError, write_image

    with tempfile.TemporaryDirectory(prefix="gradcalc-") as directory:
        path = Path(directory) / "plot.png"
        try:
            if not write_image(figure, path).written:
                return None
            data = path.read_bytes()
        except (FileProblem, PlotError, OSError):  # matplotlib missing or failing: the braille text instead
            return None
    return base64.b64encode(data).decode("ascii")


def ends_with_expression(code: str) -> bool:
    """Whether the cell's last top-level statement is an expression statement (its value is the result)."""
    from gradcalc.lang.statements.output import ExprStmt
    from gradcalc.lang.syntax.parser import parse

    try:
        body = parse(code).body
    except Exception:  # noqa: BLE001 - a cell that does not parse has no result; running it says why
        return False
    return bool(body) and isinstance(body[-1], ExprStmt)
