"""`explain` (LANGUAGE.md §7): origins, the narration of the seeds' examples, each reason `explain T.grad`
gives, each error's long form (names, lines, the fix), JSON, the REPL's hint, and that `explain` changes the
workspace exactly as the statement without it. Values come from PyTorch or from the mathematics."""

from __future__ import annotations

import io
import json

import pytest
import torch

from gradcalc.lang import Session
from tests.lang.gclang_testing import run

torch.set_default_dtype(torch.float64)


def session_run(source: str, **options: object) -> tuple[Session, str, str]:
    out, err = io.StringIO(), io.StringIO()
    s = Session(out=out, err=err, **{k: v for k, v in options.items() if k in ("format", "color")})
    s.run(source, "t.gc", keep_going=True)
    return s, out.getvalue(), err.getvalue()


def explained(source: str) -> str:
    """What the last statement (an explain) printed, after the program's errors (run with --keep-going)."""
    _, out, _ = session_run(source)
    return out


def trepr(t: torch.Tensor) -> str:
    return repr(t).replace("dtype=torch.", "dtype=")


# -- origins ---------------------------------------------------------------------------------------------
def test_every_node_remembers_the_statement_that_made_it() -> None:
    s, _, err = session_run(
        "a = 3 requires_grad; b = 2 requires_grad\n"
        "y = a * b\n"
        "def f(t):\n"
        "    return sin(t)\n"
        "z = f(y) + (y *\n"
        "            2)\n"
    )
    assert not err
    ws = s.workspace
    assert str(ws["y"].grad_fn.origin) == "line 2: y = a * b"
    z = ws["z"].grad_fn
    assert str(z.origin) == "line 5: z = f(y) + (y * 2)"
    sin_node, mul_node = (n for n, _ in z.next_functions)
    assert str(sin_node.origin) == "line 4: return sin(t)"  # made inside the function's body
    assert str(mul_node.origin) == "line 5: z = f(y) + (y * 2)"  # the call returned: its statement again
    assert z.origin.line == 5


def test_a_one_line_repl_input_is_its_own_text() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    s.run("a = 3 requires_grad; y = a * a", "<stdin>", interactive=True)
    assert str(s.workspace["y"].grad_fn.origin) == "y = a * a"


def test_nothing_stays_stamped_after_a_run() -> None:
    from gradcalc.autograd.node import STAMP

    session_run("a = 3 requires_grad\nb = a * a\nnope\n")
    assert STAMP.origin is None
    import gradcalc

    x = gradcalc.tensor(1.0, requires_grad=True)
    assert (x * 2).grad_fn.origin is None  # plain Python: no origin


# -- the narration ----------------------------------------------------------------------------------------
def test_narration_of_the_retain_grad_example() -> None:
    # seed 001: b = a * a; b.retain_grad(); b.backward()
    out = explained("a = 3 requires_grad\nb = a * a\nretain_grad b\nexplain backward b\n")
    a = torch.tensor(3.0, requires_grad=True)
    b = a * a
    b.retain_grad()
    b.backward()
    lines = out.splitlines()
    assert lines[0] == "backward b: b's gradient starts as tensor(1.)"
    assert lines[1].split() == ["1.", "b", "MulBackward0", "(line", "2:", "b", "=", "a", "*", "a)"]
    assert "b.grad    None -> " + trepr(b.grad) + "   (retain_grad)" in out
    assert f"├─ to a: {trepr(a.grad / 2)}" in out and f"└─ to a: {trepr(a.grad / 2)}" in out
    assert lines.index(next(line for line in lines if "AccumulateGrad" in line)) > 1
    assert f"a.grad    None -> {trepr(a.grad)}" in out
    assert "(the sum of 2 gradients)" in out  # a was used twice
    assert "freed     other, self" in out  # PyTorch's names of what MulBackward0 saved
    assert "a second backward through this graph is an error" in out


def test_narration_of_retain_graph_accumulates() -> None:
    out = explained(
        "a = 3 requires_grad\nb = a * a\nexplain backward b retain_graph\nexplain backward b retain_graph\n"
    )
    assert "a.grad    None -> tensor(6.)" in out and "a.grad    tensor(6.) -> tensor(12.)" in out
    assert "freed" not in out and "the saved values were kept" in out


def test_narration_under_create_graph_shows_graph_gradients() -> None:
    # the German tutorial: a.grad requires grad after backward(create_graph=True), b.grad does not
    out = explained("a = 5 requires_grad\nb = a * a\nretain_grad b\nexplain backward b create_graph\n")
    a = torch.tensor(5.0, requires_grad=True)
    b = a * a
    b.retain_grad()
    b.backward(create_graph=True)
    assert f"a.grad    None -> {trepr(a.grad)}" in out  # tensor(10., grad_fn=<CopyBackwards>)
    assert f"b.grad    None -> {trepr(b.grad)}" in out
    assert "create_graph: the gradients are graph members" in out


def test_a_branch_that_does_not_require_grad_is_skipped_by_name() -> None:
    out = explained("a = 5 requires_grad\nb = 5 requires_grad\nc = 5\nd = sin(a * b * c)\nexplain backward d\n")
    assert "└─ c: skipped (does not require grad)" in out


def test_unnamed_intermediates_are_named_by_node_and_line() -> None:
    out = explained("x = 2 requires_grad\ny = x ** 2\nz = sin(y) * 3\nexplain backward z\n")
    assert "to SinBackward0 (line 3)" in out
    x = torch.tensor(2.0, requires_grad=True)
    (torch.sin(x**2) * 3).backward()
    assert f"x.grad    None -> {trepr(x.grad)}" in out


def test_explain_grad_narrates_then_prints_the_value() -> None:
    s, out, err = session_run("a = 3 requires_grad\nb = a * a * a\nexplain grad(b, a, create_graph=true)\n_\n")
    a = torch.tensor(3.0, requires_grad=True)
    (g,) = torch.autograd.grad(a * a * a, a, create_graph=True)
    assert out.startswith("grad(b, ...): b's gradient starts as tensor(1.)")
    assert f"({trepr(g)},)\n({trepr(g)},)\n" in out  # the value as grad(...) prints it, and `_` is it
    assert "a.grad" not in out and s.workspace["a"].grad is None  # grad() fills no leaf's .grad
    assert "grad() returns the gradients" in out and not err


def test_explain_the_method_form() -> None:
    out = explained("x = [1, 2] requires_grad\ny = (x * x).sum()\nexplain y.backward(retain_graph=true)\n")
    assert out.startswith("backward y: ") and "x.grad    None -> tensor([2., 4.])" in out
    assert "the saved values were kept" in out


def test_long_tensors_are_abbreviated_as_pytorch_does() -> None:
    out = explained("x = linspace(0, 1, 2000) requires_grad\ny = (x * 2).sum()\nexplain backward y\n")
    assert "..." in out and len(out.splitlines()) < 40


def test_json_steps() -> None:
    s, out, err = session_run("a = 3 requires_grad\nb = a * a\nretain_grad b\nexplain backward b\n", format="json")
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["event"] for e in events] == ["node", "grad", "node", "grad"]
    mul, b_grad, acc, a_grad = events
    assert mul["node"] == "MulBackward0" and mul["line"] == 2 and mul["names"] == ["b"]
    assert [g["value"] for g in mul["grad_outputs"]] == [1.0]
    assert [g["value"] for g in mul["grad_inputs"]] == [3.0, 3.0] and mul["to"] == ["a", "a"]
    assert b_grad == {"event": "grad", "name": "b", "before": None, "after": b_grad["after"]}
    assert b_grad["after"]["value"] == 1.0 and b_grad["after"]["requires_grad"] is False
    assert acc["node"] == "AccumulateGrad" and acc["line"] is None and acc["grad_inputs"] == []
    assert a_grad["name"] == "a" and a_grad["before"] is None and a_grad["after"]["value"] == 6.0


def test_plain_format_and_colour() -> None:
    _, out, _ = session_run("a = 3 requires_grad\nb = a * a\nexplain backward b\n", format="plain")
    assert "a.grad    none -> 6" in out
    _, coloured, _ = session_run("a = 3 requires_grad\nb = a * a\nexplain backward b\n", color=True)
    assert "\x1b[" in coloured
    assert "\x1b[" not in explained("a = 3 requires_grad\nb = a * a\nexplain backward b\n")


# -- the workspace changes as without explain -------------------------------------------------------------
def _state(s: Session) -> dict:
    out = {}
    for name, v in s.workspace.items():
        if hasattr(v, "grad"):
            g = v._grad
            out[name] = (v.requires_grad, None if g is None else g.tolist(), v.version)
    return out


@pytest.mark.parametrize("stmt", ["backward y gradient [1, 2]", "backward y gradient [1, 2] retain_graph",
                                  "backward y gradient ones_like(y) create_graph", "backward y.sum()",
                                  "y.backward(gradient=ones_like(y))"])
def test_explain_changes_the_workspace_as_the_statement(stmt: str) -> None:
    prog = "x = [1, 2] requires_grad\nw = [3, 4] requires_grad\nh = x * w\nretain_grad h\ny = h * 2\n"
    plain, _, _ = session_run(prog + stmt + "\n")
    told, out, _ = session_run(prog + "explain " + stmt + "\n")
    assert out and _state(plain) == _state(told)
    # freed or kept alike: a second backward behaves the same
    again = "y.backward(gradient=ones_like(y))\n"
    kept = "retain" in stmt or "create" in stmt
    assert run(again, session=plain).ok is kept and run(again, session=told).ok is kept


def test_a_failing_explain_backward_fails_as_backward_then_explain_tells_why() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    run("a = 3 requires_grad\nb = a * a\nbackward b\n", session=s)
    r = run("explain backward b\n", session=s)
    plain = run("backward b\n", session=s)
    assert not r.ok and r.out == "" and r.errors == plain.errors
    assert s.workspace["a"].grad.item() == 6.0  # unchanged by either failure
    told = run("explain\n", session=s)
    assert "line 3 (`backward b`)" in told.out and "freed" in told.out


# -- explain T.grad ------------------------------------------------------------------------------------------
def test_grad_of_a_non_leaf() -> None:
    out = explained("a = 3 requires_grad\nb = a * a\nbackward b\nexplain b.grad\n")
    assert "b.grad is None: b is not a leaf: it was made by MulBackward0 at line 2 (`b = a * a`)" in out
    assert "The backward at line 3 (`backward b`) went through b" in out
    assert "Fix: `retain_grad b` before the backward" in out


def test_grad_of_a_tensor_that_does_not_require_grad() -> None:
    out = explained("c = 5\nd = c * c\nexplain d.grad\n")
    assert "d.grad is None: d does not require grad" in out and "`d = ... requires_grad`" in out


def test_grad_cleared_by_zero_grad() -> None:
    out = explained("x = 2 requires_grad\ny = x * x\nbackward y\nzero_grad x\nexplain x.grad\n")
    assert "x.grad is None: zero_grad set it to None at line 4 (`zero_grad x`)" in out
    assert "Before that, line 3 (`backward y`) had written it." in out


def test_grad_before_any_backward() -> None:
    out = explained("x = 2 requires_grad\ny = x * x\ng = grad(y, x)\nexplain x.grad\n")
    assert "x.grad is None: no backward has run yet in this session." in out
    assert "grad(...) at line 3 (`g = grad(y, x)`) computed the gradient for x" in out


def test_grad_of_a_tensor_the_last_backward_does_not_depend_on() -> None:
    out = explained(
        "x = 2 requires_grad\nw = 3 requires_grad\nz = x * 3\nloss = w * w\nbackward loss\nexplain x.grad\n"
    )
    assert "x.grad is None:" in out and "the last backward (line 5 (`backward loss`))" in out
    assert "computed the gradient of `loss`, which does not depend on x" in out


def test_grad_of_a_leaf_never_used() -> None:
    out = explained("x = 2 requires_grad\nw = 3 requires_grad\nbackward w * w\nexplain x.grad\n")
    assert "x was never used in a computation that recorded a graph" in out


def test_grad_written_by_several_backward_lines() -> None:
    out = explained(
        "a = 3 requires_grad\nb = a * a\n"
        "backward b retain_graph\nbackward b retain_graph\nbackward b\nexplain a.grad\n"
    )
    a = torch.tensor(3.0, requires_grad=True)
    b = a * a
    for _ in range(3):
        b.backward(retain_graph=True)
    assert f"a.grad is {trepr(a.grad)}" in out
    assert ("Line 3 (`backward b retain_graph`), then line 4 (`backward b retain_graph`), then line 5 "
            "(`backward b`) added into it, in this order.") in out
    assert "carries no graph" in out


def test_grad_in_a_loop_is_counted_by_line() -> None:
    out = explained("a = 3 requires_grad\nfor i in range(4):\n    backward a * a\nexplain a.grad\n")
    assert "Line 3 (`backward a * a`) 4 times added into it" in out


def test_grad_made_with_create_graph_carries_a_graph() -> None:
    out = explained("a = 5 requires_grad\nb = a * a\nbackward b create_graph\nexplain a.grad\n")
    assert "It carries a graph (grad_fn=CopyBackwards): it was made with create_graph at line 3" in out


def test_grad_zeroed_in_place() -> None:
    out = explained("a = 3 requires_grad\nb = a * a\nbackward b\na.grad.zero_()\nexplain a.grad\n")
    assert "a.grad is tensor(0.)" in out and "Line 4 (`a.grad.zero_()`) changed it in place (version 1)." in out


def test_explain_grad_leaves_underscore_as_dot_grad_would() -> None:
    s, out, _ = session_run("a = 3 requires_grad\nb = a * a\nbackward b\nexplain a.grad\n")
    assert s.workspace["_"] is s.workspace["a"].grad


# -- bare explain: the long forms -------------------------------------------------------------------------------
def test_no_error_yet() -> None:
    assert "No error yet in this session" in explained("explain\n")


def test_long_form_of_backward_through_freed_values() -> None:
    out = explained("a = 3 requires_grad\nb = a * a\nretain_grad b\nbackward b\nbackward b\nexplain\n")
    assert out.startswith("error at t.gc:5:1: trying to backward through the graph a second time")
    assert ("What happened: line 5 (`backward b`) needed the values saved by `MulBackward0`, the node of `b` made "
            "at line 2 (`b = a * a`); they had been freed.") in out
    assert "Who freed them: the backward at line 4 (`backward b`) ran through that node without retain_graph" in out
    assert "Fix: add retain_graph to the first backward at line 4 (`backward b`): `backward b retain_graph`" in out


def test_long_form_of_an_in_place_change_of_a_saved_tensor() -> None:
    out = explained(
        "x = [1, 2, 3] requires_grad\nw = [1., 1., 1.]\n\ny = w * x\ns = y.sum()\nw += 1\nbackward s\nexplain\n"
    )
    assert ("`w` was saved (as `self`) by `MulBackward0` made at line 4 (`y = w * x`) at version 0; line 6 "
            "(`w += 1`) changed it to version 1; backward at line 7 needed version 0.") in out
    assert "Fix: `w = w + 1` (a new tensor) instead of `w += 1`, or do the change after the backward." in out


def test_long_form_of_an_in_place_change_through_a_method_and_twice() -> None:
    out = explained(
        "x = [1, 2, 3] requires_grad\ny = x * 2\ns = (y ** 2).sum()\ny.add_(1)\ny.mul_(2)\nbackward s\nexplain\n"
    )
    assert "`y` was saved (as `self`) by `PowBackward0` made at line 3 (`s = (y ** 2).sum()`) at version 0" in out
    assert "line 4 (`y.add_(1)`) changed it to version 1; then line 5 (`y.mul_(2)`) changed it to version 2" in out
    assert "Fix: `y = y.add(1)` (a new tensor) instead of `y.add_(1)`" in out


def test_long_form_of_an_in_place_change_of_a_leaf() -> None:
    out = explained("a = [1, 2, 3] requires_grad\na += 1\nexplain\n")
    assert "What happened: line 2 (`a += 1`) changes `a` in place, but a is a leaf that requires grad." in out
    assert "    with no_grad:\n        a += 1" in out and "`a = a + 1`" in out


def test_long_form_of_a_non_scalar_output() -> None:
    out = explained("x = [1, 2, 3] requires_grad\ny = x * 2\nbackward y\nexplain\n")
    assert "line 3 (`backward y`) starts backward from `y`, which has shape (3,) (3 elements)" in out
    assert "Fix: `backward y gradient ones_like(y)` (the same as `backward y.sum()`)" in out


def test_long_form_of_an_unused_input() -> None:
    out = explained("x = 2 requires_grad\nc = 3 requires_grad\ny = x * x\ng = grad(y, [x, c])\nexplain\n")
    assert "grad() at line 4 (`g = grad(y, [x, c])`) was asked for the gradient with respect to `c` (input 1)" in out
    assert "Fix: pass allow_unused=true" in out


def test_long_form_of_an_inference_tensor_saved_for_backward() -> None:
    out = explained("a = [1, 2] requires_grad\nwith inference_mode:\n    z = a * 2\nq = z * a\nexplain\n")
    assert "line 4 (`q = z * a`) computes with `z`, an inference tensor" in out
    assert "`z = z.clone()`" in out


def test_long_form_of_nan_under_detect_anomaly() -> None:
    out = explained(
        "x = [0, 1] requires_grad\nwith detect_anomaly:\n    y = sqrt(x) * 0\n    backward y.sum()\nexplain\n"
    )
    assert "found NaN in gradient 0 of `SqrtBackward0` made at line 3 (`y = sqrt(x) * 0`)" in out
    assert "(the gradient for `x`)" in out and "That gradient: tensor([nan, 0.])" in out


def test_long_form_of_any_other_error() -> None:
    out = explained("y = nope + 1\nexplain\n")
    assert out.startswith("error at t.gc:1:5: name 'nope' is not defined") and "Where: line 1 (`y = nope + 1`)." in out


def test_json_long_form() -> None:
    _, out, _ = session_run("x = [1, 2] requires_grad\nbackward x * 2\nexplain\n", format="json")
    report = json.loads(out.splitlines()[-1])
    assert report["event"] == "explain" and report["reason"] == "nonscalar" and report["line"] == 2
    assert "ones_like" in report["text"]


# -- what explain accepts ------------------------------------------------------------------------------------
@pytest.mark.parametrize("target", ["3", "x", "x + 1", "sin(x)", "x.grad_fn"])
def test_explain_of_anything_else_names_what_it_accepts(target: str) -> None:
    r = run(f"x = 1 requires_grad\nexplain {target}\n")
    assert not r.ok and r.out == ""
    (msg,) = r.errors
    assert msg.startswith("explain takes `explain backward y [flags]`, `explain grad(...)`, `explain T.grad`")


def test_explain_is_reserved() -> None:
    assert run("explain = 1\n").errors


def test_explain_inside_a_function_and_a_loop() -> None:
    out = explained(
        "x = 2 requires_grad\ndef f(t):\n    y = t * t\n    explain backward y\nfor i in range(2):\n    f(x)\n"
    )
    # inside the function the leaf is `t` (its innermost name) as well as `x`
    assert out.count("t, x  AccumulateGrad") == 2 and "t.grad    tensor(4.) -> tensor(8.)" in out


# -- the REPL hint ---------------------------------------------------------------------------------------------
def test_repl_errors_hint_at_explain_once_per_session() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    first = run("nope", session=s, interactive=True)
    second = run("nope", session=s, interactive=True)
    assert first.err.endswith("(type `explain` for the long form of this error)\n")
    assert "explain" not in second.err
    assert "explain" not in run("nope\n").err  # batch: never


def test_help_explain() -> None:
    out = run(":help explain\n").out
    assert out.startswith("explain backward y") and "explain x.grad" in out
    # the most common beginner bug is among the reasons, with its fix
    assert "rebound it to a computed tensor" in out and "with no_grad:" in out


def test_hooks_that_fire_are_named() -> None:
    s = Session(out=io.StringIO(), err=io.StringIO())
    run("a = 3 requires_grad\nc = a * 2\n", session=s)

    def double(g: object) -> object:
        return g * 2

    s.workspace["c"].register_hook(double)
    s.workspace["c"].grad_fn.register_hook(lambda grad_inputs, grad_outputs: None)
    out = run("explain backward c\n", session=s).out
    a = torch.tensor(3.0, requires_grad=True)
    c = a * 2
    c.register_hook(lambda g: g * 2)
    c.backward()
    lines = out.splitlines()
    i = lines.index("      hooks     tensor hook double (replaced the gradient)")
    assert lines[i + 1] == "      received  tensor(2.)"  # what the node computes with, after the hook
    assert "      hooks     hook" in lines
    assert f"a.grad    None -> {trepr(a.grad)}" in out


def test_explain_backward_keeps_the_statements_inputs() -> None:
    # PyTorch: y.backward(inputs=[x]) accumulates into x only
    x = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    z = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (x * z).backward(inputs=[x])
    _, out, err = session_run(
        "x = 1 requires_grad\nz = 2 requires_grad\ny = x * z\nexplain backward y inputs [x]\nx.grad\nz.grad\n"
    )
    assert not err
    assert out.splitlines()[-2:] == [trepr(x.grad), "None"]
    assert "z.grad" not in out
