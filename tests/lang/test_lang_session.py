"""The Session interface the CLI and REPL code against: run, commands, interrupts, atomic statements, limits,
completion, status, and the language's reach."""

from __future__ import annotations

import _thread
import io
import threading
from pathlib import Path

import pytest
from gclang_testing import out, run

from gradcalc.lang import BUILTINS, KEYWORDS, Session


def test_defaults_are_the_streams_at_call_time(capsys: pytest.CaptureFixture[str]) -> None:
    s = Session()
    assert s.run("1 + 1\nnope\n") is False
    captured = capsys.readouterr()
    assert captured.out == "tensor(2.)\n" and "<stdin>:2:1: error: name 'nope' is not defined" in captured.err


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError):
        Session(format="xml")


def test_run_returns_true_when_nothing_failed_and_keeps_the_workspace() -> None:
    s = Session()
    assert run("x = 3 requires_grad", session=s).ok
    assert run("y = x * 2", session=s).ok
    assert set(s.workspace) == {"x", "y"}
    assert run("y", session=s).out == "tensor(6., grad_fn=<MulBackward0>)\n"


# -- commands -----------------------------------------------------------------------------------------


def test_help_pages() -> None:
    text = out(":help")
    assert ":vars" in text and "leaves" in text
    for topic in [
        "leaves",
        "retain_grad",
        "retain_graph",
        "create_graph",
        "no_grad",
        "inference_mode",
        "in-place",
        "function",
        "grad",
        "graph",
        "backward",
        "def",
        "detect_anomaly",
    ]:
        page = out(f":help {topic}")
        assert len(page.splitlines()) >= 2, topic
    assert out(":help sin").startswith("sin(x)")
    assert out(":help nothing-like-it").startswith("no help on 'nothing-like-it'")


def test_vars_table() -> None:
    text = out("x = 3 requires_grad\nb = x * x\nretain_grad b\nbackward b\nc = [1, 2]\nn = len(c)\n2\n:vars")
    lines = text.splitlines()
    assert lines[1].split() == ["name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "grad"]
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert rows["b"] == ["b", "()", "float64", "True", "False", "MulBackward0", "tensor(1.)"]
    assert rows["x"] == ["x", "()", "float64", "True", "True", "None", "tensor(6.)"]
    assert rows["c"][:3] == ["c", "(2,)", "float64"]
    assert rows["n"] == ["n", "a", "number:", "2"]
    assert "_" not in rows and "ans" not in rows
    assert out(":vars") == "(the workspace is empty)\n"


def test_reset_forgets_the_workspace() -> None:
    s = Session()
    run("x = 1\npi = 0", session=s)
    run(":reset", session=s)
    assert s.workspace == {}
    assert run("pi", session=s).out == "tensor(3.1416)\n"  # the literal of its value again (LANGUAGE.md 1)


def test_load_runs_a_file_into_the_workspace(tmp_path: Path) -> None:
    script = tmp_path / "lib.gc"
    script.write_text("def sq(v):\n    return v * v\nk = 4\nk\n")
    s = Session()
    r = run(f":load {script}\nsq(k)\n", session=s)
    assert r.ok and r.out == "tensor(4.)\ntensor(16.)\n"
    assert "sq" in s.workspace


def test_load_reports_errors_in_the_loaded_file(tmp_path: Path) -> None:
    script = tmp_path / "bad.gc"
    script.write_text("a = 1\nb = a + nope\n")
    r = run(f":load {script}\n", filename="main.gc")
    assert r.err.startswith(f"{script}:2:9: error: name 'nope' is not defined\nb = a + nope\n")
    script.write_text("a = (\n")
    r = run(f":load {script}\n")
    assert r.err.startswith(f"{script}:1:")
    r = run(f":load {tmp_path}/missing.gc\n")
    assert r.errors[0] == f"can't load the script from '{tmp_path}/missing.gc': no such file or directory"


def test_quit_stops_the_program_and_sets_quit_requested() -> None:
    s = Session()
    r = run("1\n:quit\n2\n", session=s)
    assert r.ok and r.out == "tensor(1.)\n" and s.quit_requested


def test_commands_run_inside_blocks_too() -> None:
    assert out("x = 1\nif true:\n    :reset\n:vars\n") == "(the workspace is empty)\n"


# -- interrupts ---------------------------------------------------------------------------------------


def test_interrupt_stops_a_loop_at_a_statement_boundary_and_keeps_the_workspace() -> None:
    err = io.StringIO()
    s = Session(out=io.StringIO(), err=err)
    threading.Timer(0.3, s.interrupt).start()
    ok = s.run("n = 0\nwhile true:\n    n += 1\n", "loop.gc")
    assert not ok
    assert "loop.gc:3:5: error: interrupted" in err.getvalue()
    assert s.workspace["n"].item() > 0
    assert s.run("n = 0\nn", "next.gc")  # the next run is not interrupted


def test_keyboard_interrupt_inside_a_statement_keeps_the_workspace() -> None:
    err = io.StringIO()
    s = Session(out=io.StringIO(), err=err)
    s.run("x = 1")
    threading.Timer(0.3, _thread.interrupt_main).start()
    ok = s.run("with no_grad:\n    while true:\n        y = x + 1\n")
    assert not ok and "error: interrupted" in err.getvalue()
    assert s.workspace["x"].item() == 1.0
    assert s.status()[0] == "grad"


def test_interrupt_between_runs_does_not_stop_the_next_one() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    s.interrupt()
    assert s.run("1")


# -- atomic statements ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "statement",
    [
        "a, b = 1, nope",
        "x = nope",
        "x = 1 + nope",
        "del x, nope",
        "zero_grad x, none",
        "retain_grad x, 3",
        "x = (x * 2) requires_grad",
        "x += nope",
        "x[0] = nope",
        "x, y = 1, 2, 3",
        "print x, nope",
        "x = (x, nope)",
        "x.grad = nope",
        "x = sin(x) @ x",
    ],
)
def test_a_failing_statement_changes_nothing(statement: str) -> None:
    s = Session()
    run("x = 3 requires_grad\nbackward x * 2\ny = 5", session=s)
    before = dict(s.workspace)
    values = {k: (repr(v), repr(getattr(v, "grad", None))) for k, v in before.items()}
    r = run(statement, session=s)
    assert not r.ok
    assert s.workspace == before
    assert {k: (repr(v), repr(getattr(v, "grad", None))) for k, v in s.workspace.items()} == values


# -- limits ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "zeros(1001, 1000)",
        "ones([2000, 600])",
        "rand(10 ** 6 + 1)",
        "eye(1001)",
        "arange(2000000)",
        "linspace(0, 1, 1000001)",
        "full([1001, 1000], 1)",
        "a = ones(1000, 1)\nb = ones(1, 1001)\na + b",
        "a = ones(1001, 1)\nouter(a.flatten(), a.flatten())",
        "a = ones(1001, 1)\na @ a.T",
        "a = ones(1000)\na.expand(1001, 1000)",
    ],
)
def test_tensor_size_limit(source: str) -> None:
    r = run(source, max_elements=10**6) if False else _run_limited(source, 10**6)
    assert not r[0] and "more than the limit of 1000000" in r[1] and "--max-elements" in r[1]


def _run_limited(source: str, limit: int) -> tuple[bool, str]:
    err = io.StringIO()
    s = Session(out=io.StringIO(), err=err, max_elements=limit)
    return s.run(source), err.getvalue()


def test_the_limit_allows_what_fits() -> None:
    ok, err = _run_limited("zeros(1000, 1000).sum()", 10**6)
    assert ok, err


def test_a_huge_repeat_of_a_string_is_refused() -> None:
    assert not run("'ab' * 1000000000").ok


def test_deeply_nested_expressions_fail_cleanly_or_run() -> None:
    r = run("(" * 10000 + "1" + ")" * 10000)
    assert r.ok and r.out == "tensor(1.)\n"
    r = run("+".join(["1"] * 100_000))
    assert r.ok and r.out == "tensor(100000.)\n"
    r = run("x = " + "sin(" * 5000 + "1" + ")" * 5000)
    assert not r.ok and "nested more than" in r.err
    r = run("x = " + "-(" * 3000 + "1" + ")" * 3000)  # a literal, folded while lowering
    assert r.ok
    r = run("x = 1\ny = " + "-(" * 3000 + "x" + ")" * 3000)
    assert not r.ok and "nested more than" in r.err


# -- completion and status ---------------------------------------------------------------------------------


def test_completions_and_attribute_completions() -> None:
    s = Session()
    run("weight = [1, 2] requires_grad\ny = weight * 2\ndef f(v): v", session=s)
    names = s.completions()
    assert {"weight", "y", "f", "sin", "backward", "retain_graph", "pi", "grad"} <= set(names)
    attrs = s.attribute_completions("weight")
    assert {"grad", "requires_grad", "is_leaf", "backward", "sum", "retain_grad", "version"} <= set(attrs)
    assert not any(a.startswith("_") for a in attrs)
    assert "next_functions" in s.attribute_completions("y.grad_fn")
    assert s.attribute_completions("f") == [] and s.attribute_completions("nothing") == []
    assert set(KEYWORDS) <= set(names) and "sin" in BUILTINS


def test_status_counts_tensors_that_require_grad() -> None:
    s = Session()
    assert s.status() == ("grad", 0)
    run("a = 1 requires_grad\nb = a * 2\nc = 3", session=s)
    assert s.status() == ("grad", 2)


# -- what the language reaches -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "open('/etc/passwd')",
        "__import__('os')",
        "exec('1')",
        "eval('1')",
        "getattr(1, 'x')",
        "globals()",
        "sin.resolve",
        "sin.target",
        "x = 1\nx.numpy()",
        "x = 1\nx.data.numpy",
        "def f(): 1\nf.body",
        "def f(): 1\nf.scope",
        "range(3).start",
        "'a'.join",
        "x = 1\nx.grad_fn.apply",
        "import os",
        "x._data",
        "x = 1\nx.__class__",
        "type(1)",
        "compile",
        "print.__self__",
    ],
)
def test_the_language_reaches_only_what_language_md_lists(source: str) -> None:
    r = run(source)
    assert not r.ok and "Traceback" not in r.err
