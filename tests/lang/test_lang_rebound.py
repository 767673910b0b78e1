"""The rebound leaf (LANGUAGE.md §7): `w = w - lr * w.grad` rebinds the name `w` from a leaf to a computed
tensor, and `explain w.grad`, the non-leaf `.grad` warning and the error that follows from the None name that
line and give the in-place update under `with no_grad:` as the fix -- and only then: a genuinely new non-leaf
keeps the `retain_grad` fix. What the diagnosis rests on (the new `w` is not a leaf, its `.grad` is None,
the in-place update keeps a leaf) is checked against PyTorch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gradcalc.lang.tell.explain.rebound import in_place
from tests.lang.gclang_testing import run

LOOP = """\
w = 1 requires_grad
for i in range(3):
    loss = (w - 3) ** 2
    backward loss
    w = w - 0.1 * w.grad
"""

STRAIGHT = """\
w = 1 requires_grad
loss = (w - 3) ** 2
backward loss
w = w - 0.1 * w.grad
loss = (w - 3) ** 2
backward loss
"""


def torch_facts() -> tuple[bool, object, bool]:
    """PyTorch on the straight-line program: is the new w a leaf, its .grad, and a leaf after the fix."""
    w = torch.tensor(1.0, requires_grad=True)
    ((w - 3) ** 2).backward()
    w = w - 0.1 * w.grad
    ((w - 3) ** 2).backward()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grad = w.grad
    v = torch.tensor(1.0, requires_grad=True)
    ((v - 3) ** 2).backward()
    with torch.no_grad():
        v -= 0.1 * v.grad
    return w.is_leaf, grad, v.is_leaf


def test_the_facts_the_diagnosis_rests_on_are_pytorchs() -> None:
    is_leaf, grad, fixed_is_leaf = torch_facts()
    assert (is_leaf, grad, fixed_is_leaf) == (False, None, True)
    r = run(STRAIGHT + "w.is_leaf\nw.grad\n")
    assert r.out.splitlines() == [str(is_leaf), "None"]
    fixed = run("w = 1 requires_grad\nbackward (w - 3) ** 2\nwith no_grad:\n    w -= 0.1 * w.grad\nw.is_leaf\n")
    assert fixed.out.strip() == str(fixed_is_leaf)


# -- the loop: warning, error, explain -----------------------------------------------------------------------
def test_the_loop_warns_and_fails_naming_the_line_and_the_in_place_fix() -> None:
    r = run(LOOP, filename="t.gc")
    assert not r.ok
    assert len(r.warnings) == 1 and len(r.errors) == 1
    for message in (r.warnings[0], r.errors[0]):
        assert "line 5 (`w = w - 0.1 * w.grad`)" in message
        assert "`with no_grad:`" in message and "`w -= 0.1 * w.grad`" in message
        assert "retain_grad" not in message
    assert r.warnings[0].startswith("reading .grad of a non-leaf tensor")
    assert r.errors[0].startswith("can't multiply a number and none (operator '*')")
    assert "t.gc:5:5: warning:" in r.err and "t.gc:5:17: error:" in r.err


def test_explain_after_the_loop_tells_the_rebinding() -> None:
    r = run(LOOP + "explain w.grad\nexplain\n", filename="t.gc", keep_going=True)
    text = r.out
    why = text.split("error at")[0]
    assert why.startswith("w.grad is None: w is not the leaf it was.")
    assert "Line 5 (`w = w - 0.1 * w.grad`) rebound the name w" in why
    assert "made by SubBackward0" in why
    assert "    with no_grad:\n        w -= 0.1 * w.grad\n" in why
    assert "`retain_grad w`" not in why
    long = "error at" + text.split("error at", 1)[1]
    assert long.startswith("error at t.gc:5:17: can't multiply a number and none")
    assert "What happened: line 5 (`w = w - 0.1 * w.grad`) read w.grad, which is None" in long
    assert "        w -= 0.1 * w.grad" in long


def test_explain_json_names_the_reason() -> None:
    r = run(STRAIGHT + "explain w.grad\n", format="json")
    obj = json.loads(r.out.strip().splitlines()[-1])
    assert obj["about"] == "grad" and obj["reason"] == "rebound"
    assert "line 4 (`w = w - 0.1 * w.grad`)" in obj["text"].lower()


# -- straight-line code, other spellings ---------------------------------------------------------------------
def test_straight_line_code_gets_the_same_diagnosis() -> None:
    r = run(STRAIGHT + "w.grad\nexplain w.grad\n", filename="t.gc")
    assert r.ok
    assert len(r.warnings) == 1
    assert "line 4 (`w = w - 0.1 * w.grad`) rebound it" in r.warnings[0]
    assert "`w -= 0.1 * w.grad`" in r.warnings[0]
    assert "Line 4 (`w = w - 0.1 * w.grad`) rebound the name w" in r.out


@pytest.mark.parametrize(
    "update, fix",
    [
        ("w = w - lr * w.grad", "w -= lr * w.grad"),
        ("w = w + -lr * w.grad", "w += -lr * w.grad"),
        ("w = w * 0.5", "w *= 0.5"),
        ("w = w.clamp(0, 1)", "w.copy_(w.clamp(0, 1))"),
        ("w_new = w - lr * w.grad; w = w_new", "w -= lr * w.grad"),
    ],
)
def test_any_assignment_computed_from_the_leaf_is_caught(update: str, fix: str) -> None:
    source = f"lr = 0.1\nw = [0.5, 2.] requires_grad\nbackward (w * w).sum()\n{update}\nbackward (w * w).sum()\n" \
             "explain w.grad\n"
    r = run(source)
    assert r.ok, r.err
    assert "is not the leaf it was" in r.out
    if ";" not in update:
        assert f"        {fix}\n" in r.out
    assert "retain_grad w`" not in r.out


def test_a_later_assignment_still_points_at_the_one_that_rebound_the_leaf() -> None:
    r = run("w = 2 requires_grad\nw = w * 3\nw = w + 1\nbackward w\nexplain w.grad\n")
    assert "Line 2 (`w = w * 3`) rebound the name w" in r.out


def test_inside_a_function_body_too() -> None:
    r = run("def step(w):\n    w = w - 0.1 * w\n    return w\nv = 1 requires_grad\nu = step(v)\nbackward u\n"
            "explain u.grad\n")
    # `u` was never a leaf (the rebinding was of the function's own `w`): the fix stays retain_grad
    assert "`retain_grad u`" in r.out


# -- a genuinely new non-leaf keeps retain_grad --------------------------------------------------------------
@pytest.mark.parametrize(
    "source, name",
    [
        ("a = 1 requires_grad\nb = a * 2\nbackward b\n", "b"),  # a new name
        ("x = 1 requires_grad\nw = 1 requires_grad\nw = x * 3\nbackward w\n", "w"),  # rebound, not from it
        ("x = 1 requires_grad\nw = x * 3\nw = w * 2\nbackward w\n", "w"),  # never a leaf
        ("w = 1 requires_grad\nw = w * 2\ny = w + 1\nbackward y\n", "y"),  # another name
        ("c = tensor(2.)\nx = 1 requires_grad\nc = c * x\nbackward c\n", "c"),  # was a constant
    ],
)
def test_a_new_non_leaf_keeps_the_retain_grad_fix(source: str, name: str) -> None:
    r = run(source + f"{name}.grad\nexplain {name}.grad\n")
    assert r.ok, r.err
    assert len(r.warnings) == 1
    assert "Call retain_grad() on it before backward" in r.warnings[0]
    assert "rebound" not in r.warnings[0] and "rebound" not in r.out
    assert f"Fix: `retain_grad {name}` before the backward" in r.out


def test_an_unrelated_error_about_none_is_left_alone() -> None:
    r = run("w = 1 requires_grad\nw = w * 2\nbackward w\nx = none\ny = 2 * x\n")
    assert r.errors == ["can't multiply a number and none (operator '*')"]


def test_the_fix_keeps_the_leaf_and_trains() -> None:
    # the fixed loop runs, and w follows PyTorch's gradient descent
    r = run("w = 1 requires_grad\nfor i in range(3):\n    loss = (w - 3) ** 2\n    backward loss\n"
            "    with no_grad:\n        w -= 0.1 * w.grad\n    w.grad = none\nw.item()\n")
    assert r.ok and not r.err
    w = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)  # the language's numbers are float64
    for _ in range(3):
        ((w - 3) ** 2).backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    assert float(r.out) == pytest.approx(w.item(), rel=1e-15)


# -- the in-place form of the statement ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, fixed",
    [
        ("w = w - 0.1 * w.grad", "w -= 0.1 * w.grad"),
        ("w = w - lr * m / (sqrt(v) + eps)", "w -= lr * m / (sqrt(v) + eps)"),
        ("w = w - a - b", "w.copy_(w - a - b)"),  # not `w -= a - b`
        ("w = w - a + b", "w.copy_(w - a + b)"),
        ("w = w + a - b", "w += a - b"),
        ("w = w / 2 * 3", "w.copy_(w / 2 * 3)"),  # not `w /= 2 * 3`
        ("w = w ** 2", "w.copy_(w ** 2)"),
        ("w = 0.9 * w", "w.copy_(0.9 * w)"),
        ("w = w - (a - b)", "w -= (a - b)"),
    ],
)
def test_the_in_place_fix_means_what_the_statement_meant(text: str, fixed: str) -> None:
    assert in_place(text, "w") == fixed


def test_from_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "train.gc"
    script.write_text(LOOP)
    done = subprocess.run([sys.executable, "-m", "gradcalc", str(script)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert "warning: reading .grad of a non-leaf tensor" in done.stderr
    assert "error: can't multiply a number and none (operator '*'); w.grad is None: w was a leaf until line 5" \
        in done.stderr
    assert "`w -= 0.1 * w.grad`" in done.stderr
