"""Completion, inspection and is_complete through a real client: the REPL completer's candidates (workspace
names as soon as they exist, attributes after a dot, commands), `:help NAME`'s page on Shift-Tab, and the
REPL's rule for when input is complete."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from kernel_client import RunningKernel, torch_default_float64, torch_repr
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from gradcalc.lang import BUILTINS, KEYWORDS, Session
from gradcalc.repl.completer import GradcalcCompleter

SETUP = "x = 3 requires_grad\nxylophone = [1, 2]\nlin = Linear(2, 3)\ny = x * x\n"


def repl_candidates(line: str) -> list[str]:
    """What the REPL's completer offers at the end of `line` after SETUP ran."""
    session = Session(out=io.StringIO(), err=io.StringIO())
    assert session.run(SETUP)
    completer = GradcalcCompleter(session, KEYWORDS, BUILTINS)
    found = completer.get_completions(Document(line, len(line)), CompleteEvent(completion_requested=True))
    return [c.text for c in found]


@pytest.fixture
def ready(kernel: RunningKernel) -> RunningKernel:
    assert kernel.run(SETUP).status == "ok"
    return kernel


@pytest.mark.parametrize("line", ["xy", "x.gr", "x.grad_fn.", "lin.", "lin.we", "si", "y.", "ret", "zero_grad x", ":va",
                                  "print x.re"])
def test_completion_offers_the_repl_completers_candidates(ready: RunningKernel, line: str) -> None:
    reply = ready.request("complete", line, len(line))
    assert reply["status"] == "ok"
    assert reply["matches"] == repl_candidates(line)
    assert reply["cursor_end"] == len(line)
    types = reply["metadata"]["_jupyter_types_experimental"]
    assert [t["text"] for t in types] == reply["matches"]


def test_completion_knows_tensors_and_modules_as_pytorch_does(ready: RunningKernel) -> None:
    import torch

    reply = ready.request("complete", "x.gr", 4)
    assert {"grad", "grad_fn"} <= set(reply["matches"]) and reply["cursor_start"] == 2
    assert all(hasattr(torch.Tensor, name) for name in reply["matches"])
    reply = ready.request("complete", "lin.", 4)
    assert {"weight", "bias"} <= set(reply["matches"])
    assert {"weight", "bias"} <= {name for name, _ in torch.nn.Linear(2, 3).named_parameters()}


def test_completion_on_a_later_line_of_a_cell(ready: RunningKernel) -> None:
    code = "a = 1\nb = xyl\nc = 2"
    reply = ready.request("complete", code, code.index("xyl") + 3)
    assert reply["matches"] == ["xylophone"]
    assert (reply["cursor_start"], reply["cursor_end"]) == (code.index("xyl"), code.index("xyl") + 3)
    code = "x = 1\n:va"
    assert ready.request("complete", code, len(code))["matches"] == [":vars"]


def test_load_completes_file_names_in_the_kernels_directory(ready: RunningKernel) -> None:
    (Path(ready.cwd) / "script_one.gc").write_text("1\n")
    reply = ready.request("complete", ":load scr", 9)
    start, end = reply["cursor_start"], reply["cursor_end"]
    assert [":load scr"[:start] + match + ":load scr"[end:] for match in reply["matches"]] == [":load script_one.gc"]


def test_new_names_are_offered_as_soon_as_they_exist(kernel: RunningKernel) -> None:
    assert "zebra_loss" not in kernel.request("complete", "zeb", 3)["matches"]
    kernel.run("zebra_loss = 1")
    assert kernel.request("complete", "zeb", 3)["matches"] == ["zebra_loss"]


def help_page(kernel: RunningKernel, topic: str) -> str:
    cell = kernel.run(f":help {topic}")
    assert cell.status == "ok"
    return cell.stdout.rstrip("\n")


@pytest.mark.parametrize(
    "code, cursor, topic",
    [
        ("sin(x", 5, "sin"),  # inside a call: the function called, as IPython does
        ("y = sin(x) + 1", 6, "sin"),
        ("x.backward", 10, "backward"),
        ("x.backward(retain_graph=true)", 16, "backward"),
        ("mean", 2, "mean"),
        ("zero_grad x", 4, "zero_grad"),
        ("Linear(1, 2)", 9, "Linear"),
        ("retain_grad", 11, "retain_grad"),
    ],
)
def test_inspection_is_the_help_page(ready: RunningKernel, code: str, cursor: int, topic: str) -> None:
    reply = ready.request("inspect", code, cursor)
    assert reply["status"] == "ok" and reply["found"] is True
    assert reply["data"]["text/plain"] == help_page(ready, topic)


def test_inspection_of_a_dotted_namespace_name(ready: RunningKernel) -> None:
    reply = ready.request("inspect", "torch.sin(x)", 8)
    assert reply["found"] is True
    assert reply["data"]["text/plain"] in (help_page(ready, "torch.sin"), help_page(ready, "sin"))


def test_inspection_of_a_workspace_value(ready: RunningKernel) -> None:
    reply = ready.request("inspect", "xylophone", 3)
    with torch_default_float64() as torch:
        assert reply["data"]["text/plain"] == f"xylophone = {torch_repr(torch.tensor([1.0, 2.0]))}"


@pytest.mark.parametrize("code, cursor", [("", 0), ("1 + 2", 2), ("nosuchname", 4), ("[1, 2]", 3)])
def test_inspection_of_nothing_finds_nothing(ready: RunningKernel, code: str, cursor: int) -> None:
    reply = ready.request("inspect", code, cursor)
    assert reply["status"] == "ok" and reply["found"] is False and reply["data"] == {}


@pytest.mark.parametrize(
    "code, status, indent",
    [
        ("x = 1", "complete", None),
        (":vars", "complete", None),
        ("for i in range(3):", "incomplete", "    "),
        ("for i in range(3):\n    y = i", "incomplete", "    "),  # a block ends with an empty line
        ("for i in range(3):\n    y = i\n", "complete", None),
        ("for i in range(3):\n    if i > 1:", "incomplete", "        "),
        ("def f(a):\n    return a\n", "complete", None),
        ("x = (1,", "incomplete", ""),
        ("x = [1,\n     2", "incomplete", "     "),
        ("x = )", "invalid", None),
    ],
)
def test_is_complete_follows_the_repl(kernel: RunningKernel, code: str, status: str, indent: str | None) -> None:
    reply = kernel.request("is_complete", code)
    assert reply["status"] == status
    if indent is not None:
        assert reply["indent"] == indent
