"""gather, scatter(_), scatter_add(_), index_select, take and masked_fill(_) against PyTorch over generated cases:
values, grad_fn names, first and second derivatives (ops_oracle.check), forward-mode tangents, float32, and the
errors for bad arguments (PyTorch's exception type and text)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, same_error, same_jvp, same_outcome
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 40


def _shape(rng: np.random.Generator, low: int = 0) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(low, 4))))


def _gather_case(rng: np.random.Generator) -> tuple[tuple, int, np.ndarray]:
    """An input shape, a dim (maybe negative) and a valid gather index (each other dim no larger)."""
    shape = _shape(rng)
    n = max(len(shape), 1)
    dim = int(rng.integers(-n, n))
    axis = dim % n
    if not shape:
        return shape, dim, rng.integers(0, 1, size=()) if rng.random() < 0.5 else np.zeros(int(rng.integers(1, 3)),
                                                                                             dtype=np.int64)
    ishape = [int(rng.integers(1, s + 1)) for s in shape]
    ishape[axis] = int(rng.integers(0 if rng.random() < 0.1 else 1, 5))
    return shape, dim, rng.integers(0, shape[axis], size=ishape)


def _t(lib: Any, a: np.ndarray) -> Any:
    return lib.tensor(np.asarray(a, dtype=np.int64))


@pytest.mark.parametrize("seed", range(CASES))
def test_gather(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape, dim, idx = _gather_case(rng)
    check(lambda L, x: L.gather(x * x, dim, _t(L, idx)), [rng.standard_normal(shape)], seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_scatter_add_and_scatter(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape, dim, idx = _gather_case(rng)
    if not shape:
        idx = np.zeros(idx.shape, np.int64)
    src = rng.standard_normal(idx.shape)
    data = [rng.standard_normal(shape), src]
    check(lambda L, x, s: L.scatter_add(x * x, dim, _t(L, idx), s * s), data, seed=seed)
    check(lambda L, x, s: (x * 1.0).scatter_add_(dim, _t(L, idx), s.exp()), data, seed=seed)
    # scatter with repeated places keeps one write, which PyTorch leaves unspecified: distinct places only
    if shape:
        axis = dim % len(shape)
        perm = np.argsort(rng.random(idx.shape[:axis] + (shape[axis],) + idx.shape[axis + 1:]), axis=axis)
        one = np.take(perm, np.arange(min(idx.shape[axis], shape[axis])), axis=axis)
        data = [rng.standard_normal(shape), rng.standard_normal(one.shape)]
        check(lambda L, x, s: L.scatter(x * x, dim, _t(L, one), s * s), data, seed=seed)
        check(lambda L, x, s: x.scatter(dim, _t(L, one), -1.5) * s.sum(), data, seed=seed)
        check(lambda L, x, s: (x * 1.0).scatter_(dim, _t(L, one), s), data, seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_index_select_and_take(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    shape = _shape(rng)
    n = max(len(shape), 1)
    dim = int(rng.integers(-n, n))
    size = shape[dim % n] if shape else 1
    idx = rng.integers(0, size, size=int(rng.integers(0, 5)) if shape else 1)  # a 0-d input takes one index
    x = rng.standard_normal(shape)
    check(lambda L, x: L.index_select(x * x, dim, _t(L, idx)), [x], seed=seed)
    if rng.random() < 0.3:
        check(lambda L, x: x.index_select(dim, _t(L, idx[:1].reshape(()) if idx.size else np.zeros((), np.int64))),
              [x], seed=seed)
    numel = int(np.prod(shape))
    flat = rng.integers(-numel, numel, size=_shape(rng))
    check(lambda L, x: L.take(x * x, _t(L, flat)), [x], seed=seed, grad_names=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_masked_fill(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    shape = _shape(rng)
    # a mask of the input's shape, or one that broadcasts with it (perhaps to a larger shape)
    mshape = shape[int(rng.integers(0, len(shape) + 1)):] if shape else ()
    if rng.random() < 0.3:
        mshape = (2,) + tuple(shape)
    mask = rng.random(mshape) < 0.5
    data = [rng.standard_normal(shape), rng.standard_normal(())]
    check(lambda L, x, v: L.masked_fill(x * x, L.tensor(mask), 2.5) * v, data, seed=seed)
    check(lambda L, x, v: (x * x).masked_fill(L.tensor(mask), v * v), data, seed=seed, grad_names=False)
    if np.broadcast_shapes(shape, mshape) == shape:
        check(lambda L, x, v: (x * 1.0).masked_fill_(L.tensor(mask), v.exp()), data, seed=seed, grad_names=False)


JVP = {
    "gather": (lambda L: lambda x: L.gather(x.sin(), 1, L.tensor([[0, 2, 2], [1, 0, 1]])), [(3, 3)]),
    "scatter_add": (lambda L: lambda x, s: L.scatter_add(x, 0, L.tensor([[1, 1, 0]]), s * s), [(2, 3), (1, 3)]),
    "scatter": (lambda L: lambda x, s: L.scatter(x.exp(), 1, L.tensor([[2], [0]]), s), [(2, 3), (2, 1)]),
    "scatter value": (lambda L: lambda x: L.scatter(x * x, 1, L.tensor([[2], [0]]), 3.0), [(2, 3)]),
    "index_select": (lambda L: lambda x: L.index_select(x.cos(), 1, L.tensor([2, 0, 2, 1])), [(2, 3)]),
    "take": (lambda L: lambda x: L.take(x.cos(), L.tensor([[5, -6], [0, 0]])), [(2, 3)]),
    "masked_fill": (lambda L: lambda x, v: L.masked_fill(x * v, L.tensor([True, False, True]), v * 2),
                    [(2, 3), ()]),
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    same_jvp(*JVP[name], atol=1e-14)


def test_float32() -> None:
    """Copies are exact in float32; scatter_add's sums are as close as PyTorch's own float32 sums allow."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    idx = rng.integers(0, 4, size=(6, 5))
    src = rng.standard_normal((6, 5)).astype(np.float32)
    for f in (lambda L, a, i, s: L.gather(a, 0, i), lambda L, a, i, s: L.index_select(a, 1, i[0]),
              lambda L, a, i, s: a.masked_fill(a > 0, 0.25), lambda L, a, i, s: L.take(a, i)):
        ours = f(gc, gc.tensor(x), _t(gc, idx), gc.tensor(src))
        theirs = f(torch, torch.tensor(x), _t(torch, idx), torch.tensor(src))
        assert ours.dtype == gc.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours = gc.scatter_add(gc.tensor(x), 0, _t(gc, idx), gc.tensor(src)).numpy()
    theirs = torch.scatter_add(torch.tensor(x), 0, _t(torch, idx), torch.tensor(src)).numpy()
    reference = torch.scatter_add(torch.tensor(x, dtype=torch.float64), 0, _t(torch, idx),
                                  torch.tensor(src, dtype=torch.float64)).numpy()
    assert_float32_close(ours, theirs, reference, steps=8, scale=float(np.abs(src).sum(0).max()), what="scatter_add")


def test_integer_and_bool_inputs() -> None:
    a = np.arange(12).reshape(3, 4)
    same_outcome(lambda L: L.gather(_t(L, a), 1, _t(L, [[3, 0], [1, 1], [0, 0]])))
    same_outcome(lambda L: L.scatter_add(_t(L, a), 0, _t(L, [[2, 2, 0, 1]]), _t(L, [[5, 6, 7, 8]])))
    same_outcome(lambda L: _t(L, a).scatter(1, _t(L, [[0], [3], [1]]), 9))
    same_outcome(lambda L: _t(L, a).masked_fill(_t(L, a) > 5, 2.7))
    same_outcome(lambda L: L.tensor([True, False]).masked_fill(L.tensor([False, True]), True))
    same_outcome(lambda L: L.index_select(_t(L, a), 1, L.tensor([3, 3, 0], dtype=L.int32)))
    same_outcome(lambda L: L.take(_t(L, a), _t(L, [-1, 0])))


ERRORS: dict[str, Callable[[Any], Any]] = {
    "gather out of range": lambda L: L.gather(L.ones(3, 4), 1, _t(L, [[5]])),
    "gather negative": lambda L: L.gather(L.ones(3, 4), 1, _t(L, [[-1]])),
    "gather float index": lambda L: L.gather(L.ones(3, 4), 1, L.tensor([[1.0]])),
    "gather ndim": lambda L: L.gather(L.ones(3, 4), 1, _t(L, [1])),
    "gather size": lambda L: L.gather(L.ones(3, 2), 1, L.zeros(4, 1, dtype=L.int64)),
    "gather dim": lambda L: L.gather(L.ones(3, 4), 5, _t(L, [[1]])),
    "scatter_add out of range": lambda L: L.ones(3, 4).scatter_add(1, _t(L, [[5]]), L.ones(3, 4)),
    "scatter_add src small": lambda L: L.ones(3, 4).scatter_add(1, _t(L, [[0, 1], [1, 1]]), L.ones(1, 1)),
    "scatter_add dtype": lambda L: L.zeros(3, dtype=L.float32).scatter_add(0, _t(L, [1]), L.ones(2, dtype=L.float64)),
    "scatter dtype": lambda L: L.zeros(3).scatter(0, _t(L, [1]), L.ones(2, dtype=L.int64)),
    "scatter value out of range": lambda L: L.ones(3, 4).scatter(1, _t(L, [[5]]), 1.0),
    "index_select out of range": lambda L: L.ones(3, 2).index_select(0, _t(L, [5])),
    "index_select negative": lambda L: L.ones(3, 2).index_select(0, _t(L, [-1])),
    "index_select matrix": lambda L: L.ones(3, 2).index_select(0, _t(L, [[1]])),
    "index_select float": lambda L: L.ones(3, 2).index_select(0, L.tensor([1.0])),
    "take out of range": lambda L: L.take(L.ones(2, 3), _t(L, [6])),
    "take negative out of range": lambda L: L.take(L.ones(2, 3), _t(L, [-7])),
    "masked_fill long mask": lambda L: L.ones(3).masked_fill(_t(L, [1, 0, 1]), 1.0),
    "masked_fill vector value": lambda L: L.ones(3).masked_fill(L.ones(3) > 0, L.ones(2)),
    "masked_fill broadcast": lambda L: L.ones(3).masked_fill(L.ones(2, 4) > 0, 1.0),
    "masked_fill_ larger mask": lambda L: L.zeros(3).masked_fill_(L.ones(2, 3) > 0, 1.0),
}
# the message texts PyTorch gives and gradcalc gives first (where gradcalc's is PyTorch's)
SAME_TEXT = {n for n in ERRORS if n not in ("gather dim", "masked_fill_ larger mask")}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)


def test_in_place_forms_bump_the_version_and_record_pytorchs_node() -> None:
    for lib in (gc, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        y = x * 1.0
        v = y._version
        y.scatter_(1, _t(lib, [[2], [0]]), 5.0)
        assert y._version == v + 1 and y.grad_fn.name() == "ScatterBackward1"
        y.scatter_add_(0, _t(lib, [[1, 1, 0]]), lib.ones(1, 3))
        assert y._version == v + 2 and y.grad_fn.name() == "ScatterAddBackward0"
        y.masked_fill_(y > 1, 0.0)
        assert y._version == v + 3 and y.grad_fn.name() == "MaskedFillBackward0"
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x.masked_fill_(x > 1, 0.0)


def test_saved_values() -> None:
    for lib in (gc, torch):
        x = lib.ones(3, 4, requires_grad=True)
        g = lib.gather(x, -1, _t(lib, [[0]])).grad_fn
        assert g._saved_dim == 2**64 - 1 and g._saved_sparse_grad is False and g._saved_self is x
        assert g._saved_index.tolist() == [[0]]
        s = lib.index_select(x, 1, _t(lib, [2, 2])).grad_fn
        assert s._saved_dim == 1 and tuple(s._saved_self_sym_sizes) == (3, 4) and s._saved_index.tolist() == [2, 2]


def test_a_src_larger_than_the_index_gets_zeros_where_it_was_not_read() -> None:
    """PyTorch's backward fails on the shapes here (ScatterAddBackward0 "returned an invalid gradient"); gradcalc
    gives the gradient by its definition: the places read, zeros elsewhere."""
    for op in ("scatter_add", "scatter"):
        x, s = gc.zeros(3, 4, requires_grad=True), gc.ones(2, 5, requires_grad=True)
        y = getattr(x, op)(1, gc.tensor([[0, 2], [1, 3]]), s * 2.0)
        (y * gc.arange(12.0).reshape(3, 4)).sum().backward()
        expected = np.zeros((2, 5))
        expected[:, :2] = 2.0 * np.array([[0.0, 2.0], [5.0, 7.0]])
        np.testing.assert_array_equal(s.grad.numpy(), expected)
