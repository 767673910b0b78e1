"""What `explain` and `graph` tell, across their forms: one output protocol (styled text, coloured only where
the session colours; JSON objects with `--format json`), each node's formula beside its numbers, `graph`'s
JSON against PyTorch's graph, and one function for where a statement is.

The formulas come from the engine's op spec (`inspection.formula`); these tests set them on the node classes
themselves (the class attribute `formula` that inspection reads first), as derivatives.yaml writes them, so
they hold with and without the spec. Numbers come from PyTorch."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import numpy as np
import pytest
import torch

import gradcalc
from gradcalc.lang import Session
from gradcalc.lang.tell import graph as graph_module
from gradcalc.lang.tell.explain import where
from gradcalc.lang.tell.names import Names

torch.set_default_dtype(torch.float64)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# derivatives.yaml's formulas (tools/autograd/derivatives.yaml: mul.Tensor, pow.Tensor_Scalar, sin)
MUL = {"self": "grad * other", "other": "grad * self"}
POW = "grad * exponent * self.pow(exponent - 1)"
SIN = {"self": "grad * self.cos()"}


def session_run(source: str, **options: Any) -> str:
    out = io.StringIO()
    s = Session(out=out, err=io.StringIO(), **options)
    s.run(source, "t.gc", keep_going=True)
    return out.getvalue()


def node_class(make: Any) -> type:
    x = gradcalc.tensor(2.0, requires_grad=True)
    return type(make(x).grad_fn)


@pytest.fixture
def formulas(monkeypatch: pytest.MonkeyPatch) -> None:
    """MulBackward0, PowBackward0 and SinBackward0 with derivatives.yaml's formulas."""
    for make, text in ((lambda x: x * x, MUL), (lambda x: x ** 2, POW), (lambda x: gradcalc.sin(x), SIN)):
        monkeypatch.setattr(node_class(make), "formula", text, raising=False)


def one_line(formula: Any) -> str:
    return formula if isinstance(formula, str) else "; ".join(f"{k}: {v}" for k, v in formula.items())


# -- one protocol ----------------------------------------------------------------------------------------------
PRELUDE = "a = 3 requires_grad\nb = 2 requires_grad\ny = a * b + sin(a)\nretain_grad y\n"
FORMS = {  # each thing explain and graph tell, after PRELUDE
    "explain backward": "explain backward y retain_graph\n",
    "explain grad": "explain grad(y, [a, b])\n",
    "explain T.grad": "backward y retain_graph\nexplain a.grad\n",
    "explain T.grad (None)": "explain y.grad\n",
    "bare explain": "backward y\nbackward y\nexplain\n",
    "graph": "graph y\n",
    "graph of a leaf": "graph a\n",
    "graph of a constant": "graph 3\n",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_is_styled_text_coloured_only_where_the_session_colours(form: str) -> None:
    program = PRELUDE + FORMS[form]
    plain = session_run(program)
    coloured = session_run(program, color=True)
    assert "\x1b[" not in plain
    assert "\x1b[" in coloured or form == "graph of a constant"  # names, node names, places: coloured
    assert ANSI.sub("", coloured) == plain


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_prints_json_objects_with_format_json(form: str) -> None:
    told = session_run(PRELUDE + FORMS[form], format="json")
    objects = [json.loads(line) for line in told.splitlines() if line.startswith('{"event"')]
    assert objects, told
    kinds = {o["event"] for o in objects}
    expected = {"graph"} if form.startswith("graph") else {"explain"} if "explain T" in form or "bare" in form \
        else {"node", "grad", "result"}
    assert kinds <= expected and kinds


# -- formulas -------------------------------------------------------------------------------------------------
def test_graph_shows_each_nodes_formula_before_what_it_saved(formulas: None) -> None:
    text = session_run("a = 3 requires_grad\nb = 2 requires_grad\ny = a * b + a ** 2\ngraph y\n")
    lines = {line.lstrip("├└─│ ").split("  ")[0]: line for line in text.splitlines()}
    mul, pow_ = lines["MulBackward0"], lines["PowBackward0"]
    assert f"  formula: {one_line(MUL)}  saved: other = b, self = a" in mul
    assert f"  formula: {POW}  saved: self = a, exponent = 2" in pow_
    assert "formula" not in lines["AccumulateGrad"]  # a leaf's node differentiates nothing


def test_dot_labels_show_the_formula_wrapped_and_json_gives_it(formulas: None, tmp_path: Any) -> None:
    path = tmp_path / "y.dot"
    prog = f"a = 3 requires_grad\nb = 2 requires_grad\ny = a * b + a ** 2\ngraph y to \"{path}\"\n"
    session_run(prog)
    labels = re.findall(r'\[label="(.*?)"[,\]]', path.read_text())
    mul = next(lab.split("\\n") for lab in labels if lab.startswith("MulBackward0"))
    pow_ = next(lab.split("\\n") for lab in labels if lab.startswith("PowBackward0"))
    for label in (mul, pow_):
        assert all(len(line) <= graph_module.LABEL_WIDTH for line in label)
    formula_lines = [line.strip() for line in pow_ if not line.startswith(("PowBackward0", "saved:"))]
    assert " ".join(formula_lines) == f"formula: {POW}"  # broken at spaces, nothing lost
    assert pow_.index(next(x for x in pow_ if x.startswith("formula:"))) < pow_.index(
        next(x for x in pow_ if x.startswith("saved:")))
    assert mul[1:3] == ["formula: self: grad * other", "  other: grad * self"]  # an input a line
    (told,) = session_run(prog.replace(f' to "{path}"', ""), format="json").splitlines()
    nodes = {n["node"]: n for n in json.loads(told)["nodes"]}
    assert nodes["MulBackward0"]["formula"] == one_line(MUL) and nodes["PowBackward0"]["formula"] == POW
    assert nodes["AccumulateGrad"]["formula"] is None


def test_each_narrated_step_shows_its_formula_and_its_numbers_follow_it(formulas: None) -> None:
    """The formula line of a step, evaluated with PyTorch on the values the node saw (`grad`: what it received,
    `self`, `other`: its inputs), gives the gradients the step shows on its edges."""
    text = session_run("a = 3 requires_grad\nb = 2 requires_grad\ny = sin(a * b)\nexplain backward y\n")
    a = torch.tensor(3.0, requires_grad=True)
    b = torch.tensor(2.0, requires_grad=True)
    product = a * b
    steps = re.split(r"\n(?= ?\d+\. )", text)
    mul_step = next(s for s in steps if "MulBackward0" in s.splitlines()[0])
    sin_step = next(s for s in steps if "SinBackward0" in s.splitlines()[0])
    assert mul_step.splitlines()[1:3] == ["      formula   self: grad * other", "                other: grad * self"]
    assert sin_step.splitlines()[1] == "      formula   self: grad * self.cos()"
    assert not any("formula" in s for s in steps if "AccumulateGrad" in s.splitlines()[0])
    with torch.no_grad():
        grad = torch.cos(product)  # what MulBackward0 received: the gradient of sin at a * b
        by_formula = {name: eval(f, {"grad": grad, "self": a, "other": b}) for name, f in MUL.items()}  # noqa: S307
    edges = re.findall(r"[├└]─ to (\w+): (tensor\([^)]*\))", mul_step)
    assert edges == [("a", repr(by_formula["self"])), ("b", repr(by_formula["other"]))]
    events = [json.loads(line) for line in session_run(
        "a = 3 requires_grad\nb = 2 requires_grad\ny = sin(a * b)\nexplain backward y\n", format="json").splitlines()]
    assert {e["node"]: e["formula"] for e in events if e["event"] == "node"} == {
        "SinBackward0": one_line(SIN), "MulBackward0": one_line(MUL), "AccumulateGrad": None}


# -- graph's JSON against PyTorch -------------------------------------------------------------------------------
A, B = [0.5, 0.25], [0.75, 1.5]
PROGRAMS = [("a * b", "a * b"), ("(a * b).exp().sum() + a[0]", "(a * b).exp().sum() + a[0]"),
            ("a ** 2 + sin(b)", "a ** 2 + torch.sin(b)"), ("cat([a, b]) * 2", "torch.cat([a, b]) * 2"),
            ("stack([a, b]) @ b", "torch.stack([a, b]) @ b"), ("a.unbind(0)[1] * b", "a.unbind(0)[1] * b")]


@pytest.mark.parametrize("gc_expr, py_expr", PROGRAMS)
def test_graph_json_is_pytorchs_graph(gc_expr: str, py_expr: str) -> None:
    """Walked side by side: each node object is PyTorch's node (name, edges with their output numbers, saved
    names), the leaves are the workspace's, and the values shown are PyTorch's."""
    a = torch.tensor(A, requires_grad=True)
    b = torch.tensor(B, requires_grad=True)
    y = eval(py_expr, {"torch": torch, "a": a, "b": b})  # noqa: S307 - our own table's text
    (line,) = session_run(f"a = {A} requires_grad\nb = {B} requires_grad\ny = {gc_expr}\ngraph y\n",
                          format="json").splitlines()
    told = json.loads(line)
    assert told["event"] == "graph"
    nodes = told["nodes"]
    assert nodes[0]["outputs"][0]["names"] == ["y"] and nodes[0]["outputs"][0]["shape"] == list(y.shape)
    if y.numel() <= graph_module.SMALL:
        # float64 through a handful of operations: a few units of the last place
        assert np.allclose(nodes[0]["outputs"][0]["value"]["value"], y.detach().numpy(),
                           rtol=8 * np.finfo(np.float64).eps, atol=0)
    stack = [(0, y.grad_fn)]
    seen: set[int] = set()
    while stack:
        k, fn = stack.pop()
        if k in seen:
            continue
        seen.add(k)
        node = nodes[k]
        assert node["id"] == k and node["node"] == type(fn).__name__
        assert len(node["next"]) == len(fn.next_functions)
        for edge, (child, nr) in zip(node["next"], fn.next_functions, strict=True):
            assert (edge is None) == (child is None)
            if edge is not None:
                assert edge[1] == nr
                stack.append((edge[0], child))
        if node["node"] == "AccumulateGrad":
            (leaf,) = node["outputs"]
            assert leaf["names"] == (["a"] if fn.variable is a else ["b"])
            assert leaf["value"]["value"] == fn.variable.tolist() and leaf["grad"] is None
            continue
        theirs = {n.removeprefix("_saved_") for n in dir(fn) if n.startswith("_saved_")}
        assert {s["name"] for s in node["saved"]} <= theirs
        for s in node["saved"]:
            value = getattr(fn, "_saved_" + s["name"])
            if isinstance(value, torch.Tensor) and s.get("value") is not None:
                assert s["value"]["value"] == value.detach().tolist()
                if value is a or value is b:
                    assert s["names"] == (["a"] if value is a else ["b"])
    assert seen == set(range(len(nodes)))  # every node object is reached, once


def test_graph_json_marks_freed_values_and_versions_as_pytorch_does() -> None:
    u = torch.tensor(A, requires_grad=True) * 1
    y = u * u
    u.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.grad_fn._saved_self  # noqa: B018
    now, then = map(int, re.search(r"is at version (\d+); expected version (\d+)", str(info.value)).groups())
    told = session_run(f"a = {A} requires_grad\nu = a * 1\ny = u * u\nu += 1\ngraph y\nbackward (a * a).sum()\n"
                       "z = a * a\nbackward z.sum()\ngraph z\n", format="json").splitlines()
    graphs = [json.loads(line) for line in told]
    saved = {s["name"]: s for s in graphs[0]["nodes"][0]["saved"]}
    assert (saved["self"]["saved_version"], saved["self"]["version"]) == (then, now)
    assert saved["self"]["names"] == ["u"] and not saved["self"]["freed"]
    freed = {s["name"]: s["freed"] for s in graphs[1]["nodes"][0]["saved"]}
    assert freed == {"self": True, "other": True}


# -- one function for where a statement is ------------------------------------------------------------------------
def test_every_place_explain_and_graph_name_comes_from_one_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where a statement is (`line 4`) is said by `where.place` alone: replaced, it changes every sentence,
    step, tree line and cluster that names a statement, and no `line N` is left."""
    monkeypatch.setattr(where, "place", lambda origin: None if getattr(origin, "line", None) is None
                        else f"PLACE-{origin.line}")
    program = (
        "a = 3 requires_grad\nb = a * a\nc = sin(b) * 2\n"  # 1-3
        "explain backward c retain_graph\n"  # 4: steps, `to SinBackward0 (...)`
        "explain a.grad\n"  # 5: which backward wrote it
        "explain b.grad\n"  # 6: not a leaf, made by ... at ...
        "graph c\n"  # 7: the tree
        "w = 1 requires_grad\nloss = w * 2\nw = w - 0.1 * w\nbackward w * 1\nexplain w.grad\n"  # 8-12: rebound
        "backward c\nbackward c\nexplain\n"  # 13-15: freed
    )
    told = session_run(program)
    assert not re.search(r"\bline \d", told), told
    for expected in ("(PLACE-2: b = a * a)", "(PLACE-3)", "PLACE-4 (`explain backward c retain_graph`)",
                     "made by MulBackward0 at PLACE-2", "[PLACE-3: c = sin(b) * 2]", "PLACE-10 (`w = w - 0.1 * w`)",
                     "What happened: PLACE-14 (`backward c`) needed", "the first backward at PLACE-13"):
        assert expected in told, expected
    s = Session(out=io.StringIO(), err=io.StringIO())  # the DOT writer names its clusters by the same function
    s.run("a = 3 requires_grad\nb = a * a\n", "t.gc")
    dot = graph_module.dot(s.workspace["b"], Names(s.workspace))
    assert 'label="PLACE-2: b = a * a\\l"' in dot and "line 2" not in dot
