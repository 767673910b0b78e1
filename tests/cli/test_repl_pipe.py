"""The REPL driven inside the test process: keys typed into prompt_toolkit's pipe input, screen output
discarded (DummyOutput), values and messages read from the Session's streams.

Expected values are PyTorch's (checked with `torch.set_default_dtype(torch.float64)`) or plain mathematics.
In the key strings, "\\r" is Enter, "\\x03" Ctrl-C, "\\x04" Ctrl-D and "\\t" Tab.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Callable

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from typing_keys import later

from gradcalc.lang import BUILTINS, KEYWORDS, Session
from gradcalc.repl.app import toolbar_text
from gradcalc.repl.completer import GradcalcCompleter


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def test_typed_block_runs_after_an_empty_line(drive_repl: Callable) -> None:
    # Auto-indentation supplies the block's indent; the empty line ends the block.
    run = drive_repl(
        "x = 3 requires_grad\r"
        "with no_grad:\r"
        "z = x * 2\r"
        "\r"
        "z\r"
        "z.requires_grad\r"
        "y = x ** 2\r"
        "backward y\r"
        "x.grad\r"
    )
    assert run.status == 0
    assert run.err == ""
    # torch: under no_grad, z = x * 2 is tensor(6.) without grad; d(x**2)/dx at 3 is 6.
    assert lines(run.out) == ["tensor(6.)", "False", "tensor(6.)"]


def test_block_waits_for_the_empty_line(drive_repl: Callable) -> None:
    # Until the empty line, the block is not run: Ctrl-C drops all of it, and `s` stays 0.
    run = drive_repl("s = 0\rfor i in range(4):\rs += i\r\x03s\r")
    assert lines(run.out) == ["tensor(0.)"]


def test_nested_blocks_and_dedent_after_return(drive_repl: Callable) -> None:
    # Indentation is automatic: one level deeper after `:`, one shallower after `return`.
    run = drive_repl("def f(a):\rif a > 0:\rreturn a * 2\rreturn -a\r\rf(3)\rf(-5)\r")
    assert run.err == ""
    assert lines(run.out) == ["tensor(6.)", "tensor(5.)"]


def test_multiline_brackets_continue_until_closed(drive_repl: Callable) -> None:
    run = drive_repl("m = [[1, 2],\r[3, 4]]\rm.sum()\r")
    assert run.err == ""
    assert lines(run.out) == ["tensor(10.)"]


def test_ctrl_c_clears_the_line_and_keeps_the_workspace(drive_repl: Callable) -> None:
    run = drive_repl("a = 5\r1 + 1\x03a + 2\r")
    assert run.status == 0
    assert lines(run.out) == ["tensor(7.)"]  # `1 + 1` was never run


def test_ctrl_d_quits_with_status_zero(drive_repl: Callable) -> None:
    run = drive_repl("2 * 21\r\x04this is never read\r")
    assert run.status == 0
    assert lines(run.out) == ["tensor(42.)"]


def test_quit_command_stops_the_loop(drive_repl: Callable) -> None:
    run = drive_repl(":quit\r3 + 4\r")
    assert run.status == 0
    assert "tensor(7.)" not in run.out
    assert run.session.quit_requested


def test_errors_keep_the_workspace(drive_repl: Callable) -> None:
    run = drive_repl("q = 4\rq +\rundefined_name\rq * 2\r")
    assert lines(run.out) == ["tensor(8.)"]
    assert run.err.count("error") >= 2
    assert "Traceback" not in run.err


def test_ctrl_c_interrupts_a_running_while_loop(drive_repl: Callable) -> None:
    sent: list[float] = []

    def interrupt_when_running(session: Session, pipe: object) -> None:
        def watch() -> None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                value = session.workspace.get("i")
                if value is not None and float(value) >= 3:  # the loop is running
                    break
                time.sleep(0.01)
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=watch, daemon=True).start()

    run = drive_repl("i = 0\rwhile true:\ri += 1\r\ri > 2\r:vars\r\x04", during=interrupt_when_running)
    assert len(sent) == 1  # one Ctrl-C was enough
    assert run.status == 0
    assert "interrupted" in run.err
    assert "Traceback" not in run.err
    # The workspace survived, and later input ran: i counted past 2 before the interrupt.
    assert "tensor(True)" in run.out
    assert float(run.session.workspace["i"]) >= 3
    assert re.search(r"^\s*i\b", run.out, re.MULTILINE)  # :vars lists i


def test_vars_is_an_aligned_table(drive_repl: Callable) -> None:
    run = drive_repl("w = [[1, 2], [3, 4]] requires_grad\rx = 3 requires_grad\ry = (w * x).sum()\r:vars\r")
    assert run.err == ""
    table = lines(run.out)
    header = next(line for line in table if "shape" in line and "requires_grad" in line)
    rows = {line.split()[0]: line for line in table[table.index(header) + 1:] if line.split()[0] in "wxy"}
    assert set(rows) == {"w", "x", "y"}
    # Aligned: each column's values start where its heading starts.
    for column in ("shape", "dtype", "requires_grad"):
        start = header.index(column)
        for row in rows.values():
            assert row[start - 1] == " " and row[start] != " ", (column, row)
    # Values from PyTorch: w.shape == (2, 2), x.shape == (), y = (w * x).sum() has grad_fn SumBackward0.
    assert "(2, 2)" in rows["w"]
    assert "()" in rows["x"]
    assert "SumBackward0" in rows["y"]
    assert "float64" in rows["w"]


def test_help_pages(drive_repl: Callable) -> None:
    run = drive_repl(":help\r:help retain_graph\r")
    assert run.err == ""
    assert "retain_graph" in run.out
    assert len(run.out.splitlines()) > 5


@pytest.fixture
def session_with_x() -> Session:
    session = Session()
    assert session.run("x = 3 requires_grad\ny = x * 2")
    return session


def complete(session: Session, text: str, requested: bool = True) -> list[str]:
    completer = GradcalcCompleter(session, KEYWORDS, BUILTINS)
    event = CompleteEvent(completion_requested=requested)
    return [c.text for c in completer.get_completions(Document(text, len(text)), event)]


def test_completion_after_a_dot_offers_tensor_attributes_and_methods(session_with_x: Session) -> None:
    import torch

    found = complete(session_with_x, "x.")
    expected = {"grad", "requires_grad", "is_leaf", "grad_fn", "backward", "detach", "retain_grad", "item",
                "shape", "sum", "zero_"}
    assert expected <= set(found)
    # Each offered name is an attribute of a PyTorch tensor (`version` is PyTorch's `_version`), except the
    # elementwise functions LANGUAGE.md makes methods although PyTorch has them only as functions.
    t = torch.ones(2, 2, requires_grad=True)  # 2-d: PyTorch deprecates `.T` on other tensors
    functions_only = {"softplus"}  # torch.nn.functional.softplus
    missing = [name for name in found if not hasattr(t, "_version" if name == "version" else name)]
    assert set(missing) <= functions_only
    narrowed = complete(session_with_x, "y.re")
    assert "requires_grad" in narrowed and "retain_grad" in narrowed
    assert all(name.startswith("re") for name in narrowed)
    # each is labelled as what it is: a method is called, an attribute is read
    completer = GradcalcCompleter(session_with_x, KEYWORDS, BUILTINS)
    meta = {c.text: c.display_meta_text for c in completer.get_completions(Document("x.", 2), CompleteEvent())}
    assert meta["backward"] == meta["detach"] == meta["sum"] == "method"
    assert meta["grad"] == meta["is_leaf"] == meta["shape"] == "attribute"


def test_completion_of_names(session_with_x: Session) -> None:
    assert "x" in complete(session_with_x, "")
    assert set(complete(session_with_x, "back")) >= {"backward"}
    assert "sin" in complete(session_with_x, "si") and "sinh" in complete(session_with_x, "si")
    assert "no_grad" in complete(session_with_x, "with no_")
    assert complete(session_with_x, "3.") == []  # a number, not a name
    assert complete(session_with_x, "# x.") == []  # a comment
    assert complete(session_with_x, ":va") == [":vars"]



def test_tab_completes_in_the_running_repl(drive_repl: Callable) -> None:
    # Tab picks the only candidate; the first Enter accepts it, the second runs the line.
    # generous pauses: completion runs in a background thread, which a loaded CI machine may delay
    run = drive_repl("x = 3 requires_grad\rx.requires_g", during=later("\t", "\r", "\r", "\x04", pause=1.0))
    assert run.err == ""
    assert lines(run.out) == ["True"]


def test_toolbar_shows_grad_mode_and_tensors_requiring_grad(session_with_x: Session) -> None:
    text = "".join(fragment[1] for fragment in toolbar_text(session_with_x))
    assert "grad" in text
    assert "2 tensors require grad" in text  # x, and y = x * 2 (PyTorch: y.requires_grad is True)
    session_with_x.run("del y")
    text = "".join(fragment[1] for fragment in toolbar_text(session_with_x))
    assert "1 tensor requires grad" in text


def test_history_is_saved_and_suggested(drive_repl: Callable, tmp_path) -> None:
    history = tmp_path / "hist"
    drive_repl("v = 21\rv * 2\r", history=history)
    saved = history.read_text(encoding="utf-8")
    assert "+v = 21" in saved and "+v * 2" in saved
    # A new REPL on the same file: Right arrow (Ctrl-F) accepts the suggestion from history.
    run = drive_repl("v = 1\rv *", during=later("\x06", "\r", "\x04", pause=0.4), history=history)
    assert lines(run.out) == ["tensor(2.)"]
