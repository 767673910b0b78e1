"""A Session: a workspace and the means to run source text in it (the REPL, scripts and pipes share it).

`run` parses the whole text first (a syntax error runs nothing), then runs it statement by statement:
values go to `out`, warnings and errors to `err` as `FILE:LINE:COL: warning|error: MESSAGE` with the
source line and a caret. The REPL's `:` commands are statements too, handled here.

Interrupts (Ctrl-C, LANGUAGE.md section 6): whoever catches SIGINT (repl/interrupt.py, for the REPL, the
command line and a Jupyter kernel) asks `interrupt_verdict(frame)` where the main thread is, and either
raises KeyboardInterrupt there or calls `interrupt()`, which stops the program before its next statement.
The verdict raises only inside a statement that has changed nothing yet: its expressions, a backward's walk
(which changes nothing until its last step, under `GUARD.atomic`); not once the engine has begun changing
state for it (`GUARD.changing`), not in a weak reference's callback or an undo (`UNSAFE`), not in code of
neither gradcalc nor NumPy, not between statements. The statement it stops changed nothing: the session
reports `error: interrupted` there, puts the modes back, and `explain` names it.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, TextIO

import numpy

import gradcalc
from gradcalc.autograd.defaults import FLOAT64, default_dtype
from gradcalc.autograd.grad_mode import restore_state, save_state
from gradcalc.autograd.graph import STAMP
from gradcalc.autograd.interrupts import GUARD, UNSAFE

from . import statements  # noqa: F401 - registers each statement's record (the parser's) and compile function
from .core.compiler import Compiler
from .core.interpreter import Interpreter
from .errors import DIM, RESET, STOPS, GradcalcError, Interrupted, Loc, SyntaxProblem, format_diagnostic
from .limits import LIMITS
from .syntax.ast import Stmt
from .syntax.keywords import KEYWORDS
from .syntax.parser import no_gc, parse
from .syntax.source import Unit
from .tell.render import FORMATS, render, render_print
from .values import builtins as builtins_module
from .values.builtins import ATTRIBUTES, METHODS, NODE_ATTRIBUTES, NODE_METHODS, TENSOR_HOOK_METHODS
from .values.engine import ENGINE as _T
from .values.failures import error_from, fallback, speaks_python
from .values.namespace import Namespace
from .values.surfaces import surface_of

RECURSION_LIMIT = 20000  # user recursion and nested expressions are bounded below this (interpreter.py)

# What a Ctrl-C may do where it finds the program (`Session.interrupt_verdict`): raise there; wait for the
# running statement to finish (it has begun changing state), then stop; not here: try again a moment later,
# or stop before the next statement, whichever comes first; nothing runs.
RAISE, WAIT, RETRY, IDLE = "raise", "wait", "retry", "idle"


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
        if format not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        self._out = out
        self._err = err
        self.format = format
        self.max_elements = max_elements
        self.color = color
        self.quit_requested = False
        self._interp = Interpreter(self, max_elements)
        self._guard, self._stamp = GUARD, STAMP
        self._shown_warnings: set[tuple[str, str, int]] = set()
        self._unit: Unit | None = None
        self._repl_input = False  # the input running came from the REPL (errors hint at `explain`)
        self._hinted = False
        self._phase: str | None = None  # "compile" or "run" while `run` runs (interrupt_verdict reads it)
        self._stopping = False  # an interrupt was raised and has not been reported yet
        self._waited: Any = None  # the statement an interrupt let finish (it had begun changing state)
        self.interrupted = False  # the last `run` was stopped by an interrupt (the command line exits 130)
        # the top-level statements that ran without an error (what `:export` writes): (record, its unit, where
        # the unit's next top-level statement starts)
        self.record: list[tuple[Stmt, Unit, Loc | None]] = []
        self._body: list[Stmt] = []  # the top-level statements of the program running

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
        self._stopping = self.interrupted = False
        self._waited = None
        self._guard.changing = None
        self._repl_input = interactive
        unit = Unit(filename, source, interactive and "\n" not in source.strip())
        self._shown_warnings = set()
        self._unit = self._interp.unit = unit
        try:
            with self._running():
                self._phase = "compile"
                try:
                    steps = self._compile(source, unit)
                except GradcalcError as exc:
                    self._phase = None
                    self._report_error(exc)
                    return False
                self._phase = "run"
                ok = self._execute(steps, keep_going)
                self._phase = None
                if ok and self._interp.stop_requested:
                    # a Ctrl-C that came too late to stop a statement: the program had finished
                    self._interp.stop_requested = False
                    self._report_interrupt(self._waited, finished=True)
                    return False
                return ok
        except KeyboardInterrupt as exc:  # while parsing, or outside any statement
            self._phase = None
            self._report_interrupt(exc)
            return False
        finally:
            self._phase = None

    def completions(self) -> list[str]:
        """Workspace names, keywords and built-ins (for the REPL's completer)."""
        # BUILTINS read now, not bound at import: an operation registered later (spec.listen) rebinds it
        names = set(self.workspace) | set(self._interp.predefined) | set(KEYWORDS) | set(builtins_module.BUILTINS)
        return sorted(names)

    def attribute_completions(self, name: str) -> list[str]:
        """Attributes and methods valid after `name.` (`name` may be dotted: `x.grad`)."""
        parts = name.split(".")
        value = self.workspace.get(parts[0], self._interp.predefined.get(parts[0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for part in parts[1:]:
                surface = surface_of(value)
                try:
                    if isinstance(value, Namespace):  # torch.nn., F.
                        value = value.member(part)
                    elif surface is not None:  # lin.weight., net.bias.
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
        if isinstance(value, Namespace):
            return value.names()
        surface = surface_of(value)
        return surface.names(value) if surface is not None else []

    def status(self) -> tuple[str, int]:
        """(grad mode: "grad" | "no_grad" | "inference_mode", tensors in the workspace that require grad)."""
        if gradcalc.autograd.is_inference_mode_enabled():
            mode = "inference_mode"
        elif not gradcalc.is_grad_enabled():
            mode = "no_grad"
        else:
            mode = "grad"
        count = sum(1 for v in list(self.workspace.values()) if isinstance(v, _T.Tensor) and v.requires_grad)
        return mode, count

    def interrupt(self) -> None:
        """Ask the running program to stop before its next statement (safe from a thread or a signal handler);
        `error: interrupted` then names that statement, which did not run."""
        self._interp.stop_requested = True

    def interrupt_verdict(self, frame: Any) -> str:
        """What a Ctrl-C may do that finds the main thread running `frame` (a SIGINT handler's argument):
        RAISE (raise KeyboardInterrupt there: the statement running has changed nothing), WAIT (it has begun
        changing state: let it finish, then stop before the next one), RETRY (not at this point: a moment
        later, or before the next statement), IDLE (no program runs). See the module docstring."""
        if self._phase is None or self._stopping:
            return IDLE
        if self._phase != "run":
            return RETRY  # compiling: it ends soon, and the first statement does not start
        runner = Compiler.RUNNER_CODE
        own = _own_code()
        f = frame
        while f is not None:
            code = f.f_code
            if code is runner:
                break
            if code in UNSAFE or not code.co_filename.startswith(own):
                return RETRY
            f = f.f_back
        if f is None or f is frame:
            return RETRY  # between two statements (or in the session's own code)
        if self.running_has_changed():
            self._waited = self._stamp.origin
            return WAIT
        return RAISE

    def interrupt_raised(self) -> None:
        """The SIGINT handler raised KeyboardInterrupt on RAISE: no other is raised until it is reported."""
        self._stopping = True
        self._interp.stop_requested = True  # should anything swallow it, the next statement stops

    def running(self) -> Any:
        """The statement running now (its origin: `str()` gives its line and text), or None."""
        return self._stamp.origin if self._phase == "run" else None

    def running_has_changed(self) -> bool:
        """Whether the statement running now has begun changing state (then an interrupt lets it finish)."""
        changing = self._guard.changing
        return self._phase == "run" and changing is not None and changing is self._stamp.origin

    # -- running -----------------------------------------------------------------------------------
    def _compile(self, source: str, unit: Unit) -> list:
        try:
            with no_gc():  # the program and its closures are all kept: no collection need look at them
                program = parse(source)
                steps = self._interp.compile(program, unit)
                self._body = program.body
                return steps
        except GradcalcError as exc:
            exc.filename, exc.source = unit.filename, unit.source
            exc.interactive = unit.interactive
            raise

    def _execute(self, steps: list, keep_going: bool) -> bool:
        ok = True
        interp = self._interp
        top = interp.top
        modes = save_state()  # between statements the modes are these: a failed statement leaves them so
        for k, (_, step) in enumerate(steps):
            if self.quit_requested:
                break
            try:
                step(top)
                self._remember(k)
            except QuitRequested:
                break
            except GradcalcError as exc:
                restore_state(modes)
                self._report_error(exc)
                ok = False
                if not keep_going:
                    break
            except KeyboardInterrupt as exc:  # Ctrl-C inside a statement: it changed nothing, the workspace stays
                restore_state(modes)
                self._report_interrupt(exc)
                return False
            finally:
                interp.depth = 0
        return ok

    def _remember(self, k: int) -> None:
        """Top-level statement `k` of the program running ran without an error: `:export` writes it."""
        body, unit = self._body, self._unit
        st = body[k]
        if unit is not None and not (type(st).__name__ == "Command" and st.name in ("export", "reset")):
            self.record.append((st, unit, body[k + 1].loc if k + 1 < len(body) else None))

    @contextmanager
    def _running(self) -> Iterator[None]:
        """For one run: the element limit, a recursion limit for deep programs, warnings caught as ours, and
        float64 as the default dtype (LANGUAGE.md section 1) in this thread only: Python code in the same
        process keeps its own (PyTorch's float32, or what it set)."""
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
        if value is None and is_call:
            return  # a method called for its effect (b.retain_grad()) prints nothing
        text = render(value, self.format)  # first: a value that can't be shown changes nothing
        self._commit()
        if value is not None:
            ws = self._interp.workspace
            ws["_"] = ws["ans"] = value
        self._write(self.out, text + "\n")

    def print_values(self, values: list[Any]) -> None:
        text = render_print(values, self.format)
        self._commit()
        self._write(self.out, text + "\n")

    def _commit(self) -> None:
        """The running statement begins changing what an interrupt can't take back (`_`, the output): a
        Ctrl-C from now on lets it finish (autograd/interrupts.py)."""
        self._guard.changing = self._stamp.origin

    def graph(self, tensor: Any, path: str | None) -> None:
        """`graph y [to PATH]`: the tree (JSON with --format json) to standard output, or a file (graph.py)."""
        from .tell import graph  # (graph and names load when a program first draws one, not on a cold start)
        from .tell.names import Names

        told = graph.Graph(tensor, Names(self.workspace, self._interp.finished_loop_names()))
        if path is None:
            self._write(self.out, told.render(self.format, self.color) + "\n")
            return
        graph.save(told.dot(), path)
        self.wrote(path)

    def plot(self, exprs: list[tuple[str, Any]], name: str, lo: float, hi: float, order: int,
             path: str | None) -> list[str]:
        """The `plot` statement's output: a terminal plot, plain rows or JSON (by --format), or an image file."""
        from gradcalc import plotting as P  # (plotting loads when a program first plots, not on a cold start)

        if path is None and self.format == "torch":
            width = P.terminal_width()
            figure = P.make_figure(exprs, name, lo, hi, order, P.samples_for_width(width), propagate=STOPS)
            rendered = P.render_terminal(figure, width, color=self.color)
            if rendered.text:
                self._write(self.out, rendered.text.rstrip("\n") + "\n")
            return list(rendered.warnings)
        figure = P.make_figure(exprs, name, lo, hi, order, propagate=STOPS)
        if path is not None:
            done = P.write_image(figure, path)
            if done.written:
                self.wrote(path)
            return list(done.warnings)
        from gradcalc.plotting.figure import drawable  # (as above: not on a cold start)

        text = P.render_plain(figure) if self.format == "plain" else P.render_json(figure)
        self._write(self.out, text.rstrip("\n") + "\n")
        return list(drawable(figure)[1])

    def wrote(self, path: str) -> None:
        """A file the program wrote, confirmed on standard error (`wrote y.svg`; LANGUAGE.md §6)."""
        from gradcalc.files import confirmation  # (when a program first writes a file: not on a cold start)

        self._write(self.err, confirmation(path) + "\n")

    def explanation(self, render: Any) -> None:
        """What `explain` says, to standard output (coloured as the session is)."""
        self._write(self.out, render(self.format, self.color).rstrip("\n") + "\n")

    # -- diagnostics ---------------------------------------------------------------------------------
    def _report_interrupt(self, exc: Any, finished: bool = False) -> None:
        """`error: interrupted` at the statement the interrupt stopped (the innermost one running, or the next
        one, `before` it began); kept for `explain`. `finished`: it came as the program ended, and `exc` is
        the origin of the statement it let finish (or None)."""
        origin = exc if finished else getattr(exc, "origin", None)
        if origin is not None:
            err = Interrupted(origin.loc)
            err.filename, err.source = origin.unit.filename, origin.unit.source
            err.interactive = origin.unit.interactive
        else:
            err = Interrupted(None if finished else self._current_loc())
        err.origin = origin
        err.before = bool(getattr(exc, "before", False))
        err.finished = finished
        self._interp.depth = 0
        self._stopping = False
        self.interrupted = True
        self._report_error(err)
        self._interp.last_error = err  # `explain` names the statement

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
        self.diagnostic("error", exc.message, text)

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
        self.diagnostic(
            "warning",
            text,
            format_diagnostic("warning", text, shown_name, loc, unit.source if unit else None, color=self.color),
        )

    def diagnostic(self, kind: str, message: str, text: str) -> None:
        """Show a warning or an error (`kind`): `text` is `message` laid out by `format_diagnostic` (location,
        source line, caret). It goes to standard error; a host that shows errors elsewhere overrides this (the
        Jupyter kernel makes an error the cell's error)."""
        self._write(self.err, text)

    # -- commands ------------------------------------------------------------------------------------
    def command(self, name: str, arg: str) -> None:
        """A `:` command line: :help [topic], :vars, :reset, :load FILE, :quit."""
        getattr(self, f"_{name}")(arg)  # one method per name of syntax/keywords.py's COMMANDS

    def _help(self, arg: str) -> None:
        from .tell.help import help_text  # (:help loads it, not a cold start)

        self._write(self.out, help_text(arg).rstrip("\n") + "\n")

    def _vars(self, arg: str) -> None:
        from .tell.vars import vars_table  # (:vars loads it, not a cold start)

        self._write(self.out, vars_table(self.workspace) + "\n")

    def _reset(self, arg: str) -> None:
        self._interp.reset()
        self.record.clear()  # the session starts afresh: `:export` writes what follows

    def _quit(self, arg: str) -> None:
        self.quit_requested = True
        raise QuitRequested()

    def _export(self, arg: str) -> None:
        """`:export torch FILE.py`, `:export notebook FILE.ipynb`: the session so far (its statements that did not
        fail) as a PyTorch script or a notebook, written through gradcalc/files.py; without FILE, printed."""
        # (the export and the file writer are loaded when a session first exports: not on a cold start)
        from gradcalc.export.session import export_command
        from gradcalc.files import FileProblem  # (not on a cold start either)

        try:
            path = export_command(self.record, arg, lambda text: self._write(self.out, text))
        except FileProblem as exc:
            raise GradcalcError(exc.message) from None
        if path is not None:
            self.wrote(path)

    def _load(self, arg: str) -> None:
        path = arg.strip()
        if len(path) >= 2 and path[0] == path[-1] and path[0] in "\"'":
            path = path[1:-1]
        if not path:
            raise GradcalcError(":load needs a file name: :load FILE")
        from gradcalc import files  # (:load reads through files.py's one wording; not on a cold start)

        try:
            text = files.read("the script", path, verb="load").decode("utf-8-sig").replace("\r\n", "\n")
        except files.FileProblem as problem:
            raise GradcalcError(str(problem)) from None
        except UnicodeDecodeError:
            raise GradcalcError(str(files.FileProblem("the script", path, "it is not UTF-8 text", "load"))) from None
        unit = Unit(path, text)
        try:
            steps = self._interp.compile(parse(text), unit)
        except SyntaxProblem as exc:
            exc.filename, exc.source = path, text
            raise
        top = self._interp.top
        for _, step in steps:  # a runtime error stops the loaded file, located in it
            step(top)


@lru_cache(maxsize=1)
def _own_code() -> tuple[str, ...]:
    """Where gradcalc's and NumPy's code lives: a Ctrl-C raises only in frames of theirs (interrupt_verdict)."""
    return tuple(os.path.dirname(m.__file__) + os.sep for m in (gradcalc, numpy) if m.__file__)

__all__ = ["IDLE", "QuitRequested", "RAISE", "RETRY", "Session", "WAIT", "error_from"]
