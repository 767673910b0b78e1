"""Fixtures for the command-line and REPL tests: the installed `gradcalc` command, and the REPL driven
in-process through prompt_toolkit's pipe input."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60  # seconds: no subprocess may hang a test run
REPL_TIMEOUT = 30  # seconds: an in-process REPL drive that takes longer is closed


def installed_gradcalc() -> str | None:
    """The `gradcalc` console script of the Python running the tests (or on PATH)."""
    beside = Path(sys.executable).with_name("gradcalc")
    if beside.exists():
        return str(beside)
    return shutil.which("gradcalc")


@pytest.fixture(scope="session")
def gradcalc_command() -> list[str]:
    """The installed `gradcalc` command (`pip install -e .` puts it beside the interpreter)."""
    found = installed_gradcalc()
    if found is None:
        pytest.fail("the gradcalc console script is not installed: run `pip install -e .` first")
    return [found]


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """An environment with a private state directory and no colour preferences inherited."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PROMPT_TOOLKIT_COLOR_DEPTH")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["HOME"] = str(tmp_path)
    env["TERM"] = "xterm-256color"
    env["PYTHONIOENCODING"] = "utf-8"
    # The installed command, on this checkout's code (an editable install may point at another clone or
    # worktree); nothing else inherited from the caller's PYTHONPATH.
    env["PYTHONPATH"] = str(ROOT)
    return env


@dataclass
class Result:
    """A finished `gradcalc` run."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_gradcalc(
    gradcalc_command: list[str], clean_env: dict[str, str], tmp_path: Path
) -> Callable[..., Result]:
    """Run the installed command with arguments and optional standard input; never hangs."""

    def run(*args: str, stdin: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        proc = subprocess.run(
            [*gradcalc_command, *args],
            input=data if data is not None else b"",
            capture_output=True,
            env={**clean_env, **(env or {})},
            cwd=tmp_path,
            timeout=TIMEOUT,
        )
        result = Result(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))
        assert "Traceback" not in result.stderr, result.stderr
        return result

    return run


@dataclass
class ReplRun:
    """What an in-process REPL run left behind."""

    status: int
    out: str
    err: str
    session: object


@pytest.fixture
def drive_repl(tmp_path: Path) -> Iterator[Callable[..., ReplRun]]:
    """Run the real REPL on typed keys (pipe input, DummyOutput), with a real language Session.

    `during(session, pipe)` is called once the keys are sent, to act while the REPL runs (type more keys
    later, send a signal); a drive with `during` must end its own keys with Ctrl-D ("\\x04")."""
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from gradcalc.lang import Session
    from gradcalc.repl.app import run_repl

    def drive(
        keys: str, *, during: Callable[[object, object], None] | None = None, history: Path | None = None
    ) -> ReplRun:
        out, err = io.StringIO(), io.StringIO()
        session = Session(out=out, err=err)
        hist = FileHistory(str(history or tmp_path / "history"))
        if during is None and not keys.endswith("\x04"):
            keys += "\x04"  # Ctrl-D: every drive ends, even when a test's keys leave something unfinished
        with create_pipe_input() as pipe:
            # A stuck REPL sees the end of its input, and the test fails instead of hanging.
            watchdog = threading.Timer(REPL_TIMEOUT, pipe.close)
            watchdog.start()
            try:
                pipe.send_text(keys)
                if during is not None:
                    during(session, pipe)
                status = run_repl(session, input=pipe, output=DummyOutput(), history=hist, out=out, err=err,
                                  show_banner=False)
            finally:
                watchdog.cancel()
        return ReplRun(status, out.getvalue(), err.getvalue(), session)

    yield drive
