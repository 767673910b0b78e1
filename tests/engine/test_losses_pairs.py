"""The pair, triplet and likelihood losses against PyTorch: `margin_ranking_loss`, `hinge_embedding_loss`,
`cosine_embedding_loss`, `triplet_margin_loss`, `poisson_nll_loss`, `gaussian_nll_loss` and their modules, over
generated inputs and every reduction: values, first and second-order gradients, float32, repr, and PyTorch's
errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from precision import assert_float32_close

import gradcalc as gc
from tests.engine.ops_oracle import both_raise

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _signs(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return np.where(rng.random(shape) > 0.5, 1.0, -1.0)


def _cases(rng: np.random.Generator) -> list[tuple[str, list, list, dict]]:
    """(name, differentiable inputs, constant inputs, keywords)."""
    n = rng.standard_normal
    return [
        ("margin_ranking_loss", [n(6), n(6)], [_signs(rng, 6)], {"margin": 0.3}),
        ("margin_ranking_loss", [n((2, 3)), n((2, 3))], [_signs(rng, 2, 3)], {}),
        ("hinge_embedding_loss", [n((3, 4))], [_signs(rng, 3, 4)], {"margin": 0.7}),
        ("hinge_embedding_loss", [n(5)], [_signs(rng, 5)], {}),
        ("cosine_embedding_loss", [n((4, 3)), n((4, 3))], [_signs(rng, 4)], {"margin": 0.2}),
        ("cosine_embedding_loss", [n(3), n(3)], [np.array(-1.0)], {"margin": -0.5}),
        ("triplet_margin_loss", [n((4, 3)), n((4, 3)), n((4, 3))], [], {"margin": 2.0}),
        ("triplet_margin_loss", [n((4, 3)), n((4, 3)), n((4, 3))], [], {"swap": True, "p": 1}),
        ("triplet_margin_loss", [n(3), n(3), n(3)], [], {"p": 3, "eps": 1e-3}),
        ("poisson_nll_loss", [n((3, 4))], [rng.poisson(2.0, (3, 4)).astype(float)], {"full": True}),
        ("poisson_nll_loss", [rng.random((3, 4)) + 0.1], [rng.poisson(2.0, (3, 4)).astype(float)],
         {"log_input": False}),
        ("gaussian_nll_loss", [n((3, 4))], [n((3, 4)), rng.random((3, 4))], {"full": True}),
        ("gaussian_nll_loss", [n((3, 4))], [n((3, 4)), rng.random(3)], {}),
        ("gaussian_nll_loss", [n((3, 4))], [n((3, 4)), rng.random((3, 1)) * 1e-7], {"eps": 1e-4}),
    ]


CASES = _cases(np.random.default_rng(0))


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(case: tuple, reduction: str) -> None:
    name, inputs, consts, kw = case
    res = {}
    for lib in (torch, gc):
        ts = [lib.tensor(a, requires_grad=True) for a in inputs]
        y = getattr(lib.nn.functional, name)(*ts, *(lib.tensor(c) for c in consts), reduction=reduction, **kw)
        first = lib.autograd.grad((y * y).sum(), ts, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), ts, allow_unused=True)
        res[lib.__name__] = [y, *first, *second]
    for i, (t, g) in enumerate(zip(res["torch"], res["gradcalc"], strict=True)):
        if t is None:
            assert g is None or not np.any(_np(g)), i
            continue
        assert tuple(g.shape) == tuple(t.shape), i
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-9, atol=1e-11, err_msg=f"{name} result {i}")


def test_gaussian_nll_variance_gradient_and_float_var() -> None:
    """The variance's own gradient (zero where it was clamped), and a Python float variance."""
    rng = np.random.default_rng(1)
    x, t, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.random((3, 4))
    v[0, 0] = 1e-9
    res = {}
    for lib in (torch, gc):
        xs, vs = lib.tensor(x, requires_grad=True), lib.tensor(v, requires_grad=True)
        y = lib.nn.functional.gaussian_nll_loss(xs, lib.tensor(t), vs) + \
            lib.nn.functional.gaussian_nll_loss(xs, lib.tensor(t), 0.5, reduction="sum")
        res[lib.__name__] = [y, *lib.autograd.grad(y, (xs, vs))]
    for t_, g in zip(res["torch"], res["gradcalc"], strict=True):
        np.testing.assert_allclose(_np(g), _np(t_), rtol=1e-10, atol=1e-12)


@pytest.mark.usefixtures("pytorch_default_dtype")
@pytest.mark.parametrize("case", [c for c in CASES if c[0] != "gaussian_nll_loss" or "eps" not in c[3]],
                         ids=lambda c: c[0])
def test_float32(case: tuple) -> None:
    name, inputs, consts, kw = case
    got = {}
    for key, lib, dt in (("ref", torch, torch.float64), ("theirs", torch, torch.float32), ("ours", gc, gc.float32)):
        ts = [lib.tensor(a, dtype=dt, requires_grad=True) for a in inputs]
        y = getattr(lib.nn.functional, name)(*ts, *(lib.tensor(c, dtype=dt) for c in consts), reduction="sum", **kw)
        got[key] = [_np(v) for v in (y, *lib.autograd.grad(y, ts))]
    for i, (o, t, r) in enumerate(zip(got["ours"], got["theirs"], got["ref"], strict=True)):
        assert_float32_close(o, t, r, steps=32, what=f"{name} {i}")


MODULES = [("MarginRankingLoss", {"margin": 0.5}, 3), ("HingeEmbeddingLoss", {"margin": 2.0}, 2),
           ("CosineEmbeddingLoss", {}, 3), ("TripletMarginLoss", {"p": 1.0, "swap": True}, 3),
           ("PoissonNLLLoss", {"log_input": False, "full": True}, 2), ("GaussianNLLLoss", {"full": True}, 3)]


@pytest.mark.parametrize("name,kw,arity", MODULES)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_modules(name: str, kw: dict, arity: int, reduction: str) -> None:
    theirs, ours = getattr(torch.nn, name)(reduction=reduction, **kw), getattr(gc.nn, name)(reduction=reduction, **kw)
    assert repr(ours) == repr(theirs)
    case = next(c for c in CASES if c[0] == F_NAMES[name])
    arrays = [*case[1], *case[2]][:arity]
    if name == "PoissonNLLLoss":
        arrays = [np.abs(arrays[0]) + 0.1, arrays[1]]
    t_out, g_out = theirs(*map(torch.tensor, arrays)), ours(*map(gc.tensor, arrays))
    np.testing.assert_allclose(_np(g_out), _np(t_out), rtol=1e-10, atol=1e-12)


F_NAMES = {"MarginRankingLoss": "margin_ranking_loss", "HingeEmbeddingLoss": "hinge_embedding_loss",
           "CosineEmbeddingLoss": "cosine_embedding_loss", "TripletMarginLoss": "triplet_margin_loss",
           "PoissonNLLLoss": "poisson_nll_loss", "GaussianNLLLoss": "gaussian_nll_loss"}


ERRORS = [
    lambda L: L.nn.functional.margin_ranking_loss(L.ones(3), L.ones(3), L.ones(3, 1)),
    lambda L: L.nn.functional.margin_ranking_loss(L.ones(3), L.ones(3), L.ones(3), reduction="foo"),
    lambda L: L.nn.functional.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 1)),
    lambda L: L.nn.functional.cosine_embedding_loss(L.ones(3), L.ones(3), L.ones(3)),
    lambda L: L.nn.functional.cosine_embedding_loss(L.ones(2, 3), L.ones(2, 3), L.tensor(1.0)),
    lambda L: L.nn.functional.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(3)),
    lambda L: L.nn.functional.triplet_margin_loss(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3), margin=0.0),
    lambda L: L.nn.TripletMarginLoss(margin=-1.0),
    lambda L: L.nn.functional.poisson_nll_loss(L.ones(3), L.ones(3), reduction="avg"),
    lambda L: L.nn.functional.gaussian_nll_loss(L.ones(3), L.ones(3), -1.0),
    lambda L: L.nn.functional.gaussian_nll_loss(L.ones(3), L.ones(3), -L.ones(3)),
    lambda L: L.nn.functional.gaussian_nll_loss(L.ones(3, 4), L.ones(3, 4), L.ones(2, 4)),
    lambda L: L.nn.functional.gaussian_nll_loss(L.ones(3), L.ones(3), L.ones(3), reduction="avg"),
]


@pytest.mark.parametrize("make", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_pytorchs(make: Any) -> None:
    t, g = both_raise(make)
    assert str(g) == str(t)
