"""`gradcalc --version`: the version alone on standard output, then which parser runs on standard error,
as this source tree (not the installed command) prints them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import lark

from gradcalc import __version__

ROOT = Path(__file__).resolve().parents[2]


def version(cache: Path) -> tuple[str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("GRADCALC_DEBUG_PARSER", None)
    run = subprocess.run(
        [sys.executable, "-m", "gradcalc", "--version"], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    return run.stdout, run.stderr


def test_version_names_the_parser_and_where_its_tables_came_from(tmp_path: Path) -> None:
    tables = f"parser: fast path (Lark {lark.__version__} tables"
    assert version(tmp_path) == (f"gradcalc {__version__}\n", f"{tables}, made and cached)\n")
    assert version(tmp_path) == (f"gradcalc {__version__}\n", f"{tables}, cached)\n")


def test_version_says_when_the_tables_cannot_be_cached(tmp_path: Path) -> None:
    (tmp_path / "gradcalc").mkdir()
    os.chmod(tmp_path / "gradcalc", 0o777)  # anyone could write there: not a cache to trust
    _, parser = version(tmp_path)
    tables = f"parser: fast path (Lark {lark.__version__} tables"
    assert parser == f"{tables}, made, not cached: no private cache directory)\n"
