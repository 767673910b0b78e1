"""The narration of `explain backward` / `explain grad(...)` against PyTorch, on several hundred random programs.

Each program composes operations over one to three leaves (some constants: their branches are skipped),
marks some intermediates with `retain_grad`, and ends in a scalar. It runs in the language with
`--format json` under `explain backward out` (or `explain grad(out, [leaves])`), and the same program in
PyTorch with a prehook and a hook on every node of the graph: the nodes must come in the order PyTorch's
prehooks fire, each with the gradients PyTorch's prehook received (`grad_outputs`) and its hook saw it pass
on (`grad_inputs`); each `.grad` written must be PyTorch's.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
import torch

from tests.lang.gclang_testing import run

torch.set_default_dtype(torch.float64)

UNARY = ["sin", "cos", "exp", "tanh", "sigmoid"]
BINARY = ["+", "-", "*"]


def make_program(rng: random.Random) -> tuple[list[str], list[str], list[str], str, list[str]]:
    """(language lines, torch lines, leaves requiring grad, the output's name, retained names)."""
    n_leaves = rng.randint(1, 3)
    gc: list[str] = []
    py: list[str] = []
    leaves: list[str] = []
    values: list[str] = []
    req: dict[str, bool] = {}
    shape: dict[str, bool] = {}  # whether a value is a vector (else 0-d)
    grads = [rng.random() < 0.75 for _ in range(n_leaves)]
    if not any(grads):
        grads[0] = True
    for i in range(n_leaves):
        name = f"x{i}"
        data = [round(rng.uniform(0.3, 1.5), 3) for _ in range(3)] if rng.random() < 0.5 else round(
            rng.uniform(0.3, 1.5), 3)
        flag = " requires_grad" if grads[i] else ""
        gc.append(f"{name} = {data}{flag}")
        py.append(f"{name} = torch.tensor({data}, requires_grad={grads[i]})")
        if grads[i]:
            leaves.append(name)
        values.append(name)
        req[name] = grads[i]
        shape[name] = isinstance(data, list)
    retained: list[str] = []
    for k in range(rng.randint(1, 7)):
        name = f"v{k}"
        choice = rng.random()
        a = rng.choice(values)
        b = rng.choice(values)
        vec = shape[a]
        if choice < 0.3:
            fn = rng.choice(UNARY)
            expr_gc, expr_py = f"{fn}({a})", f"torch.{fn}({a})"
        elif choice < 0.6:
            op = rng.choice(BINARY)
            expr_gc = expr_py = f"{a} {op} {b}"
            vec = shape[a] or shape[b]
        elif choice < 0.68:
            p = rng.choice([2, 3])
            expr_gc = expr_py = f"{a} ** {p}"
        elif choice < 0.78:
            c = round(rng.uniform(0.5, 2.0), 2)
            op = rng.choice(["*", "+", "-", "/"])
            expr_gc = expr_py = f"{a} {op} {c}" if rng.random() < 0.7 else f"{c} {op} {a}"
            if expr_gc.startswith(f"{c} /"):
                expr_gc = expr_py = f"{c} * {a}"
        elif choice < 0.84:
            expr_gc, expr_py = f"{a} / exp({b})", f"{a} / torch.exp({b})"
            vec = shape[a] or shape[b]
        elif choice < 0.92:
            red = rng.choice(["sum", "mean"])
            expr_gc = expr_py = f"{a}.{red}()"
            vec = False
        elif shape[a]:
            i = rng.randint(0, 2)
            expr_gc = expr_py = f"{a}[{i}]"
            vec = False
        else:
            expr_gc, expr_py = f"{a}.clone()", f"{a}.clone()"
        gc.append(f"{name} = {expr_gc}")
        py.append(f"{name} = {expr_py}")
        values.append(name)
        shape[name] = vec
        used = expr_gc.replace("(", " ").replace(")", " ").replace("[", " ").replace(".", " ").split()
        req[name] = any(req[v] for v in values[:-1] if v in used)
    # the output: the sum of the last value and maybe another one
    last = values[-1]
    other = rng.choice([v for v in values if req[v]])
    gc.append(f"out = ({last} * {other}).sum()")
    py.append(f"out = ({last} * {other}).sum()")
    retained = [v for v in values if v.startswith("v") and req[v]]
    return gc, py, leaves, "out", retained


def torch_trace(
    py: list[str], retain: list[str], mode: str, leaves: list[str], flag: str
) -> tuple[list, dict, Any]:
    env: dict = {"torch": torch}
    made_at: dict = {}  # node -> the line (1-based) whose statement made it
    for number, line in enumerate(py, 1):
        exec(line, env)  # noqa: S102 - our own generated program
        stack = [v.grad_fn for v in env.values() if isinstance(v, torch.Tensor)]
        while stack:
            node = stack.pop()
            if node is None or node in made_at or node.name().endswith("AccumulateGrad"):
                continue
            made_at[node] = number
            stack.extend(n for n, _ in node.next_functions)
    out = env["out"]
    for name in retain:
        env[name].retain_grad()
    order: list[tuple[str, list, list | None, int | None]] = []
    seen: set = set()
    stack = [out.grad_fn]
    slots: dict = {}
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)

        def pre(grad_outputs: tuple, node: object = node) -> None:
            slots[node] = len(order)
            order.append((node.name().removeprefix("torch::autograd::"), [_arr(g) for g in grad_outputs], None,
                          made_at.get(node)))

        def post(grad_inputs: tuple, grad_outputs: tuple, node: object = node) -> None:
            i = slots[node]
            order[i] = (order[i][0], order[i][1], [_arr(g) for g in grad_inputs], order[i][3])

        node.register_prehook(pre)
        node.register_hook(post)
        stack.extend(n for n, _ in node.next_functions)
    if mode == "backward":
        out.backward(**({flag: True} if flag else {}))
        result = None
    else:
        result = torch.autograd.grad(out, [env[n] for n in leaves], allow_unused=True)
    return order, env, result


def _arr(g: object) -> object:
    return None if g is None else np.asarray(g.detach().numpy(), dtype=float)


def _close(mine: object, theirs: object) -> bool:
    if theirs is None or mine is None:
        return theirs is None and mine is None
    return np.allclose(np.asarray(mine["value"], dtype=float), theirs, rtol=1e-9, atol=1e-12)


def check_program(seed: int) -> None:
    rng = random.Random(seed)
    gc, py, leaves, out, names = make_program(rng)
    retain = [n for n in names if rng.random() < 0.3]
    mode = "grad" if rng.random() < 0.25 else "backward"
    lines = list(gc)
    lines += [f"retain_grad {n}" for n in retain]
    flag = rng.choice(["", "", "", " retain_graph", " create_graph"])
    if mode == "backward":
        lines.append(f"explain backward {out}{flag}")
    else:
        lines.append(f"explain grad({out}, [{', '.join(leaves)}], allow_unused=true)")
    r = run("\n".join(lines) + "\n", format="json")
    assert r.ok, (seed, r.err, lines)
    events = [json.loads(line) for line in r.out.splitlines()]
    nodes = [e for e in events if e.get("event") == "node"]
    order, env, result = torch_trace(py, retain, mode, leaves, flag.strip())
    context = (seed, "\n".join(lines), [n["node"] for n in nodes], [o[0] for o in order])
    assert [n["node"] for n in nodes] == [o[0] for o in order], context
    for mine, (name, grad_outputs, grad_inputs, line) in zip(nodes, order, strict=True):
        assert mine["line"] == line, (context, name, mine["line"], line)  # where the node was made
        assert len(mine["grad_outputs"]) == len(grad_outputs), context
        for m, t in zip(mine["grad_outputs"], grad_outputs, strict=True):
            assert _close(m, t), (context, name, m, t)
        if name != "AccumulateGrad" and grad_inputs is not None:
            assert len(mine["grad_inputs"]) == len(grad_inputs), context
            for m, t in zip(mine["grad_inputs"], grad_inputs, strict=True):
                assert _close(m, t), (context, name, "grad_inputs", m, t)
    grads = {e["name"]: e["after"] for e in events if e.get("event") == "grad"}
    # backward fills leaves and retained non-leaves; grad() (as PyTorch's) only the retained ones
    for name in (leaves if mode == "backward" else []) + retain:
        theirs = env[name].grad
        if theirs is None:
            assert name not in grads, context
        else:
            assert _close(grads[name], _arr(theirs)), (context, name)
    if mode == "grad":
        results = {e["name"]: e["value"] for e in events if e.get("event") == "result"}
        assert not set(grads) & set(leaves), context
        for name, value in zip(leaves, result, strict=True):
            assert _close(results.get(name), _arr(value)), (context, name)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("block", range(8))
def test_narration_follows_pytorchs_prehooks(block: int) -> None:
    for seed in range(block * 50, block * 50 + 50):  # 400 programs
        check_program(seed)
