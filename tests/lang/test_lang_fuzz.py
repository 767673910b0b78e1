"""Fuzzing the language (hypothesis): random token sequences, random bytes and mutations of valid programs
never make anything but gradcalc's own errors escape, never hang, and a failing statement leaves the
workspace as it was; random arithmetic prints what the Python engine computes for the same expression."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradcalc
from gradcalc.lang import Session, check_complete
from gradcalc.lang.syntax.keywords import KEYWORDS, SOFT_KEYWORDS
from gradcalc.lang.tell.render import torch_repr

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy, in the engine run directly

SEEDS = [p.read_text() for p in sorted((Path(__file__).parent / "seeds").glob("*.gc"))]
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SETUP = (
    "x = [1, 2, 3] requires_grad\ny = (x * x).sum()\nbackward y retain_graph\nw = [[1, 2], [3, 4]]\nn = 2\n"
)

TOKENS = [
    "x",
    "y",
    "w",
    "n",
    "z",
    "f",
    "sin",
    "exp",
    "sum",
    "grad",
    "zeros",
    "ones",
    "tensor",
    "range",
    "len",
    "clamp",
    "0",
    "1",
    "2",
    "0.5",
    "1e3",
    "-1",
    "'s'",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "@",
    "**",
    "==",
    "<",
    ">=",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    ";",
    ".",
    "grad",
    "shape",
    "T",
    "item",
    "\n",
    "\n    ",
    "\n        ",
    " ",
    "#c\n",
    ":vars",
    ":help",
    "dim=",
    "min=",
    *KEYWORDS,  # every keyword of the grammar (a keyword added to it is fuzzed too)
    *SOFT_KEYWORDS,
]


def fresh(limit: int = 10**5) -> tuple[Session, io.StringIO]:
    err = io.StringIO()
    return Session(out=io.StringIO(), err=err, max_elements=limit), err


def run_bounded(s: Session, source: str, **kw: object) -> bool:
    """Run with a watchdog: an endless loop is interrupted (and must then stop cleanly)."""
    timer = threading.Timer(3.0, s.interrupt)
    timer.start()
    try:
        result = s.run(source, "fuzz.gc", **kw)
    finally:
        timer.cancel()
    assert isinstance(result, bool)
    return result


def check_clean(err: io.StringIO) -> None:
    text = err.getvalue()
    assert "Traceback" not in text and "__ANON" not in text
    for line in text.splitlines():
        if ": error: " in line or ": warning: " in line:
            assert line.split(": ", 1)[0].startswith("fuzz.gc:") or line.startswith(("error:", "warning:")), (
                line
            )


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=30))
def test_random_token_sequences(tokens: list[str]) -> None:
    source = " ".join(tokens)
    s, err = fresh()
    run_bounded(s, SETUP)
    run_bounded(s, source, keep_going=True)
    check_clean(err)
    assert check_complete(source) in ("complete", "incomplete", "invalid")


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    source = data.decode("utf-8", errors="replace")
    s, err = fresh()
    run_bounded(s, source, keep_going=True)
    check_clean(err)
    assert check_complete(source) in ("complete", "incomplete", "invalid")


@st.composite
def mutated_program(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = min(len(text), i + draw(st.integers(0, 12)))
        kind = draw(st.sampled_from(["delete", "duplicate", "insert", "swap-lines"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        else:
            lines = text.split("\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


@FUZZ
@given(mutated_program())
def test_mutations_of_valid_programs(source: str) -> None:
    s, err = fresh()
    run_bounded(s, source, keep_going=True)
    check_clean(err)


def snapshot(s: Session) -> dict[str, object]:
    """Names -> (identity, value, grad, requires_grad, version): everything a statement could change."""
    shot = {}
    for name, v in s.workspace.items():
        if isinstance(v, gradcalc.Tensor):
            g = v._grad  # read the field itself: the .grad property warns for non-leaves
            shot[name] = (id(v), repr(v), repr(g), v.requires_grad, v.version)
        else:
            shot[name] = (id(v), repr(v))
    return shot


# Statement material without in-place methods (add_, zero_, ...): a method call that changed a tensor before a
# later part of the same statement failed is the one documented exception to atomic statements.
ATOMIC_TOKENS = [t for t in TOKENS if t not in ("\n", "\n    ", "\n        ", "#c\n", ";", ":vars", ":help")]


@FUZZ
@given(st.lists(st.sampled_from(ATOMIC_TOKENS), min_size=1, max_size=14))
def test_a_failing_statement_leaves_the_workspace_unchanged(tokens: list[str]) -> None:
    s, err = fresh()
    assert run_bounded(s, SETUP)
    before = snapshot(s)
    if not run_bounded(s, " ".join(tokens)):
        assert snapshot(s) == before


# -- random arithmetic against the Python engine --------------------------------------------------------

UNARY = ["sin", "cos", "exp", "tanh", "sigmoid", "abs"]


@st.composite
def arithmetic(draw: st.DrawFn, depth: int = 0) -> tuple[str, str]:
    """(language source, Python source over gradcalc) for one random expression in a, b (tensors)."""
    choice = draw(st.integers(0, 9 if depth < 4 else 2))
    if choice == 0:
        name = draw(st.sampled_from(["a", "b"]))
        return name, name
    if choice in (1, 2):
        v = draw(st.integers(-3, 5))
        return (f"({v})", f"({v})") if v < 0 else (str(v), str(v))
    if choice in (3, 4, 5, 6):
        op = draw(st.sampled_from(["+", "-", "*", "/"]))
        left, pleft = draw(arithmetic(depth + 1))
        right, pright = draw(arithmetic(depth + 1))
        return f"({left} {op} {right})", f"(lit({pleft}, {pright}) {op} {pright})"
    if choice == 7:
        base, pbase = draw(arithmetic(depth + 1))
        k = draw(st.integers(0, 3))
        return f"({base} ** {k})", f"(lit({pbase}, {k}) ** {k})"
    fn = draw(st.sampled_from(UNARY))
    inner, pinner = draw(arithmetic(depth + 1))
    return f"{fn}({inner})", f"gradcalc.{fn}(T({pinner}))"


def lit(left: object, right: object) -> object:
    """LANGUAGE.md: when both operands are number literals, the left one is a float64 tensor."""
    if isinstance(left, (int, float)) and isinstance(right, (int, float)):
        return gradcalc.tensor(float(left))
    return left


def T(v: object) -> object:  # noqa: N802 - a literal passed to a function is a float64 tensor
    return gradcalc.tensor(float(v)) if isinstance(v, (int, float)) else v


@settings(max_examples=200, deadline=None)
@given(arithmetic(), st.floats(-2, 2), st.floats(0.5, 3))
def test_random_arithmetic_prints_what_the_engine_computes(
    expr: tuple[str, str], av: float, bv: float
) -> None:
    source, python = expr
    a = gradcalc.tensor(av, requires_grad=True)
    b = gradcalc.tensor(bv, requires_grad=True)
    value = eval(python, {"gradcalc": gradcalc, "lit": lit, "T": T, "a": a, "b": b})
    expected = torch_repr(value if isinstance(value, gradcalc.Tensor) else gradcalc.tensor(float(value)))
    if isinstance(value, gradcalc.Tensor) and value.requires_grad:
        value.backward()
        expected += "\n" + torch_repr(a.grad) + "\n" + torch_repr(b.grad)
        program = f"a = {av!r} requires_grad\nb = {bv!r} requires_grad\ny = {source}\ny\nbackward y\na.grad\n"
        program += "b.grad\n"
    else:
        program = f"a = {av!r} requires_grad\nb = {bv!r} requires_grad\ny = {source}\ny\n"
    out = io.StringIO()
    s = Session(out=out, err=io.StringIO())
    assert s.run(program), program
    assert out.getvalue() == expected + "\n", program
