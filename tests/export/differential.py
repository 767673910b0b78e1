"""A program run by gradcalc beside its export run by PyTorch: what each printed, compared.

gradcalc runs in a `Session` whose narrations, graphs, plots and `:help`/`:vars` pages print nothing (the export
writes comments for them, LANGUAGE.md §10); the script runs in this process with its standard output captured.
Each side is stopped after a few seconds (a loop that never ends is an outcome, not a hang). The first random
draw gradcalc makes is noted (where its output stood then): PyTorch's draws are not gradcalc's, so the outputs
are compared up to that point only.

`programs()` is the corpus: the examples, the seed scripts, and every string in the test suite that is a
program of the language (collected from the tests' source, as the language's own tests run them).
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import re
import signal
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcalc.export import export_program
from gradcalc.lang import GradcalcError, Session

ROOT = Path(__file__).resolve().parents[2]
SECONDS = 4  # for each side: a program that runs longer is endless (the interrupt tests' `while true:` loops)
MAX_ELEMENTS = 10**6  # gradcalc's limit here: a program past it tests the limit, which PyTorch does not have
# Programs whose export is not run: PyTorch would do what gradcalc refuses, at a cost (a 2 GB string)
NOT_RUN = ("'ab' * 1000000000",)


class Quiet(Session):
    """A Session that prints what the export prints: values and `print`s, not narrations, graphs or pages."""

    own_value_at: int | None = None  # how much had been printed when a value of gradcalc's own was shown

    def show(self, value: Any, is_call: bool = False) -> None:
        if self.own_value_at is None and not pytorch_value(value):
            self.own_value_at = len(self.out.getvalue())  # type: ignore[attr-defined]
            self.interrupt()  # nothing after it is compared
        super().show(value, is_call)

    def explanation(self, render: Any) -> None:
        pass

    def graph(self, tensor: Any, path: str | None) -> None:
        pass

    def plot(self, *args: Any) -> list[str]:
        return []

    def command(self, name: str, arg: str) -> None:
        if name in ("help", "vars", "export"):
            return
        super().command(name, arg)


def pytorch_value(value: Any) -> bool:
    """A value the script prints as gradcalc does: a tensor, a number, a shape, a node, a dtype, a module, a
    function; not one of the language's own (a hook's handle, a schedule, a generator, a transformed function),
    which gradcalc shows in its words and the script as PyTorch's repr."""
    import gradcalc
    import gradcalc.nn
    from gradcalc.autograd import Node
    from gradcalc.export.language import Builtin, Namespace, UserFunction

    if value is None or isinstance(value, (bool, int, float, str, gradcalc.Tensor, gradcalc.DType, Node)):
        return True
    if isinstance(value, (tuple, list)):
        return all(pytorch_value(v) for v in value)
    return isinstance(value, (Namespace, Builtin, UserFunction, gradcalc.nn.Module))


@dataclass
class Outcome:
    out: str
    ok: bool
    draw_at: int | None = None  # how much had been printed at the first random draw or value of gradcalc's own
    timed_out: bool = False
    error: str = ""


@contextlib.contextmanager
def _first_draw(stream: io.StringIO, session: Session) -> Iterator[list[int]]:
    """Notes how much `stream` held when the engine first drew a random number (and stops the program before its
    next statement: nothing after it is compared)."""
    from gradcalc.autograd.ops import random as R

    seen: list[int] = []
    original = R._draw

    def draw(generator: Any, how: Any) -> Any:
        if not seen:
            seen.append(len(stream.getvalue()))
            session.interrupt()
        return original(generator, how)

    R._draw = draw
    try:
        yield seen
    finally:
        R._draw = original


def run_gradcalc(source: str, filename: str = "t.gc") -> Outcome:
    """`source` run by gradcalc as a script is (it stops at the first error)."""
    out, err = io.StringIO(), io.StringIO()
    session = Quiet(out=out, err=err, max_elements=MAX_ELEMENTS)
    timer = threading.Timer(SECONDS, session.interrupt)
    timer.start()
    try:
        with _first_draw(out, session) as seen:
            ok = session.run(source, filename)
    finally:
        timer.cancel()
        timer.join()  # no thread outlives the run (a test that freezes the collector's objects counts them)
    cut = min((k for k in (seen[0] if seen else None, session.own_value_at) if k is not None), default=None)
    stopped = cut is not None  # (by the harness, at its first draw or value of its own)
    return Outcome(out.getvalue(), ok or stopped, cut, session.interrupted and not stopped, err.getvalue())


class _Timeout(BaseException):
    pass


class _Enough(BaseException):
    pass


class _Capped(io.StringIO):
    """Standard output that stops the script once it has printed more than `limit` characters."""

    def __init__(self, limit: int | None) -> None:
        super().__init__()
        self.limit = limit

    def write(self, text: str) -> int:
        n = super().write(text)
        if self.limit is not None and self.tell() > self.limit:
            raise _Enough
        return n


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def run_torch(script: str, limit: int | None = None) -> Outcome:
    """An exported script run by PyTorch in this process: what it printed, and whether it raised (stopped once it
    printed more than `limit` characters)."""
    import torch

    out = _Capped(limit)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SECONDS)
    ok, timed_out, error = True, False, ""
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(script, "<export>", "exec"), namespace)
    except _Timeout:
        ok, timed_out = False, True
    except _Enough:
        pass
    except SystemExit as exc:
        ok = exc.code in (None, 0)
    except BaseException as exc:  # noqa: BLE001 - the script's error is an outcome
        ok, error = False, f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        torch.set_grad_enabled(True)
        torch.autograd.set_detect_anomaly(False)
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(torch.float64)
    return Outcome(out.getvalue(), ok, timed_out=timed_out, error=error)


def differs(source: str, filename: str = "t.gc") -> str | None:
    """None when the export of `source` prints what gradcalc prints (see the module docstring), else why not."""
    gc = run_gradcalc(source, filename)
    if gc.timed_out or "(raise it with --max-elements)" in gc.error or source.strip() in NOT_RUN:
        return None  # an endless program, a test of gradcalc's limits: nothing to compare
    script = export_program(source, filename, "torch")
    # (stopped once it printed well past where gradcalc's output is cut: the same lines may print a little longer)
    torch_run = run_torch(script, None if gc.draw_at is None else 2 * gc.draw_at + 200)
    expected, got = gc.out, torch_run.out
    if gc.draw_at is not None:
        expected = expected[: gc.draw_at]
        got = _lines(got, expected.count("\n"))
        if not same_printed(expected, got):
            return f"before the first draw (or value of gradcalc's own):\n--- gradcalc\n{expected}--- torch\n{got}"
        return None
    if not gc.ok:
        # gradcalc stopped at an error: the script raises there too, or runs on where the error is the
        # language's own (a name or an argument it does not take, a statement the script writes as a comment):
        # compared up to there
        got = _lines(got, expected.count("\n"))
    if not same_printed(expected, got):
        return (f"--- gradcalc\n{expected}--- torch\n{got}--- torch error: {torch_run.error}\n"
                f"--- gradcalc error: {gc.error}")
    if gc.ok and not torch_run.ok:
        return f"gradcalc ran, the script failed: {torch_run.error}"
    return None


def _lines(text: str, n: int) -> str:
    return "".join(text.splitlines(keepends=True)[:n])


_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?(?![\w.])")


def _printed_step(token: str) -> float:
    """One unit in the last digit `token` was printed with (`0.1235`: 1e-4; `1.2346e-05`: 1e-9), or 0 for a
    number printed whole (`6.`, `3`: PyTorch prints a tensor so only when its values are whole numbers)."""
    mantissa, _, exponent = token.lstrip("-").partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals) if decimals else 0.0


def same_printed(expected: str, got: str) -> bool:
    """Whether two outputs are the same, or the same but for the rounding of their numbers: each pair of numbers
    as far apart as their printing rounded them (half a last digit each) plus float64's rounding (ROUNDING), the
    text around them the same up to spacing. (The engine and PyTorch may sum or factor a formula in another
    order, a float64 rounding apart: printed to 4 decimals, `6.` beside `6.0000`, a last digit one apart, or
    `1.1102e-16` where the other cancelled to `0.`.)"""
    if expected == got:
        return True
    xs, ys = _NUMBER.findall(expected), _NUMBER.findall(got)
    if len(xs) != len(ys) or "".join(_NUMBER.sub("#", expected).split()) != "".join(_NUMBER.sub("#", got).split()):
        return False
    steps = [(_printed_step(x) + _printed_step(y)) / 2 for x, y in zip(xs, ys, strict=True)]
    return all(_close(float(x), float(y), step) for x, y, step in zip(xs, ys, steps, strict=True))


# float64 against float64: eps (2.2e-16) times what a short program's rounding errors add up to, with intermediate
# values up to ~1e4 (a value that cancels to 0 in one is 1e-16 in the other)
ROUNDING = 1e-10


def _close(x: float, y: float, rounded: float) -> bool:
    """Whether printed numbers `x` and `y`, each rounded by up to half its last digit (together `rounded`), can
    be the same value up to float64's rounding."""
    if x == y or (math.isnan(x) and math.isnan(y)):
        return True
    return abs(x - y) <= rounded * 1.0001 + ROUNDING * max(1.0, abs(x), abs(y))


# -- the corpus -------------------------------------------------------------------------------------------
def _is_program(text: str) -> bool:
    from gradcalc.export.language import parse

    if not text.strip() or len(text) > 20000 or "\x00" in text:
        return False
    try:
        parse(text)
    except GradcalcError:
        return False
    except Exception:  # noqa: BLE001 - the parser's own limits
        return False
    return True


def _strings(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def programs() -> list[tuple[str, str]]:
    """(name, source) of every program in the corpus (see the module docstring), each once."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "examples").glob("*.gc")) + sorted((ROOT / "tests" / "lang" / "seeds").glob("*.gc")):
        found.setdefault(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "export" in path.relative_to(ROOT).parts:
            continue
        for k, text in enumerate(_strings(path)):
            if text not in found and _is_program(text):
                found[text] = f"{path.relative_to(ROOT)}#{k}"
    return [(name, text) for text, name in found.items()]
