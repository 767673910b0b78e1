"""`:export` in the REPL, driven through prompt_toolkit's pipe input (the real REPL and Session): the session so
far written as a PyTorch script that PyTorch runs to what the REPL printed, `wrote FILE` on standard error, and
`:export` completed as a command, its format and its file name."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from gradcalc.lang import BUILTINS, KEYWORDS, Session
from gradcalc.repl.completer import GradcalcCompleter

ROOT = Path(__file__).resolve().parents[2]


def test_export_writes_the_session_so_far(drive_repl: Callable, tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the oracle extra is not installed: pip install -e '.[oracle]'")
    script = tmp_path / "session.py"
    run = drive_repl("x = 3 requires_grad\ry = x * x\rbackward y\rx.grad\rbackward y\r"
                     "with no_grad:\rx -= 0.5 * x.grad\r\rx\r"
                     f":export torch {script}\r")
    assert f"wrote {script}\n" in run.err
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert ran.returncode == 0, ran.stderr  # the second backward failed in the REPL: it is not in the script
    # d(x*x)/dx at 3 is 6; x - 0.5 * 6 is 0, still a leaf that requires grad
    assert ran.stdout == run.out == "tensor(6.)\ntensor(0., requires_grad=True)\n"


def complete(text: str) -> list[str]:
    completer = GradcalcCompleter(Session(), KEYWORDS, BUILTINS)
    return [c.text for c in completer.get_completions(Document(text, len(text)), CompleteEvent(True))]


def test_export_is_completed(tmp_path: Path) -> None:
    assert complete(":ex") == [":export"]
    assert complete(":export ") == ["torch", "notebook"]
    assert complete(":export no") == ["notebook"]
    (tmp_path / "out.py").write_text("")
    assert "ut.py" in complete(f":export torch {tmp_path}/o")  # the rest of out.py
