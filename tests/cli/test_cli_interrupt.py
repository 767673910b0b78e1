"""Ctrl-C from the user's side (LANGUAGE.md section 6): the installed `gradcalc` on a script, on `-e` text and
on a program piped in, given SIGINT while a statement runs. Each program prints "go" just before its long
statement; the test sends SIGINT once it reads "go", then waits for what gradcalc says (event-driven, with
generous deadlines: no fixed sleeps). The long statements multiply matrices of ones, whose values
mathematics gives exactly (for X = ones(n, n): X @ X @ X sums to n**4, and its gradient is 3 n**2).
"""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

WAIT = 60.0  # seconds: the longest any wait may take on a loaded machine
N = 1500  # a product of two N x N matrices takes a few tenths of a second here
LONG = 4000  # about a second per product here: long enough for the notice (0.2 s after a press) and a second press
LONGER = 7000  # one product of several seconds, for a second press (its arrays: 400 MB each)


BUSY = 0.05  # CPU seconds a program computes after "go" before Ctrl-C is pressed


def cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used (all its threads: NumPy's BLAS computes in several)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return time.monotonic()  # no /proc: wall time stands in
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Child:
    """A running `gradcalc` whose standard output and error are read as they come."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, stdin: str | None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, cwd=cwd)
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdin.write((stdin or "").encode())
        self.proc.stdin.close()
        self.text = {"out": "", "err": ""}
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ, "out")
        self.selector.register(self.proc.stderr, selectors.EVENT_READ, "err")

    def _read(self, timeout: float) -> None:
        for key, _ in self.selector.select(timeout):
            data = os.read(key.fileobj.fileno(), 65536)  # type: ignore[union-attr]
            if data:
                self.text[key.data] += data.decode("utf-8", "replace")
            else:
                self.selector.unregister(key.fileobj)

    def wait_for(self, stream: str, text: str, count: int = 1) -> None:
        deadline = time.monotonic() + WAIT
        while self.text[stream].count(text) < count:
            if time.monotonic() > deadline or not self.selector.get_map():
                raise AssertionError(f"no {text!r} on std{stream}; out: {self.text['out']!r} err: {self.text['err']!r}")
            self._read(0.05)

    def interrupt(self) -> None:
        """Ctrl-C, once the program has computed for a while after its last output: then it is inside the long
        statement (printing "go" takes microseconds), however slowly this machine runs it."""
        cpu = cpu_seconds(self.proc.pid)
        deadline = time.monotonic() + WAIT
        while cpu_seconds(self.proc.pid) - cpu < BUSY and time.monotonic() < deadline:
            time.sleep(0.005)
        self.proc.send_signal(signal.SIGINT)

    def finish(self) -> int:
        deadline = time.monotonic() + WAIT
        while self.selector.get_map() and time.monotonic() < deadline:
            self._read(0.05)
        return self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.selector.close()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def start(gradcalc_command: list[str], clean_env: dict[str, str], tmp_path: Path) -> Callable[..., Child]:
    children: list[Child] = []

    def run(*args: str, stdin: str | None = None) -> Child:
        child = Child([*gradcalc_command, *args], clean_env, tmp_path, stdin)
        children.append(child)
        return child

    yield run  # type: ignore[misc]
    for child in children:
        child.kill()


LONG_PROGRAM = f"""\
big = ones({LONG}, {LONG})
print "go"
r = (big @ big @ big).sum()
print "after", r
"""


@pytest.mark.parametrize("how", ["script", "pipe", "expr"])
def test_ctrl_c_stops_a_long_array_operation_and_exits_130(start: Callable[..., Child], tmp_path: Path,
                                                          how: str) -> None:
    if how == "script":
        (tmp_path / "long.gc").write_text(LONG_PROGRAM)
        child, name = start("long.gc"), "long.gc"
    elif how == "pipe":
        child, name = start(stdin=LONG_PROGRAM), "<stdin>"
    else:
        child, name = start(*[arg for line in LONG_PROGRAM.splitlines() for arg in ("-e", line)]), "<expr>"
    child.wait_for("out", "go")
    child.interrupt()
    # at once, a line says why it does not stop yet (one product of big matrices runs)
    child.wait_for("err", "interrupting: an array operation is running and cannot stop midway")
    assert child.finish() == 130
    err = child.text["err"]
    assert f"{name}:3:1: error: interrupted\nr = (big @ big @ big).sum()\n^\n" in err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert "after" not in child.text["out"]


def test_a_second_ctrl_c_says_where_it_stands_and_kills_nothing(start: Callable[..., Child],
                                                                tmp_path: Path) -> None:
    # one product long enough on any machine for the second press to come while it still runs: 2 * 7000**3
    # multiply-adds, several seconds even for a fast BLAS on all cores (the first notice comes 0.2 s after)
    (tmp_path / "long.gc").write_text(LONG_PROGRAM.replace(str(LONG), str(LONGER)))
    child = start("long.gc")
    child.wait_for("out", "go")
    child.interrupt()
    child.wait_for("err", "interrupting: ")
    child.interrupt()
    child.wait_for("err", "interrupting: ", count=2)
    second = child.text["err"].splitlines()[1]
    assert second.startswith("interrupting: still waiting") and "line 3 (`r = (big @ big @ big).sum()`)" in second
    assert child.finish() == 130  # not killed by the signal: gradcalc stopped the program and said so
    assert child.text["err"].count("long.gc:3:1: error: interrupted") == 1


def test_an_interrupted_loop_keeps_its_earlier_iterations(start: Callable[..., Child], tmp_path: Path) -> None:
    (tmp_path / "loop.gc").write_text('n = 0\nwhile true:\n    n += 1\n    if n == 3: print "go"\n')
    # -i: after the script, the REPL reads standard input, in the workspace the interrupted script left
    child = start("-i", "--format", "plain", "loop.gc", stdin="n >= 3\n")
    child.wait_for("out", "go")
    child.interrupt()
    assert child.finish() == 0  # the REPL ran to the end of its input
    # where it stopped: the loop's test (line 2) or a statement of its body
    assert re.search(r"^loop\.gc:(2:1|3:5|4:5): error: interrupted$", child.text["err"], re.MULTILINE)
    assert child.text["out"].splitlines()[-1] == "true"


def test_an_interrupted_backward_changes_no_grad(start: Callable[..., Child], tmp_path: Path) -> None:
    (tmp_path / "back.gc").write_text(
        f'big = ones({N}, {N}) requires_grad\ny = (big @ big @ big).sum()\nprint "go"\nbackward y\n'
    )
    # after the interrupt: no .grad yet, and the graph is whole (the same backward runs, and is right)
    child = start("-i", "--format", "plain", "back.gc", stdin="big.grad\nbackward y\nbig.grad[0, 5]\n")
    child.wait_for("out", "go")
    child.interrupt()
    assert child.finish() == 0
    assert "back.gc:4:1: error: interrupted" in child.text["err"]
    assert "freed" not in child.text["err"]
    assert child.text["out"].splitlines()[-2:] == ["none", str(3 * N**2)]


def test_statements_before_the_interrupted_one_stay_done(start: Callable[..., Child], tmp_path: Path) -> None:
    (tmp_path / "two.gc").write_text(f'big = ones({N}, {N})\na = 1\nprint "go"\nb = (big @ big @ big @ big).sum()\n')
    child = start("-i", "--format", "plain", "two.gc", stdin="a\nexplain\n")
    child.wait_for("out", "go")
    child.interrupt()
    assert child.finish() == 0
    out = child.text["out"]
    assert out.splitlines()[1] == "1"  # after "go": a, bound before
    assert "error at two.gc:4:1: interrupted" in out  # explain names the statement Ctrl-C stopped
    assert "line 4 of two.gc (`b = (big @ big @ big @ big).sum()`)" in out
