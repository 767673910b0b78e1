"""masked_select, take_along_dim, index_put(_), put(_), scatter_reduce(_) and scatter(reduce=) against PyTorch over
generated cases: values, grad_fn names, first and second derivatives (ops_oracle.check), forward-mode tangents,
vmap over in_dims 0 and 1, float32 (tests/precision.py), repeated places with accumulate, and the errors for bad
arguments (PyTorch's exception type and text)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.engine.ops_oracle import check, jvp_values, same_error, same_jvp, same_outcome
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

CASES = 30


def _shape(rng: np.random.Generator, low: int = 0, high: int = 4) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(low, high))))


def _t(lib: Any, a: Any) -> Any:
    return lib.tensor(np.asarray(a, dtype=np.int64))


def _b(lib: Any, a: Any) -> Any:
    return lib.tensor(np.asarray(a, dtype=bool))


# -- values and derivatives ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(CASES))
def test_masked_select(seed: int) -> None:
    rng = np.random.default_rng(seed)
    shape = _shape(rng)
    # a mask of the input's shape, of its trailing dims, or one that broadcasts it to a larger shape
    mshape = shape[int(rng.integers(0, len(shape) + 1)):] if shape else ()
    if rng.random() < 0.3:
        mshape = (2,) + tuple(shape)
    mask = rng.random(mshape) < 0.5
    check(lambda L, x: L.masked_select(x * x, _b(L, mask)), [rng.standard_normal(shape)], seed=seed,
          grad_names=False)  # (its gradient's own gradient: gradcalc's advanced index, PyTorch's masked_scatter)
    check(lambda L, x: x.masked_select(_b(L, mask)).exp(), [rng.standard_normal(shape)], seed=seed, grad_names=False)


@pytest.mark.parametrize("seed", range(CASES))
def test_take_along_dim(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    shape = _shape(rng, low=1)
    dim = int(rng.integers(-len(shape), len(shape)))
    axis = dim % len(shape)
    # each other dim of the indices: the input's size, or 1 (broadcast); along dim any length
    ishape = [s if rng.random() < 0.7 else 1 for s in shape]
    ishape[axis] = int(rng.integers(0, 5))
    idx = rng.integers(-shape[axis], shape[axis], size=ishape)
    check(lambda L, x: L.take_along_dim(x * x, _t(L, idx), dim=dim), [rng.standard_normal(shape)], seed=seed)
    flat = rng.integers(0, int(np.prod(shape)), size=_shape(rng))
    check(lambda L, x: x.take_along_dim(_t(L, flat)).sin(), [rng.standard_normal(shape)], seed=seed)


def _index_case(rng: np.random.Generator) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """A shape and index_put's indices for it: integer vectors (repeats likely) or one boolean mask."""
    shape = _shape(rng, low=1)
    if rng.random() < 0.25:
        k = int(rng.integers(1, len(shape) + 1))
        return shape, [rng.random(shape[:k]) < 0.5]
    k = int(rng.integers(1, len(shape) + 1))
    n = int(rng.integers(1, 5))
    return shape, [rng.integers(-s, s, size=n) for s in shape[:k]]


def _as_lib(lib: Any, indices: list[np.ndarray]) -> tuple:
    return tuple(_b(lib, i) if i.dtype == bool else _t(lib, i) for i in indices)


@pytest.mark.parametrize("seed", range(CASES))
def test_index_put(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    shape, indices = _index_case(rng)
    target = np.empty(shape)[tuple(indices)].shape
    vshape = target[int(rng.integers(0, len(target) + 1)):]  # values broadcast to the indexed elements
    data = [rng.standard_normal(shape), rng.standard_normal(vshape)]
    # accumulate: repeated places add up, and both inputs have their gradient
    check(lambda L, x, v: L.index_put(x * x, _as_lib(L, indices), v * v, accumulate=True), data, seed=seed)
    check(lambda L, x, v: (x * 1.0).index_put_(_as_lib(L, indices), v.exp(), True), data, seed=seed)
    # without accumulate, only distinct places (PyTorch keeps one of repeated writes, unspecified which)
    flat = [np.unique(np.stack(np.broadcast_arrays(*indices)) % np.array(shape[:len(indices)])[:, None], axis=1)]
    if indices[0].dtype != bool and flat[0].size:
        distinct = list(flat[0])
        target = np.empty(shape)[tuple(distinct)].shape
        data = [rng.standard_normal(shape), rng.standard_normal(target[1:])]
        check(lambda L, x, v: L.index_put(x * x, _as_lib(L, distinct), v * v), data, seed=seed)
        check(lambda L, x, v: x.index_put(_as_lib(L, distinct), v), data, seed=seed)


@pytest.mark.parametrize("seed", range(CASES))
def test_put(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    shape = _shape(rng)
    n = int(np.prod(shape))
    ishape = _shape(rng)
    idx = rng.integers(-n, n, size=ishape)
    source = rng.standard_normal(ishape[::-1])  # same number of elements, any shape
    data = [rng.standard_normal(shape), source]
    check(lambda L, x, s: L.put(x * x, _t(L, idx), s * s, accumulate=True), data, seed=seed)
    check(lambda L, x, s: (x * 1.0).put_(_t(L, idx), s.exp(), accumulate=True), data, seed=seed)
    distinct = rng.permutation(n)[:int(rng.integers(0, n + 1))]
    data = [rng.standard_normal(shape), rng.standard_normal(distinct.shape)]
    check(lambda L, x, s: x.put(_t(L, distinct), s * s), data, seed=seed)


def _scatter_case(rng: np.random.Generator) -> tuple[tuple, int, np.ndarray, tuple]:
    shape = _shape(rng, low=1)
    dim = int(rng.integers(-len(shape), len(shape)))
    axis = dim % len(shape)
    ishape = [int(rng.integers(1, s + 1)) for s in shape]
    ishape[axis] = int(rng.integers(1, 5))
    # src the index's shape: where it is larger, PyTorch's backward fails on the shapes (gradcalc gives the
    # elements not read a zero gradient, as its scatter_add does)
    return shape, dim, rng.integers(0, shape[axis], size=ishape), tuple(ishape)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("seed", range(12))
def test_scatter_reduce(seed: int, reduce: str) -> None:
    rng = np.random.default_rng(400 + seed)
    shape, dim, idx, sshape = _scatter_case(rng)
    include_self = bool(rng.random() < 0.5)
    data = [rng.standard_normal(shape), rng.standard_normal(sshape)]
    if reduce == "prod" and seed % 3 == 0:  # a zero in each, where prod's gradient takes its other branch
        data[0].reshape(-1)[0] = data[1].reshape(-1)[-1] = 0.0
    check(lambda L, x, s: L.scatter_reduce(x * 1.5, dim, _t(L, idx), s * 2.0, reduce, include_self=include_self),
          data, seed=seed)
    check(lambda L, x, s: (x * 1.0).scatter_reduce_(dim, _t(L, idx), s, reduce, include_self=include_self),
          data, seed=seed)


def test_scatter_reduce_prod_double_backward_over_two_zeros_is_pytorchs_error() -> None:
    def twice(L: Any) -> Any:
        x, s = L.ones(1, 3, requires_grad=True), L.zeros(1, 2, requires_grad=True)
        y = x.scatter_reduce(1, _t(L, [[1, 1]]), s, "prod")
        gx, gs = L.autograd.grad(y.sum(), (x, s), create_graph=True)
        assert gs.grad_fn.name() == "torch::autograd::Error"
        return L.autograd.grad(gs.sum(), s)

    same_error(twice, True)


def test_scatter_with_reduce() -> None:
    """scatter's reduce= (add, multiply): values as PyTorch's, recorded as NotImplemented, backward its error."""
    rng = np.random.default_rng(3)
    x, s = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    idx = [[0, 2, 0, 1], [0, 0, 2, 1]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for reduce in ("add", "multiply"):
            same_outcome(lambda L, r=reduce: L.tensor(x).scatter(0, _t(L, idx), L.tensor(s), reduce=r))
            same_outcome(lambda L, r=reduce: L.scatter(L.tensor(x), 1, _t(L, idx), 2.5, reduce=r))
            same_outcome(lambda L, r=reduce: L.tensor(x, requires_grad=True).scatter(1, _t(L, idx), 2.0, reduce=r))
            same_error(lambda L, r=reduce: L.tensor(x, requires_grad=True).scatter(0, _t(L, idx), L.tensor(s),
                                                                                  reduce=r).sum().backward(), True)
        same_error(lambda L: L.tensor(x).scatter(0, _t(L, idx), L.tensor(s), reduce="sum"), True)
    with pytest.warns(UserWarning, match="reduce argument of torch.scatter with Tensor src is deprecated"):
        gc.tensor(x).scatter(0, _t(gc, idx), gc.tensor(s), reduce="add")


def test_in_place_forms_bump_the_version_and_record_pytorchs_nodes() -> None:
    for lib in (gc, torch):
        x = lib.zeros(2, 3, requires_grad=True)
        for write in (lambda y, L=lib: y.index_put_((_t(L, [1]),), L.ones(3), accumulate=True),
                      lambda y, L=lib: y.put_(_t(L, [5]), L.ones(1)),
                      lambda y, L=lib: y.scatter_reduce_(1, _t(L, [[0], [2]]), L.ones(2, 1), "amax")):
            y = x * 1.0
            v = y._version
            assert write(y) is y
            assert y._version == v + 1
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x.put_(_t(lib, [0]), lib.ones(1))
    names = [(lib.zeros(2, 3, requires_grad=True) * 1.0).index_put_((_t(lib, [1]),), lib.ones(3)).grad_fn.name()
             for lib in (gc, torch)]
    assert names[0] == names[1] == "IndexPutBackward0"


# -- forward mode ----------------------------------------------------------------------------------------------
def _reduce_jvp(reduce: str, include_self: bool) -> Callable:
    return lambda L: lambda x, s: L.scatter_reduce(x.sin(), 1, _t(L, [[0, 2, 0], [1, 1, 1]]), s * 1.5, reduce,
                                                   include_self=include_self)


def _reduce_vmap(reduce: str) -> Callable:
    return lambda L, a, s: L.scatter_reduce(a, 1, _t(L, [[0, 3, 0], [2, 2, 1]]), s, reduce,
                                            include_self=reduce != "amin")


JVP = {
    "masked_select": (lambda L: lambda x: L.masked_select(x.sin(), _b(L, [[True, False, True]])), [(2, 3)]),
    "take_along_dim": (lambda L: lambda x: L.take_along_dim(x.exp(), _t(L, [[2, 0], [1, 1]]), 1), [(2, 3)]),
    "index_put": (lambda L: lambda x, v: L.index_put(x.exp(), (_t(L, [1, 0, 1]),), v * v), [(2, 3), (3,)]),
    "index_put accumulate": (lambda L: lambda x, v: x.index_put((_t(L, [1, 1]), _t(L, [0, 0])), v, True),
                             [(2, 3), (2,)]),
    "put": (lambda L: lambda x, s: L.put(x.cos(), _t(L, [5, 0]), s * s), [(2, 3), (2,)]),
    "put accumulate": (lambda L: lambda x, s: x.put(_t(L, [-1, -1, 2]), s, accumulate=True), [(2, 3), (3,)]),
    **{f"scatter_reduce {r} {inc}": (_reduce_jvp(r, inc), [(2, 3), (2, 3)])
       for r in ("sum", "mean", "amax", "amin") for inc in (True, False)},
}


@pytest.mark.parametrize("name", sorted(JVP))
def test_forward_mode(name: str) -> None:
    same_jvp(*JVP[name], atol=1e-14)


@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_prod_tangent_is_its_gradients_transpose(include_self: bool) -> None:
    """PyTorch's own forward rule for 'prod' (scatter_reduce_jvp) disagrees with finite differences where an index
    repeats; gradcalc's tangent is the transpose of PyTorch's gradient, which agrees with them."""
    rng = np.random.default_rng(5)
    x, s = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))
    tx, ts = rng.standard_normal((3, 4)), rng.standard_normal((2, 3))
    idx = [[1, 1, 1], [0, 3, 0]]

    def f(L: Any, a: Any, b: Any) -> Any:
        return a.scatter_reduce(1, _t(L, idx), b, "prod", include_self=include_self)

    _, ours = jvp_values(gc, lambda a, b: f(gc, a, b), [x, s], [tx, ts])
    # J t, row by row, from PyTorch's gradient: <e_k, J t> = <J^T e_k, t>
    a, b = torch.tensor(x, requires_grad=True), torch.tensor(s, requires_grad=True)
    out = f(torch, a, b)
    rows = []
    for k in range(out.numel()):
        e = torch.zeros(out.numel(), dtype=torch.float64)
        e[k] = 1.0
        ga, gb = torch.autograd.grad(out, (a, b), e.reshape(out.shape), retain_graph=True)
        rows.append(float((ga * torch.tensor(tx)).sum() + (gb * torch.tensor(ts)).sum()))
    np.testing.assert_allclose(ours.reshape(-1), rows, rtol=1e-10, atol=1e-12)
    step = 1e-6
    numeric = (f(torch, torch.tensor(x + step * tx), torch.tensor(s + step * ts))
               - f(torch, torch.tensor(x - step * tx), torch.tensor(s - step * ts))).numpy() / (2 * step)
    np.testing.assert_allclose(ours, numeric, rtol=1e-6, atol=1e-6)


# -- vmap ------------------------------------------------------------------------------------------------------
def _vmap(f: Callable, arrays: list[np.ndarray], in_dims: tuple) -> None:
    ours = gc.func.vmap(lambda *a: f(gc, *a), in_dims)(*[gc.tensor(a) for a in arrays])
    theirs = torch.func.vmap(lambda *a: f(torch, *a), in_dims)(*[torch.tensor(a) for a in arrays])
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(), rtol=1e-12, atol=1e-14)


def _batched(rng: np.random.Generator, sample: tuple[int, ...], d: int | None, size: int = 5) -> np.ndarray:
    if d is None:
        return rng.standard_normal(sample)
    shape = list(sample)
    shape.insert(d, size)
    return rng.standard_normal(shape)


VMAP = {
    "masked_select": (lambda L, a: L.masked_select(a, _b(L, [True, False, True, True])), [(3, 4)]),
    "take_along_dim": (lambda L, a: L.take_along_dim(a, _t(L, [[0, 3], [2, 2], [1, 0]]), dim=1), [(3, 4)]),
    "take_along_dim flat": (lambda L, a: L.take_along_dim(a, _t(L, [11, 0, 5])), [(3, 4)]),
    "index_put": (lambda L, a, v: L.index_put(a, (_t(L, [2, 0]),), v), [(3, 4), (4,)]),
    "index_put accumulate": (lambda L, a, v: L.index_put(a, (_t(L, [2, 2]), _t(L, [1, 1])), v, accumulate=True),
                             [(3, 4), (2,)]),
    "index_put mask": (lambda L, a, v: a.index_put((_b(L, [[True, False, True, False]] * 3),), v), [(3, 4), ()]),
    "put": (lambda L, a, s: L.put(a, _t(L, [0, 11, 5]), s), [(3, 4), (3,)]),
    "put accumulate": (lambda L, a, s: a.put(_t(L, [1, 1, -1]), s, accumulate=True), [(3, 4), (3,)]),
    **{f"scatter_reduce {r}": (_reduce_vmap(r), [(3, 4), (2, 3)]) for r in ("sum", "prod", "mean", "amax", "amin")},
}


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("name", sorted(VMAP))
def test_vmap(name: str, d: int) -> None:
    if name == "take_along_dim flat" and d == 1:
        pytest.skip("PyTorch's take_along_dim without dim views the input flat, which fails on a batch at dim 1")
    f, shapes = VMAP[name]
    rng = np.random.default_rng(11)
    for dims in ((d,) + (None,) * (len(shapes) - 1), (d,) * len(shapes), (None,) + (d,) * (len(shapes) - 1)):
        if all(x is None for x in dims) or any(x == 1 and not s for x, s in zip(dims, shapes, strict=True)):
            continue
        _vmap(f, [_batched(rng, s, x) for s, x in zip(shapes, dims, strict=True)], dims)


def test_vmap_over_a_mask_is_pytorchs_error() -> None:
    rng = np.random.default_rng(1)
    x, m = rng.standard_normal((4, 3)), rng.random((4, 3)) < 0.5
    for lib in (gc, torch):
        with pytest.raises(RuntimeError, match=r"vmap: Attempted to vmap over `mask` in torch.masked_select"):
            lib.func.vmap(lambda a, b, L=lib: L.masked_select(a, b))(lib.tensor(x), lib.tensor(m))


# -- float32 ---------------------------------------------------------------------------------------------------
def test_float32() -> None:
    """Selections and writes are exact in float32; sums of repeated places are as close as PyTorch's own."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    src = rng.standard_normal((6, 5)).astype(np.float32)
    idx = rng.integers(0, 4, size=(6, 5))
    exact = [lambda L, a, s: L.masked_select(a, a > 0), lambda L, a, s: L.take_along_dim(a, _t(L, idx), 0),
             lambda L, a, s: a.index_put((_t(L, [3, 0]),), s[0]), lambda L, a, s: a.put(_t(L, [7, 2]), s[0, :2]),
             lambda L, a, s: a.scatter_reduce(0, _t(L, idx), s, "amax"),
             lambda L, a, s: a.scatter_reduce(0, _t(L, idx), s, "amin", include_self=False)]
    for f in exact:
        ours = f(gc, gc.tensor(x), gc.tensor(src))
        assert ours.dtype == gc.float32
        np.testing.assert_array_equal(ours.numpy(), f(torch, torch.tensor(x), torch.tensor(src)).numpy())
    scale = float(np.abs(src).sum(0).max() + np.abs(x).max())
    summed = {"index_put": (lambda L, a, s: a.index_put((_t(L, idx[:, 0]),), s, accumulate=True), 8),
              "put": (lambda L, a, s: a.put(_t(L, idx.reshape(-1)), s.reshape(-1), accumulate=True), 8),
              "scatter_reduce sum": (lambda L, a, s: a.scatter_reduce(0, _t(L, idx), s, "sum"), 8),
              "scatter_reduce mean": (lambda L, a, s: a.scatter_reduce(0, _t(L, idx), s, "mean"), 10),
              "scatter_reduce prod": (lambda L, a, s: a.scatter_reduce(0, _t(L, idx), s, "prod"), 10)}
    for what, (f, steps) in summed.items():
        reference = f(torch, torch.tensor(x, dtype=torch.float64), torch.tensor(src, dtype=torch.float64)).numpy()
        assert_float32_close(f(gc, gc.tensor(x), gc.tensor(src)).numpy(),
                             f(torch, torch.tensor(x), torch.tensor(src)).numpy(), reference, steps=steps,
                             scale=max(scale, float(np.abs(reference).max())), what=what)


def test_integer_and_bool_inputs() -> None:
    a = np.arange(12).reshape(3, 4)
    same_outcome(lambda L: L.masked_select(_t(L, a), _t(L, a) > 4))
    same_outcome(lambda L: L.take_along_dim(_t(L, a), _t(L, [[3], [0], [1]]), 1))
    same_outcome(lambda L: _t(L, a).index_put((_t(L, [1, 1]),), _t(L, [5, 6, 7, 8]), accumulate=True))
    same_outcome(lambda L: _t(L, a).put(_t(L, [0, 0, 3]), _t(L, [1, 2, 3]), accumulate=True))
    same_outcome(lambda L: L.tensor([True, False]).index_put((_t(L, [1]),), L.tensor(True)))
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            same_outcome(lambda L, r=reduce, i=inc: _t(L, a).scatter_reduce(
                1, _t(L, [[0, 0], [3, 3], [1, 2]]), _t(L, [[5, 6], [7, 8], [9, 10]]), r, include_self=i))


# -- errors ----------------------------------------------------------------------------------------------------
ERRORS: dict[str, Callable[[Any], Any]] = {
    "masked_select float mask": lambda L: L.masked_select(L.ones(2, 3), L.ones(3)),
    "masked_select long mask": lambda L: L.masked_select(L.ones(2, 3), _t(L, [1, 0, 1])),
    "masked_select broadcast": lambda L: L.masked_select(L.ones(2, 3), L.ones(4) > 0),
    "take_along_dim ndim": lambda L: L.take_along_dim(L.ones(2, 3), _t(L, [0]), dim=0),
    "take_along_dim float": lambda L: L.take_along_dim(L.ones(2, 3), L.tensor([[0.0]]), dim=0),
    "take_along_dim float flat": lambda L: L.take_along_dim(L.ones(2, 3), L.tensor([[0.0]])),
    "take_along_dim broadcast": lambda L: L.take_along_dim(L.ones(2, 3), _t(L, [[0], [1], [0]]), dim=1),
    "take_along_dim dim": lambda L: L.take_along_dim(L.ones(2, 3), _t(L, [[0]]), dim=2),
    "take_along_dim flat out of range": lambda L: L.take_along_dim(L.ones(2, 3), _t(L, [-1])),
    "index_put shape": lambda L: L.ones(2, 3).index_put((_t(L, [0, 1]),), L.ones(3, 3)),
    "index_put out of range": lambda L: L.ones(2, 3).index_put((_t(L, [5]),), L.ones(3)),
    "index_put not a tuple": lambda L: L.ones(2, 3).index_put(_t(L, [0]), L.ones(3)),
    "index_put None": lambda L: L.index_put(L.ones(2, 3), (None, _t(L, [0])), L.ones(1)),
    "index_put float index": lambda L: L.ones(2, 3).index_put((L.tensor([0.0]),), L.ones(3)),
    "index_put too many": lambda L: L.ones(2, 3).index_put((_t(L, [0]), _t(L, [0]), _t(L, [0])), L.ones(())),
    "put counts": lambda L: L.ones(2, 3).put(_t(L, [0, 1]), L.ones(3)),
    "put out of range": lambda L: L.ones(2, 3).put(_t(L, [10]), L.ones(1)),
    "put float index": lambda L: L.ones(2, 3).put(L.tensor([0.0]), L.ones(1)),
    "put int32 index": lambda L: L.ones(2, 3).put(L.tensor([0], dtype=L.int32), L.ones(1)),
    "scatter_reduce reduce": lambda L: L.ones(2, 3).scatter_reduce(0, _t(L, [[0]]), L.ones(1, 1), "add"),
    "scatter_reduce float index": lambda L: L.ones(2, 3).scatter_reduce(0, L.tensor([[0.0]]), L.ones(1, 1), "sum"),
    "scatter_reduce out of range": lambda L: L.ones(2, 3).scatter_reduce(0, _t(L, [[5]]), L.ones(1, 1), "sum"),
    "scatter_reduce ndim": lambda L: L.ones(2, 3).scatter_reduce(0, _t(L, [0]), L.ones(1, 1), "sum"),
    "scatter_reduce size": lambda L: L.ones(2, 3).scatter_reduce(0, _t(L, [[0, 0, 0, 0]]), L.ones(1, 1), "sum"),
    "scatter reduce": lambda L: L.ones(2, 3).scatter(0, _t(L, [[0]]), 2.0, reduce="mean"),
}
# the message texts PyTorch gives and gradcalc gives first (where gradcalc's is PyTorch's)
SAME_TEXT = set(ERRORS) - {"take_along_dim dim", "index_put None"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str) -> None:
    same_error(ERRORS[name], name in SAME_TEXT)


def test_the_language_calls_them() -> None:
    """The built-ins and methods the specs derive, from the command line (index tensors as the language makes
    them: `.long()`); the values printed are PyTorch's for the same program."""
    import subprocess  # noqa: PLC0415 - only this test runs the command
    import sys  # noqa: PLC0415

    program = ["x = tensor([[1., -2.], [3., -4.]]) requires_grad", "masked_select(x, x > 0)",
               "x.index_put((tensor([1, 1]).long(),), tensor([10., 20.]), accumulate=true)",
               "w = scatter_reduce(x, 1, tensor([[0, 0], [1, 1]]).long(), x, 'amax', include_self=false)",
               "backward(sum(w))", "x.grad"]
    args = [sys.executable, "-m", "gradcalc"] + [a for line in program for a in ("-e", line)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    x = torch.tensor([[1.0, -2.0], [3.0, -4.0]], requires_grad=True)
    w = torch.scatter_reduce(x, 1, torch.tensor([[0, 0], [1, 1]]), x, "amax", include_self=False)
    w.sum().backward()
    expected = [repr(torch.masked_select(x, x > 0)),
                repr(x.index_put((torch.tensor([1, 1]),), torch.tensor([10.0, 20.0]), accumulate=True)),
                repr(x.grad)]
    assert out.stdout.strip().split("\n") == "\n".join(expected).split("\n")
