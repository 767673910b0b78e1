"""Which parser runs, and why: `parser_status()` (the second line of `gradcalc --version`), and the reasons
GRADCALC_DEBUG_PARSER=1 prints on standard error when an input falls back to Lark's path."""

from __future__ import annotations

from typing import Any

import lark
import pytest

import gradcalc.lang.statements  # noqa: F401 - the parser lowers to the statements' records
from gradcalc.lang.errors import SyntaxProblem
from gradcalc.lang.syntax import parser as P
from gradcalc.lang.syntax.parser import fast


@pytest.fixture
def no_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fast path that finds Lark's parser unlike what it expects (restored after the test)."""

    def unsupported(*_: Any) -> None:
        raise P.Unsupported("rule 'test' has no callback")

    monkeypatch.setattr(fast, "_FastParser", unsupported)
    monkeypatch.setattr(fast, "_fast", None)
    monkeypatch.setattr(fast, "_fast_unsupported", False)
    monkeypatch.setattr(fast, "_fast_how", "")
    monkeypatch.setattr(P, "_said_unavailable", False)


def test_the_status_of_the_fast_path() -> None:
    status = P.parser_status()
    assert status in (
        f"fast path (Lark {lark.__version__} tables, cached)",
        f"fast path (Lark {lark.__version__} tables, made and cached)",
    )


@pytest.mark.usefixtures("no_fast_path")
def test_the_status_says_why_the_fast_path_is_unavailable() -> None:
    assert P.parser_status() == f"Lark {lark.__version__} (fast path unavailable: rule 'test' has no callback)"
    assert P.fast_parser() is None


def test_the_status_says_when_lark_is_outside_the_tested_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lark, "__version__", "9.0.0")
    tested = f">={'.'.join(map(str, P.LARK_TESTED_FROM))},<{'.'.join(map(str, P.LARK_TESTED_BELOW))}"
    assert P.parser_status().endswith(f"; Lark 9.0.0 is outside the tested range {tested})")


def test_no_debug_output_unless_asked(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(P.DEBUG_ENV, raising=False)
    with pytest.raises(SyntaxProblem):
        P.parse("x = 1 +")
    monkeypatch.setenv(P.DEBUG_ENV, "0")
    with pytest.raises(SyntaxProblem):
        P.parse("x = 1 +")
    assert capsys.readouterr().err == ""


def test_debug_says_why_an_input_falls_back(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(P.DEBUG_ENV, "1")
    P.parse("x = 1 + 2\n")  # the fast path takes it: nothing to say
    assert capsys.readouterr().err == ""
    with pytest.raises(SyntaxProblem, match="expected an expression after"):
        P.parse("x = 1 +")
    assert capsys.readouterr().err == (
        "gradcalc: parser: the fast path stopped (an error in this input, which Lark's path describes):"
        " parsing again on Lark's path\n"
    )
    with pytest.raises(SyntaxProblem, match="positional argument"):  # raised by a lowering callback
        P.parse("f(k=1, 2)")
    assert capsys.readouterr().err == (
        "gradcalc: parser: the fast path stopped (SyntaxProblem: a positional argument can't follow a"
        " keyword argument): parsing again on Lark's path\n"
    )


@pytest.mark.usefixtures("no_fast_path")
def test_debug_says_once_why_the_fast_path_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(P.DEBUG_ENV, "1")
    first, second = P.parse("x = 1\n"), P.parse("y = 2\n")
    assert first is not None and second is not None
    assert capsys.readouterr().err == (
        "gradcalc: parser: parsing on Lark's path (fast path unavailable: rule 'test' has no callback)\n"
    )
