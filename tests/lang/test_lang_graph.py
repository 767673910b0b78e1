"""`graph y`: names, shapes, values, grads and saved values on each node, and its files (.dot, .svg, .png).

What a node saved, and what is freed when, is checked against torch's `grad_fn._saved_<name>` on the same
program: the names are PyTorch's, a value is the tensor it is (by its workspace name) or torch's value, a
freed name is one torch refuses to read after backward, and versions are those torch's error names.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from gclang_testing import out, run

import gradcalc
from gradcalc.lang.tell import graph
from gradcalc.lang.tell.names import Names

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

A, B = [0.5, 0.25], [0.75, 1.5]
PRELUDE = f"a = {A} requires_grad\nb = {B} requires_grad\n"

# (the language's expression, the same for torch), over leaves a and b; most read the same in both
PROGRAMS = [
    ("a * b", "a * b"), ("a + b", "a + b"), ("a - b", "a - b"), ("a / b", "a / b"), ("a * 2", "a * 2"),
    ("a / 2", "a / 2"), ("2 - a", "2 - a"), ("a ** 2", "a ** 2"), ("a ** 2.5", "a ** 2.5"), ("a ** b", "a ** b"),
    ("a.sum()", "a.sum()"), ("a.mean()", "a.mean()"), ("a.exp()", "a.exp()"), ("a.sin()", "a.sin()"),
    ("a.tanh()", "a.tanh()"), ("a.sigmoid()", "a.sigmoid()"), ("a.relu()", "a.relu()"), ("a.log()", "a.log()"),
    ("a.sqrt()", "a.sqrt()"), ("a.abs()", "a.abs()"), ("dot(a, b)", "torch.dot(a, b)"),
    ("a.softmax(0)", "a.softmax(0)"), ("a.prod()", "a.prod()"), ("a.max()", "a.max()"),
    ("a.clamp(0.3, 0.6)", "a.clamp(0.3, 0.6)"), ("a.unsqueeze(0)", "a.unsqueeze(0)"),
    ("cat([a, b])", "torch.cat([a, b])"), ("stack([a, b])", "torch.stack([a, b])"),
    ("outer(a, b)", "torch.outer(a, b)"), ("a.sum(0)", "a.sum(0)"), ("maximum(a, b)", "torch.maximum(a, b)"),
    ("a.var()", "a.var()"), ("a.logsumexp(0)", "a.logsumexp(0)"), ("a.expand(3, 2)", "a.expand(3, 2)"),
    ("stack([a, b]) @ b", "torch.stack([a, b]) @ b"), ("a.reciprocal()", "a.reciprocal()"),
]
# names PyTorch keeps that gradcalc's formulas never need (as tests/engine/test_saved.py lists them)
NOT_KEPT = {("PowBackward1", "result"), ("PowBackward2", "exponent")}
ITEM = re.compile(r"(?:saved: |, )(\w+)(?: = (.*?)(?=, \w+ = |, \w+ \(|$)| \(freed\))")


def torch_node(expr: str) -> tuple[Any, dict[str, Any]]:
    a = torch.tensor(A, requires_grad=True)
    b = torch.tensor(B, requires_grad=True)
    y = eval(expr, {"torch": torch, "a": a, "b": b})  # noqa: S307 - our own table's text
    return y, {"a": a, "b": b, "y": y}


def torch_saved(node: Any) -> dict[str, Any]:
    names = {n[len("_saved_"):] for n in dir(node) if n.startswith("_saved_")}
    return {n: getattr(node, "_saved_" + n) for n in names if (node.name(), n) not in NOT_KEPT}


def root_items(text: str) -> dict[str, str]:
    """The saved items of a graph's first line: name -> what is shown (`(freed)` for a freed one)."""
    line = text.splitlines()[0]
    if line.endswith("]") and "  [" in line:  # where the node was made comes last
        line = line[: line.rindex("  [")]
    if "  saved: " not in line:
        return {}
    part = line[line.index("  saved: ") + 2:]
    return {m[1]: (m[2] if m[2] is not None else "(freed)") for m in ITEM.finditer(part)}


def expected_shown(value: Any, workspace: dict[str, Any], node: Any) -> str:
    """How the graph shows a saved value torch holds: the workspace name of the tensor it is, else its value."""
    if isinstance(value, torch.Tensor):
        for name, t in workspace.items():
            if value is t or (value.grad_fn is node and t.grad_fn is node):  # an input, or the node's result
                return name
        # another tensor (a view of an input, say): its value on one line, without requires_grad/grad_fn
        return re.sub(r"\n\s*", " ", repr(value.detach()).replace("dtype=torch.", "dtype="))
    if value is None:
        return "None"
    return repr(tuple(value) if isinstance(value, (list, tuple)) else value)


@pytest.mark.parametrize("gc_expr, py_expr", PROGRAMS)
def test_saved_values_are_named_and_shown_as_pytorch_keeps_them(gc_expr: str, py_expr: str) -> None:
    y, workspace = torch_node(py_expr)
    theirs = torch_saved(y.grad_fn)
    text = out(PRELUDE + f"y = {gc_expr}\ngraph y\n")
    assert text.startswith(y.grad_fn.name())
    ours = root_items(text)
    assert set(ours) == set(theirs), text
    for name, value in theirs.items():
        shown = ours[name]
        if name == "dim" and isinstance(value, tuple) and not value:
            continue  # torch's () for "all dims" is its own spelling
        assert shown == expected_shown(value, workspace, y.grad_fn), (name, text)


@pytest.mark.parametrize("gc_expr, py_expr", PROGRAMS)
def test_saved_tensors_are_marked_freed_where_pytorch_refuses_to_read_them(gc_expr: str, py_expr: str) -> None:
    y, _ = torch_node(py_expr)
    names = list(torch_saved(y.grad_fn))
    y.sum().backward()
    freed = set()
    for name in names:
        try:
            getattr(y.grad_fn, "_saved_" + name)
        except RuntimeError as exc:
            assert "backward through the graph a second time" in str(exc)
            freed.add(name)
    text = out(PRELUDE + f"y = {gc_expr}\nbackward y.sum()\ngraph y\n")
    ours = {n for n, shown in root_items(text).items() if shown == "(freed)"}
    # exactly those: a tensor slot the node left empty (None before backward, as `self` of `a * 2`) reads
    # None in PyTorch after backward too, and the graph shows it so
    assert freed == ours, text
    shown = root_items(text)
    assert all(shown[n] == "None" for n in set(names) - freed if getattr(y.grad_fn, "_saved_" + n) is None), text


def test_saved_tensors_changed_in_place_show_both_versions_as_pytorchs_error_names_them() -> None:
    a = torch.tensor(A, requires_grad=True)
    u = a * 1
    y = u * u
    u.add_(1)
    u.add_(1)
    with pytest.raises(RuntimeError) as info:
        y.grad_fn._saved_self  # noqa: B018
    now, then = re.search(r"is at version (\d+); expected version (\d+)", str(info.value)).groups()
    text = out(PRELUDE + "u = a * 1\ny = u * u\nu += 1\nu += 1\ngraph y\n")
    assert root_items(text)["self"] == f"u (version {then} when saved, now {now})"
    r = run(PRELUDE + "u = a * 1\ny = u * u\nu += 1\ny.grad_fn.saved.self\n")
    assert "changed in place" in r.errors[0] and "version 1" in r.errors[0]


def test_every_workspace_name_labels_its_node_and_leaf() -> None:
    text = out("x = 3 requires_grad\nc = x\ny = x * 2\nz = y\ngraph z\n")
    first, leaf = text.splitlines()
    assert first.startswith("MulBackward0  (y, z: shape (), value tensor(6.))")
    assert "AccumulateGrad  (x, c: leaf, shape (), value tensor(3.), grad None)" in leaf


def test_a_finished_loops_variable_is_no_label() -> None:
    def leaf_labels(text: str) -> set[str]:
        return set(re.findall(r"\(([\w, ]+): leaf", text))

    assert leaf_labels(out(PRELUDE + "y = 0\nfor w in [a, b]:\n    y = y + w * w\ngraph y\n")) == {"a", "b"}
    # inside the loop the variable is in scope: it labels the leaf
    assert leaf_labels(out(PRELUDE + "for w in [b]:\n    graph w * 2\n")) == {"b, w"}
    # rebound after the loop, it is an ordinary name again
    assert leaf_labels(out(PRELUDE + "for w in [a]:\n    pass\nw = b\ngraph b * 2\n")) == {"b, w"}


def test_values_of_at_most_six_elements_and_leaves_grads_as_pytorch_prints_them() -> None:
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    (w * w).sum().backward()
    text = out("w = [[1, 2, 3], [4, 5, 6]] requires_grad\nbackward (w * w).sum()\ngraph w * 1\nv = arange(7.)\n"
               "graph v * w[0, 0]\n")
    lines = text.splitlines()
    value = repr(w.detach()).replace("\n       ", "")
    grad = repr(w.grad).replace("\n       ", "")
    assert f"(w: leaf, shape (2, 3), value {value}, grad {grad})" in lines[1]
    assert "value" not in lines[2]  # 7 elements: shape only
    assert lines[2].startswith("MulBackward0  (shape (7,))")


def test_a_retained_non_leaf_shows_its_grad_and_a_graph_grad_its_grad_fn() -> None:
    x = torch.tensor(3.0, requires_grad=True)
    u = x * 2
    u.retain_grad()
    with warnings.catch_warnings():  # the reference cycle create_graph makes
        warnings.simplefilter("ignore")
        (u * u).backward(create_graph=True)
    text = out("x = 3 requires_grad\nu = x * 2\nretain_grad u\nbackward u * u create_graph\ngraph u\n")
    assert f"grad {u.grad!r}" in text.splitlines()[0]
    assert f"grad {x.grad!r}" in text.splitlines()[1]


def test_a_long_chain_prints_without_recursion_and_is_cut_at_max_lines() -> None:
    x = gradcalc.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(30_000):  # far deeper than the recursion limit (1000 here, 20000 in a session)
        y = y * 1.0
    text = graph.tree(y, Names({"x": x, "y": y}))
    lines = text.splitlines()
    assert len(lines) == graph.MAX_LINES + 1 and lines[-1].startswith("... (the graph is larger")
    # a line per node and per edge, the header (digraph, graph, node and edge defaults) and the closing brace;
    # nodes made outside the language belong to no statement: no cluster
    assert len(graph.dot(y, Names({})).splitlines()) == 2 * 30_001 + 4


def test_a_node_made_by_a_known_statement_says_where() -> None:
    class Origin:  # what the language stamps on nodes: its str names the statement
        def __str__(self) -> str:
            return "line 3: y = a * b"

    a = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    with gradcalc.autograd.graph.origin(Origin()):
        y = a * a
    first, *leaves = graph.tree(y, Names({"a": a, "y": y})).splitlines()
    assert first.startswith("MulBackward0  (y: shape (2,)") and first.endswith("  [line 3: y = a * b]")
    assert leaves and not any("line 3" in leaf for leaf in leaves)
    text = graph.dot(y, Names({"y": y}))
    assert "subgraph cluster_" in text and 'label="line 3: y = a * b\\l"' in text
    assert '[label="MulBackward0\\ny: shape' in text


def clusters(dot_text: str) -> dict[str, list[str]]:
    """Each cluster's label (its lines joined) -> the labels of the nodes declared in it."""
    out_: dict[str, list[str]] = {}
    current = None
    for line in dot_text.splitlines():
        line = line.strip()
        if line.startswith("subgraph cluster_"):
            current = ""
        elif current == "" and line.startswith("label="):
            current = " ".join(re.match(r'label="(.*?)";', line)[1].replace("\\l", " ").split())
            out_[current] = []
        elif current and line.startswith("n") and "[label=" in line:
            out_[current].append(re.search(r'label="(.*?)"', line)[1])
        elif line == "}":
            current = None
    return out_


PINN = """\
seed 0
net = Sequential(Linear(1, 8), Tanh(), Linear(8, 1))
x = linspace(0, 2, 5).reshape(-1, 1) requires_grad
u = net(x)
du = grad(u, x, ones_like(u), create_graph=true)[0]
d2u = grad(du, x, ones_like(du), create_graph=true)[0]
loss = mean((d2u + u) ** 2)
"""


def test_a_large_graph_names_each_statement_once_in_a_cluster_and_in_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "loss.dot"
    r = run(PINN + f'graph loss to "{path}"\ngraph loss\n')
    assert r.ok, r.err
    text = path.read_text()
    groups = clusters(text)
    statements = ["line 4: u = net(x)", "line 5: du = grad(u, x, ones_like(u), create_graph=true)[0]",
                  "line 6: d2u = grad(du, x, ones_like(du), create_graph=true)[0]",
                  "line 7: loss = mean((d2u + u) ** 2)"]
    assert sorted(groups) == sorted(" ".join(s.split()) for s in statements)
    for where in statements:  # each statement's text once in the whole file: its cluster's label
        assert text.count(where.split(": ", 1)[1][:20]) == 1, where
    assert not re.search(r'\[label="[^"]*line \d', text)  # no node repeats where it was made
    # the nodes grouped under their statement: the loss's own operations, the network's
    assert [n.split("\\n")[0] for n in groups["line 7: loss = mean((d2u + u) ** 2)"]] == \
        ["MeanBackward0", "PowBackward0", "AddBackward0"]
    assert any(n.startswith("AddmmBackward0\\nu: shape (5, 1)") for n in groups["line 4: u = net(x)"])
    # the leaves belong to no statement (an AccumulateGrad is made by whichever statement first used the leaf)
    assert not any("AccumulateGrad" in n for ns in groups.values() for n in ns)
    # the tree: a statement in full the first time, by its line after that
    tree_lines = r.out.splitlines()
    for where in statements:
        full = [line for line in tree_lines if line.endswith(f"[{where}]")]
        assert len(full) == 1, where
    assert any(line.endswith("[line 4]") for line in tree_lines)
    if HAS_DOT:
        done = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr


def test_long_labels_are_broken_after_commas_outside_brackets() -> None:
    lines = graph._wrap("saved: mat2 (freed), mat1 (freed), alpha = 1, beta = 1, self = tensor([1., 2., 3.])")
    assert all(len(line) <= graph.LABEL_WIDTH for line in lines)
    assert " ".join(line.strip() for line in lines) == \
        "saved: mat2 (freed), mat1 (freed), alpha = 1, beta = 1, self = tensor([1., 2., 3.])"
    assert graph._wrap("value tensor([1., 2., 3., 4., 5., 6.]), grad tensor([1., 2., 3., 4., 5., 6.])") == \
        ["value tensor([1., 2., 3., 4., 5., 6.]),", "  grad tensor([1., 2., 3., 4., 5., 6.])"]


def test_dot_labels_are_escaped() -> None:
    assert graph._label_text(('a"b', "c\\N", (), "")) == '"a\\"b\\nc\\\\N"'


# -- files -----------------------------------------------------------------------------------------------
HAS_DOT = shutil.which("dot") is not None


def test_dot_file_is_read_by_graphviz(tmp_path: Path) -> None:
    path = tmp_path / "y.dot"
    assert out(PRELUDE + f'y = (a * b).exp().sum() + a[0]\ngraph y to "{path}"\n') == ""
    text = path.read_text()
    assert "y: shape (), value" in text and "saved: other = b, self = a" in text
    if HAS_DOT:
        done = subprocess.run(["dot", "-Tsvg"], input=text.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not HAS_DOT, reason="Graphviz's dot is not installed")
def test_svg_and_png_are_drawn_by_graphviz(tmp_path: Path) -> None:
    svg, png = tmp_path / "y.svg", tmp_path / "y.PNG"
    assert out(PRELUDE + f'y = a * b\ngraph y to "{svg}"\ngraph y to "{png}"\n') == ""
    text = svg.read_text()
    assert "<svg" in text and "MulBackward0" in text and "AccumulateGrad" in text
    assert "y: shape (2,)" in text and "saved: other = b, self = a" in text
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_without_dot_nothing_is_written_and_the_error_says_how_to_install_graphviz(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    target = tmp_path / "y.svg"
    root = str(Path(gradcalc.__file__).resolve().parent.parent)
    env = {**os.environ, "PATH": str(empty), "PYTHONPATH": root}
    done = subprocess.run(
        [sys.executable, "-m", "gradcalc", "-e", f'x = 3 requires_grad\ngraph x * 2 to "{target}"'],
        env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1 and not target.exists()
    first = done.stderr.splitlines()[0]
    assert f"error: can't write the graph to '{target}': Graphviz's `dot` program was not found" in first
    assert "apt-get install graphviz" in first and "brew install graphviz" in first
    assert "wrote" not in done.stderr


# -- y.grad_fn.saved -------------------------------------------------------------------------------------
def test_saved_values_read_by_name_as_pytorchs_saved_attributes() -> None:
    a = torch.tensor(A, requires_grad=True)
    y = a ** 2
    text = out(PRELUDE + "y = a ** 2\ny.grad_fn.saved.self\ny.grad_fn._saved_exponent\ns = y.grad_fn.saved\ns\n")
    lines = text.splitlines()
    assert lines[0] == repr(y.grad_fn._saved_self)
    assert lines[1] == repr(y.grad_fn._saved_exponent)
    assert lines[2:] == [
        "saved by PowBackward0:",
        f"  self = {y.grad_fn._saved_self!r}",
        f"  exponent = {y.grad_fn._saved_exponent!r}",
    ]


def test_reading_freed_saved_values_is_pytorchs_error_in_our_words() -> None:
    a = torch.tensor(A, requires_grad=True)
    y = a * a
    y.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_self  # noqa: B018
    r = run(PRELUDE + "y = a * a\nbackward y.sum()\ny.grad_fn.saved\ny.grad_fn.saved.self\n")
    assert "self = freed" in r.out
    assert "freed by a backward" in r.errors[0] and "retain_graph" in r.errors[0]
    r = run(PRELUDE + "y = a * a\nbackward y.sum() retain_graph\ny.grad_fn._saved_other\n")
    assert r.ok and r.out.strip() == repr(y.grad_fn.next_functions[0][0].variable).replace("\n", "")


def test_unknown_saved_names_say_what_the_node_saved() -> None:
    r = run(PRELUDE + "y = a * b\ny.grad_fn.saved.input\n")
    assert r.errors == ["MulBackward0 saved no value named 'input'; it saved: other, self"]


def test_a_custom_functions_saved_tensors_by_position_and_freed_as_pytorch_frees_them() -> None:
    class MyRelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * (x > 0)

    x = torch.tensor([1.0, -2.0], requires_grad=True)
    y = MyRelu.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        y.grad_fn.saved_tensors  # noqa: B018
    script = (
        "function myrelu(input):\n    forward:\n        save input\n        return clamp(input, min=0)\n"
        "    backward(g):\n        return g * (input > 0)\n"
        "x = [1, -2] requires_grad\ny = myrelu(x)\ngraph y\nbackward y.sum()\ngraph y\n"
    )
    lines = out(script).splitlines()
    assert lines[0].endswith("saved: saved_tensors[0] = x  [line 8: y = myrelu(x)]")
    assert lines[2].endswith("saved: saved_tensors (freed)  [line 8: y = myrelu(x)]")


def test_a_modules_parameters_are_named_by_their_path_in_graph_and_explain() -> None:
    text = out(
        "seed 0\nnet = Sequential(Linear(1, 2), Tanh(), Linear(2, 1))\nloss = net([[0.5]]).sum()\n"
        "graph loss\nexplain backward loss\n"
    )
    for path, shape in (("net[0].weight", "(2, 1)"), ("net[0].bias", "(2,)"), ("net[2].weight", "(1, 2)")):
        assert f"({path}: leaf, shape {shape}" in text  # graph's leaf label
        assert f"to {path}: " in text and f"{path}.grad None -> " in text  # explain's edge and .grad
