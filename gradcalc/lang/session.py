"""A Session: a workspace and the means to run source text in it (the REPL, scripts and pipes share it).

`run` parses the whole text first (a syntax error runs nothing), then runs it statement by statement:
values go to `out`, warnings and errors to `err` as `FILE:LINE:COL: warning|error: MESSAGE` with the
source line and a caret. The REPL's `:` commands are statements too, handled here.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .errors import DIM, RESET, GradcalcError, Interrupted, Loc, SyntaxProblem, format_diagnostic
from .failures import error_from, fallback, speaks_python
from .interpreter import Interpreter, Unit
from .keywords import KEYWORDS

RECURSION_LIMIT = 20000  # user recursion and nested expressions are bounded below this (interpreter.py)


class QuitRequested(GradcalcError):
    """`:quit` ran: stop the program here."""

    def __init__(self) -> None:
        super().__init__("quit")


class Session:
    """A workspace and the means to run source text in it (shared by the REPL, scripts and pipes)."""

    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        format: str = "torch",
        max_elements: int = 2**27,
        color: bool = False,
    ) -> None:
        from .render import FORMATS

        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        self._out = out
        self._err = err
        self.format = format
        self.max_elements = max_elements
        self.color = color
        self.quit_requested = False
        self._interp = Interpreter(self, max_elements)
        self._shown_warnings: set[tuple[str, str, int]] = set()
        self._unit: Unit | None = None
        self._repl_input = False  # the input running came from the REPL (errors hint at `explain`)
        self._hinted = False

    # -- the interface -----------------------------------------------------------------------------
    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stdout

    @property
    def err(self) -> TextIO:
        return self._err if self._err is not None else sys.stderr

    @property
    def workspace(self) -> dict[str, object]:
        """User-visible names -> values (`_` and `ans` included once something printed)."""
        return self._interp.workspace

    def run(
        self, source: str, filename: str = "<stdin>", *, keep_going: bool = False, interactive: bool = False
    ) -> bool:
        """Run `source`; True when no error happened. See the module docstring."""
        self._interp.stop_requested = False
        self._repl_input = interactive
        unit = Unit(filename, source, interactive and "\n" not in source.strip())
        self._shown_warnings = set()
        self._unit = unit
        try:
            with self._running():
                try:
                    steps = self._compile(source, unit)
                except GradcalcError as exc:
                    self._report_error(exc)
                    return False
                return self._execute(steps, keep_going)
        except KeyboardInterrupt:  # between statements, or while parsing
            self._report_error(Interrupted(self._current_loc()))
            return False

    def completions(self) -> list[str]:
        """Workspace names, keywords and built-ins (for the REPL's completer)."""
        from .builtins import BUILTINS

        names = set(self.workspace) | set(self._interp.predefined) | set(KEYWORDS) | set(BUILTINS)
        return sorted(names)

    def attribute_completions(self, name: str) -> list[str]:
        """Attributes and methods valid after `name.` (`name` may be dotted: `x.grad`)."""
        from .builtins import ATTRIBUTES, METHODS, NODE_ATTRIBUTES, NODE_METHODS, TENSOR_HOOK_METHODS
        from .runtime import ENGINE as _T
        from .values import surface_of

        parts = name.split(".")
        value = self.workspace.get(parts[0], self._interp.predefined.get(parts[0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for part in parts[1:]:
                surface = surface_of(value)
                try:
                    if surface is not None:  # lin.weight., net.bias.
                        value = surface.attribute(value, part)
                    elif isinstance(value, _T.Tensor) and part in ATTRIBUTES:
                        value = getattr(value, ATTRIBUTES[part])
                    else:
                        return []
                except Exception:
                    return []
        if isinstance(value, _T.Tensor):
            return sorted(set(ATTRIBUTES) | set(METHODS) | set(TENSOR_HOOK_METHODS))
        if isinstance(value, _T.Node):
            return sorted(NODE_ATTRIBUTES + NODE_METHODS)
        surface = surface_of(value)
        return surface.names(value) if surface is not None else []

    def status(self) -> tuple[str, int]:
        """(grad mode: "grad" | "no_grad" | "inference_mode", tensors in the workspace that require grad)."""
        import gradcalc

        from .runtime import ENGINE as _T

        if gradcalc.autograd.is_inference_mode_enabled():
            mode = "inference_mode"
        elif not gradcalc.is_grad_enabled():
            mode = "no_grad"
        else:
            mode = "grad"
        count = sum(1 for v in list(self.workspace.values()) if isinstance(v, _T.Tensor) and v.requires_grad)
        return mode, count

    def interrupt(self) -> None:
        """Ask the running program to stop at the next statement boundary (safe from a thread or a signal)."""
        self._interp.stop_requested = True

    # -- running -----------------------------------------------------------------------------------
    def _compile(self, source: str, unit: Unit) -> list:
        from .parser import no_gc, parse

        try:
            with no_gc():  # the program and its closures are all kept: no collection need look at them
                program = parse(source)
                return self._interp.compile(program, unit)
        except GradcalcError as exc:
            exc.filename, exc.source = unit.filename, unit.source
            exc.interactive = unit.interactive  # type: ignore[attr-defined]
            raise

    def _execute(self, steps: list, keep_going: bool) -> bool:
        from gradcalc.autograd.grad_mode import restore_state, save_state

        ok = True
        interp = self._interp
        top = interp.top
        modes = save_state()  # between statements the modes are these: a failed statement leaves them so
        for _, step in steps:
            if self.quit_requested:
                break
            try:
                step(top)
            except QuitRequested:
                break
            except Interrupted as exc:
                restore_state(modes)
                self._report_error(exc)
                return False
            except GradcalcError as exc:
                restore_state(modes)
                self._report_error(exc)
                ok = False
                if not keep_going:
                    break
            except KeyboardInterrupt:  # Ctrl-C inside a statement: it changed nothing, the workspace stays
                restore_state(modes)
                self._report_error(Interrupted(self._current_loc()))
                return False
            finally:
                interp.depth = 0
        return ok

    @contextmanager
    def _running(self) -> Iterator[None]:
        """For one run: the element limit, a recursion limit for deep programs, warnings caught as ours, and
        float64 as the default dtype (LANGUAGE.md section 1) in this thread only: Python code in the same
        process keeps its own (PyTorch's float32, or what it set)."""
        from gradcalc.autograd.defaults import FLOAT64, default_dtype

        from .builtins import LIMITS

        LIMITS.max_elements = self.max_elements
        self._interp.max_elements = self.max_elements
        old_limit = sys.getrecursionlimit()
        if old_limit < RECURSION_LIMIT:
            sys.setrecursionlimit(RECURSION_LIMIT)
        try:
            with default_dtype(FLOAT64), warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore"
                )  # NumPy's and Python's own warnings: PyTorch computes silently
                warnings.filterwarnings("always", category=UserWarning)  # the engine's; deduplicated here
                warnings.showwarning = self._on_warning
                yield
        finally:
            if old_limit < RECURSION_LIMIT:
                sys.setrecursionlimit(old_limit)

    def _current_loc(self) -> Loc | None:
        current = self._interp.current
        return current[0] if current else None

    # -- output --------------------------------------------------------------------------------------
    def _write(self, stream: TextIO, text: str) -> None:
        try:
            if stream is self.err:
                self.out.flush()  # what was printed before comes first on a shared terminal
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            pass

    def show(self, value: Any, is_call: bool = False) -> None:
        """An expression statement's value: printed, and remembered as `_`/`ans` (none is neither)."""
        from .render import render

        if value is None and is_call:
            return  # a method called for its effect (b.retain_grad()) prints nothing
        text = render(value, self.format)  # first: a value that can't be shown changes nothing
        if value is not None:
            ws = self._interp.workspace
            ws["_"] = ws["ans"] = value
        self._write(self.out, text + "\n")

    def print_values(self, values: list[Any]) -> None:
        from .render import render_print

        self._write(self.out, render_print(values, self.format) + "\n")

    def graph(self, tensor: Any, path: str | None) -> None:
        """`graph y [to PATH]`: the tree to standard output, or a file (graph.py)."""
        from . import graph
        from .names import Names

        names = Names(self.workspace, self._interp.finished_loop_names())
        if path is None:
            self._write(self.out, graph.tree(tensor, names) + "\n")
            return
        graph.save(graph.dot(tensor, names), path)

    def plot(self, exprs: list[tuple[str, Any]], name: str, lo: float, hi: float, order: int,
             path: str | None) -> list[str]:
        """The `plot` statement's output: a terminal plot, plain rows or JSON (by --format), or an image file."""
        from gradcalc import plotting as P

        from .statements.plot import PROPAGATE

        if path is None and self.format == "torch":
            width = P.terminal_width()
            figure = P.make_figure(exprs, name, lo, hi, order, P.samples_for_width(width), propagate=PROPAGATE)
            rendered = P.render_terminal(figure, width, color=self.color)
            if rendered.text:
                self._write(self.out, rendered.text.rstrip("\n") + "\n")
            return list(rendered.warnings)
        figure = P.make_figure(exprs, name, lo, hi, order, propagate=PROPAGATE)
        if path is not None:
            return list(P.write_image(figure, path))
        from gradcalc.plotting.figure import drawable

        text = P.render_plain(figure) if self.format == "plain" else P.render_json(figure)
        self._write(self.out, text.rstrip("\n") + "\n")
        return list(drawable(figure)[1])

    def explanation(self, render: Any) -> None:
        """What `explain` says, to standard output (coloured as the session is)."""
        self._write(self.out, render(self.format, self.color).rstrip("\n") + "\n")

    # -- diagnostics ---------------------------------------------------------------------------------
    def _report_error(self, exc: GradcalcError) -> None:
        unit = self._unit
        filename = exc.filename if exc.filename is not None else (unit.filename if unit else "<stdin>")
        source = exc.source if exc.source is not None else (unit.source if unit else None)
        interactive = getattr(exc, "interactive", False) or (
            unit is not None
            and unit.interactive
            and exc.filename in (None, unit.filename)
            and source == unit.source
        )
        text = format_diagnostic(
            "error", exc.message, None if interactive else filename, exc.loc, source, color=self.color
        )
        if not isinstance(exc, (Interrupted, QuitRequested)):
            self._interp.last_error = exc  # `explain` tells it in full
            if self._repl_input and not self._hinted:  # the REPL says so, once per session
                self._hinted = True
                hint = "(type `explain` for the long form of this error)"
                text += (f"{DIM}{hint}{RESET}" if self.color else hint) + "\n"
        self._write(self.err, text)

    def _on_warning(
        self, message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        """warnings.showwarning while running: the engine's warnings as ours, once per source line per run."""
        text = str(message)
        if speaks_python(text):  # never expected (the engine's warnings are in our words): not shown as it is
            fallback.note(text)
            text = "this statement caused a warning that gradcalc can't put in the language's words"
        current = self._interp.current
        loc, unit = current if current is not None else (None, self._unit)
        key = (text, unit.filename if unit else "", loc.line if loc else 0)
        if key in self._shown_warnings:
            return
        self._shown_warnings.add(key)
        shown_name = None if unit is None or unit.interactive else unit.filename
        self._write(
            self.err,
            format_diagnostic(
                "warning", text, shown_name, loc, unit.source if unit else None, color=self.color
            ),
        )

    # -- commands ------------------------------------------------------------------------------------
    def command(self, name: str, arg: str) -> None:
        """A `:` command line: :help [topic], :vars, :reset, :load FILE, :quit."""
        {
            "help": self._help,
            "vars": self._vars,
            "reset": self._reset,
            "load": self._load,
            "quit": self._quit,
        }[name](arg)

    def _help(self, arg: str) -> None:
        from .help import help_text

        self._write(self.out, help_text(arg).rstrip("\n") + "\n")

    def _vars(self, arg: str) -> None:
        from .vars import vars_table

        self._write(self.out, vars_table(self.workspace) + "\n")

    def _reset(self, arg: str) -> None:
        self._interp.reset()

    def _quit(self, arg: str) -> None:
        self.quit_requested = True
        raise QuitRequested()

    def _load(self, arg: str) -> None:
        from .parser import parse

        path = arg.strip()
        if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
            path = path[1:-1]
        if not path:
            raise GradcalcError(":load needs a file name: :load FILE")
        try:
            with open(os.path.expanduser(path), encoding="utf-8-sig") as handle:
                text = handle.read().replace("\r\n", "\n")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise GradcalcError(f"can't load {path}: {reason}") from None
        unit = Unit(path, text)
        try:
            steps = self._interp.compile(parse(text), unit)
        except SyntaxProblem as exc:
            exc.filename, exc.source = path, text
            raise
        top = self._interp.top
        for _, step in steps:  # a runtime error stops the loaded file, located in it
            step(top)


__all__ = ["QuitRequested", "Session", "error_from"]
