"""The Lark releases the parser's fast path was tested with: pyproject.toml allows only those, the installed
Lark is one of them, and with it the fast path is really in use (not silently falling back to Lark's path,
which gives the same answers, only slower). The fast path reads Lark's private attributes, so a Lark outside
the range must be tested (these tests and test_lang_fastpath.py) before the bound moves."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import gradcalc.lang.statements  # noqa: F401 - the parser lowers to the statements' records
from gradcalc.lang.syntax import parser as P
from gradcalc.lang.syntax.parser import fast

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = [p.read_text() for p in sorted((ROOT / "examples").glob("*.gc"))]


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def test_pyproject_requires_the_tested_range() -> None:
    with open(ROOT / "pyproject.toml", "rb") as f:
        dependencies = tomllib.load(f)["project"]["dependencies"]
    (lark,) = [d for d in dependencies if d.startswith("lark")]
    assert lark == f"lark>={dotted(P.LARK_TESTED_FROM)},<{dotted(P.LARK_TESTED_BELOW)}"


def test_the_installed_lark_is_in_the_tested_range() -> None:
    import lark

    assert lark.__version__ == metadata.version("lark")
    assert P.lark_tested(lark.__version__)


@pytest.mark.parametrize(
    ("version", "tested"),
    [
        (dotted(P.LARK_TESTED_FROM), True),
        ("1.3.1", True),
        (dotted(P.LARK_TESTED_BELOW), False),
        (dotted(P.LARK_TESTED_BELOW) + ".0rc1", False),  # a pre-release of the bound is not tested either
        ("1.1.8", False),
        ("1.10.0", False),
        ("not a version", False),
    ],
)
def test_which_versions_count_as_tested(version: str, tested: bool) -> None:
    assert P.lark_tested(version) is tested


def test_the_fast_path_is_in_use() -> None:
    in_use, how = fast.fast_status()
    assert in_use, f"the fast path is not in use: {how}"
    assert P.fast_parser() is not None
    assert how == "cached" or how.startswith("made")


def test_programs_parse_without_larks_path(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [P.parse(program) for program in PROGRAMS]

    def no_lark(text: str) -> None:
        raise AssertionError("Lark's path parsed a valid program: the fast path fell back")

    monkeypatch.setattr(P, "_parse_with_lark", no_lark)
    assert [P.parse(program) for program in PROGRAMS] == expected
    assert P.check_complete("if x:\n    y = 1") == "incomplete"  # the REPL waits for an empty line
    assert P.check_complete("if x:\n    y = 1\n") == "complete"
