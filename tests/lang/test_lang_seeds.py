"""The seed tutorials' examples as .gc scripts: output equal to PyTorch's (tests/lang/seeds/*.expected,
derived once from PyTorch 2.13 by make_expected.py), warnings and errors at the same lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from gclang_testing import markers

SEEDS = Path(__file__).resolve().parent / "seeds"
SCRIPTS = sorted(SEEDS.glob("*.gc"))


def expected(script: Path) -> str:
    text = script.with_suffix(".expected").read_text(encoding="utf-8")
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.stem for s in SCRIPTS])
def test_seed_script_prints_what_pytorch_prints(script: Path) -> None:
    assert markers(script.read_text(encoding="utf-8"), script.name) == expected(script)
