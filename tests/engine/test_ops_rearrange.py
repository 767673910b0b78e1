"""flip, fliplr, flipud, roll, repeat, tile, repeat_interleave, tril/triu (and in place), trace, broadcast_to,
hstack, vstack, meshgrid, cumsum, cumprod (inputs with zeros included), diff, topk, argsort and nonzero against
PyTorch over generated cases: values, dtypes, grad_fn names, first and second derivatives (ops_oracle.check),
forward-mode tangents, float32, vmap over a batch dim, and the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, jvp_values, same_error, same_outcome, same_vmap
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 30


def _shape(rng: np.random.Generator, low: int = 0, high: int = 4) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(low, high))))


def _dim(rng: np.random.Generator, shape: tuple[int, ...]) -> int:
    n = max(len(shape), 1)
    return int(rng.integers(-n, n))


@pytest.mark.parametrize("seed", range(CASES))
def test_flip_and_roll(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    x = [rng.standard_normal(shape)]
    n = max(len(shape), 1)
    dims = sorted({int(d) for d in rng.integers(0, n, size=int(rng.integers(1, n + 1)))})
    dims = [d - n if rng.random() < 0.5 else d for d in dims]
    check(lambda L, a: L.flip(a * a, dims), x, seed=seed)
    shifts = [int(s) for s in rng.integers(-5, 6, size=len(dims))]
    if shape:
        check(lambda L, a: L.roll(a.exp(), shifts, dims), x, seed=seed)
    else:  # a 0-d tensor has no dim to roll along
        same_outcome(lambda L: L.roll(L.tensor(x[0]), shifts, dims))
    check(lambda L, a: (a * a).roll(shifts[0]), x, seed=seed)
    if len(shape) >= 1:
        check(lambda L, a: L.flipud(a * a), x, seed=seed)
    if len(shape) >= 2:
        check(lambda L, a: L.fliplr(a.sin()), x, seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_repeat_tile_repeat_interleave(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = _shape(rng)
    x = [rng.standard_normal(shape)]
    reps = [int(r) for r in rng.integers(1, 4, size=max(len(shape) + int(rng.integers(0, 2)), 1))]
    if reps and rng.random() < 0.1:
        reps[0] = 0
    check(lambda L, a: (a * a).repeat(*reps), x, seed=seed)
    tiles = reps[int(rng.integers(0, len(reps) + 1)):] or [2]
    check(lambda L, a: L.tile(a.exp(), tiles), x, seed=seed)
    r = int(rng.integers(0, 4))
    check(lambda L, a: L.repeat_interleave(a * a, r), x, seed=seed, grad_names=False)
    if shape:
        dim = _dim(rng, shape)
        check(lambda L, a: (a * a).repeat_interleave(r, dim=dim), x, seed=seed, grad_names=False)
        counts = rng.integers(0, 3, size=shape[dim])
        check(lambda L, a: a.exp().repeat_interleave(L.tensor(counts), dim=dim), x, seed=seed)
        same_outcome(lambda L: L.repeat_interleave(L.tensor(counts)))


@pytest.mark.parametrize("seed", range(CASES))
def test_triangles_and_trace(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    shape = _shape(rng, 2, 5)
    x = [rng.standard_normal(shape)]
    k = int(rng.integers(-3, 4))
    check(lambda L, a: L.tril(a * a, k), x, seed=seed)
    check(lambda L, a: (a.exp()).triu(k), x, seed=seed)
    check(lambda L, a: (a * 1.0).tril_(k) * a, x, seed=seed)
    check(lambda L, a: (a * 1.0).triu_(diagonal=k) * a, x, seed=seed)
    m = [rng.standard_normal(shape[-2:])]
    check(lambda L, a: L.trace(a * a), m, seed=seed, grad_names=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_cumulative(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    shape = _shape(rng)
    data = rng.standard_normal(shape)
    if data.size and rng.random() < 0.5:  # zeros, one or several per slice, for cumprod's zero-safe gradient
        data[rng.random(shape) < 0.3] = 0.0
    dim = _dim(rng, shape)
    check(lambda L, a: L.cumsum(a * a, dim), [data], seed=seed)
    check(lambda L, a: L.cumprod(a, dim) * a, [data], seed=seed, grad_names=False)
    check(lambda L, a: (a * 1.0).cumsum_(dim).sin(), [data], seed=seed)
    if shape:
        n = int(rng.integers(0, 4))
        check(lambda L, a: L.diff(a * a, n, dim), [data], seed=seed, grad_names=False)
        extra = list(shape)
        extra[dim] = int(rng.integers(1, 3))
        both = [data, rng.standard_normal(extra)]
        check(lambda L, a, p: L.diff(a, dim=dim, prepend=p, append=p * 2), both, seed=seed, grad_names=False)


def test_cumprod_gradient_at_zeros() -> None:
    """PyTorch's zero-safe formula, on slices with one zero, two zeros, a zero first and last."""
    data = np.array([[2.0, 0.0, 3.0, 0.0, 5.0], [0.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 0.0],
                     [1.5, -2.0, 0.5, 3.0, -1.0]])
    for dim in (0, 1, -1):
        check(lambda L, a, d=dim: L.cumprod(a, d), [data], grad_names=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_topk_argsort_nonzero(seed: int) -> None:
    rng = np.random.default_rng(400 + seed)
    shape = _shape(rng)
    data = rng.permutation(max(int(np.prod(shape)), 1))[: int(np.prod(shape))].reshape(shape) / 3.0 - 1.0
    dim = _dim(rng, shape)
    size = shape[dim] if shape else 1
    k = int(rng.integers(0, size + 1))
    largest = bool(rng.random() < 0.5)
    check(lambda L, a: L.topk(a * a.abs(), k, dim, largest=largest), [data], seed=seed, grad_names=False)
    same_outcome(lambda L: L.argsort(L.tensor(data), dim, descending=largest))
    same_outcome(lambda L: L.tensor(data).argsort(dim=dim))
    mask = np.where(rng.random(shape) < 0.5, 0.0, data)
    same_outcome(lambda L: L.nonzero(L.tensor(mask)))
    same_outcome(lambda L: L.nonzero(L.tensor(mask), as_tuple=True))


@pytest.mark.parametrize("seed", range(CASES))
def test_compositions(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    shape = _shape(rng)
    target = tuple(int(n) for n in rng.integers(1, 3, size=int(rng.integers(0, 2)))) + shape
    wide = tuple(1 if rng.random() < 0.3 else n for n in shape)  # broadcasts to the target
    check(lambda L, a: L.broadcast_to(a * a, target), [rng.standard_normal(wide)], seed=seed)
    parts = [rng.standard_normal(shape) for _ in range(3)]
    check(lambda L, a, b, c: L.hstack([a * a, b, c.exp()]), parts, seed=seed, grad_names=False)
    check(lambda L, a, b, c: L.vstack((a, b * b, c)), parts, seed=seed, grad_names=False)
    vectors = [rng.standard_normal(int(rng.integers(1, 4)) if rng.random() < 0.8 else ()) for _ in range(3)]
    indexing = "ij" if rng.random() < 0.5 else "xy"
    check(lambda L, a, b, c: L.meshgrid(a * a, b, c, indexing=indexing), vectors, seed=seed, grad_names=False)
    check(lambda L, a, b, c: L.meshgrid([a, b.exp()], indexing=indexing), vectors, seed=seed, grad_names=False)


def test_dtypes() -> None:
    ints = np.array([[3, -1, 2], [0, 5, 4]])
    for f in (lambda L, a: L.cumsum(a, 0), lambda L, a: L.cumprod(a, 1), lambda L, a: a.cumsum(1, dtype=L.float32),
              lambda L, a: L.flip(a, [0, 1]), lambda L, a: L.roll(a, 1), lambda L, a: a.repeat(2, 1),
              lambda L, a: L.tril(a), lambda L, a: L.trace(a[:, :2]), lambda L, a: L.diff(a),
              lambda L, a: L.diff(a > 0), lambda L, a: L.topk(a, 2), lambda L, a: L.cumsum(a > 0, 1),
              lambda L, a: L.trace(a > 0), lambda L, a: L.hstack([a, a]),
              lambda L, a: L.meshgrid(a[0], a[1], indexing="ij")):
        same_outcome(lambda L, f=f: f(L, L.tensor(ints)))


def test_meshgrid_without_indexing_warns_as_pytorch() -> None:
    for lib in (gc, torch):
        with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
            grids = lib.meshgrid(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0, 5.0]))
        assert tuple(grids[0].shape) == (2, 3)


JVP = {
    "flip": lambda L: lambda x: L.flip(x.sin(), (0, -1)),
    "roll": lambda L: lambda x: L.roll(x * x, (1, -2), (0, 1)),
    "roll flat": lambda L: lambda x: x.exp().roll(4),
    "repeat": lambda L: lambda x: x.sin().repeat(2, 1, 3),
    "tile": lambda L: lambda x: L.tile(x * x, (2,)),
    "repeat_interleave": lambda L: lambda x: L.repeat_interleave(x.exp(), L.tensor([2, 0, 1]), dim=1),
    "tril": lambda L: lambda x: L.tril(x.exp(), -1),
    "triu": lambda L: lambda x: L.triu(x * x, 1),
    "trace": lambda L: lambda x: L.trace(x.sin()),
    "cumsum": lambda L: lambda x: L.cumsum(x * x, 1),
    "cumprod": lambda L: lambda x: L.cumprod(x, 0),
    "cumprod zeros": lambda L: lambda x: L.cumprod(L.where(x > 0.5, 0.0, x), 1),
    "diff": lambda L: lambda x: L.diff(x.exp(), 2, 1),
    "topk": lambda L: lambda x: L.topk(x * 2.0, 2, 0).values,
    "hstack": lambda L: lambda x: L.hstack([x, x.exp()]),
    "meshgrid": lambda L: lambda x: L.meshgrid(x[0], x[1].exp(), indexing="xy")[1],
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    rng = np.random.default_rng(9)
    xs, ts = [rng.standard_normal((2, 3))], [rng.standard_normal((2, 3))]
    if name == "cumprod zeros":
        xs[0][0, 1] = 0.0  # a zero kept as it is (above 0.5 is made zero too)
    ours, theirs = jvp_values(gc, JVP[name](gc), xs, ts), jvp_values(torch, JVP[name](torch), xs, ts)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-14)


VMAP = {
    "flip": lambda L: lambda x: L.flip(x, (0,)),
    "fliplr": lambda L: lambda x: L.fliplr(x),
    "roll": lambda L: lambda x: L.roll(x, 1, -1),
    "roll flat": lambda L: lambda x: L.roll(x, 2),
    "repeat": lambda L: lambda x: x.repeat(2, 1, 2),
    "tile": lambda L: lambda x: x.tile((3,)),
    "repeat_interleave": lambda L: lambda x: x.repeat_interleave(2),
    "tril": lambda L: lambda x: x.tril(1),
    "trace": lambda L: lambda x: x.trace(),
    "cumsum": lambda L: lambda x: x.cumsum(-1),
    "cumprod": lambda L: lambda x: x.cumprod(0),
    "diff": lambda L: lambda x: x.diff(dim=0),
    "topk": lambda L: lambda x: x.topk(2).values,
    "argsort": lambda L: lambda x: x.argsort(0),
    "broadcast_to": lambda L: lambda x: L.broadcast_to(x, (2, 3, 4)),
    "vstack": lambda L: lambda x: L.vstack([x, x[0]]),
    "hstack": lambda L: lambda x: L.hstack([x, x]),
}


@pytest.mark.parametrize("name", sorted(VMAP))
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap(name: str, in_dim: int) -> None:
    same_vmap(VMAP[name], in_dim)


def test_float32() -> None:
    """Rearrangements are exact in float32; running sums and products as close as PyTorch's own."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 7)).astype(np.float32)
    for f in (lambda L, a: L.flip(a, (1,)), lambda L, a: L.roll(a, 3, 0), lambda L, a: a.repeat(2, 2),
              lambda L, a: L.tril(a, 1), lambda L, a: L.topk(a, 3).values, lambda L, a: L.diff(a)):
        ours, theirs = f(gc, gc.tensor(x)), f(torch, torch.tensor(x))
        assert ours.dtype == gc.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for name, steps in (("cumsum", 7), ("cumprod", 7)):
        ours = getattr(gc, name)(gc.tensor(x), 1).numpy()
        theirs = getattr(torch, name)(torch.tensor(x), 1).numpy()
        reference = getattr(torch, name)(torch.tensor(x, dtype=torch.float64), 1).numpy()
        scale = float(np.cumsum(np.abs(x), 1).max()) if name == "cumsum" else None
        assert_float32_close(ours, theirs, reference, steps=steps, scale=scale, what=name)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "flip repeated dim": lambda L: L.flip(L.ones(2, 3), (0, -2)),
    "fliplr vector": lambda L: L.fliplr(L.ones(3)),
    "flipud number": lambda L: L.flipud(L.tensor(1.0)),
    "roll misaligned": lambda L: L.roll(L.ones(2, 3), (1, 2), 0),
    "roll flat with two shifts": lambda L: L.roll(L.ones(2, 3), (1, 2)),
    "repeat too few": lambda L: L.ones(2, 3).repeat(2),
    "repeat_interleave counts size": lambda L: L.ones(2, 3).repeat_interleave(L.tensor([1, 2]), dim=1),
    "repeat_interleave negative": lambda L: L.ones(3).repeat_interleave(-1),
    "tril vector": lambda L: L.tril(L.ones(3)),
    "triu number": lambda L: L.triu(L.tensor(2.0)),
    "trace vector": lambda L: L.trace(L.ones(3)),
    "diff number": lambda L: L.diff(L.tensor(2.0)),
    "diff negative order": lambda L: L.diff(L.ones(3), -1),
    "topk too many": lambda L: L.topk(L.ones(2, 3), 4),
    "topk negative": lambda L: L.ones(3).topk(-1),
    "meshgrid matrix": lambda L: L.meshgrid(L.ones(2, 2), L.ones(2), indexing="ij"),
    "meshgrid indexing": lambda L: L.meshgrid(L.ones(2), L.ones(2), indexing="ji"),
    "broadcast_to smaller": lambda L: L.broadcast_to(L.ones(2, 3), (3,)),
    "vmap nonzero": lambda L: L.func.vmap(L.nonzero)(L.ones(2, 3)),
}
# PyTorch's own message text (gradcalc's first line); the others keep gradcalc's own wording of the same error
SAME_TEXT = {"flip repeated dim", "fliplr vector", "flipud number", "roll misaligned", "repeat too few",
             "tril vector", "triu number", "diff number", "diff negative order", "topk too many", "topk negative",
             "vmap nonzero", "repeat_interleave negative"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)


def test_saved_values() -> None:
    for lib in (gc, torch):
        x = lib.ones(3, 4, requires_grad=True)
        assert x.flip((0, -1)).grad_fn._saved_dims == (0, 2**64 - 1)
        r = x.roll((1, -2), (0, 1)).grad_fn
        assert r._saved_shifts == (1, 2**64 - 2) and r._saved_dims == (0, 1)
        assert x.roll(1).grad_fn._saved_dims == () and x.roll(1).grad_fn._saved_shifts == (1,)
        rep = x.repeat(2, 1, 3).grad_fn
        assert rep._saved_repeats == (2, 1, 3) and tuple(rep._saved_self_sym_sizes) == (3, 4)
        assert x.tile((2,)).grad_fn._saved_repeats == (1, 2)
        assert x.triu(-1).grad_fn._saved_diagonal == 2**64 - 1 and x.tril().grad_fn._saved_diagonal == 0
        assert x.cumsum(-1).grad_fn._saved_dim == 2**64 - 1
        c = x.cumprod(0).grad_fn
        assert c._saved_dim == 0 and c._saved_self is x and c._saved_result.shape == (3, 4)
        t = x.topk(2).values.grad_fn
        assert t._saved_dim == 2**64 - 1 and tuple(t._saved_self_sym_sizes) == (3, 4)
        assert tuple(x.trace().grad_fn._saved_self_sym_sizes) == (3, 4)


def test_topk_named_tuple() -> None:
    r = gc.topk(gc.tensor([1.0, 3.0, 2.0]), 2)
    assert type(r).__name__ == "topk" and r.indices.tolist() == [1, 2] and r.values.tolist() == [3.0, 2.0]
    assert repr(r).startswith("torch.return_types.topk(")
    same_outcome(lambda L: L.topk(L.tensor([1.0, float("nan"), 3.0]), 2))
    same_outcome(lambda L: L.topk(L.tensor([1.0, float("nan"), 3.0]), 2, largest=False))
