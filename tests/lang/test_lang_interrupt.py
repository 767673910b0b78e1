"""Ctrl-C as LANGUAGE.md section 6 says, with real SIGINTs delivered to this process while a program runs under
`repl.interrupt.sigint_interrupts` (what the REPL, the command line and a kernel use): the statement it stops
changes nothing (no name bound, no `.grad`, version or saved value changed, no mode left on), what ran before
it stays, and `explain` names it.

Each program prints "go" just before the statement that takes long; a thread waits for it and for the
program to have computed a little since, then sends SIGINT (event-driven: no fixed sleeps). The long
statements multiply matrices of ones, whose results mathematics gives exactly: for X = ones(n, n),
X @ X = n * ones, and the gradient of sum(X @ X @ X) is 3 n**2 everywhere.
"""

from __future__ import annotations

import io
import os
import signal
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

from gradcalc.lang import Session
from gradcalc.repl.interrupt import sigint_interrupts

N = 1500  # a matrix product of this size takes a few tenths of a second here
LONG = 3000  # and of this size, over a second: long enough for a notice (0.2 s) and a second press after it
WAIT = 60.0  # seconds: the longest any wait may take on a loaded machine
BUSY = 0.05  # CPU seconds the program computes after "go" before Ctrl-C is pressed


@pytest.fixture(autouse=True)
def harmless_sigint() -> Iterator[None]:
    """A SIGINT that comes after a program ended must not stop the test run: outside `sigint_interrupts`,
    this test's SIGINT does nothing."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class Program:
    """A Session whose output the test reads while the program runs."""

    def __init__(self) -> None:
        self.out, self.err = io.StringIO(), io.StringIO()
        self.session = Session(out=self.out, err=self.err)

    def run(self, source: str, filename: str = "prog.gc") -> bool:
        with sigint_interrupts(self.session):
            return self.session.run(source, filename)

    def interrupted_run(self, source: str, *, presses: int = 1, filename: str = "prog.gc") -> bool:
        """Run `source`, pressing Ctrl-C once "go" is printed (and again, each time a notice has come)."""
        sent: list[float] = []

        def press() -> None:
            deadline = time.monotonic() + WAIT
            while "go" not in self.out.getvalue() and time.monotonic() < deadline:
                time.sleep(0.005)
            # then computing for a while: the program is inside the long statement, however slow the machine
            cpu = time.process_time()
            while time.process_time() - cpu < BUSY and time.monotonic() < deadline:
                time.sleep(0.005)
            for k in range(presses):
                if k:  # the next press once the last one was answered on standard error
                    while self.err.getvalue().count("interrupting: ") < k and time.monotonic() < deadline:
                        time.sleep(0.005)
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGINT)

        thread = threading.Thread(target=press, daemon=True)
        thread.start()
        ok = self.run(source, filename)
        thread.join(WAIT)
        assert len(sent) == presses
        return ok

    def value(self, name: str) -> np.ndarray:
        return self.session.workspace[name]._data  # type: ignore[attr-defined]

    def explain(self) -> str:
        self.out.seek(0)
        self.out.truncate()
        assert self.session.run("explain")
        return self.out.getvalue()


def test_an_interrupted_assignment_binds_nothing_and_stops_as_soon_as_the_product_returns() -> None:
    p = Program()
    assert p.run(f'big = ones({N}, {N})\nr = 5\ndef late():\n    print "late"\n    return 0\n')
    ok = p.interrupted_run('print "go"\nr = (big @ big @ big).sum() + late() + (big @ big).sum()\nafter = 1\n')
    assert not ok and p.session.interrupted
    assert "prog.gc:2:1: error: interrupted\n" in p.err.getvalue()
    assert p.value("r") == 5.0  # the old value: the assignment bound nothing
    assert "late" not in p.out.getvalue()  # nothing of the expression ran after the product Ctrl-C came in
    assert "after" not in p.session.workspace  # and the program stopped there
    text = p.explain()
    assert "error at prog.gc:2:1: interrupted" in text
    assert "line 2 of prog.gc (`r = (big @ big @ big).sum() + late() + (big @ big).sum()`)" in text
    assert "changed nothing" in text


def test_a_long_array_operation_is_announced_at_once_and_a_second_press_says_where_it_stands() -> None:
    p = Program()
    ok = p.interrupted_run(f'big = ones({LONG}, {LONG})\nprint "go"\nr = (big @ big @ big).sum()\n', presses=2)
    assert not ok
    notices = [line for line in p.err.getvalue().splitlines() if line.startswith("interrupting: ")]
    assert len(notices) == 2
    assert "array operation is running" in notices[0] and "line 3" in notices[0]
    assert "still waiting" in notices[1] and "line 3" in notices[1]
    assert p.err.getvalue().count("error: interrupted") == 1  # the second press did not stop anything else
    assert "r" not in p.session.workspace
    assert p.run("1 + 1")  # the session goes on


def test_an_interrupted_loop_keeps_the_iterations_before() -> None:
    p = Program()
    source = (
        f"big = ones({N}, {N})\n"
        "n = 0\n"
        "total = zeros(1)\n"
        "while true:\n"
        "    n += 1\n"
        "    total += (big @ big)[0, 0]\n"
        '    if n == 3: print "go"\n'
    )
    assert not p.interrupted_run(source)
    n = float(p.value("n")[()])
    assert n >= 3
    # Every iteration that ran added N; the one that was stopped added nothing (n may be one ahead of it).
    total = float(p.value("total")[0])
    assert total in (N * n, N * (n - 1)), (total, n)
    assert "error: interrupted" in p.err.getvalue()


def test_an_interrupted_backward_changes_no_grad_and_frees_nothing() -> None:
    p = Program()
    assert p.run(f"big = ones({N}, {N}) requires_grad\nsmall = 2 requires_grad\nbackward small * 3\n"
                 "y = (big @ big @ big).sum() * small")
    node = p.session.workspace["y"].grad_fn  # type: ignore[attr-defined]
    saved = [n._saved for n in _nodes(node)]
    assert not p.interrupted_run('print "go"\nbackward y\n')
    assert "prog.gc:2:1: error: interrupted" in p.err.getvalue()
    assert p.session.workspace["big"].grad is None  # type: ignore[attr-defined]
    assert p.session.workspace["small"].grad.item() == 3.0  # type: ignore[attr-defined]
    assert [n._saved for n in _nodes(node)] == saved  # nothing freed
    # The graph is whole: the same backward now runs, and gives what mathematics says.
    assert p.run("backward y")
    grad = p.session.workspace["big"].grad._data  # type: ignore[attr-defined]
    assert np.all(grad == 2 * 3 * N**2)
    assert p.session.workspace["small"].grad.item() == 3.0 + N**4  # type: ignore[attr-defined]


def test_an_interrupted_backward_with_a_hook_is_undone() -> None:
    p = Program()
    assert p.run(f"big = ones({N}, {N}) requires_grad\ncalls = 0\n"
                 "def count(g):\n    print \"hook\"\n\n"
                 "h = big.register_hook(count)\ny = (big @ big @ big).sum()")
    assert not p.interrupted_run('print "go"\nbackward y\n')
    assert p.session.workspace["big"].grad is None  # type: ignore[attr-defined]
    assert "hook" not in p.out.getvalue()  # stopped before the leaf: its hook never ran
    assert p.run("backward y")
    assert np.all(p.session.workspace["big"].grad._data == 3 * N**2)  # type: ignore[attr-defined]


def test_an_interrupted_in_place_change_changes_nothing_and_modes_come_back() -> None:
    p = Program()
    assert p.run(f"big = ones({N}, {N})\nx = zeros({N}, {N})\nw = 1 requires_grad")
    source = 'with no_grad:\n    print "go"\n    x += big @ big @ big @ big\n'
    assert not p.interrupted_run(source)
    assert "prog.gc:3:5: error: interrupted" in p.err.getvalue()
    assert np.all(p.value("x") == 0)
    assert p.session.workspace["x"]._version == 0  # type: ignore[attr-defined]
    assert p.session.status()[0] == "grad"  # no_grad did not outlive its block


def test_a_statement_that_has_begun_changing_runs_to_its_end_then_the_program_stops() -> None:
    p = Program()
    assert p.run(f"big = ones({LONG}, {LONG})\ns = zeros(1)")
    # s.add_ changes s first; the product after it belongs to the same statement, which then runs to its end
    source = 'print "go"\ny = (s.add_(1) * big) @ big\nz = 1\n'
    assert not p.interrupted_run(source)
    err = p.err.getvalue()
    assert "has begun changing the workspace" in err
    assert "prog.gc:3:1: error: interrupted" in err  # the next statement is where it stopped
    assert np.all(p.value("y") == LONG)  # y bound: the statement finished
    assert p.value("s")[0] == 1.0
    assert "z" not in p.session.workspace
    assert "before line 3 of prog.gc (`z = 1`) began" in p.explain()


def _nodes(root: object) -> list:
    seen, stack, out = set(), [root], []
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(node._next)  # type: ignore[attr-defined]
    return out
