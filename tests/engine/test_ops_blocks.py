"""unflatten, rot90, block_diag, cartesian_prod, vander, trapezoid/trapz and cumulative_trapezoid against PyTorch
over generated cases: values, grad_fn names, first and second derivatives (ops_oracle.check), forward-mode
tangents, vmap over in_dims 0 and 1, float32 (tests/precision.py), integer inputs, and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_jvp, same_outcome
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 25


def _shape(rng: np.random.Generator, low: int = 0, high: int = 4) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(low, high))))


@pytest.mark.parametrize("seed", range(CASES))
def test_unflatten(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng, low=1)
    dim = int(rng.integers(-len(shape), len(shape)))
    n = shape[dim]
    factors = [d for d in range(1, n + 1) if n % d == 0]
    a = int(rng.choice(factors))
    sizes = [a, n // a] if rng.random() < 0.7 else [n]
    if rng.random() < 0.4:
        sizes[int(rng.integers(0, len(sizes)))] = -1
    check(lambda L, x: L.unflatten(x * x, dim, tuple(sizes)), [rng.standard_normal(shape)], seed=seed)
    check(lambda L, x: x.unflatten(dim, sizes).exp(), [rng.standard_normal(shape)], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_rot90(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = _shape(rng, low=2)
    a, b = rng.choice(len(shape), size=2, replace=False)
    dims = [int(a) - len(shape) if rng.random() < 0.3 else int(a), int(b)]
    k = int(rng.integers(-5, 6))
    check(lambda L, x: L.rot90(x * x, k, dims), [rng.standard_normal(shape)], seed=seed)
    if len(shape) == 2:
        check(lambda L, x: x.rot90().sin(), [rng.standard_normal(shape)], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_block_diag(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    shapes = [_shape(rng, 0, 3) for _ in range(int(rng.integers(1, 4)))]
    check(lambda L, *xs: L.block_diag(*[x * x for x in xs]), [rng.standard_normal(s) for s in shapes],
          seed=seed, grad_names=False)  # (a number's block: PyTorch's engine squeezes, gradcalc slices first)


@pytest.mark.parametrize("seed", range(CASES))
def test_cartesian_prod(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    shapes = [(int(rng.integers(0 if rng.random() < 0.1 else 1, 4)),) for _ in range(int(rng.integers(1, 4)))]
    check(lambda L, *xs: L.cartesian_prod(*[x * x for x in xs]), [rng.standard_normal(s) for s in shapes],
          seed=seed, grad_names=False)  # (gradients through meshgrid's views, reshaped otherwise than PyTorch's)


@pytest.mark.parametrize("seed", range(CASES))
def test_trapezoid(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    shape = _shape(rng, low=1)
    dim = int(rng.integers(-len(shape), len(shape)))
    y = rng.standard_normal(shape)
    dx = float(rng.uniform(0.1, 2.0))
    check(lambda L, a: L.trapezoid(a * a, dim=dim), [y], seed=seed)
    check(lambda L, a: L.trapz(a.exp(), dx=dx, dim=dim), [y], seed=seed)
    check(lambda L, a: L.cumulative_trapezoid(a * a, dx=dx, dim=dim), [y], seed=seed)
    # sample points: a vector along dim, or a tensor that broadcasts against y
    trailing = shape[-int(rng.integers(1, len(shape) + 1)):]
    points = [np.cumsum(rng.uniform(0.1, 1.0, shape[dim])), rng.standard_normal(trailing)]
    for x in points:
        if x.ndim > 1 and dim % len(shape) < len(shape) - x.ndim or x.ndim == 1 and x.shape[0] != shape[dim]:
            continue  # (x's own dims must reach dim; a vector x has one point per sample)
        check(lambda L, a, t: L.trapezoid(a * a, t * 1.0, dim=dim), [y, x], seed=seed, grad_names=False)
        check(lambda L, a, t: L.cumulative_trapezoid(a * a, t * 1.0, dim=dim), [y, x], seed=seed, grad_names=False)


def test_trapezoid_of_no_samples_and_integers() -> None:
    same_outcome(lambda L: L.trapezoid(L.ones(3, 0)))
    same_outcome(lambda L: L.cumulative_trapezoid(L.ones(3, 0)))
    same_outcome(lambda L: L.trapezoid(L.arange(5)))
    same_outcome(lambda L: L.cumulative_trapezoid(L.arange(5), dx=2))
    same_outcome(lambda L: L.trapezoid(L.arange(6).reshape(2, 3), L.tensor([0.0, 1.0, 3.0])))


def test_vander_values_and_dtypes() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal(4)
    for kwargs in ({}, {"N": 2}, {"N": 6, "increasing": True}, {"N": 0}, {"N": 1}):
        same_outcome(lambda L, k=kwargs: L.vander(L.tensor(x), **k))
    same_outcome(lambda L: L.vander(L.tensor([1, 2, 3], dtype=L.int32)))
    same_outcome(lambda L: L.vander(L.tensor([True, False]), 3))
    same_outcome(lambda L: L.vander(L.ones(0)))


def test_vander_gradient() -> None:
    """PyTorch's backward through vander fails (it writes the powers in place over a value its cumprod saved);
    gradcalc's vander has one, checked against the derivative of the powers and, to second order, against
    PyTorch's own gradient of the same matrix made out of place."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal(4)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.vander(torch.tensor(x, requires_grad=True)).sum().backward()

    def made(L: Any, a: Any) -> Any:
        return L.stack([a ** p for p in (3, 2, 1)] + [L.ones_like(a)], 1)

    rows = rng.standard_normal((4, 4))
    a = gc.tensor(x, requires_grad=True)
    (g,) = gc.autograd.grad(gc.vander(a), a, gc.tensor(rows), create_graph=True)
    (g2,) = gc.autograd.grad(g.sum(), a)
    b = torch.tensor(x, requires_grad=True)
    (h,) = torch.autograd.grad(made(torch, b), b, torch.tensor(rows), create_graph=True)
    (h2,) = torch.autograd.grad(h.sum(), b)
    np.testing.assert_allclose(g.detach().numpy(), h.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g2.numpy(), h2.numpy(), rtol=1e-12)
    assert gc.vander(a).grad_fn.name() == "FlipBackward0"


# -- forward mode ----------------------------------------------------------------------------------------------
JVP = {
    "unflatten": (lambda L: lambda x: L.unflatten(x.sin(), 1, (3, 2)), [(2, 6)]),
    "rot90": (lambda L: lambda x: L.rot90(x.exp(), -1, (2, 0)), [(2, 3, 4)]),
    "block_diag": (lambda L: lambda a, b, c: L.block_diag(a * a, b, c.sin()), [(2, 3), (3,), ()]),
    "cartesian_prod": (lambda L: lambda a, b: L.cartesian_prod(a.exp(), b), [(3,), (2,)]),
    "vander": (lambda L: lambda x: L.vander(x * 1.5), [(4,)]),
    "vander increasing": (lambda L: lambda x: L.vander(x, N=5, increasing=True), [(3,)]),
    "trapezoid": (lambda L: lambda y: L.trapezoid(y * y, dx=0.5), [(3, 4)]),
    "trapezoid x": (lambda L: lambda y, x: L.trapezoid(y.sin(), x.exp(), dim=0), [(3, 4), (3,)]),
    "cumulative_trapezoid": (lambda L: lambda y: L.cumulative_trapezoid(y.exp(), dim=0), [(3, 4)]),
    "cumulative_trapezoid x": (lambda L: lambda y, x: L.cumulative_trapezoid(y, x * x), [(3, 4), (4,)]),
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    same_jvp(*JVP[name], atol=1e-13)


# -- vmap ------------------------------------------------------------------------------------------------------
VMAP = {
    "unflatten": (lambda L, a: L.unflatten(a, -1, (2, -1)), [(3, 4)]),
    "rot90": (lambda L, a: L.rot90(a, 3, (1, 0)), [(3, 4)]),
    "block_diag": (lambda L, a, b: L.block_diag(a, b), [(2, 3), (3,)]),
    "cartesian_prod": (lambda L, a, b: L.cartesian_prod(a, b), [(3,), (2,)]),
    "vander": (lambda L, a: L.vander(a, 3), [(4,)]),
    "trapezoid": (lambda L, a: L.trapezoid(a, dx=0.5, dim=0), [(3, 4)]),
    "trapezoid x": (lambda L, a, x: L.trapezoid(a, x), [(3, 4), (4,)]),
    "trapz": (lambda L, a: L.trapz(a), [(3, 4)]),
    "cumulative_trapezoid": (lambda L, a: L.cumulative_trapezoid(a, dim=-1), [(3, 4)]),
}


def _batched(rng: np.random.Generator, sample: tuple[int, ...], d: int | None, size: int = 5) -> np.ndarray:
    if d is None:
        return rng.standard_normal(sample)
    shape = list(sample)
    shape.insert(d, size)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap(name: str, d: int) -> None:
    f, shapes = VMAP[name]
    rng = np.random.default_rng(11)
    for dims in ((d,) + (None,) * (len(shapes) - 1), (d,) * len(shapes)):
        dims = tuple(0 if x is not None and not shapes[i] else x for i, x in enumerate(dims))
        arrays = [_batched(rng, s, x) for s, x in zip(shapes, dims, strict=True)]
        ours = gc.func.vmap(lambda *a: f(gc, *a), dims)(*[gc.tensor(a) for a in arrays])
        theirs = torch.func.vmap(lambda *a: f(torch, *a), dims)(*[torch.tensor(a) for a in arrays])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


# -- float32 ---------------------------------------------------------------------------------------------------
def test_float32() -> None:
    rng = np.random.default_rng(12)
    y = rng.standard_normal((5, 6)).astype(np.float32)
    x = np.cumsum(rng.uniform(0.1, 1.0, 6)).astype(np.float32)
    for f in (lambda L, a, t: L.unflatten(a, 1, (2, 3)), lambda L, a, t: L.rot90(a, 2),
              lambda L, a, t: L.block_diag(a, t), lambda L, a, t: L.cartesian_prod(a[0], t)):
        ours = f(gc, gc.tensor(y), gc.tensor(x))
        assert ours.dtype == gc.float32
        np.testing.assert_array_equal(ours.numpy(), f(torch, torch.tensor(y), torch.tensor(x)).numpy())
    scale = float(np.abs(y).sum(1).max() * x.max())
    for what, f, steps in (("trapezoid", lambda L, a, t: L.trapezoid(a, dx=0.3), 12),
                           ("trapezoid x", lambda L, a, t: L.trapezoid(a, t), 14),
                           ("cumulative_trapezoid x", lambda L, a, t: L.cumulative_trapezoid(a, t), 14),
                           ("vander", lambda L, a, t: L.vander(t / 4), 8)):
        reference = f(torch, torch.tensor(y, dtype=torch.float64), torch.tensor(x, dtype=torch.float64)).numpy()
        assert_float32_close(f(gc, gc.tensor(y), gc.tensor(x)).numpy(),
                             f(torch, torch.tensor(y), torch.tensor(x)).numpy(), reference, steps=steps,
                             scale=max(scale, float(np.abs(reference).max())), what=what)


# -- errors ----------------------------------------------------------------------------------------------------
ERRORS: dict[str, Callable[[Any], Any]] = {
    "unflatten sizes": lambda L: L.ones(3, 4).unflatten(1, (3, 2)),
    "unflatten empty": lambda L: L.ones(3, 4).unflatten(1, ()),
    "unflatten two -1": lambda L: L.ones(3, 4).unflatten(1, (-1, -1)),
    "unflatten dim": lambda L: L.ones(3, 4).unflatten(2, (2, 2)),
    "rot90 one dim": lambda L: L.ones(3, 4).rot90(1, [0]),
    "rot90 vector": lambda L: L.ones(3).rot90(),
    "rot90 same dims": lambda L: L.ones(3, 4).rot90(1, [0, 0]),
    "rot90 dim": lambda L: L.ones(3, 4).rot90(1, [0, 2]),
    "block_diag 3-d": lambda L: L.block_diag(L.ones(2, 2, 2)),
    "cartesian_prod matrix": lambda L: L.cartesian_prod(L.ones(2, 2)),
    "cartesian_prod none": lambda L: L.cartesian_prod(),
    "trapezoid points": lambda L: L.trapezoid(L.ones(3, 4), L.ones(3)),
    "trapezoid bool": lambda L: L.trapezoid(L.ones(3) > 0),
    "trapezoid bool dx": lambda L: L.trapezoid(L.ones(3), dx=True),
    "trapezoid 0-d": lambda L: L.trapezoid(L.tensor(1.0)),
    "cumulative_trapezoid points": lambda L: L.cumulative_trapezoid(L.ones(3, 4), L.ones(3)),
    "vander matrix": lambda L: L.vander(L.ones(2, 2)),
    "vander negative N": lambda L: L.vander(L.ones(3), N=-1),
}
# (a dim out of range: gradcalc's own wording, as for every operation)
SAME_TEXT = set(ERRORS) - {"unflatten two -1", "cartesian_prod none", "trapezoid 0-d", "unflatten dim", "rot90 dim"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)
