"""Cells through a real Jupyter client: values as outputs in order (the last statement's as the cell's
result), print and commands on stdout, warnings on stderr, errors as the cell's error, the workspace kept
from cell to cell. Values are PyTorch's (the oracle); the kernel's text is what the REPL prints."""

from __future__ import annotations

import io
import math

import pytest
from kernel_client import RunningKernel, plain, torch_default_float64, torch_repr

from gradcalc.lang import Session


def test_values_in_order_the_last_statement_is_the_result(kernel: RunningKernel) -> None:
    cell = kernel.run(
        "x = 3 requires_grad\n"
        "y = x ** 2 + sin(x)\n"
        "y\n"
        'print "x is", x\n'
        "x.is_leaf, y.is_leaf\n"
    )
    with torch_default_float64() as torch:
        x = torch.tensor(3.0, requires_grad=True)
        y = x**2 + torch.sin(x)
        assert cell.status == "ok", cell.reply
        assert cell.kinds == ["display_data", "stream:stdout", "execute_result"]
        assert cell.displays == [{"text/plain": torch_repr(y)}]
        assert cell.stdout == f"x is {torch_repr(x)}\n"
        assert cell.result == torch_repr((x.is_leaf, y.is_leaf))
        assert cell.reply["execution_count"] > 0
    assert cell.stderr == "" and cell.error is None


def test_a_cell_ending_in_anything_but_an_expression_has_no_result(kernel: RunningKernel) -> None:
    cell = kernel.run("a = 2\na * 3\nb = a")
    assert cell.kinds == ["display_data"] and cell.result is None
    assert cell.values == ["tensor(6.)"]
    assert kernel.run("a = 2\nfor i in range(3):\n    a * i\n").kinds == ["display_data"] * 3
    # a call for its effect prints nothing: no result either, the earlier value stays a display
    cell = kernel.run("w = [1, 2] requires_grad\nv = w * 2\nv.sum()\nv.retain_grad()")
    assert cell.kinds == ["display_data"] and cell.result is None


def test_the_workspace_lives_across_cells_with_functions_and_underscore(kernel: RunningKernel) -> None:
    assert kernel.run("def f(t):\n    return t * sin(t)\n\nx = 0.5 requires_grad").kinds == []
    assert kernel.run("backward f(x)").status == "ok"
    cell = kernel.run("x.grad")
    with torch_default_float64() as torch:
        x = torch.tensor(0.5, requires_grad=True)
        (x * torch.sin(x)).backward()
        assert cell.result == torch_repr(x.grad)
        assert float(cell.result[len("tensor("):-1]) == pytest.approx(math.sin(0.5) + 0.5 * math.cos(0.5), abs=1e-4)
    assert kernel.run("_ * 2").result == torch_repr(x.grad * 2)


def test_several_statements_on_a_line_and_blocks(kernel: RunningKernel) -> None:
    cell = kernel.run("a = 3 requires_grad; b = a ** 3; g = grad(b, a, create_graph=true)[0]; g\n"
                      "with no_grad:\n    z = a * 2\nz.requires_grad\ngrad(g, a)[0]")
    with torch_default_float64() as torch:
        a = torch.tensor(3.0, requires_grad=True)
        (g,) = torch.autograd.grad(a**3, a, create_graph=True)
        with torch.no_grad():
            z = a * 2
        (h,) = torch.autograd.grad(g, a)
        assert cell.values == [torch_repr(g), repr(z.requires_grad), torch_repr(h)]
        assert cell.result == torch_repr(h) == "tensor(18.)"  # d^2/da^2 a^3 = 6a


def test_warnings_go_to_stderr_once_per_line_and_the_value_still_shows(kernel: RunningKernel) -> None:
    cell = kernel.run("x = 2 requires_grad\ny = x * x\nfor i in range(3):\n    y.grad\n")
    assert cell.status == "ok"
    assert cell.values == ["None"] * 3
    warnings = [line for line in cell.stderr.splitlines() if ": warning: " in line]
    assert len(warnings) == 1, cell.stderr  # the same warning from the same line: once per cell
    assert warnings[0].startswith(f"In[{cell.reply['execution_count']}]:4:5: warning: ")
    assert "retain_grad" in warnings[0]
    assert "\x1b[" not in cell.stderr
    # the next cell warns again, as the REPL does for each input
    assert ": warning: " in kernel.run("y.grad").stderr


def test_an_error_is_the_cells_error_with_message_and_caret(kernel: RunningKernel) -> None:
    cell = kernel.run("a = 1\na\nb = a + nosuch\nc = 2")
    assert cell.status == "error"
    assert cell.values == ["tensor(1.)"]  # what ran before the error shows; nothing after it runs
    error = cell.error
    assert error is not None and error["ename"] == "error"
    assert error["evalue"] == "name 'nosuch' is not defined"
    for key in ("ename", "evalue", "traceback"):
        assert cell.reply[key] == error[key]
    count = cell.reply["execution_count"]
    assert [plain(line) for line in error["traceback"]] == [
        f"In[{count}]:3:9: error: name 'nosuch' is not defined",
        "b = a + nosuch",
        "        ^",
    ]
    assert "Traceback" not in "\n".join(error["traceback"])
    # the failed statement bound nothing, and the kernel goes on
    assert "'b' is not defined" in kernel.run("b").error["evalue"]
    assert "'c' is not defined" in kernel.run("c").error["evalue"]


def test_a_syntax_error_runs_nothing_of_the_cell(kernel: RunningKernel) -> None:
    cell = kernel.run('print "ran"\nx = (1 +\n')
    assert cell.status == "error" and cell.stdout == ""
    assert plain(cell.error["traceback"][0]).startswith(f"In[{cell.reply['execution_count']}]:")
    assert cell.error["ename"] == "error"


def test_a_failed_backward_changes_nothing(kernel: RunningKernel) -> None:
    cell = kernel.run("x = [1, 2] requires_grad\ny = x * x\nbackward y")
    assert cell.status == "error" and "gradient" in cell.error["evalue"]
    assert kernel.run("x.grad").result == "None"
    cell = kernel.run("backward y gradient [1, 1]\nx.grad")
    with torch_default_float64() as torch:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        (x * x).backward(torch.tensor([1.0, 1.0]))
        assert cell.result == torch_repr(x.grad)


def test_commands_work_in_cells(kernel: RunningKernel) -> None:
    kernel.run("w = [[1, 2], [3, 4]] requires_grad")
    table = kernel.run(":vars")
    assert table.status == "ok" and table.values == []
    header, row = table.stdout.splitlines()
    assert header.split() == ["name", "shape", "dtype", "requires_grad", "is_leaf", "grad_fn", "grad"]
    assert row.split() == ["w", "(2,", "2)", "float64", "True", "True", "None", "None"]
    assert "retain_grad" in kernel.run(":help retain_grad").stdout
    assert kernel.run(":reset\nw").error["evalue"] == "name 'w' is not defined"
    assert kernel.run("pi").result == "tensor(3.1416)"


def test_quit_ends_the_cell_and_asks_a_console_to_exit(kernel: RunningKernel) -> None:
    cell = kernel.run('print "before"\n:quit\nprint "after"')
    assert cell.status == "ok" and cell.stdout == "before\n"
    assert {"source": "ask_exit", "keepkernel": False} in cell.reply["payload"]
    assert kernel.run('print "still here"').stdout == "still here\n"


def test_an_empty_cell_is_fine(kernel: RunningKernel) -> None:
    cell = kernel.run("   \n")
    assert cell.status == "ok" and cell.messages == []


PROGRAMS = [
    "x = 3 requires_grad\ny = x ** 2 + sin(x)\ny\nx.grad_fn\ny.grad_fn\nbackward y\nx.grad",
    "m = [[1., 2.], [3., 4.]] requires_grad\nm @ m\n(m * m).sum(dim=0)\nm.shape\nm.T",
    "a = [1e-5, 1e5]\na\n[true, false]\nlen(a)\nfloat(a[0])\n2 * pi\n-inf",
    "v = linspace(0, 1, 5) requires_grad\nj = jacobian(sin, v)\nj\nv.grad\nexp(v).sum()",
    "x = 2 requires_grad\ng = grad(x ** 3, x, create_graph=true)\ng\ngrad(g[0], x)\nx.version\nx.dtype",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_the_cells_values_are_what_the_repl_prints(kernel: RunningKernel, program: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    ok = Session(out=out, err=err).run(program, "<stdin>", interactive=True)
    cell = kernel.run(program)
    assert (cell.status == "ok") == ok
    assert "".join(value + "\n" for value in cell.values) == out.getvalue()
    assert cell.stdout == ""
    assert cell.stderr == err.getvalue().replace("<stdin>", f"In[{cell.reply['execution_count']}]")
