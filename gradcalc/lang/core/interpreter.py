"""The interpreter: a workspace, the state of the running program, and what it needs from its host.

`Interpreter.compile` turns a lowered program into closures (compiler.py and the statements' compile
functions, which gradcalc.lang.statements registers when it loads: the session imports it); running them
changes the workspace and reports output through the `Host` (a `Session`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import gradcalc
from gradcalc.autograd.printing import set_printoptions  # the engine's (global, as PyTorch's)

from ..errors import GradcalcError, Loc, close_matches
from ..habits import name_pointer
from ..syntax import ast as A
from ..syntax.parser import no_gc
from ..syntax.source import Unit
from ..values.builtins import CONSTANTS, DTYPES, FUNCTIONS
from ..values.engine import ENGINE
from ..values.namespace import PREDEFINED_NAMESPACES
from .compiler import Compiler
from .frames import MISSING, Closure, Frame

if TYPE_CHECKING:
    from gradcalc import Tensor

__all__ = ["Host", "Interpreter", "Unit"]


class Host(Protocol):
    """What the interpreter needs from the session that runs it: where values, graphs and commands go."""

    def show(self, value: object, is_call: bool = False) -> None:
        """An expression statement's value (a call's none prints nothing)."""

    def print_values(self, values: list[object]) -> None:
        """What `print a, b` prints."""

    def graph(self, tensor: Tensor, path: str | None) -> None:
        """`graph y [to PATH]`."""

    def plot(self, exprs: list[tuple[str, Any]], name: str, lo: float, hi: float, order: int,
             path: str | None) -> list[str]:
        """`plot`: draw (or write to `path`) each (text, function of NAME) and its derivatives; the warnings."""

    def wrote(self, path: str) -> None:
        """A file the program wrote (`graph ... to`, `plot ... to`): confirmed on standard error."""

    def command(self, name: str, arg: str) -> None:
        """A REPL `:` command."""

    def explanation(self, render: Callable[[str, bool], str]) -> None:
        """What `explain` says: `render(format, color)` is the text (`--format json`: JSON lines)."""


class Interpreter:
    """Runs compiled statements over a workspace; reports output through its `host`."""

    def __init__(self, host: Host, max_elements: int) -> None:
        ENGINE.load()
        self.host = host
        self.max_elements = max_elements
        self.workspace: dict[str, Any] = {}
        self.predefined: dict[str, Any] = {}
        self.top = Frame(self.workspace, None)
        self.stop_requested = False  # set by Session.interrupt: stop at the next statement
        self.current: tuple[Loc, Unit] | None = None  # the statement running (for warnings)
        self.unit: Unit | None = None  # the unit the session runs now (an origin elsewhere names its own)
        self.depth = 0  # nested calls of user functions
        # a top-level `for` loop's variables once the loop ended, with the tensor each was left bound to:
        # `graph` does not label a tensor with them (see finished_loop_names)
        self.loop_leftovers: dict[str, Any] = {}
        self.last_error: GradcalcError | None = None  # the session's last error (for `explain`)
        self.reset()

    def reset(self) -> None:
        """Forget every user name; the predefined constants and the default print options come back."""
        set_printoptions(profile="default")
        self.workspace.clear()
        self.loop_leftovers.clear()
        self.predefined.clear()
        self.predefined.update(CONSTANTS)
        self.predefined.update(PREDEFINED_NAMESPACES)  # torch nn F optim autograd func: torch.sin(x), nn.Linear

    def loop_ended(self, frame: Frame, names: list[str]) -> None:
        """A `for` loop over `names` ended in `frame`: at top level, remember what each name was left at."""
        if frame is self.top:
            for name in names:
                value = frame.vars.get(name)
                if isinstance(value, ENGINE.Tensor):
                    self.loop_leftovers[name] = weakref.ref(value)
                else:
                    self.loop_leftovers.pop(name, None)

    def finished_loop_names(self) -> list[str]:
        """Workspace names still bound to what a finished `for` loop left in them (not rebound since)."""
        ws = self.workspace
        return [n for n, ref in self.loop_leftovers.items() if n in ws and ws[n] is ref()]

    def compile(self, program: A.Program, unit: Unit) -> list[tuple[Loc, Closure]]:
        """Compile the top-level statements (a SyntaxProblem for an expression nested too deeply)."""
        c = Compiler(self, unit)
        with no_gc():
            return [(st.loc, c.statement_runner(st)) for st in program.body]

    def is_predefined(self, name: str) -> bool:
        """Whether `name` is a constant or built-in rather than a user's variable."""
        return name in self.predefined or name in FUNCTIONS

    def lookup(self, frame: Frame, name: str, loc: Loc) -> Any:
        """A name not in the innermost scope: enclosing scopes, the workspace, predefined, built-in."""
        f = frame.parent
        while f is not None:
            v = f.vars.get(name, MISSING)
            if v is not MISSING:
                return v
            f = f.parent
        v = self.predefined.get(name, MISSING)
        if v is not MISSING:
            return v
        v = FUNCTIONS.get(name, MISSING)
        if v is not MISSING:
            return v
        if name in DTYPES:
            return getattr(gradcalc, name)
        raise self.name_error(frame, name, loc)

    def name_error(self, frame: Frame, name: str, loc: Loc) -> GradcalcError:
        f: Frame | None = frame
        while f is not None:
            if f.hints and name in f.hints:
                return GradcalcError(f.hints[name], loc)
            f = f.parent
        pointer = name_pointer(name)
        if pointer is not None:
            return GradcalcError(f"name '{name}' is not defined: {pointer}", loc)
        known: set[str] = set(self.predefined) | set(FUNCTIONS) | set(DTYPES)
        f = frame
        while f is not None:
            known.update(f.vars)
            f = f.parent
        close = close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        return GradcalcError(f"name '{name}' is not defined{hint}", loc)
