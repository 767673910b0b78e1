"""quantile and nanquantile against PyTorch over generated cases: every interpolation, q a number, a 0-d or a 1-D
tensor, dims incl. negative and none, keepdim, nans, values and grads to second order (ops_oracle.check),
forward-mode tangents, vmap, float32, and the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_outcome
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 20
MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 5, size=int(rng.integers(0, 4))))


def _q(L: Any, q: Any, x: Any) -> Any:
    return L.tensor(q, dtype=x.dtype) if isinstance(q, np.ndarray) else q


@pytest.mark.parametrize("seed", range(CASES))
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_values_and_gradients(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    size = int(np.prod(shape))
    x = ((rng.permutation(size) + rng.uniform(0.1, 0.9, size)) / 4.0).reshape(shape)  # distinct: one gradient
    n = max(len(shape), 1)
    dim = None if rng.random() < 0.3 else int(rng.integers(-n, n))
    keepdim = bool(rng.integers(0, 2))
    mode = MODES[seed % len(MODES)]
    kind = seed % 3
    # the ranks q (n - 1) of these fall between elements and on them (0, 0.5 and 1 among them)
    q = float(rng.choice([0.0, 0.5, 1.0, rng.random()])) if kind == 0 else (
        np.asarray(rng.random()) if kind == 1 else np.concatenate([[0.0, 1.0, 0.5], rng.random(2)]))
    check(lambda L, a: getattr(L, name)(a * 2.0, _q(L, q, a), dim, keepdim, interpolation=mode), [x], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_nans(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = (int(rng.integers(1, 4)), int(rng.integers(1, 6)))
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.3] = np.nan
    if seed % 4 == 0:
        x[0] = np.nan  # a slice of nans only
    q = np.array([0.1, 0.5, 0.9])
    for name in ("quantile", "nanquantile"):
        for dim in (None, 0, -1):
            same_outcome(lambda L, name=name, dim=dim: getattr(L, name)(L.tensor(x), L.tensor(q), dim,
                                                                        interpolation=MODES[seed % 5]))


def test_forward_mode_and_vmap() -> None:
    rng = np.random.default_rng(9)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    fs: dict[str, Callable[[Any], Callable]] = {
        "q number": lambda L: lambda a: L.quantile(a, 0.3),
        "q vector dim": lambda L: lambda a: L.quantile(a, L.tensor([0.2, 0.9], dtype=a.dtype), dim=1),
        "nan keepdim": lambda L: lambda a: L.nanquantile(a, 0.7, dim=0, keepdim=True),
    }
    for name, f in fs.items():
        outs = []
        for lib in (gc, torch):
            out, tangent = lib.func.jvp(f(lib), (lib.tensor(x),), (lib.tensor(t),))
            outs.append((out.detach().numpy(), tangent.detach().numpy()))
        for o, th in zip(*outs, strict=True):
            np.testing.assert_allclose(o, th, rtol=1e-12, atol=1e-14, err_msg=name)
    data = rng.standard_normal((5, 3, 4))
    for name, f in fs.items():
        for in_dim, batch in ((0, data), (1, np.moveaxis(data, 0, 1).copy())):
            ours = gc.func.vmap(f(gc), in_dims=in_dim)(gc.tensor(batch))
            theirs = torch.func.vmap(f(torch), in_dims=in_dim)(torch.tensor(batch))
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


def test_float32() -> None:
    x = np.random.default_rng(5).standard_normal((6, 7)).astype(np.float32)
    for mode in MODES:
        f = lambda L, a, mode=mode: L.quantile(a, L.tensor([0.1, 0.35, 0.8], dtype=a.dtype), 1,  # noqa: E731
                                                interpolation=mode)
        ours, theirs = f(gc, gc.tensor(x)).numpy(), f(torch, torch.tensor(x)).numpy()
        reference = f(torch, torch.tensor(x, dtype=torch.float64)).numpy()
        # the rank q (n - 1) and the interpolation: a few roundings at the values' scale
        assert_float32_close(ours, theirs, reference, steps=4, scale=float(np.abs(x).max()), what=mode)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "q above 1": lambda L: L.quantile(L.ones(2, 3), 1.5),
    "q below 0": lambda L: L.quantile(L.ones(3), -0.1),
    "q tensor of another dtype": lambda L: L.quantile(L.ones(3, dtype=L.float64), L.tensor([0.5], dtype=L.float32)),
    "q matrix": lambda L: L.quantile(L.ones(3), L.ones(2, 2)),
    "q vector out of range": lambda L: L.quantile(L.ones(3), L.tensor([0.5, 2.0])),
    "interpolation": lambda L: L.quantile(L.ones(3), 0.5, interpolation="cubic"),
    "integers": lambda L: L.quantile(L.tensor([1, 2]), 0.5),
    "empty": lambda L: L.nanquantile(L.tensor([]), 0.5),
    "dim out of range": lambda L: L.quantile(L.ones(2, 3), 0.5, 2),
}
SAME_TEXT = set(ERRORS) - {"dim out of range"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)
