"""plan.plan_one, grad()'s planner for one output and one input, against plan_pass, the reference: over many generated
graphs (chains, branches, several leaves of which some are not targets, non-leaf inputs, second outputs of a
node, unused inputs, saved tensors changed in place, graphs freed by an earlier backward) both plan every field
alike, or raise the same error; and grad() through the fast path gives what PyTorch gives."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd.plan import plan_one, plan_pass
from gradcalc.autograd.tensor import Tensor

FIELDS = ("root_edges", "root_nodes", "deps", "buffers", "stored", "suspects", "inputs", "capture", "captured",
          "wanted_leaves", "needed", "allow_unused")


def _graph(rng: random.Random) -> tuple[Tensor, list[Tensor]]:
    """A random scalar output over a few leaves and intermediates; the tensors an input may be drawn from."""
    leaves = [gc.tensor(rng.uniform(0.5, 2.0), dtype=gc.float64, requires_grad=rng.random() < 0.85)
              for _ in range(rng.randint(1, 4))]
    pool: list[Tensor] = list(leaves)
    for _ in range(rng.randint(0, 6)):
        a, b = rng.choice(pool), rng.choice(pool)
        kind = rng.randrange(6)
        if kind == 0:
            t = a * b
        elif kind == 1:
            t = a ** rng.choice([2, 3, 0.5])
        elif kind == 2:
            t = (a + 1.0).sin()
        elif kind == 3:  # a node with two outputs: the second one goes on
            t = gc.stack([a, b]).unbind(0)[rng.randrange(2)]
        elif kind == 4:
            t = a * 0.5 - b
        else:
            t = a.exp() * b
        pool.append(t)
    out = pool[-1] if len(pool) > len(leaves) else pool[0] * 2.0
    if rng.random() < 0.2:  # a saved tensor changed in place since (an error when the walk would need it)
        try:
            with gc.no_grad():
                rng.choice(pool).add_(0.0)
        except RuntimeError:  # (a view PyTorch's rules keep from changing in place: no case)
            pass
    return out, pool


def _comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_comparable(v) for v in value)
    if isinstance(value, Tensor):
        return ("tensor", id(value))
    return value


def _outcome(make: Any) -> tuple[str, Any]:
    try:
        plan = make()
    except Exception as exc:  # noqa: BLE001 (the two planners must fail alike)
        return "error", (type(exc), str(exc))
    fields = {name: _comparable(getattr(plan, name)) for name in FIELDS}
    # the implied gradient's array is one per call: compared by its place in `stored`, not its id
    return "plan", fields


@pytest.mark.parametrize("seed", range(300))
def test_plan_one_is_plan(seed: int) -> None:
    rng = random.Random(seed)
    out, pool = _graph(rng)
    if not out.requires_grad:
        return
    inp = rng.choice(pool)
    allow_unused = rng.random() < 0.5
    g = Tensor._make(np.array(1.0), False, None)
    expected = _outcome(lambda: plan_pass([(out, g)], [inp], False, allow_unused))
    got = _outcome(lambda: plan_one(out, g, inp, allow_unused))
    assert got == expected


def test_plan_one_freed_graph_fails_as_plan() -> None:
    x = gc.tensor(1.5, dtype=gc.float64, requires_grad=True)
    y = x.exp() * x
    y.backward()
    g = Tensor._make(np.array(1.0), False, None)
    with pytest.raises(RuntimeError) as a:
        plan_pass([(y, g)], [x], False, False)
    with pytest.raises(RuntimeError) as b:
        plan_one(y, g, x, False)
    assert str(a.value) == str(b.value)


@pytest.mark.parametrize("seed", range(40))
def test_grad_one_output_one_input_matches_pytorch(seed: int) -> None:
    """Second derivatives through the fast path (and the general one, with lists) against PyTorch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    v, p = float(rng.uniform(0.5, 2.0)), int(rng.integers(2, 5))

    def run(T: Any, lists: bool) -> list[float]:
        x = T.tensor(v, dtype=T.float64, requires_grad=True)
        y = x**p * T.sin(x)
        (g,) = T.autograd.grad([y] if lists else y, [x] if lists else x, create_graph=True)
        (h,) = T.autograd.grad([g] if lists else g, [x] if lists else x)
        return [float(g.detach()), float(h), g.grad_fn.name()]  # type: ignore[list-item]

    expected = run(torch, False)
    for lists in (False, True):
        got = run(gc, lists)
        assert got[2] == expected[2]
        np.testing.assert_allclose(got[:2], expected[:2], rtol=1e-12)
