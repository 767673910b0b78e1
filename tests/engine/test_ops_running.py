"""logcumsumexp, cummax and cummin against PyTorch over generated cases: values, indices (ties and nans
included), grad_fn names, first and second derivatives (ops_oracle.check), forward-mode tangents, vmap, float32,
and the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_outcome
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 25


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    shape = tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(0, 4))))
    if shape and rng.random() < 0.1:
        shape = (*shape[:-1], 0)
    return shape


def _dim(rng: np.random.Generator, shape: tuple[int, ...]) -> int:
    n = max(len(shape), 1)
    return int(rng.integers(-n, n))


@pytest.mark.parametrize("seed", range(CASES))
def test_logcumsumexp(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    x = rng.standard_normal(shape) * (30.0 if seed % 5 == 0 else 1.0)  # large spreads: no overflow either way
    dim = _dim(rng, shape)
    check(lambda L, a: L.logcumsumexp(a, dim), [x], seed=seed)
    check(lambda L, a: (a * a).logcumsumexp(dim).sin(), [x], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name: str, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = _shape(rng)
    dim = _dim(rng, shape)
    x = rng.standard_normal(shape)
    check(lambda L, a: tuple(getattr(L, name)(a * 2.0, dim)), [x], seed=seed)
    check(lambda L, a: getattr(a.exp(), name)(dim).values.sum(), [x], seed=seed)
    # ties and nans: the index is PyTorch's (the later of equal elements; each nan's own)
    t = rng.integers(0, 3, shape).astype(np.float64)
    if t.size:
        t[rng.random(shape) < 0.15] = np.nan
    same_outcome(lambda L: tuple(getattr(L, name)(L.tensor(t), dim)))
    same_outcome(lambda L: tuple(getattr(L, name)(L.tensor(t.astype(np.int64) if not np.isnan(t).any() else
                                                             np.zeros(shape, np.int64)), dim)))


def test_saved_names_and_named_tuples() -> None:
    for lib in (gc, torch):
        x = lib.tensor([[1.0, 3.0, 2.0]], requires_grad=True)
        c = lib.cummax(x, -1)
        assert type(c).__name__ == "cummax" and c.indices.tolist() == [[0, 1, 1]]
        assert c.values.grad_fn.name() == "CummaxBackward0" and c.values.grad_fn._saved_dim == 2**64 - 1
        assert c.values.grad_fn._saved_indices.tolist() == [[0, 1, 1]]
        assert "torch.return_types.cummin(" in repr(lib.cummin(x, 1))
        g = lib.logcumsumexp(x, 1).grad_fn
        assert g.name() == "LogcumsumexpBackward0" and g._saved_dim == 1 and g._saved_self.tolist() == x.tolist()


JVP: dict[str, Callable[[Any], Callable]] = {
    "logcumsumexp": lambda L: lambda x: L.logcumsumexp(x * 3.0, 1),
    "cummax": lambda L: lambda x: L.cummax(x, 0).values,
    "cummin": lambda L: lambda x: L.cummin(x.sin(), -1).values,
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    rng = np.random.default_rng(9)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    outs = []
    for lib in (gc, torch):
        out, tangent = lib.func.jvp(JVP[name](lib), (lib.tensor(x),), (lib.tensor(t),))
        outs.append((out.detach().numpy(), tangent.detach().numpy()))
    if name == "logcumsumexp":
        # PyTorch's tangent is off by ~1e-11 here (its own error, against the same sums in long double): gradcalc's
        # is held to the exact value, and to PyTorch's within that
        xl, tl = x.astype(np.longdouble) * 3, t.astype(np.longdouble) * 3
        exact = np.cumsum(np.exp(xl) * tl, 1) / np.cumsum(np.exp(xl), 1)
        np.testing.assert_allclose(outs[0][1], exact.astype(np.float64), rtol=64 * np.finfo(np.float64).eps)
        np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-9)
        outs = [(o[0],) for o in outs]
    for o, th in zip(*outs, strict=True):
        np.testing.assert_allclose(o, th, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["logcumsumexp", "cummax values", "cummin indices"])
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap(name: str, in_dim: int) -> None:
    data = np.random.default_rng(3).standard_normal((5, 3, 4) if in_dim == 0 else (3, 5, 4))
    fs = {"logcumsumexp": lambda L: lambda x: L.logcumsumexp(x, -1), "cummax values": lambda L: lambda x:
          L.cummax(x, 0).values, "cummin indices": lambda L: lambda x: L.cummin(x, 1).indices}
    ours = gc.func.vmap(fs[name](gc), in_dims=in_dim)(gc.tensor(data))
    theirs = torch.func.vmap(fs[name](torch), in_dims=in_dim)(torch.tensor(data))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def test_float32() -> None:
    x = np.random.default_rng(5).standard_normal((6, 7)).astype(np.float32)
    for name in ("cummax", "cummin"):
        ours, theirs = getattr(gc, name)(gc.tensor(x), 1), getattr(torch, name)(torch.tensor(x), 1)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    ours = gc.logcumsumexp(gc.tensor(x), 1).numpy()
    theirs = torch.logcumsumexp(torch.tensor(x), 1).numpy()
    reference = torch.logcumsumexp(torch.tensor(x, dtype=torch.float64), 1).numpy()
    assert_float32_close(ours, theirs, reference, steps=3 * 7, what="logcumsumexp")


ERRORS: dict[str, Callable[[Any], Any]] = {
    "logcumsumexp of integers": lambda L: L.logcumsumexp(L.tensor([1, 2]), 0),
    "logcumsumexp of bools": lambda L: L.logcumsumexp(L.tensor([True]), 0),
    "cummax dim out of range": lambda L: L.cummax(L.ones(2), 1),
    "cummin no dim": lambda L: L.cummin(L.ones(2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name.startswith("logcumsumexp"))
