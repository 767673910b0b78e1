"""Every program of the language in this repository -- the examples, the seed scripts, and every string of the test
suite that is a program -- exported to PyTorch and run by PyTorch prints what gradcalc prints (differential.py says
how: up to the first random draw, up to an error of gradcalc's own; the narrations, graphs and plots are comments)."""

from __future__ import annotations

import pytest
from differential import differs, programs

torch = pytest.importorskip("torch", reason="the oracle extra is not installed: pip install -e '.[oracle]'")

PROGRAMS = programs()


def test_the_corpus_is_the_test_suites_programs() -> None:
    names = [name for name, _ in PROGRAMS]
    assert "examples/pinn.gc" in names and "tests/lang/seeds/mechanics.gc" in names
    assert sum(name.startswith("tests/lang/") for name in names) > 500  # the language's tests hold hundreds


@pytest.mark.parametrize("source", [text for _, text in PROGRAMS], ids=[name for name, _ in PROGRAMS])
def test_the_export_prints_what_gradcalc_prints(source: str) -> None:
    problem = differs(source)
    assert problem is None, f"{source}\n{problem}"
