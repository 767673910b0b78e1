"""Execution order and what each node sees, against PyTorch, over random programs.

A seeded generator builds random expression DAGs (reused subexpressions, several leaves, one or several
roots); both libraries run the same program with a prehook and a hook on every node of the graph. The
order in which the nodes run, and the gradients each received and passed on, must be PyTorch's. Nodes are
matched by creation order (AccumulateGrad nodes by their leaf). The same runs are observed with
`observe_backward`, whose records must tell the same story.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from gradcalc.autograd.events import GradAccumulated, NodeRun
from gradcalc.autograd.graph import observe_backward

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

UNARY = ("sin", "cos", "tanh", "sigmoid", "exp")
BINARY = ("add", "sub", "mul")


def _pick(rng: np.random.Generator, n: int) -> int:
    """One of the `n` values so far: recent ones likelier, older ones reused too (shared subexpressions,
    several paths to a leaf)."""
    return int(min(n - 1, max(0, n - 1 - rng.geometric(0.4) + 1)))


def make_program(seed: int) -> dict:
    """A random program: leaves, then steps each making one value from earlier ones, then the roots."""
    rng = np.random.default_rng(seed)
    n_leaves = int(rng.integers(1, 6))
    leaves = [rng.uniform(-1, 1, size=(1,) if rng.random() < 0.3 else (2,)).tolist() for _ in range(n_leaves)]
    ndim = [1] * n_leaves  # cat takes 1-d values only
    steps: list[tuple] = []
    n = n_leaves
    for _ in range(int(rng.integers(1, 14))):
        r = rng.random()
        flat = [i for i in range(n) if ndim[i] == 1]
        if r < 0.1 and flat:
            # one node with many edges, often to leaves: AccumulateGrad nodes become ready together
            k = int(rng.integers(2, 6))
            steps.append(("cat", [int(rng.choice(flat)) for _ in range(k)]))
            ndim.append(0)
        elif r < 0.4:
            a = _pick(rng, n)
            steps.append(("unary", str(rng.choice(UNARY)), a))
            ndim.append(ndim[a])
        elif r < 0.8:
            a, b = _pick(rng, n), int(rng.integers(0, n))
            steps.append(("binary", str(rng.choice(BINARY)), a, b))
            ndim.append(max(ndim[a], ndim[b]))
        else:
            a = _pick(rng, n)
            steps.append(("scalar", str(rng.choice(("mul", "add"))), a, float(rng.uniform(0.5, 2))))
            ndim.append(ndim[a])
        n += 1
    n_roots = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    roots = sorted({int(rng.integers(n_leaves, n)) if n > n_leaves else 0 for _ in range(n_roots)})
    retain = [i for i in range(n_leaves, n) if rng.random() < 0.15]
    return {"leaves": leaves, "steps": steps, "roots": roots, "retain": retain}


def run(lib: Any, prog: dict, hooked: bool = True, create_graph: bool = False) -> tuple[list, list]:
    """Build the program on `lib`, hook every node, run backward; (what the hooks saw, leaves' grads)."""
    leaves = [lib.tensor(v, requires_grad=True) for v in prog["leaves"]]
    vals: list[Any] = list(leaves)
    for step in prog["steps"]:
        kind, op = step[0], step[1]
        if kind == "cat":
            vals.append(lib.cat([vals[i] for i in op]).sum())
            continue
        a = vals[step[2]]
        if kind == "unary":
            vals.append(getattr(a, op)())
        elif kind == "binary":
            b = vals[step[3]]
            vals.append(a + b if op == "add" else a - b if op == "sub" else a * b)
        else:
            vals.append(a * step[3] if op == "mul" else a + step[3])
    for i in prog["retain"]:
        vals[i].retain_grad()
    roots = [vals[i].sum() for i in prog["roots"]]
    # every node of the graph, numbered by creation order (AccumulateGrad: by its leaf)
    found: dict[Any, None] = {}
    stack = [r.grad_fn for r in roots]
    while stack:
        node = stack.pop()
        if node is None or node in found:
            continue
        found[node] = None
        stack.extend(n for n, _ in node.next_functions)
    ops = sorted((n for n in found if not n.name().endswith("AccumulateGrad")), key=lambda n: n._sequence_nr())
    label = {node: f"{node.name()}#{i}" for i, node in enumerate(ops)}
    for node in found:
        if node.name().endswith("AccumulateGrad"):
            leaf = node.variable
            label[node] = f"leaf#{next(i for i, t in enumerate(leaves) if t is leaf)}"
    seen: list = []
    for node in found if hooked else ():
        name = label[node]
        node.register_prehook(lambda go, name=name: seen.append(("pre", name, _vals(go))))
        node.register_hook(lambda gi, go, name=name: seen.append(("post", name, _vals(gi), _vals(go))))
    lib.autograd.backward(roots, create_graph=create_graph)
    grads = [_vals(t.grad) for t in leaves] + [_vals(vals[i].grad) for i in prog["retain"]]
    if create_graph:  # second order, through the recorded backward: the leaves' grads were graph members
        total = sum(t.grad.sum() for t in leaves if t.grad is not None and t.grad.requires_grad)
        if not isinstance(total, int):
            grads.append(_vals(lib.autograd.grad(total, leaves, allow_unused=True)))
    return seen, grads


def _vals(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, (tuple, list)):
        return tuple(_vals(t) for t in x)
    d = x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x._data)
    return np.round(d, 8).tolist()


def _names(seen: list) -> list:
    return [(kind, name) for kind, name, *_ in seen]


@pytest.mark.parametrize("chunk", range(8))
def test_random_programs_run_in_pytorchs_order(chunk: int) -> None:
    for seed in range(chunk * 50, chunk * 50 + 50):
        prog = make_program(seed)
        ours, our_grads = run(gradcalc, prog)
        theirs, their_grads = run(torch, prog)
        assert _names(ours) == _names(theirs), (seed, prog)
        assert ours == theirs, (seed, prog)
        assert our_grads == their_grads, (seed, prog)


@pytest.mark.filterwarnings("ignore::UserWarning")  # backward(create_graph=True)'s reference-cycle warning
@pytest.mark.parametrize("seed", range(1000, 1400, 8))
def test_random_programs_under_create_graph(seed: int) -> None:
    """Hooks see graph tensors; the order, and the gradients of the gradients, are PyTorch's."""
    prog = make_program(seed)
    ours, our_grads = run(gradcalc, prog, create_graph=True)
    theirs, their_grads = run(torch, prog, create_graph=True)
    assert ours == theirs, (seed, prog)
    assert our_grads == their_grads, (seed, prog)


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_observer_tells_the_same_story(seed: int) -> None:
    prog = make_program(seed)
    theirs, _ = run(torch, prog)
    events: list = []
    with observe_backward(events.append):
        ours, our_grads = run(gradcalc, prog)
    assert ours == theirs
    runs = [e for e in events if type(e) is NodeRun]
    pres = [s for s in ours if s[0] == "pre"]
    assert len(runs) == len(pres)
    posts = [s for s in ours if s[0] == "post"]
    for event, (_, _, go), (_, _, gi, _) in zip(runs, pres, posts, strict=True):
        assert _vals(event.grad_outputs) == go
        assert _vals(event.grad_inputs) == gi
        assert len(event.to) == len(event.grad_inputs) or event.node.name().endswith("AccumulateGrad")
        # a plain backward frees what each node saved: the event names it
        assert set(event.freed) <= set(type(event.node).saved_names) | {"0", "1"}
    accumulated = [e for e in events if type(e) is GradAccumulated]
    for e in accumulated:  # snapshots: .grad after the addition, and before it (None for the first)
        assert _vals(e.after) == _vals(e.tensor.grad) and e.before is None
    # without an observer or hooks (the plain walk), the same gradients
    assert run(gradcalc, prog, hooked=False)[1] == our_grads
