"""The batching-rule slot of the op specs (autograd/batching.py) against `torch.vmap`: an elementwise function, a
reduction with `dim`, and matmul, at any batch dimension of any argument (None for one not mapped), and nested
levels (`vmap(vmap(f))`), each operation run once per level by its rule, not once per sample."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import batching, batching_ops, spec  # noqa: F401 - batching_ops: the rules of particular ops
from gradcalc.autograd.batching import bind

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def _close(ours: Any, theirs: Any) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def _both(f_ours: Any, f_torch: Any, arrays: list[np.ndarray], in_dims: Any, out_dims: int = 0) -> None:
    ours = batching.vmap(f_ours, in_dims, out_dims)(*[gc.tensor(a) for a in arrays])
    theirs = torch.vmap(f_torch, in_dims, out_dims)(*[torch.tensor(a) for a in arrays])
    _close(ours, theirs)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The operations the rules ran, by name: each once per level, whatever the batch size."""
    seen: list[str] = []
    real = batching.bind

    def spy(name: str, *args: Any, **params: Any) -> Any:
        seen.append(name)
        return real(name, *args, **params)

    monkeypatch.setattr(batching, "bind", spy)
    return seen


def test_the_rules_registered() -> None:
    """Which operations have a batching rule (vmap falls back to a loop for the others: issue 22)."""
    with_rule = {name for name, op in spec.OPS.items() if op.vmap is not None}
    assert {"sin", "exp", "tanh", "add", "mul", "sum", "mean", "amax", "logsumexp", "matmul", "movedim",
            "unsqueeze", "squeeze", "expand", "reshape", "view"} <= with_rule


def _batch(rng: np.random.Generator, sample: tuple[int, ...], d: int, size: int = 6) -> np.ndarray:
    """Samples of shape `sample`, a batch of `size` of them along dim `d`."""
    shape = list(sample)
    shape.insert(d % (len(sample) + 1), size)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("d", [0, 1, 2, -1])
def test_elementwise_at_any_batch_dim(d: int) -> None:
    rng = np.random.default_rng(0)
    x, w = _batch(rng, (4, 5), d), rng.standard_normal((5,))
    _both(lambda a, b: bind("mul", bind("sin", a), b), lambda a, b: a.sin() * b, [x, w], (d, None))
    y = _batch(rng, (5,), 0)  # a sample of fewer dims, batched at 0: broadcast against the other's samples
    _both(lambda a, b: bind("add", bind("exp", a), bind("tanh", b)), lambda a, b: a.exp() + b.tanh(), [x, y], (d, 0))
    _both(lambda a, b: bind("mul", a, 2.5), lambda a, b: a * 2.5, [x, y], (d, 0))


@pytest.mark.parametrize("d", [0, 1, 2])
@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1), None])
@pytest.mark.parametrize("keepdim", [False, True])
def test_a_reduction_with_dim(d: int, dim: Any, keepdim: bool) -> None:
    x = np.random.default_rng(1).standard_normal((3, 4, 5))
    for name in ("sum", "mean", "amax", "logsumexp"):
        if dim is None and name == "logsumexp":
            continue  # logsumexp takes a dim
        theirs = getattr(torch, name)

        def f(a: Any, name: str = name) -> Any:
            return bind(name, a, dim, keepdim=keepdim) if dim is not None else bind(name, a)

        def g(a: Any, theirs: Any = theirs) -> Any:
            return theirs(a, dim, keepdim=keepdim) if dim is not None else theirs(a)

        _both(f, g, [x], d)


SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
          ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (2, 4, 5))]


@pytest.mark.parametrize(("sa", "sb"), SHAPES)
@pytest.mark.parametrize("dims", [(0, 0), (0, None), (None, 0), (1, 0), (0, -1)])
def test_matmul(sa: tuple[int, ...], sb: tuple[int, ...], dims: tuple[Any, Any]) -> None:
    rng = np.random.default_rng(2)
    arrays = []
    for shape, d in zip((sa, sb), dims, strict=True):
        if d is None:
            arrays.append(rng.standard_normal(shape))
        else:  # a batch of 6 at dim d
            full = list(shape)
            full.insert(d % (len(shape) + 1), 6)
            arrays.append(rng.standard_normal(full))
    _both(lambda a, b: bind("matmul", a, b), torch.matmul, arrays, dims)


def test_levels_nest(calls: list[str]) -> None:
    """vmap(vmap(f)) with different dims at each level, against torch's; and each rule runs once per level."""
    rng = np.random.default_rng(3)
    x, m = rng.standard_normal((3, 5, 4)), rng.standard_normal((4, 2))

    def f(a: Any, b: Any) -> Any:
        return bind("sum", bind("mul", bind("matmul", bind("unsqueeze", bind("sin", a), 0), b), 2.0), 0)

    def g(a: Any, b: Any) -> Any:
        return ((a.sin().unsqueeze(0) @ b) * 2.0).sum(0)

    # outer: over x's dim 1 (5), with m not mapped; inner: over the outer sample's dim 0 (3)
    ours = batching.vmap(batching.vmap(f, (0, None)), (1, None))(gc.tensor(x), gc.tensor(m))
    theirs = torch.vmap(torch.vmap(g, (0, None)), (1, None))(torch.tensor(x), torch.tensor(m))
    _close(ours, theirs)
    # one call of f: sin, matmul, mul, sum each bound once at the inner level, then each rule's own operations
    assert calls.count("sin") == 2  # the inner level's rule binds sin again, at the outer level; 5 x 3 samples
    assert len(calls) < 40
    # and with the inner level's output at dim 1
    x2 = x.transpose(2, 0, 1).copy()  # (4, 3, 5): outer over dim 2, inner over the outer sample's dim 1
    ours = batching.vmap(batching.vmap(f, (1, None), 1), (2, None))(gc.tensor(x2), gc.tensor(m))
    theirs = torch.vmap(torch.vmap(g, (1, None), 1), (2, None))(torch.tensor(x2), torch.tensor(m))
    _close(ours, theirs)


def test_an_output_the_same_for_every_sample_is_repeated() -> None:
    w = np.arange(3.0)
    _both(lambda a, b: bind("exp", b), lambda a, b: b.exp(), [np.ones((4, 2)), w], (0, None))


def test_gradients_flow_through_a_batched_computation() -> None:
    """The rules are written with the engine's operations: the result is differentiable, as torch.vmap's."""
    rng = np.random.default_rng(4)
    xs, m = rng.standard_normal((6, 3)), rng.standard_normal((3, 2))
    grads = []
    for lib, mapped in ((gc, batching.vmap(lambda a, b: bind("sum", bind("tanh", bind("matmul", a, b))), (0, None))),
                        (torch, torch.vmap(lambda a, b: (a @ b).tanh().sum(), (0, None)))):
        w = lib.tensor(m, requires_grad=True)
        out = mapped(lib.tensor(xs), w)
        (g,) = lib.autograd.grad(out.sum(), w)
        grads.append(g)
    _close(*grads)
