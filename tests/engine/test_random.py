"""The random factories and `Generator` against PyTorch's: signatures, shapes, dtypes, `requires_grad` and
errors exactly; the draws by distribution (gradcalc's stream is its own, never PyTorch's draw for draw) and by
repeatability (a seed repeats its draws; generators are independent of each other and of the default one).

Statistical bounds: a sample mean of n draws of a law with standard deviation σ is within 6σ/√n of the law's
mean but for a chance below 1e-8 (and the seeds are fixed, so a pass is a pass every time)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch

N = 200_000
Z = 6.0  # standard errors allowed


def _near_mean(values: np.ndarray, mean: float, std: float) -> None:
    n = values.size
    assert abs(float(values.mean()) - mean) <= Z * std / math.sqrt(n), (float(values.mean()), mean)


def _near_var(values: np.ndarray, var: float, fourth_moment: float) -> None:
    """The sample variance's standard error is √((μ4 - σ⁴) / n)."""
    n = values.size
    assert abs(float(values.var()) - var) <= Z * math.sqrt((fourth_moment - var**2) / n), (float(values.var()), var)


# how to call each factory with a library L and a generator g (None: the default one); the same call for both
CALLS: dict[str, Callable[[Any, Any], Any]] = {
    "rand_varargs": lambda L, g: L.rand(2, 3, generator=g),
    "rand_tuple": lambda L, g: L.rand((2, 3), generator=g),
    "rand_size": lambda L, g: L.rand(L.Size([4]), generator=g),
    "rand_0d": lambda L, g: L.rand((), generator=g),
    "rand_float64_grad": lambda L, g: L.rand(3, dtype=L.float64, requires_grad=True, generator=g),
    "randn": lambda L, g: L.randn(4, generator=g),
    "randn_float32": lambda L, g: L.randn(2, 2, dtype=L.float32, generator=g),
    "randint_high": lambda L, g: L.randint(5, (3,), generator=g),
    "randint_low_high": lambda L, g: L.randint(2, 5, (3, 2), generator=g),
    "randint_named": lambda L, g: L.randint(low=2, high=5, size=(3,), generator=g),
    "randint_high_named": lambda L, g: L.randint(high=5, size=(3,), generator=g),
    "randint_float": lambda L, g: L.randint(5, (3,), dtype=L.float32, requires_grad=True, generator=g),
    "normal_numbers": lambda L, g: L.normal(2.0, 3.0, (2, 3), generator=g),
    "normal_numbers_size_named": lambda L, g: L.normal(2.0, 3.0, size=(2,), generator=g),
    "normal_ints": lambda L, g: L.normal(0, 1, (2,), generator=g),
    "normal_dtype": lambda L, g: L.normal(0.0, 1.0, (2,), dtype=L.float64, generator=g),
    "normal_grad": lambda L, g: L.normal(0.0, 1.0, (2,), requires_grad=True, generator=g),
    "normal_mean_tensor": lambda L, g: L.normal(L.zeros(3), 1.0, generator=g),
    "normal_std_tensor": lambda L, g: L.normal(0.0, L.ones(3), generator=g),
    "normal_both_tensors": lambda L, g: L.normal(L.zeros(3), L.ones(2, 1), generator=g),
    "normal_mixed_dtypes": lambda L, g: L.normal(L.zeros(3, dtype=L.float64), L.ones(3), generator=g),
    "rand_like": lambda L, g: L.rand_like(L.zeros(2, 3, dtype=L.float64), generator=g),
    "rand_like_dtype": lambda L, g: L.rand_like(L.zeros(2), dtype=L.float32, requires_grad=True),
    "randn_like": lambda L, g: L.randn_like(L.zeros(4), generator=g),
    "randint_like_high": lambda L, g: L.randint_like(L.zeros(2), 5, generator=g),
    "randint_like_low_high": lambda L, g: L.randint_like(L.zeros(2, dtype=L.int64), 2, 5, generator=g),
    "randperm": lambda L, g: L.randperm(6, generator=g),
    "randperm_float": lambda L, g: L.randperm(6, dtype=L.float32, requires_grad=True, generator=g),
    "bernoulli": lambda L, g: L.bernoulli(L.full((3,), 0.5), generator=g),
    "multinomial": lambda L, g: L.multinomial(L.tensor([0.2, 0.8]), 3, replacement=True, generator=g),
    "multinomial_rows": lambda L, g: L.multinomial(L.tensor([[0.2, 0.8], [1.0, 0.0]]), 1, generator=g),
}


@pytest.mark.parametrize("generator", [False, True])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_signatures_against_torch(pytorch_default_dtype: None, name: str, generator: bool) -> None:
    theirs = CALLS[name](torch, torch.Generator().manual_seed(1) if generator else None)
    ours = CALLS[name](gradcalc, gradcalc.Generator().manual_seed(1) if generator else None)
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert (ours.requires_grad, ours.is_leaf, ours.grad_fn) == (theirs.requires_grad, theirs.is_leaf, None)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "rand_negative": lambda L: L.rand(-1),
    "rand_fraction": lambda L: L.rand(2.5),
    "rand_ints": lambda L: L.rand(2, dtype=L.int64),
    "randn_ints": lambda L: L.randn(2, dtype=L.int64),
    "randint_empty_range": lambda L: L.randint(5, 5, (3,)),
    "randint_size_not_tuple": lambda L: L.randint(5, 3),
    "randint_requires_grad": lambda L: L.randint(5, (3,), requires_grad=True),
    "normal_negative_std": lambda L: L.normal(0.0, -1.0, (2,)),
    "normal_negative_std_tensor_mean": lambda L: L.normal(L.zeros(3), -1.0),
    "normal_negative_std_elements": lambda L: L.normal(L.zeros(3), L.tensor([1.0, -1.0, 1.0])),
    "normal_no_size": lambda L: L.normal(0.0, 1.0),
    "randn_like_ints": lambda L: L.randn_like(L.zeros(2, dtype=L.int64)),
    "bernoulli_outside": lambda L: L.bernoulli(L.full((3,), 1.5)),
    "multinomial_too_many": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 3),
    "uniform_reversed": lambda L: L.zeros(3).uniform_(3, 2),
    "normal__negative": lambda L: L.zeros(3).normal_(2, -3),
    "manual_seed_overflow": lambda L: L.manual_seed(2**64),
    "manual_seed_text": lambda L: L.manual_seed("a"),
    "set_state_dtype": lambda L: L.Generator().set_state(L.zeros(3)),
    "set_state_list": lambda L: L.Generator().set_state([1, 2]),
}


ERRORS["set_state_size"] = lambda L: L.Generator().set_state(L.zeros(3, dtype=L.uint8))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_begin_with_pytorchs_text(name: str) -> None:
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](gradcalc)
    assert type(ours.value).__name__ == type(theirs.value).__name__
    mine, its = str(ours.value), str(theirs.value)
    if type(theirs.value) is NotImplementedError:  # PyTorch names its kernel ("normal_kernel_cpu")
        return
    # PyTorch's text up to the first specifics it can't share (its own signatures and state size)
    head = its.split(" but expected")[0].split(" but found the input")[0].split("  (Could this")[0]
    head = head.split("Expected a CPUGeneratorImplState")[0] or its[:9]
    assert mine.startswith(head[:60]), (mine, its)


def test_uniform_moments_and_range() -> None:
    for dtype in (gradcalc.float32, gradcalc.float64):
        x = gradcalc.rand(N, dtype=dtype, generator=gradcalc.Generator().manual_seed(3)).numpy().astype(np.float64)
        assert 0.0 <= x.min() and x.max() < 1.0
        assert x.min() < 1e-3 and x.max() > 1 - 1e-3
        _near_mean(x, 0.5, math.sqrt(1 / 12))
        _near_var(x, 1 / 12, 1 / 80)


def test_normal_moments() -> None:
    g = gradcalc.Generator().manual_seed(4)
    x = gradcalc.randn(N, generator=g).numpy()
    _near_mean(x, 0.0, 1.0)
    _near_var(x, 1.0, 3.0)
    y = gradcalc.normal(2.0, 3.0, (N,), generator=g).numpy()
    _near_mean(y, 2.0, 3.0)
    _near_var(y, 9.0, 3 * 81.0)
    # one distribution per element: means 0 and 10, standard deviations 1 and 0.5
    mean = gradcalc.tensor(np.tile([0.0, 10.0], N // 2))
    std = gradcalc.tensor(np.tile([1.0, 0.5], N // 2))
    z = gradcalc.normal(mean, std, generator=g).numpy().reshape(-1, 2)
    _near_mean(z[:, 0], 0.0, 1.0)
    _near_mean(z[:, 1], 10.0, 0.5)
    _near_var(z[:, 1], 0.25, 3 * 0.5**4)


def test_randint_bounds_and_frequencies() -> None:
    x = gradcalc.randint(-2, 3, (N,), generator=gradcalc.Generator().manual_seed(5)).numpy()
    assert x.dtype == np.int64 and set(np.unique(x)) == {-2, -1, 0, 1, 2}
    for v in range(-2, 3):  # each value's frequency: binomial with p = 1/5
        _near_mean((x == v).astype(float), 0.2, math.sqrt(0.2 * 0.8))


def test_randperm_bernoulli_multinomial() -> None:
    g = gradcalc.Generator().manual_seed(6)
    assert sorted(gradcalc.randperm(50, generator=g).tolist()) == list(range(50))
    b = gradcalc.bernoulli(gradcalc.full((N,), 0.3), generator=g).numpy()
    assert set(np.unique(b)) == {0.0, 1.0}
    _near_mean(b, 0.3, math.sqrt(0.3 * 0.7))
    m = gradcalc.multinomial(gradcalc.tensor([1.0, 3.0]), N, replacement=True, generator=g).numpy()
    _near_mean((m == 1).astype(float), 0.75, math.sqrt(0.75 * 0.25))
    once = gradcalc.multinomial(gradcalc.tensor([[1.0, 1.0, 0.0, 1.0]]), 3, generator=g).tolist()[0]
    assert sorted(once) == [0, 1, 3]  # without replacement: each nonzero category once


def test_in_place_fills() -> None:
    g = gradcalc.Generator().manual_seed(7)
    x = gradcalc.empty(N, dtype=gradcalc.float64)
    assert x.uniform_(-1.0, 3.0, generator=g) is x and x._version == 1
    v = x.numpy()
    assert -1.0 <= v.min() and v.max() < 3.0
    _near_mean(v, 1.0, 4 / math.sqrt(12))
    x.normal_(5.0, 2.0, generator=g)
    _near_mean(x.numpy(), 5.0, 2.0)
    x.exponential_(4.0, generator=g)
    _near_mean(x.numpy(), 0.25, 0.25)
    x.bernoulli_(0.25, generator=g)
    _near_mean(x.numpy(), 0.25, math.sqrt(0.25 * 0.75))
    x.random_(3, 7, generator=g)
    assert set(np.unique(x.numpy())) == {3.0, 4.0, 5.0, 6.0}
    x.random_(2, generator=g)
    assert set(np.unique(x.numpy())) == {0.0, 1.0}


def test_a_fill_under_no_grad_keeps_the_leaf() -> None:
    w = gradcalc.zeros(3, requires_grad=True)
    with gradcalc.no_grad():
        w.uniform_(-1, 1)
    assert w.is_leaf and w.requires_grad and w._version == 1


def test_seeds_repeat() -> None:
    gradcalc.manual_seed(11)
    a = [gradcalc.rand(3), gradcalc.randn(2), gradcalc.randint(10, (4,)), gradcalc.normal(0.0, 1.0, (2,))]
    gradcalc.manual_seed(11)
    b = [gradcalc.rand(3), gradcalc.randn(2), gradcalc.randint(10, (4,)), gradcalc.normal(0.0, 1.0, (2,))]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    gradcalc.manual_seed(12)
    assert not np.array_equal(gradcalc.rand(3).numpy(), a[0].numpy())


def test_generators_are_independent() -> None:
    g1, g2 = gradcalc.Generator().manual_seed(1), gradcalc.Generator().manual_seed(1)
    gradcalc.manual_seed(0)
    first = gradcalc.rand(5, generator=g1)
    gradcalc.rand(100)  # the default generator's draws change neither
    gradcalc.rand(100, generator=g1)  # nor do g1's change g2
    np.testing.assert_array_equal(gradcalc.rand(5, generator=g2).numpy(), first.numpy())
    gradcalc.manual_seed(0)
    gradcalc.rand(5, generator=g1)  # a generator's draws leave the default stream where it was
    after = gradcalc.rand(3)
    gradcalc.manual_seed(0)
    np.testing.assert_array_equal(gradcalc.rand(3).numpy(), after.numpy())


def test_state_round_trip_and_seeds() -> None:
    g = gradcalc.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()
    assert g.manual_seed(-5) is g and g.initial_seed() == torch.Generator().manual_seed(-5).initial_seed()
    gradcalc.rand(7, generator=g)
    state = g.get_state()
    assert state.numpy().dtype == np.uint8 and state.ndim == 1
    x = gradcalc.randn(5, generator=g)
    g.manual_seed(99)
    assert g.set_state(state) is g and g.initial_seed() == torch.Generator().manual_seed(-5).initial_seed()
    np.testing.assert_array_equal(gradcalc.randn(5, generator=g).numpy(), x.numpy())
    other = gradcalc.Generator().set_state(state)
    np.testing.assert_array_equal(gradcalc.randn(5, generator=other).numpy(), x.numpy())
    chosen = g.seed()
    assert isinstance(chosen, int) and g.initial_seed() == chosen
    assert gradcalc.manual_seed(3) is gradcalc.default_generator and gradcalc.initial_seed() == 3
    saved = gradcalc.get_rng_state()
    y = gradcalc.rand(4)
    gradcalc.set_rng_state(saved)
    np.testing.assert_array_equal(gradcalc.rand(4).numpy(), y.numpy())
    assert str(gradcalc.Generator(device="cpu").device) == str(torch.Generator(device="cpu").device)


def test_init_takes_a_generator() -> None:
    def weights(seed: int) -> np.ndarray:
        w = gradcalc.empty(4, 3)
        gradcalc.nn.init.kaiming_uniform_(w, generator=gradcalc.Generator().manual_seed(seed))
        return w.numpy().copy()

    np.testing.assert_array_equal(weights(1), weights(1))
    assert not np.array_equal(weights(1), weights(2))
    for init in ("uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_normal_"):
        a, b = gradcalc.empty(4, 3), gradcalc.empty(4, 3)
        getattr(gradcalc.nn.init, init)(a, generator=gradcalc.Generator().manual_seed(8))
        getattr(gradcalc.nn.init, init)(b, generator=gradcalc.Generator().manual_seed(8))
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_draws_are_made_in_the_result_dtype(pytorch_default_dtype: None) -> None:
    g = gradcalc.Generator().manual_seed(2)
    x = gradcalc.rand(1000, generator=g)
    assert x.dtype == gradcalc.float32 and x.numpy().max() < 1.0  # never rounded up to 1.0
