"""Files a program writes (LANGUAGE.md §6): every writer -- `graph ... to` (.dot, and .svg/.png drawn by
Graphviz), `plot ... to` (.svg/.png drawn by matplotlib) -- words its errors the same way, writes nothing when
it fails, and confirms a file it wrote on standard error (`wrote y.svg`), never one it did not write."""

from __future__ import annotations

import errno
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.lang.gclang_testing import run

HAS_DOT = shutil.which("dot") is not None
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

PRELUDE = "x = [1, 2] requires_grad\ny = (x * x).sum()\n"

# (what the error calls the file, the statement writing FILE, whether it can run here)
WRITERS = [
    pytest.param("graph", 'graph y to "FILE.dot"', True, id="graph-dot"),
    pytest.param("graph", 'graph y to "FILE.svg"', HAS_DOT, id="graph-svg"),
    pytest.param("graph", 'graph y to "FILE.png"', HAS_DOT, id="graph-png"),
    pytest.param("plot", 'plot sin(t) for t in [0, 1] to "FILE.svg"', HAS_MATPLOTLIB, id="plot-svg"),
    pytest.param("plot", 'plot sin(t) for t in [0, 1] to "FILE.png"', HAS_MATPLOTLIB, id="plot-png"),
]
EXTENSIONS = {
    "graph": ".dot (Graphviz's text), .svg or .png (drawn by Graphviz)",
    "plot": ".svg or .png",
}


def write(statement: str, path: str) -> tuple[bool, list[str], str, str]:
    ext = os.path.splitext(statement.split('"')[1])[1]
    source = PRELUDE + statement.replace("FILE" + ext, path)
    r = run(source, filename="w.gc")
    return r.ok, r.errors, r.err, r.out


def lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wrote ")]


@pytest.mark.parametrize("what, statement, runs", WRITERS)
def test_a_written_file_is_confirmed_on_standard_error(tmp_path: Path, what: str, statement: str, runs: bool) -> None:
    if not runs:
        pytest.skip("the drawing program is not installed")
    ext = os.path.splitext(statement.split('"')[1])[1]
    target = tmp_path / f"out{ext}"
    ok, errors, err, out = write(statement, str(target))
    assert ok, err
    assert target.stat().st_size > 0
    assert err == f"wrote {target}\n" and out == ""
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left behind


@pytest.mark.parametrize("what, statement, runs", WRITERS)
def test_a_missing_directory(tmp_path: Path, what: str, statement: str, runs: bool) -> None:
    if not runs:
        pytest.skip("the drawing program is not installed")
    ext = os.path.splitext(statement.split('"')[1])[1]
    target = f"{tmp_path}/missing/out{ext}"
    ok, errors, err, _ = write(statement, target)
    assert not ok
    assert errors == [f"can't write the {what} to '{target}': the directory '{tmp_path}/missing' does not exist"]
    assert not lines(err) and list(tmp_path.iterdir()) == []


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory nobody may create files in. As root (who may write anywhere) the operating system's refusal
    is simulated where files are created, with the error the system gives."""
    d = tmp_path / "locked"
    d.mkdir()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        real = tempfile.mkstemp

        def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            if os.path.samefile(kwargs.get("dir", "."), d):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            return real(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
    else:
        d.chmod(0o500)
    yield d
    d.chmod(0o700)


@pytest.mark.parametrize("what, statement, runs", WRITERS)
def test_a_permission_error(locked: Path, what: str, statement: str, runs: bool) -> None:
    if not runs:
        pytest.skip("the drawing program is not installed")
    ext = os.path.splitext(statement.split('"')[1])[1]
    target = f"{locked}/out{ext}"
    ok, errors, err, _ = write(statement, target)
    assert not ok
    assert errors == [f"can't write the {what} to '{target}': permission denied"]
    assert not lines(err) and list(locked.iterdir()) == []


@pytest.mark.parametrize("what, statement, runs", WRITERS)
@pytest.mark.parametrize("name", ["out.pdf", "out", "out.svg.txt"])
def test_an_unknown_extension(tmp_path: Path, what: str, statement: str, runs: bool, name: str) -> None:
    target = f"{tmp_path}/{name}"
    ok, errors, err, _ = write(statement, target)
    assert not ok
    assert errors == [f"can't write the {what} to '{target}': the file name must end in {EXTENSIONS[what]}"]
    assert not lines(err) and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("what, statement, runs", WRITERS)
def test_a_directory_as_the_target(tmp_path: Path, what: str, statement: str, runs: bool) -> None:
    ext = os.path.splitext(statement.split('"')[1])[1]
    target = tmp_path / f"out{ext}"
    target.mkdir()
    ok, errors, err, _ = write(statement, str(target))
    assert errors == [f"can't write the {what} to '{target}': it is a directory"]


def test_an_existing_file_is_untouched_when_writing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "y.dot"
    target.write_text("old")
    real = os.replace

    def full(src, dst):  # noqa: ANN001, ANN202
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    ok, errors, err, _ = write('graph y to "FILE.dot"', str(target))
    monkeypatch.setattr(os, "replace", real)
    assert errors == [f"can't write the graph to '{target}': no space left on the device"]
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["y.dot"]


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="the plot extra is not installed")
def test_nothing_written_nothing_confirmed(tmp_path: Path) -> None:
    target = tmp_path / "n.svg"
    r = run(f'plot log(-1 - t) for t in [0, 1] to "{target}"')
    assert r.ok and not target.exists()
    assert r.warnings[-1] == f"nothing to draw: '{target}' was not written"
    assert "wrote" not in r.err


def test_the_command_line_confirms_on_standard_error_only(tmp_path: Path) -> None:
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-m", "gradcalc", "-e", 'x = 3 requires_grad; graph x * 2 to "g.dot"'],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": root}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    assert done.stdout == "" and done.stderr == "wrote g.dot\n"
    assert (tmp_path / "g.dot").read_text().startswith('digraph "graph" {')
