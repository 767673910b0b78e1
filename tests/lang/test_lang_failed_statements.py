"""A failed statement changes nothing (LANGUAGE.md section 5): a `backward` or `grad(...)` that fails frees no
saved value and leaves every `.grad` and version as it was, and no statement leaves grad, inference or
anomaly mode changed, whichever way it fails (while reading its arguments too)."""

from __future__ import annotations

import io

import pytest
import torch
from gclang_testing import DEFAULT_MODES, modes, modes_changed, run, snapshot

from gradcalc.lang import Session

SETUP = """\
x = [1, 2] requires_grad
u = 1 requires_grad
w = [[1, 2], [3, 4]] requires_grad
y = (x * x).sum()
z = x * u
q = (w @ w).sum()
function bad(a):
    forward:
        return a * 1
    backward(g):
        return sin(none)
b = (bad(x) * x).sum()
backward (x * 3).sum()
def f(t):
    with no_grad:
        return t.backward(t, [[1, 2], [3, 4]])
"""

FAILING = [
    "grad(y, u)",  # an unused input
    "grad(y, [x, u])",
    "grad(z, x)",  # a non-scalar output without grad_outputs
    "grad(y, x, grad_outputs=[1, 2, 3])",
    "grad(y, x, retain_graph=[[1, 2], [3, 4]])",  # an argument of the wrong kind
    "grad(y, x, create_graph='yes')",
    "grad(y, none)",
    "backward z",
    "backward z gradient [1, 2, 3]",
    "backward y gradient sin",
    "x.backward(x, [[1, 2], [3, 4]])",
    "y.backward(retain_graph=[1, 2])",
    "y.backward(inputs=[x, 'a'])",
    "z.backward(ones(3))",
    "backward b",  # a custom backward that fails halfway through the walk
    "backward b + q",
    "grad(b, x)",
    "backward (u * u) + y.sum(dim=5)",
    "with no_grad:\n    backward y gradient 'g'",
    "with inference_mode:\n    grad(y, u)",
    "with detect_anomaly:\n    backward z",
    "with enable_grad:\n    with no_grad:\n        sum(none)",
    "for i in range(3):\n    with no_grad:\n        backward z",
    "f(y)",  # inside a function
]


def session() -> Session:
    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run(SETUP, "setup.gc"), s.err.getvalue()  # type: ignore[attr-defined]
    return s


@pytest.mark.parametrize("source", FAILING)
def test_a_failed_statement_changes_nothing(source: str) -> None:
    s = session()
    before = snapshot(s)
    assert not s.run(source, "t.gc")
    assert modes_changed() is None
    after = snapshot(s)
    after.pop("i", None)  # a loop's variable is bound before its body fails, as in Python
    assert after == before
    # and the graph is still whole: what a fresh graph would give, y's gradient comes out
    out = io.StringIO()
    s._out = out
    assert s.run("grad(y, x)", "t.gc")
    assert out.getvalue() == "(tensor([2., 4.]),)\n"


def test_grad_with_an_unused_input_keeps_the_graph_as_pytorch_does() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    u = torch.tensor(1.0, requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(RuntimeError):
        torch.autograd.grad(y, u)
    expected = torch.autograd.grad(y, x)[0].tolist()
    r = run("x = [1, 2] requires_grad\nu = 1 requires_grad\ny = (x * x).sum()\ngrad(y, u)\ngrad(y, x)[0].tolist()",
            keep_going=True)
    assert len(r.errors) == 1 and "allow_unused" in r.errors[0]
    assert r.out == f"{expected}\n"


def test_a_failed_backward_keeps_grad_mode_for_the_rest_of_the_session() -> None:
    r = run("x = [1, 2] requires_grad\nx.backward(x, [[1, 2], [3, 4]])\nz = x * 2\nz.requires_grad\nz.grad_fn",
            keep_going=True)
    assert len(r.errors) == 1
    assert "retain_graph" in r.errors[0] and "true or false" in r.errors[0]
    assert r.out == "True\n<MulBackward0>\n"


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad", "inference_mode", "detect_anomaly"])
@pytest.mark.parametrize("failure", ["sum(none)", "nope", "[1, 2] + [1, 2, 3]", "x.backward(x, [[1], [2]])"])
def test_modes_come_back_after_an_error_inside_with(mode: str, failure: str) -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    assert not s.run(f"x = [1, 2] requires_grad\nwith {mode}:\n    y = x * 2\n    {failure}\n", "t.gc")
    assert modes() == DEFAULT_MODES
    out = io.StringIO()
    s._out = out
    assert s.run("(x * 2).requires_grad", "t.gc")
    assert out.getvalue() == "True\n"


def test_the_session_puts_back_modes_that_a_failure_left_changed() -> None:
    """The last line of defence: whatever an engine bug leaves behind, the next statement runs in the
    modes the program started with."""
    from gradcalc.autograd import grad_mode

    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run("def f():\n    return 1\n", "t.gc")
    original = grad_mode.state.grad_enabled

    def leave_grad_off() -> None:
        grad_mode.state.grad_enabled = False
        from gradcalc.lang.errors import GradcalcError

        raise GradcalcError("broken")

    s._interp.workspace["f"] = leave_grad_off
    assert not s.run("f()", "t.gc")
    assert grad_mode.state.grad_enabled is original is True
