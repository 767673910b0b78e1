"""nansum, nanmean, count_nonzero, median, kthvalue, mode, aminmax, var_mean and std_mean against PyTorch over
generated cases: values, dtypes, indices, grad_fn names, first and second derivatives (ops_oracle.check),
forward-mode tangents, vmap, float32, ties and nans, the named tuples, and the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_outcome, same_vmap
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 20


def _shape(rng: np.random.Generator, low: int = 0) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(low, 4))))


def _dim(rng: np.random.Generator, shape: tuple[int, ...]) -> int:
    n = max(len(shape), 1)
    return int(rng.integers(-n, n))


def _distinct(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values without ties (the selecting reductions' index is then the one PyTorch's documentation fixes)."""
    size = int(np.prod(shape))
    return (rng.permutation(size) + rng.uniform(0.1, 0.9, size)).reshape(shape) / 3.0


@pytest.mark.parametrize("seed", range(CASES))
def test_nansum_nanmean(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    x = rng.standard_normal(shape)
    if x.size:
        x[rng.random(shape) < 0.3] = np.nan
    dim = _dim(rng, shape)
    keepdim = bool(rng.integers(0, 2))
    check(lambda L, a: L.nansum(a) * 2.0 + L.nansum(a * a, dim, keepdim=keepdim).sum(), [x], seed=seed)
    if len(shape) >= 2:
        check(lambda L, a: a.nansum((0, -1), keepdim=keepdim).exp().sum(), [x], seed=seed)
    check(lambda L, a: L.nanmean(a * a, dim, keepdim), [x], seed=seed)
    check(lambda L, a: a.nanmean(), [x], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_median_kthvalue_mode(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = _shape(rng, 1)
    x = _distinct(rng, shape)
    dim, keepdim = _dim(rng, shape), bool(rng.integers(0, 2))
    check(lambda L, a: L.median(a * a), [x], seed=seed)
    # along a dim, the gradient's node: PyTorch's value_selecting_reduction_backward scatters (ScatterBackward0),
    # gradcalc's selects with a mask (WhereBackward0), as its max(x, dim) does
    check(lambda L, a: tuple(L.median(a * 2.0, dim, keepdim)), [x], seed=seed, grad_names=False)
    k = int(rng.integers(1, shape[dim] + 1))
    check(lambda L, a: tuple(L.kthvalue(a.sin(), k, dim, keepdim)), [x], seed=seed, grad_names=False)
    check(lambda L, a: tuple(a.kthvalue(1)), [x], seed=seed, grad_names=False)
    # mode: few distinct values, so that some repeat
    r = np.round(rng.standard_normal(shape) * 1.5)
    check(lambda L, a: tuple(L.mode(a * 1.0, dim, keepdim)), [r], seed=seed, grad_names=False)
    check(lambda L, a: tuple(a.mode()), [r], seed=seed, grad_names=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_ties_and_nans_choose_pytorchs_index(seed: int) -> None:
    """PyTorch documents the lower median and, for mode, the smallest of equally frequent values; the index it
    returns among equal elements is what its CPU kernels give, compared here over many tied cases."""
    rng = np.random.default_rng(200 + seed)
    shape = _shape(rng, 1)
    x = rng.integers(0, 3, shape).astype(np.float64)
    dim = _dim(rng, shape)
    same_outcome(lambda L: tuple(L.mode(L.tensor(x), dim)))
    same_outcome(lambda L: L.median(L.tensor(x)))
    same_outcome(lambda L: tuple(L.median(L.tensor(x), dim)))
    y = x.copy()
    y[rng.random(shape) < 0.3] = np.nan
    same_outcome(lambda L: tuple(L.median(L.tensor(y), dim)))
    same_outcome(lambda L: L.median(L.tensor(y)))


@pytest.mark.parametrize("seed", range(CASES))
def test_aminmax(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    shape = _shape(rng, 1)
    x = rng.integers(0, 4, shape).astype(np.float64) if seed % 3 == 0 else rng.standard_normal(shape)  # ties too
    dim, keepdim = _dim(rng, shape), bool(rng.integers(0, 2))
    check(lambda L, a: tuple(L.aminmax(a * a)), [x], seed=seed)
    check(lambda L, a: tuple(L.aminmax(a * 2.0, dim=dim, keepdim=keepdim)), [x], seed=seed)
    check(lambda L, a: a.aminmax(dim=dim).max, [x], seed=seed)
    check(lambda L, a: L.aminmax(a, keepdim=True).min, [x], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_std_mean(name: str, seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    shape = _shape(rng, 1)
    x = rng.standard_normal(shape)
    f = lambda L: getattr(L, name)  # noqa: E731
    dim, keepdim, correction = _dim(rng, shape), bool(rng.integers(0, 2)), int(rng.integers(0, 2))
    check(lambda L, a: tuple(f(L)(a * a)), [x], seed=seed)
    check(lambda L, a: tuple(f(L)(a, dim, keepdim=keepdim, correction=correction)), [x], seed=seed)
    check(lambda L, a: f(L)(a, dim, unbiased=False)[0], [x], seed=seed)  # one output only
    if len(shape) > 1:
        check(lambda L, a: f(L)(a.exp(), (0, -1))[1], [x], seed=seed)


def test_count_nonzero() -> None:
    rng = np.random.default_rng(1)
    for shape in [(), (0,), (3,), (2, 3), (2, 0, 3), (2, 3, 4)]:
        x = rng.integers(-1, 2, shape)
        for dim in [None, *range(-len(shape), len(shape))] + ([(0, -1)] if len(shape) > 1 else []):
            for data in (x, x.astype(np.float64), x.astype(bool)):
                same_outcome(lambda L, data=data, dim=dim: L.count_nonzero(L.tensor(data), dim))


def test_integers_and_0d_and_named_tuples() -> None:
    ints = np.array([[3, 1, 2], [5, 5, 0]])
    for f in (lambda L, a: L.nansum(a), lambda L, a: L.nansum(a, 1), lambda L, a: L.median(a),
              lambda L, a: tuple(L.median(a, 0)), lambda L, a: tuple(L.kthvalue(a, 2)), lambda L, a: tuple(L.mode(a)),
              lambda L, a: tuple(L.aminmax(a)), lambda L, a: tuple(L.aminmax(a, dim=0))):
        same_outcome(lambda L, f=f: f(L, L.tensor(ints)))
    zero = np.array(2.5)
    for f in (lambda L, a: L.median(a), lambda L, a: tuple(L.median(a, 0)), lambda L, a: tuple(L.kthvalue(a, 1)),
              lambda L, a: tuple(L.mode(a, -1)), lambda L, a: tuple(L.aminmax(a, dim=0, keepdim=True)),
              lambda L, a: tuple(L.var_mean(a, correction=0)), lambda L, a: L.nanmean(a), lambda L, a: L.nansum(a, 0)):
        same_outcome(lambda L, f=f: f(L, L.tensor(zero)))
    same_outcome(lambda L: L.median(L.tensor([])))
    for lib in (gc, torch):
        x = lib.tensor([[1.0, 4.0, 2.0]])
        m = lib.median(x, 1)
        assert type(m).__name__ == "median" and m.values.tolist() == [2.0] and m.indices.tolist() == [2]
        assert "torch.return_types.median(" in repr(m)
        assert lib.kthvalue(x, 3).values.tolist() == [4.0] and type(lib.mode(x)).__name__ == "mode"
        a = lib.aminmax(x)
        assert type(a).__name__ == "aminmax" and (a.min.item(), a.max.item()) == (1.0, 4.0)
        assert "torch.return_types.aminmax(" in repr(a)
        assert isinstance(lib.std_mean(x), tuple) and len(lib.var_mean(x, 1)) == 2


def test_saved_names() -> None:
    for lib in (gc, torch):
        x = lib.tensor([[1.0, 4.0, 2.0], [0.5, 3.0, 1.0]], requires_grad=True)
        s = lib.std_mean(x, 1)
        assert s[0].grad_fn is s[1].grad_fn and s[0].grad_fn.name() == "StdMeanBackward0"
        assert s[0].grad_fn._saved_dim == (1,) and s[0].grad_fn._saved_correction == 1
        assert lib.var_mean(x)[0].grad_fn._saved_dim is None
        assert lib.nansum(x, -1).grad_fn._saved_dim == (2**64 - 1,) and lib.nansum(x).grad_fn._saved_dim is None
        k = lib.kthvalue(x, 2, 0).values.grad_fn
        assert k.name() == "KthvalueBackward0" and k._saved_dim == 0 and k._saved_indices.tolist() == [0, 0, 0]
        a = lib.aminmax(x, dim=1).min.grad_fn
        assert a._saved_dim == 1 and a._saved_min.tolist() == [1.0, 0.5] and a._saved_max.tolist() == [4.0, 3.0]
        assert lib.median(x).grad_fn._saved_result.item() == 1.0


# -- forward mode, vmap, float32 ------------------------------------------------------------------------------------
JVP: dict[str, Callable[[Any], Callable]] = {
    "nansum": lambda L: lambda x: L.nansum(x * x, 1),
    "nansum all": lambda L: lambda x: L.nansum(x.exp()),
    "nanmean": lambda L: lambda x: L.nanmean(x.sin(), 0, keepdim=True),
    "median": lambda L: lambda x: L.median(x * 2.0),
    "median dim": lambda L: lambda x: L.median(x, 1).values,
    "kthvalue": lambda L: lambda x: L.kthvalue(x.exp(), 2, 0).values,
    "mode": lambda L: lambda x: L.mode(x, 1).values,
    "aminmax min": lambda L: lambda x: L.aminmax(x * x, dim=0).min,
    "aminmax max": lambda L: lambda x: L.aminmax(x).max,
    "var_mean var": lambda L: lambda x: L.var_mean(x, 1)[0],
    "var_mean mean": lambda L: lambda x: L.var_mean(x.exp(), 0, keepdim=True)[1],
    "std_mean std": lambda L: lambda x: L.std_mean(x, correction=0)[0],
    "std_mean mean": lambda L: lambda x: L.std_mean(x * x)[1],
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    rng = np.random.default_rng(9)
    x, t = _distinct(rng, (3, 4)), rng.standard_normal((3, 4))
    outs = []
    for lib in (gc, torch):
        out, tangent = lib.func.jvp(JVP[name](lib), (lib.tensor(x),), (lib.tensor(t),))
        outs.append((out.detach().numpy(), tangent.detach().numpy()))
    for o, th in zip(*outs, strict=True):
        np.testing.assert_allclose(o, th, rtol=1e-12, atol=1e-14)


VMAP: dict[str, Callable[[Any], Callable]] = {
    "nansum": lambda L: lambda x: L.nansum(x, -1),
    "nanmean": lambda L: lambda x: L.nanmean(x),
    "count_nonzero": lambda L: lambda x: L.count_nonzero(x > 0.3, 0),
    "median": lambda L: lambda x: L.median(x),
    "median dim": lambda L: lambda x: L.median(x, 0).indices,
    "kthvalue": lambda L: lambda x: L.kthvalue(x, 2, -1).values,
    "mode": lambda L: lambda x: L.mode(x.round()).values,
    "aminmax": lambda L: lambda x: L.aminmax(x, dim=1).max,
    "aminmax all": lambda L: lambda x: L.aminmax(x).min,
    "var_mean": lambda L: lambda x: L.var_mean(x, 1)[0],
    "std_mean": lambda L: lambda x: L.std_mean(x)[1],
}


@pytest.mark.parametrize("name", sorted(VMAP))
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap(name: str, in_dim: int) -> None:
    same_vmap(VMAP[name], in_dim)


def test_float32() -> None:
    """The selecting reductions are exact in float32; the sums as close as PyTorch's own."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 7)).astype(np.float32)
    for f in (lambda L, a: L.median(a), lambda L, a: L.median(a, 1).values, lambda L, a: L.kthvalue(a, 3, 0).values,
              lambda L, a: L.aminmax(a, dim=1).min, lambda L, a: L.mode(a.round()).values):
        ours, theirs = f(gc, gc.tensor(x)), f(torch, torch.tensor(x))
        assert ours.dtype == gc.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for name, f, steps in (("nansum", lambda L, a: L.nansum(a, 1), 7), ("nanmean", lambda L, a: L.nanmean(a, 0), 8),
                           ("var_mean", lambda L, a: L.var_mean(a, 1)[0], 30),
                           ("std_mean", lambda L, a: L.std_mean(a)[0], 90)):
        ours, theirs = f(gc, gc.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy()
        reference = f(torch, torch.tensor(x, dtype=torch.float64)).numpy()
        assert_float32_close(ours, theirs, reference, steps=steps, scale=float(np.abs(x).sum(1).max()), what=name)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "nanmean of integers": lambda L: L.nanmean(L.tensor([1, 2])),
    "std_mean of integers": lambda L: L.std_mean(L.tensor([1, 2])),
    "median empty dim": lambda L: L.median(L.ones(2, 0), 1),
    "mode empty dim": lambda L: L.mode(L.ones(2, 0)),
    "kthvalue too large": lambda L: L.kthvalue(L.ones(2, 3), 4, 1),
    "kthvalue zero": lambda L: L.kthvalue(L.ones(2, 3), 0),
    "aminmax empty": lambda L: L.aminmax(L.tensor([])),
    "median dim out of range": lambda L: L.median(L.ones(2, 3), 2),
    "count_nonzero repeated dim": lambda L: L.count_nonzero(L.ones(2, 2), (0, 0)),
}
SAME_TEXT = {"nanmean of integers", "std_mean of integers", "median empty dim", "mode empty dim",
             "kthvalue too large", "kthvalue zero", "aminmax empty"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)
