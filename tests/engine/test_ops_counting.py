"""unique, unique_consecutive, bincount, histc, bucketize and searchsorted against PyTorch over generated cases:
values and dtypes (integer results), the nodes PyTorch records without a derivative and their errors, vmap, and
the errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import same_error, same_outcome

torch = pytest.importorskip("torch")

CASES = 30


def _shape(rng: np.random.Generator, low: int = 0, high: int = 4) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(0 if rng.random() < 0.1 else 1, 4, size=int(rng.integers(low, high))))


def _values(rng: np.random.Generator, shape: tuple[int, ...], kind: str) -> np.ndarray:
    """Values with repeats: small integers, as int64, float64, float32 or bool."""
    raw = rng.integers(0, 3, size=shape)
    return {"int": raw.astype(np.int64), "float": raw * 0.5, "float32": (raw * 0.5).astype(np.float32),
            "bool": raw > 0}[kind]


@pytest.mark.parametrize("kind", ["int", "float", "float32", "bool"])
@pytest.mark.parametrize("seed", range(CASES))
def test_unique(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    x = _values(rng, shape, kind)
    inverse, counts = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
    same_outcome(lambda L: L.unique(L.tensor(x), return_inverse=inverse, return_counts=counts))
    same_outcome(lambda L: L.tensor(x).unique(sorted=True, return_counts=counts))
    same_outcome(lambda L: L.unique_consecutive(L.tensor(x), return_inverse=inverse, return_counts=counts))
    if shape and all(shape):
        dim = int(rng.integers(-len(shape), len(shape)))
        same_outcome(lambda L: L.unique(L.tensor(x), dim=dim, return_inverse=inverse, return_counts=counts))
        same_outcome(lambda L: L.tensor(x).unique_consecutive(return_inverse=inverse, return_counts=counts, dim=dim))


def test_unique_keeps_nans_apart() -> None:
    same_outcome(lambda L: L.unique(L.tensor([float("nan"), 1.0, float("nan")]), return_counts=True))


def test_unique_values_have_no_derivative() -> None:
    """A float input that requires grad: the values carry PyTorch's node, whose backward and forward rule are
    PyTorch's NotImplementedError."""
    x = np.array([[3.0, 1.0], [3.0, 1.0], [0.5, 2.0]])
    calls = {"Unique2Backward0": lambda L, t: L.unique(t, return_inverse=True)[0],
             "UniqueDimBackward0": lambda L, t: L.unique(t, dim=0),
             "UniqueConsecutiveBackward0": lambda L, t: L.unique_consecutive(t, dim=0)}
    for name, f in calls.items():
        for lib in (gc, torch):
            out = f(lib, lib.tensor(x, requires_grad=True))
            assert out.requires_grad and out.grad_fn.name() == name
        same_error(lambda L, f=f: f(L, L.tensor(x, requires_grad=True)).sum().backward(), True)
        for lib in (gc, torch):
            with pytest.raises(NotImplementedError, match="Trying to use forward AD with"):
                lib.func.jvp(lambda t, f=f, L=lib: f(L, t), (lib.tensor(x),), (lib.tensor(x),))


@pytest.mark.parametrize("seed", range(CASES))
def test_bincount(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(0, 8))
    x = rng.integers(0, 6, size=n)
    minlength = int(rng.integers(0, 9))
    same_outcome(lambda L: L.bincount(L.tensor(x), minlength=minlength))
    for dtype in (np.float64, np.float32, np.int64, bool):
        w = rng.standard_normal(n).astype(dtype) if dtype is not bool else rng.random(n) < 0.5
        same_outcome(lambda L, w=w: L.tensor(x).bincount(L.tensor(w), minlength))


def test_bincount_weights_that_require_grad() -> None:
    for lib in (gc, torch):
        out = lib.bincount(lib.tensor([1, 1, 3]), lib.tensor([0.5, 0.5, 1.0], requires_grad=True))
        assert out.requires_grad and type(out.grad_fn).__name__.rstrip("_") == "NotImplemented"
    same_error(lambda L: L.bincount(L.tensor([1, 1]), L.tensor([0.5, 1.0], requires_grad=True)).sum().backward(),
               True)


@pytest.mark.parametrize("seed", range(CASES))
def test_histc(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    x = rng.standard_normal(_shape(rng)) * 3
    bins = int(rng.integers(1, 12))
    lo, hi = sorted(rng.uniform(-4, 4, size=2))
    same_outcome(lambda L: L.histc(L.tensor(x), bins=bins))
    same_outcome(lambda L: L.tensor(x).histc(bins, float(lo), float(hi)))
    same_outcome(lambda L: L.histc(L.tensor(x, dtype=L.float32), bins=bins, min=-1, max=1))
    same_outcome(lambda L: L.histc(L.tensor(np.round(x)), bins=bins))  # values on the bins' edges


@pytest.mark.parametrize("seed", range(CASES))
def test_bucketize_and_searchsorted(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    boundaries = np.sort(rng.integers(-3, 4, size=int(rng.integers(0, 6)))).astype(np.float64)
    x = rng.integers(-4, 5, size=_shape(rng)).astype(np.float64)  # values on the boundaries too
    right, out_int32 = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
    same_outcome(lambda L: L.bucketize(L.tensor(x), L.tensor(boundaries), right=right, out_int32=out_int32))
    same_outcome(lambda L: L.searchsorted(L.tensor(boundaries), L.tensor(x), right=right, out_int32=out_int32))
    same_outcome(lambda L: L.searchsorted(L.tensor(boundaries), L.tensor(x), side="right" if right else "left"))
    same_outcome(lambda L: L.bucketize(2.0, L.tensor(boundaries)))
    same_outcome(lambda L: L.searchsorted(L.tensor(boundaries), 1.0, right=right))
    # rows of sequences, each searched with its own row of values
    rows = np.sort(rng.integers(-3, 4, size=(3, 4)), axis=1).astype(np.float64)
    values = rng.integers(-4, 5, size=(3, 5)).astype(np.float64)
    same_outcome(lambda L: L.searchsorted(L.tensor(rows), L.tensor(values), right=right))
    order = rng.permutation(4)
    unsorted = rows[0][np.argsort(order)]
    sorter = np.argsort(unsorted, kind="stable")
    same_outcome(lambda L: L.searchsorted(L.tensor(unsorted), L.tensor(values[0]), sorter=L.tensor(sorter)))


# -- vmap ------------------------------------------------------------------------------------------------------
VMAP = {
    "bincount": (lambda L, a: L.bincount(a), "int"),
    "bincount weights": (lambda L, a: L.bincount(L.tensor([0, 2, 2, 1, 0]), a), "float"),
    "histc": (lambda L, a: L.histc(a, bins=4, min=-1, max=1), "float"),
    "bucketize": (lambda L, a: L.bucketize(a, L.tensor([-0.5, 0.0, 0.5])), "float"),
    "searchsorted": (lambda L, a: L.searchsorted(L.tensor([-0.5, 0.0, 0.5]), a, side="right"), "float"),
}


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap(name: str, d: int) -> None:
    f, kind = VMAP[name]
    rng = np.random.default_rng(4)
    batch = rng.integers(0, 5, size=(6, 5)) if kind == "int" else rng.standard_normal((6, 5))
    if d == 1:
        batch = np.ascontiguousarray(batch.T)
    ours = gc.func.vmap(lambda a: f(gc, a), d)(gc.tensor(batch))
    theirs = torch.func.vmap(lambda a: f(torch, a), d)(torch.tensor(batch))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_vmap_of_unique_is_pytorchs_error(name: str) -> None:
    for lib in (gc, torch):
        with pytest.raises(RuntimeError, match="vmap: We do not support batching operators that can output dynamic"):
            lib.func.vmap(getattr(lib, name))(lib.ones(3, 4))


# -- errors ----------------------------------------------------------------------------------------------------
ERRORS: dict[str, Callable[[Any], Any]] = {
    "bincount negative": lambda L: L.bincount(L.tensor([-1])),
    "bincount matrix": lambda L: L.bincount(L.tensor([[1]])),
    "bincount float": lambda L: L.bincount(L.tensor([1.0])),
    "bincount minlength": lambda L: L.bincount(L.tensor([1]), minlength=-1),
    "bincount weights length": lambda L: L.bincount(L.tensor([1, 2]), weights=L.ones(3)),
    "histc integers": lambda L: L.histc(L.tensor([1, 2])),
    "histc min above max": lambda L: L.histc(L.ones(3), bins=3, min=3, max=1),
    "histc no bins": lambda L: L.histc(L.ones(3), bins=0),
    "bucketize matrix boundaries": lambda L: L.bucketize(L.tensor([1.0]), L.tensor([[1.0, 2.0]])),
    "searchsorted rows": lambda L: L.searchsorted(L.tensor([[1.0, 2.0, 3.0]]), L.tensor([[2.0], [1.0]])),
    "searchsorted side": lambda L: L.searchsorted(L.tensor([1.0, 2.0]), L.tensor([2.0]), side="up"),
    "searchsorted opposites": lambda L: L.searchsorted(L.tensor([1.0]), L.tensor([2.0]), side="left", right=True),
    "unique dim": lambda L: L.unique(L.ones(2, 3), dim=2),
}
SAME_TEXT = set(ERRORS) - {"unique dim"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)
