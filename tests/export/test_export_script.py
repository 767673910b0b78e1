"""`gradcalc --export torch FILE.gc`: what each statement becomes (LANGUAGE.md §10), and the script run by PyTorch
printing what `gradcalc FILE.gc` prints, from the user's side (the command and what it prints)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from differential import ROOT, run_gradcalc, run_torch

from gradcalc.export import export_program

torch = pytest.importorskip("torch", reason="the oracle extra is not installed: pip install -e '.[oracle]'")


def script(source: str) -> str:
    text = export_program(source, "t.gc", "torch")
    ast.parse(text)  # it is Python
    return text


def body(source: str) -> list[str]:
    """The script's lines after its prelude (imports, the default dtype, the printing helper)."""
    text = script(source)
    end = 0
    for node in ast.parse(text).body:
        prelude = isinstance(node, ast.Import) or (isinstance(node, ast.FunctionDef) and node.name.startswith("_"))
        prelude = prelude or (isinstance(node, ast.Expr) and "set_default_dtype" in ast.unparse(node))
        if not prelude:
            break
        end = node.end_lineno or end
    lines = text.splitlines()[end:]
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines


def test_the_contracts_examples() -> None:
    assert body("x = 3 requires_grad\ny = x * x\nbackward y retain_graph") == [
        "x = torch.tensor(3., requires_grad=True)", "y = x * x", "y.backward(retain_graph=True)"]
    assert body("x = 2 requires_grad\nwith no_grad:\n    x -= 1\n") == [
        "x = torch.tensor(2., requires_grad=True)", "", "with torch.no_grad():", "    x -= 1"]
    assert body("x = [1, 2] requires_grad\nzero_grad x\nseed 3") == [
        "x = torch.tensor([1., 2.], requires_grad=True)", "x.grad = None", "torch.manual_seed(3)"]
    assert body("y = 2 requires_grad\nretain_grad y\ndel y") == [
        "y = torch.tensor(2., requires_grad=True)", "y.retain_grad()", "del y"]


def test_values_print_through_the_helper_and_the_prelude_has_what_is_used() -> None:
    text = script("x = 2\nx\nprint \"x is\", x")
    assert "_show(x)" in text and "_print('x is', x)" in text
    assert "torch.set_default_dtype(torch.float64)" in text
    assert "import torch\n" in text and "import torch.nn as nn" not in text
    text = script("net = Linear(1, 2)\nl = mse_loss(net(ones(1)), zeros(2))")
    assert "import torch.nn as nn" in text and "import torch.nn.functional as F" in text
    assert "net = nn.Linear(1, 2)" in text and "F.mse_loss(net(torch.ones(1)), torch.zeros(2))" in text
    assert "def _show" not in script("x = 1")


def test_literals_are_what_the_language_makes_of_them() -> None:
    # a number is a float64 tensor as a value, a Python number as an operand; both literals: the left a tensor
    assert body("y = 2 ** 3\nz = sin(1)\nn = 3\nw = zeros(n, 2)\nfor i in range(n): i") == [
        "y = torch.tensor(2.) ** 3", "z = torch.sin(torch.tensor(1.))", "n = torch.tensor(3.)",
        "w = torch.zeros(int(n), 2)", "", "for i in range(int(n)):", "    _show(i)"]
    assert body("def f(a, b=2):\n    return a * b\nf(3)") == [
        "def f(a, b=torch.tensor(2.)):", "    return a * b", "", "_show(f(torch.tensor(3.)), call=True)"]


def test_a_custom_function_is_an_autograd_function() -> None:
    text = script((ROOT / "examples" / "custom_relu.gc").read_text())
    assert "class myrelu(torch.autograd.Function):" in text
    assert "    def forward(ctx, input):\n        ctx.save_for_backward(input)" in text
    assert "    def backward(ctx, grad_output):\n        input, = ctx.saved_tensors" in text
    assert "y = myrelu.apply(x)" in text


def test_explain_graph_and_plot() -> None:
    lines = body("x = 2 requires_grad\ny = x ** 3\nexplain backward y retain_graph\nexplain x.grad\n"
                 "explain grad(y, x)\ngraph y\nplot x ** 2 for x in [0, 1]\nexplain")
    assert lines[2:] == [
        "# explain backward y retain_graph: gradcalc narrates this backward pass step by step",
        "y.backward(retain_graph=True)",
        "# explain x.grad: gradcalc says here why this .grad is what it is",
        "_keep(x.grad)",
        "# explain grad(y, x): gradcalc narrates this backward pass step by step",
        "_show(autograd.grad(y, x))",
        "# graph y: gradcalc prints the backward graph as a tree here",
        "# plot x ** 2 for x in [0, 1]: gradcalc plots here",
        "# explain: gradcalc tells the last error in full here",
    ]


def test_names_python_needs_are_renamed_and_unknown_names_stay_errors() -> None:
    assert body("int = 3\nlambda_ = int * 2\nF = 1\nF + int") == [
        "int_ = torch.tensor(3.)", "lambda_ = int_ * 2", "F_ = torch.tensor(1.)", "_show(F_ + int_)"]
    gc, torch_run = run_gradcalc("format"), run_torch(script("format"))
    assert not gc.ok and not torch_run.ok and "NameError" in torch_run.error


def test_reset_and_del_bring_back_the_predefined_names() -> None:
    source = "pi = 3\npi\ndel pi\npi\nsum = 2\n:reset\nsum(ones(2))\n"
    assert run_torch(script(source)).out == run_gradcalc(source).out == "tensor(3.)\ntensor(3.1416)\ntensor(2.)\n"


def test_comments_are_kept(tmp_path: Path) -> None:
    assert body("# the start\nx = 1  # one\n\n# two\nfor i in range(2):\n    # inside\n    x += 1\n") == [
        "# the start", "x = torch.tensor(1.)  # one", "", "# two", "for i in range(2):", "    # inside",
        "    x += 1"]


def test_a_file_loaded_is_written_in_its_place(tmp_path: Path) -> None:
    lib = tmp_path / "lib.gc"
    lib.write_text("def sq(v):\n    return v * v\n")
    source = f":load {lib}\nsq(3)\n"
    assert run_torch(script(source)).out == run_gradcalc(source).out == "tensor(9.)\n"


# -- the command line ------------------------------------------------------------------------------------
def gradcalc(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "gradcalc", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, input=stdin, timeout=600)


@pytest.mark.parametrize("example", ["newton.gc", "gradient_descent.gc", "second_derivative.gc", "custom_relu.gc"])
def test_an_exported_example_run_by_python_prints_what_gradcalc_prints(example: str, tmp_path: Path) -> None:
    path = ROOT / "examples" / example
    exported = gradcalc("--export", "torch", str(path))
    assert exported.returncode == 0 and exported.stderr == ""
    (tmp_path / "example.py").write_text(exported.stdout)
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    ran = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, env=env,
                         timeout=600)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == gradcalc(str(path)).stdout


def test_a_syntax_error_is_reported_as_a_run_reports_it() -> None:
    done = gradcalc("--export", "torch", "-e", "x = (")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("<expr>:1:6: error: ") and "Traceback" not in done.stderr


def test_export_reads_standard_input_and_refuses_the_repl() -> None:
    done = gradcalc("--export", "torch", stdin="x = 1\nx\n")
    assert done.returncode == 0 and "_show(x)" in done.stdout
    assert gradcalc("--export", "torch", "-i", "-e", "1").returncode == 2
    assert gradcalc("--export", "pdf", "-e", "1").returncode == 2
    plain = gradcalc("--export", "torch", "--format", "plain", "-e", "1")
    assert plain.returncode == 2 and plain.stdout == "" and "--format torch" in plain.stderr
