"""Interrupt and restart through a real client: an interrupt stops a running loop with `error: interrupted`
(LANGUAGE.md section 6: statements that finished stay done, the interrupted one changes nothing) and the
kernel runs the next cell; a restart gives a fresh workspace."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kernel_client import CELL, RunningKernel, plain, torch_default_float64, torch_repr

LOOP = 'print "started"\nwhile true:\n'


@pytest.fixture
def own_kernel(jupyter_path: Path, tmp_path: Path) -> Iterator[RunningKernel]:
    """A kernel of this test's own (interrupts and restarts must not disturb another test's)."""
    kernel = RunningKernel(cwd=str(tmp_path))
    try:
        yield kernel
    finally:
        kernel.close()


def run_until_interrupted(kernel: RunningKernel, code: str) -> Any:
    """Run `code`, which prints "started" and then loops, and interrupt it once "started" has arrived."""
    started = threading.Event()

    def watch(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and "started" in msg["content"]["text"]:
            started.set()

    def interrupt() -> None:
        if started.wait(CELL):
            kernel.km.interrupt_kernel()  # SIGINT, as the kernel spec's interrupt_mode says

    thread = threading.Thread(target=interrupt, daemon=True)
    thread.start()
    try:
        return kernel.run(code, hook=watch)
    finally:
        thread.join(CELL)


def numbers(kernel: RunningKernel, *names: str) -> list[float]:
    """The values of 0-d tensors, exactly (`.item()` prints as Python prints a float)."""
    cell = kernel.run("\n".join(f"{name}.item()" for name in names))
    assert cell.status == "ok", cell.messages
    return [float(text) for text in cell.values]


def test_an_interrupt_stops_a_loop_and_keeps_what_finished(own_kernel: RunningKernel) -> None:
    code = "n = 0\ns = 0\n" + LOOP + "    n = n + 1\n    s = s + n\n"
    cell = run_until_interrupted(own_kernel, code)
    assert cell.status == "error", cell.messages
    assert cell.error["ename"] == "error" and cell.error["evalue"] == "interrupted"
    head, source, caret = (plain(line) for line in cell.error["traceback"])
    where = re.fullmatch(r"In\[(\d+)\]:(\d+):(\d+): error: interrupted", head)
    assert where is not None, head
    line = int(where.group(2))
    assert source == code.splitlines()[line - 1] and caret.endswith("^")
    assert line in (4, 5, 6)  # somewhere in the loop

    n, s = numbers(own_kernel, "n", "s")
    assert n >= 1
    # each finished `s = s + n` added n: s is 1 + ... + n, or 1 + ... + (n - 1) when `s = s + n` was stopped
    assert s in (n * (n + 1) / 2, n * (n - 1) / 2)


def test_an_interrupted_backward_loop_leaves_whole_gradients(own_kernel: RunningKernel) -> None:
    code = "x = 3 requires_grad\nk = 0\n" + LOOP + "    backward x * x\n    k = k + 1\n"
    cell = run_until_interrupted(own_kernel, code)
    assert cell.error["evalue"] == "interrupted"
    grad, k = numbers(own_kernel, "x.grad", "k")
    backwards = grad / 6  # each backward of x * x adds d(x^2)/dx = 2x = 6
    assert backwards == int(backwards) and backwards - k in (0, 1)


def test_the_kernel_runs_on_after_an_interrupt(own_kernel: RunningKernel) -> None:
    own_kernel.km.interrupt_kernel()  # while idle: nothing to stop
    run_until_interrupted(own_kernel, "i = 0\n" + LOOP + "    i = i + 1\n")
    cell = own_kernel.run("x = 2 requires_grad\nbackward x ** 3\nx.grad")
    with torch_default_float64() as torch:
        x = torch.tensor(2.0, requires_grad=True)
        (x**3).backward()
        assert cell.status == "ok" and cell.result == torch_repr(x.grad)  # 3x^2 = 12
    assert own_kernel.run("with no_grad:\n    z = x * 2\nz.requires_grad\n(x * 2).requires_grad").values == [
        "False", "True"]  # an interrupt leaves no grad mode behind


def test_a_restart_empties_the_workspace(own_kernel: RunningKernel) -> None:
    assert own_kernel.run("x = 3 requires_grad\npi = 4\nbackward x * x").status == "ok"
    own_kernel.restart()
    cell = own_kernel.run("x")
    assert cell.reply["execution_count"] == 1  # a new kernel counts from 1
    assert cell.error["evalue"] == "name 'x' is not defined"
    assert own_kernel.run("pi").result == "tensor(3.1416)"
    assert own_kernel.run("y = 2 requires_grad\nbackward y * y\ny.grad").result == "tensor(4.)"  # d(y^2)/dy = 2y
