"""Differential tests against PyTorch: random expression trees, evaluated and differentiated by both.

Hypothesis draws trees over `+ - * / **` (tensor with tensor, tensor with a Python number, number with
tensor), `sin exp tanh neg`, and the reductions `sum`/`mean` (whole, and over a dimension, with and without
keepdim), on leaves of broadcasting shapes. Each tree is run on gradcalc and on PyTorch in float64, and
these must agree:
- the value, to rtol 1e-9, and its printed repr exactly (`grad_fn=<...>` included);
- first-order gradients from `backward(gradient=...)`, to rtol 1e-9, and the printed `.grad` exactly;
- first-order gradients from `autograd.grad(..., create_graph=True)`: values and `requires_grad`;
- second-order gradients: `autograd.grad` of a weighted sum of those, to rtol 1e-9 (None where PyTorch
  gives None).

Divisors and the bases of fractional powers are kept away from zero by construction (`b*b + 0.5`), so
that values and derivatives stay finite: the point is the engine, not the edge cases of float arithmetic.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

SHAPES = [(), (3,), (2, 1), (1, 3), (2, 3)]  # all broadcast together, to (2, 3) at most
NUMBERS = [2.0, 3.0, 0.5, -1.5, 2]
POWERS = [2, 3, 2.0, 0.5, -1.0, -0.5, 1.5]
UNARY = ["sin", "exp", "tanh", "neg", "sum", "mean", "sum_dim", "mean_keepdim"]
BINARY = ["add", "sub", "mul", "div", "pow"]
KINDS = ["tensor_tensor", "tensor_number", "number_tensor"]
Tree = Any


# -- trees ------------------------------------------------------------------------------------------------
def trees(n_leaves: int) -> st.SearchStrategy[Tree]:
    leaf = st.integers(0, n_leaves - 1).map(lambda i: ("leaf", i))

    def extend(inner: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
        unary = st.tuples(st.sampled_from(UNARY), inner)
        binary = st.tuples(st.sampled_from(BINARY), st.sampled_from(KINDS), inner, inner,
                           st.sampled_from(NUMBERS), st.sampled_from(POWERS))
        return unary | binary

    return st.recursive(leaf, extend, max_leaves=8)


def positive(T: Any, t: Any) -> Any:
    """A value safely away from zero, still depending on `t`."""
    return t * t + 0.5


def evaluate(T: Any, tree: Tree, leaves: list[Any]) -> Any:
    """The tree's value in library `T` (`gradcalc` or `torch`), by the same code for both."""
    op = tree[0]
    if op == "leaf":
        return leaves[tree[1]]
    if op in UNARY:
        x = evaluate(T, tree[1], leaves)
        if op == "sin":
            return T.sin(x)
        if op == "exp":
            return x.exp()
        if op == "tanh":
            return T.tanh(x)
        if op == "neg":
            return -x
        if op == "sum":
            return x.sum()
        if op == "mean":
            return T.mean(x)
        if op == "sum_dim":
            return x.sum(dim=0) if x.dim() else x.sum()
        return x.mean(dim=-1, keepdim=True) if x.dim() else x.mean()
    _, kind, ta, tb, number, power = tree
    a, b = evaluate(T, ta, leaves), evaluate(T, tb, leaves)
    if kind == "tensor_number":
        b = number
    elif kind == "number_tensor":
        a = number
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    if op == "div":
        return a / (positive(T, b) if kind != "tensor_number" else b)
    # pow
    if kind == "tensor_number":
        return (a if isinstance(power, int) else positive(T, a)) ** power
    if kind == "number_tensor":
        return 1.5 ** T.tanh(b)
    return positive(T, a) ** T.tanh(b)


# -- one run ----------------------------------------------------------------------------------------------
def run(T: Any, tree: Tree, data: list[np.ndarray], weights: list[np.ndarray]) -> dict[str, Any]:
    """Everything the two libraries must agree on, for one tree."""
    leaves = [T.tensor(d, requires_grad=True) for d in data]
    out = evaluate(T, tree, leaves)
    found: dict[str, Any] = {"value": out, "repr": repr(out)}
    if not out.requires_grad:  # a tree without leaves (all numbers) cannot happen, but stay safe
        return found
    v = T.tensor(np.resize(weights[0], tuple(out.shape)))
    firsts = T.autograd.grad(out, leaves, grad_outputs=v, create_graph=True, allow_unused=True)
    found["first"] = firsts
    found["first_requires_grad"] = [None if g is None else g.requires_grad for g in firsts]
    out.backward(v, retain_graph=True)  # before the second order, whose grad() frees the forward graph too
    found["grad"] = [leaf.grad for leaf in leaves]
    found["grad_repr"] = [repr(leaf.grad) for leaf in leaves]
    total = None
    for g, w in zip(firsts, weights[1:], strict=False):
        if g is not None and g.requires_grad:
            term = (g * T.tensor(np.resize(w, tuple(g.shape)))).sum()
            total = term if total is None else total + term
    if total is not None:
        found["second"] = T.autograd.grad(total, leaves, allow_unused=True)
    return found


def as_array(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t._data)


def close(got: Any, expected: Any, what: str) -> None:
    e, g = as_array(expected), as_array(got)
    if e is None:
        assert g is None or not np.any(g), f"{what}: PyTorch has no gradient, gradcalc has {g}"
        return
    assert g is not None, f"{what}: gradcalc has no gradient, PyTorch has {e}"
    assert g.shape == e.shape, f"{what}: shape {g.shape} != {e.shape}"
    np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10 * (1 + float(np.max(np.abs(e), initial=0))),
                               err_msg=what)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tree=trees(3),
    shapes=st.lists(st.sampled_from(SHAPES), min_size=3, max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_expressions_match_pytorch(tree: Tree, shapes: list[tuple[int, ...]], seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    weights = [rng.uniform(-1.0, 1.0, (2, 3)) for _ in range(4)]

    expected = run(torch, tree, data, weights)
    finite = [as_array(expected["value"])]
    finite += [as_array(g) for g in expected.get("first", ()) + expected.get("second", ()) if g is not None]
    assume(all(np.all(np.isfinite(a)) and np.all(np.abs(a) < 1e8) for a in finite))
    got = run(gradcalc, tree, data, weights)
    compare(got, expected)


def _rounding_noise(got: Any, expected: Any) -> bool:
    """Whether either gradient holds rounding noise: a nonzero element a trillion times smaller than the
    largest (a cancellation such as `f(x) - f(x)` summed in another order). Its printed digits are noise,
    and so is the repr's choice of notation; the values are still compared, with a tolerance."""
    for t in (got, expected):
        a = as_array(t)
        if a is not None and a.size:
            tiny = np.abs(a)[a != 0]
            if tiny.size and tiny.min() < 1e-12 * max(1.0, float(np.abs(a).max())):
                return True
    return False


def compare(got: dict[str, Any], expected: dict[str, Any]) -> None:
    close(got["value"], expected["value"], "value")
    assert got["value"].requires_grad == expected["value"].requires_grad
    assert got["repr"] == expected["repr"]
    for i in range(3):
        close(got["grad"][i], expected["grad"][i], f"backward: leaf {i}")
        close(got["first"][i], expected["first"][i], f"grad: leaf {i}")
    for i, (mine, theirs) in enumerate(zip(got["grad_repr"], expected["grad_repr"], strict=True)):
        if not _rounding_noise(got["grad"][i], expected["grad"][i]):
            assert mine == theirs, f"backward: leaf {i}: repr {mine} != {theirs}"
    assert got["first_requires_grad"] == expected["first_requires_grad"]
    assert ("second" in got) == ("second" in expected)
    for i in range(3 if "second" in expected else 0):
        close(got["second"][i], expected["second"][i], f"second order: leaf {i}")


# -- a few fixed trees, so that every operator and kind of operand is surely covered ---------------------------
FIXED = [
    ("pow", "tensor_tensor", ("leaf", 0), ("leaf", 1), 2.0, 0.5),
    ("pow", "number_tensor", ("leaf", 0), ("leaf", 1), 2.0, 0.5),
    ("pow", "tensor_number", ("sin", ("leaf", 2)), ("leaf", 1), 2.0, -0.5),
    ("div", "number_tensor", ("leaf", 0), ("exp", ("leaf", 1)), 3.0, 2),
    ("div", "tensor_number", ("tanh", ("leaf", 0)), ("leaf", 1), -1.5, 2),
    ("sub", "number_tensor", ("leaf", 0), ("mean_keepdim", ("leaf", 2)), 0.5, 2),
    ("mul", "tensor_tensor", ("sum_dim", ("leaf", 2)), ("neg", ("leaf", 1)), 0.5, 2),
    ("add", "tensor_tensor", ("mean", ("leaf", 0)), ("sum", ("mul", "tensor_tensor", ("leaf", 1), ("leaf", 2),
                                                                2.0, 2)), 0.5, 2),
]


@pytest.mark.parametrize("tree", FIXED, ids=[f"{t[0]}-{t[1]}" for t in FIXED])
def test_fixed_expressions_match_pytorch(tree: Tree) -> None:
    rng = np.random.default_rng(7)
    data = [rng.uniform(-1.5, 1.5, s) for s in [(2, 3), (3,), (2, 1)]]
    weights = [rng.uniform(-1.0, 1.0, (2, 3)) for _ in range(4)]
    compare(run(gradcalc, tree, data, weights), run(torch, tree, data, weights))
