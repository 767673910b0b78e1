"""Reductions and softmax against PyTorch: values, dtypes, grad_fn names, first-order gradients by
backward and higher orders by autograd.grad(create_graph=True), over random shapes (0-d to 3-d), dims
given as ints, negative ints and tuples, keepdim true and false; ties (max, amax), zeros (prod), the
zero vector (norm), degrees of freedom <= 0 (var, std), infinities (logsumexp, softmax)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pointwise_oracle import ATOL, RTOL, _np, assert_same, check, shapes  # noqa: F401

import gradcalc as gc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

FAST = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


GRID = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5])  # coarse: ties and zeros happen
# one decimal: distinct values differ by 0.1 at least, so that derivatives that are mathematically 0 are not
# drowned in the rounding of terms of size 1 / (difference)^k that cancel
SMOOTH = st.integers(-30, 30).map(lambda k: k / 10)


@st.composite
def case(draw, elements=SMOOTH, dims: str = "any", min_side: int = 1):
    """(x, dim, keepdim): dim is None, an int (maybe negative), or a tuple of distinct dims (maybe
    negative), as `dims` allows ("any", "int", "int or none")."""
    x = draw(hnp.arrays(np.float64, shapes(min_side=min_side), elements=elements))
    n = max(x.ndim, 1)
    kinds = {"any": ["none", "int", "tuple"], "int": ["int"], "int or none": ["none", "int"]}[dims]
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        dim = None
    elif kind == "int":
        dim = draw(st.integers(-n, n - 1))
    else:
        picked = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n))
        dim = tuple(d - n if draw(st.booleans()) else d for d in picked)
    return x, dim, draw(st.booleans())


def _kw(dim, keepdim):
    return {"dim": dim, "keepdim": keepdim}


# -- sum, mean -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["sum", "mean"])
@FAST
@given(c=case())
def test_sum_mean(name, c):
    x, dim, keepdim = c
    kw = _kw(dim, keepdim)
    check(lambda t: getattr(torch, name)(t, **kw), lambda t: getattr(gc, name)(t, **kw), x)
    check(lambda t: getattr(t, name)(**kw), lambda t: getattr(t, name)(**kw), x, order=1)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_mean_node_names_and_forms(name):
    x = np.arange(6.0).reshape(2, 3)
    for args, kw in [((), {}), ((None,), {}), ((), {"dim": None, "keepdim": True}), (((),), {}), ((1,), {}),
                     ((-1, True), {}), (((0, -1),), {})]:
        check(lambda t, a=args, k=kw: getattr(torch, name)(t, *a, **k),
              lambda t, a=args, k=kw: getattr(gc, name)(t, *a, **k), x, order=1)


def test_sum_mean_dtype():
    x = np.array([[1.0, 2.5], [3.0, -4.0]])
    for name in ["sum", "mean"]:
        check(lambda t, n=name: getattr(t, n)(dtype=torch.float32), lambda t, n=name: getattr(t, n)(dtype=gc.float32),
              x, order=1, loose=True)
        check(lambda t, n=name: getattr(torch, n)(t, 0, dtype=torch.float32),
              lambda t, n=name: getattr(gc, n)(t, 0, dtype=gc.float32), x, order=1, loose=True)
    ints = [[1, 2], [3, 4]]
    expected = torch.sum(torch.tensor(ints), dtype=torch.float64)
    assert gc.sum(gc.tensor(ints), dtype=gc.float64).tolist() == expected.tolist()
    assert str(gc.tensor([True, False]).sum().dtype) == str(torch.tensor([True, False]).sum().dtype)
    y = gc.mean(gc.tensor([1, 2]), dtype=gc.float32)
    assert str(y.dtype) == "torch.float32" and y.item() == 1.5
    with pytest.raises(RuntimeError, match="floating"):
        gc.tensor([1.0], requires_grad=True).sum(dtype=gc.int64)
    with pytest.raises(RuntimeError, match="floating"):
        gc.mean(gc.tensor([1, 2]))


def test_dims_errors():
    x = gc.tensor(np.ones((2, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="more than once"):
        gc.sum(x, (0, -2))
    with pytest.raises(IndexError):
        gc.sum(x, 2)
    with pytest.raises(IndexError):
        gc.amax(gc.tensor(2.0), 1)
    with pytest.raises(TypeError):
        gc.prod(x, (0,))
    with pytest.raises(TypeError):
        gc.max(x, (0,))
    with pytest.raises(TypeError):
        gc.softmax(x, (0,))


# -- prod ------------------------------------------------------------------------------------------------------
@FAST
@given(c=case(elements=GRID, dims="int or none"))
def test_prod_with_zeros(c):
    x, dim, keepdim = c
    if dim is None:
        check(torch.prod, gc.prod, x)
    else:
        check(lambda t: torch.prod(t, dim, keepdim), lambda t: gc.prod(t, dim, keepdim), x)


@pytest.mark.parametrize("values", [[2.0, 3.0, 0.5, -1.5], [2.0, 0.0, 0.5, -1.5], [0.0, 3.0, 0.0, -1.5],
                                    [0.0, 0.0, 0.0, 2.0]])
def test_prod_zeros_third_order(values):
    # no zero, one zero, two zeros, three: every order is a polynomial in the others
    x = np.array(values)
    check(torch.prod, gc.prod, x, order=3)
    m = np.array([values, values[::-1]])
    check(lambda t: t.prod(1, keepdim=True), lambda t: t.prod(1, keepdim=True), m, order=3)
    check(lambda t: t.prod(0), lambda t: t.prod(0), m, order=3)


def test_prod_dtypes():
    assert gc.prod(gc.tensor([1, 2, 3])).tolist() == 6 and str(gc.prod(gc.tensor([1, 2])).dtype) == "torch.int64"
    assert str(gc.prod(gc.tensor([True, True])).dtype) == str(torch.prod(torch.tensor([True, True])).dtype)
    x = np.array([[1.0, 2.0], [3.0, 0.5]])
    check(lambda t: t.prod(0, dtype=torch.float32), lambda t: t.prod(0, dtype=gc.float32), x, order=1, loose=True)
    check(lambda t: t.prod(dtype=torch.float32), lambda t: t.prod(dtype=gc.float32), x, order=1, loose=True)


# -- max, min ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["max", "min"])
@FAST
@given(x=hnp.arrays(np.float64, shapes(), elements=GRID))
def test_max_min_all_split_ties(name, x):
    check(getattr(torch, name), getattr(gc, name), x)
    check(lambda t: getattr(t, name)(), lambda t: getattr(t, name)(), x, order=1)


@pytest.mark.parametrize("name", ["max", "min"])
@FAST
@given(c=case(elements=GRID, dims="int"))
def test_max_min_dim(name, c):
    x, dim, keepdim = c
    check(lambda t: getattr(torch, name)(t, dim, keepdim), lambda t: getattr(gc, name)(t, dim, keepdim), x)
    rt = getattr(torch, name)(torch.tensor(x), dim=dim, keepdim=keepdim)
    rg = getattr(gc.tensor(x), name)(dim=dim, keepdim=keepdim)
    assert isinstance(rg, tuple) and len(rg) == 2
    assert rg.values is rg[0] and rg.indices is rg[1]
    assert str(rg.indices.dtype) == "torch.int64" and not rg.indices.requires_grad
    assert rg.indices.tolist() == rt.indices.tolist()  # the first of ties
    assert repr(rg) == repr(rt)
    values, indices = rg  # unpacks as a pair
    assert values is rg.values and indices is rg.indices


def test_max_min_nan_pairs_and_errors():
    x = np.array([3.0, math.nan, 1.0, math.nan])
    for name in ["max", "min"]:
        check(getattr(torch, name), getattr(gc, name), x)
        check(lambda t, n=name: getattr(torch, n)(t, 0), lambda t, n=name: getattr(gc, n)(t, 0), x)
        check(lambda a, b, n=name: getattr(torch, n)(a, b), lambda a, b, n=name: getattr(gc, n)(a, b),
              np.array([1.0, 2.0]), np.array([2.0, 2.0]))
        check(lambda a, b, n=name: getattr(a, n)(other=b), lambda a, b, n=name: getattr(a, n)(other=b),
              np.array([1.0, 2.0]), np.array([2.0, 2.0]))
        with pytest.raises(RuntimeError):
            getattr(gc, name)(gc.tensor(np.zeros(0)))
        with pytest.raises(IndexError):
            getattr(gc, name)(gc.tensor(np.zeros((0, 2))), 0)
    assert gc.max(gc.tensor([1, 3])).tolist() == 3
    assert gc.max(gc.tensor(np.zeros((0, 2))), 1).values.shape == (0,)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@FAST
@given(c=case(elements=GRID, dims="int or none"))
def test_argmax_argmin(name, c):
    x, dim, keepdim = c
    yt = getattr(torch, name)(torch.tensor(x), dim, keepdim)
    yg = getattr(gc, name)(gc.tensor(x), dim, keepdim)
    assert yg.shape == yt.shape and yg.tolist() == yt.tolist() and str(yg.dtype) == "torch.int64"


# -- amax, amin --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["amax", "amin"])
@FAST
@given(c=case(elements=GRID))
def test_amax_amin_ties_split_evenly(name, c):
    x, dim, keepdim = c
    d = () if dim is None else dim
    check(lambda t: getattr(torch, name)(t, d, keepdim), lambda t: getattr(gc, name)(t, d, keepdim), x)
    check(lambda t: getattr(t, name)(dim=d), lambda t: getattr(t, name)(dim=d), x, order=1)


def test_amax_nan_and_empty():
    x = np.array([3.0, math.nan, math.nan])
    check(torch.amax, gc.amax, x)
    check(lambda t: torch.amax(t, 1), lambda t: gc.amax(t, 1), np.zeros((0, 2)))
    with pytest.raises(IndexError):
        gc.amax(gc.tensor(np.zeros((0, 2))), 0)


# -- logsumexp, softmax, log_softmax -------------------------------------------------------------------------------
@FAST
@given(c=case())
def test_logsumexp(c):
    x, dim, keepdim = c
    d = tuple(range(x.ndim)) if dim is None else dim
    check(lambda t: torch.logsumexp(t, d, keepdim), lambda t: gc.logsumexp(t, d, keepdim), x)
    check(lambda t: t.logsumexp(d), lambda t: t.logsumexp(d), x, order=1)


def test_logsumexp_infinities_and_ints():
    for row in ([math.inf, 1.0], [-math.inf, -math.inf], [-math.inf, 2.0], [800.0, 799.0], [-800.0, -801.0]):
        check(lambda t: torch.logsumexp(t, 0), lambda t: gc.logsumexp(t, 0), np.array(row), order=1)
    assert gc.logsumexp(gc.tensor([1, 2]), 0).item() == pytest.approx(torch.logsumexp(torch.tensor([1, 2]), 0).item())
    assert gc.logsumexp(gc.tensor(np.zeros(0)), 0).item() == -math.inf


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@FAST
@given(c=case(dims="int"))
def test_softmax(name, c):
    x, dim, _ = c
    check(lambda t: getattr(torch, name)(t, dim), lambda t: getattr(gc, name)(t, dim), x)
    check(lambda t: getattr(t, name)(dim), lambda t: getattr(t, name)(dim), x, order=1)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_infinities_dtype_errors(name):
    x = np.array([[-math.inf, 0.0, 1.0], [-math.inf, -math.inf, -math.inf], [900.0, 0.0, -900.0]])
    check(lambda t: getattr(torch, name)(t, 1), lambda t: getattr(gc, name)(t, 1), x, order=1)
    y = np.array([[0.5, 1.0, -2.0], [3.0, 0.25, 0.0]])
    check(lambda t: getattr(torch, name)(t, 0, dtype=torch.float32),
          lambda t: getattr(gc, name)(t, 0, dtype=gc.float32), y, order=1, loose=True)
    assert getattr(gc, name)(gc.tensor(y, requires_grad=True), 0, dtype=gc.float32).grad_fn.next_functions[0][
        0].name() == "ToCopyBackward0"
    with pytest.raises(RuntimeError, match="floating"):
        getattr(gc, name)(gc.tensor([1, 2]), 0)


# -- norm ----------------------------------------------------------------------------------------------------------
PS = [2, 1, 3, 1.5, 0.5, math.inf, -math.inf, 0, "fro"]


@pytest.mark.parametrize("p", PS)
@FAST
@given(c=case())
def test_norm(p, c):
    x, dim, keepdim = c
    if p == "fro" and dim is not None and len(np.atleast_1d(dim)) > 2:
        dim = dim[:2] if isinstance(dim, tuple) else dim  # 'fro' takes at most two dims
    check(lambda t: torch.norm(t, p, dim, keepdim), lambda t: gc.norm(t, p, dim, keepdim), x)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, math.inf, 0])
def test_norm_zero_vector_and_zeros(p):
    check(lambda t: torch.norm(t, p), lambda t: gc.norm(t, p), np.zeros(3))
    check(lambda t: t.norm(p, dim=1), lambda t: t.norm(p, dim=1), np.array([[0.0, 0.0], [0.0, 2.0]]))


def test_norm_method_dtype_errors():
    x = np.array([[3.0, -4.0], [1.0, 0.5]])
    check(lambda t: t.norm(), lambda t: t.norm(), x, order=3)
    check(lambda t: t.norm(dim=(0, 1), keepdim=True), lambda t: t.norm(dim=(0, 1), keepdim=True), x)
    xf = gc.tensor(x, dtype=gc.float32, requires_grad=True)
    y = gc.norm(xf, dtype=gc.float64)
    yt = torch.norm(torch.tensor(x, dtype=torch.float32, requires_grad=True), dtype=torch.float64)
    assert str(y.dtype) == str(yt.dtype)
    y.backward()
    assert str(xf.grad.dtype) == "torch.float32"
    with pytest.raises(RuntimeError, match="floating"):
        gc.norm(gc.tensor([3, 4]))
    with pytest.raises(RuntimeError, match="matrix"):
        gc.norm(gc.tensor(x), "nuc")


# -- var, std ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["var", "std"])
@FAST
@given(c=case(min_side=2), correction=st.sampled_from([None, 0, 1, 0.5]))
def test_var_std(name, c, correction):
    x, dim, keepdim = c
    kw = _kw(dim, keepdim) | ({} if correction is None else {"correction": correction})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # 0-d tensors: no degrees of freedom
        check(lambda t: getattr(torch, name)(t, **kw), lambda t: getattr(gc, name)(t, **kw), x)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_call_forms(name):
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 7.5]])
    forms = [((), {}), ((0,), {}), ((0, True), {}), ((True,), {}), ((False,), {}), ((0,), {"unbiased": False}),
             ((0, False, True), {}), ((), {"dim": 1, "correction": 0}), ((), {"correction": 0.5}),
             ((1,), {"keepdim": True})]
    for args, kw in forms:
        check(lambda t, a=args, k=kw: getattr(t, name)(*a, **k), lambda t, a=args, k=kw: getattr(t, name)(*a, **k),
              x, order=3)
    with pytest.raises(TypeError):
        getattr(gc, name)(gc.tensor(x), unbiased=False, correction=0)
    with pytest.raises(RuntimeError, match="floating"):
        getattr(gc, name)(gc.tensor([1, 2]))


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_no_degrees_of_freedom(name):
    # n - correction <= 0: inf or nan, with a warning, and PyTorch's gradients (nan, inf)
    cases = [(np.array([1.0]), {}, True), (np.array(2.0), {}, True),
             (np.array([1.0, 2.0]), {"dim": 0, "correction": 2}, True),
             (np.array([[1.0, 1.0], [2.0, 3.0]]), {"dim": 1, "correction": 2}, True),
             (np.array([1.0, 1.0]), {}, False), (np.array([1.0, 3.0]), {"correction": 3}, True),
             (np.array([1.0, 3.0, 4.0]), {"correction": 2}, False)]
    for x, kw, warns in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check(lambda t, k=kw: getattr(torch, name)(t, **k), lambda t, k=kw: getattr(gc, name)(t, **k), x,
                  order=1)
        ours = [w for w in caught if "elements - correction" in str(w.message)]
        assert bool(ours) == warns and all(w.category is UserWarning for w in ours)


# -- empty tensors -------------------------------------------------------------------------------------------------
EMPTY_OPS = {
    "sum": lambda t: t.sum(), "sum0": lambda t: t.sum(0), "mean": lambda t: t.mean(), "mean-1": lambda t: t.mean(-1),
    "prod": lambda t: t.prod(), "prod0": lambda t: t.prod(0), "norm": lambda t: t.norm(),
    "norm-1": lambda t: t.norm(dim=-1), "var": lambda t: t.var(), "std-1": lambda t: t.std(-1),
    "softmax": lambda t: t.softmax(-1), "logsumexp": lambda t: t.logsumexp(-1),
}


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
@pytest.mark.parametrize("name", sorted(EMPTY_OPS))
def test_empty_tensors(shape, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no degrees of freedom, mean of nothing
        check(EMPTY_OPS[name], EMPTY_OPS[name], np.zeros(shape), order=1)


# -- higher orders --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fns", [
    (lambda t: torch.logsumexp(t, 1), lambda t: gc.logsumexp(t, 1)),
    (lambda t: torch.softmax(t, 0), lambda t: gc.softmax(t, 0)),
    (lambda t: torch.log_softmax(t, -1), lambda t: gc.log_softmax(t, -1)),
    (lambda t: torch.norm(t, 3, 1), lambda t: gc.norm(t, 3, 1)),
    (lambda t: t.std(0), lambda t: t.std(0)),
    (lambda t: torch.prod(torch.tanh(t).exp(), 1), lambda t: gc.prod(gc.tanh(t).exp(), 1)),
])
def test_fourth_order(fns):
    check(*fns, np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.6]]), order=4)


def test_reductions_are_recorded_only_when_needed():
    x = gc.tensor([1.0, 2.0])
    for fn in [gc.sum, gc.mean, gc.prod, gc.amax, gc.max, gc.norm, gc.var, gc.std, lambda t: gc.softmax(t, 0),
               lambda t: gc.logsumexp(t, 0)]:
        assert fn(x).grad_fn is None
    with gc.no_grad():
        assert gc.prod(gc.tensor([1.0], requires_grad=True)).grad_fn is None


def test_the_table_is_wired():
    x = gc.tensor([1.0, 2.0])
    for name in ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "logsumexp", "softmax",
                 "log_softmax", "norm", "var", "std"]:
        assert callable(getattr(gc, name)) and callable(getattr(x, name)), name
