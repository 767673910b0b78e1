"""`smooth_l1_loss` (beta), `huber_loss` (delta, weight), `kl_div` (every reduction, log_target) and `xlogy`
against PyTorch, with their module forms `SmoothL1Loss`, `HuberLoss`, `KLDivLoss`: values, gradients of first
and second order in both input and target, forward-mode tangents, the nodes and their saved values, float32,
warnings and errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from precision import assert_float32_close

import gradcalc as gc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: Any, theirs: Any, what: str, rtol: float = 1e-10) -> None:
    if ours is None or theirs is None:
        assert (ours is None or np.allclose(_np(ours), 0)) and (theirs is None or np.allclose(_np(theirs), 0)), what
        return
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=1e-12, err_msg=what)


CALLS = {
    "smooth_l1 mean": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b),
    "smooth_l1 sum beta": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, reduction="sum", beta=0.4),
    "smooth_l1 none": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, reduction="none", beta=2.5),
    "smooth_l1 beta 0": lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, beta=0.0),
    "huber mean": lambda L, a, b: L.nn.functional.huber_loss(a, b),
    "huber sum delta": lambda L, a, b: L.nn.functional.huber_loss(a, b, reduction="sum", delta=0.3),
    "huber none": lambda L, a, b: L.nn.functional.huber_loss(a, b, reduction="none", delta=1.7),
    "huber weight": lambda L, a, b: L.nn.functional.huber_loss(a, b, weight=(b * 0 + 0.5).detach()),
    "kl batchmean": lambda L, a, b: L.nn.functional.kl_div(a, b.abs() + 0.1, reduction="batchmean"),
    "kl sum": lambda L, a, b: L.nn.functional.kl_div(a, b.abs() + 0.1, reduction="sum"),
    "kl none": lambda L, a, b: L.nn.functional.kl_div(a, b.abs() + 0.1, reduction="none"),
    "kl log_target": lambda L, a, b: L.nn.functional.kl_div(a, b, reduction="batchmean", log_target=True),
    "kl zero target": lambda L, a, b: L.nn.functional.kl_div(a, b * (b > 0), reduction="sum"),
    "module SmoothL1Loss": lambda L, a, b: L.nn.SmoothL1Loss(beta=0.5)(a, b),
    "module HuberLoss": lambda L, a, b: L.nn.HuberLoss(reduction="sum", delta=0.8)(a, b),
    "module KLDivLoss": lambda L, a, b: L.nn.KLDivLoss(reduction="batchmean", log_target=True)(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b.abs() + 0.1) + L.xlogy(a.abs(), 2.5) + L.xlogy(3.0, b.abs() + 0.2),
    "xlogy zeros": lambda L, a, b: L.xlogy(a * (a > 0), b * (b > 0) + (a > 0) * 1.0),  # 0 log 0 masked
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("seed", [0, 1])
def test_values_and_gradients_of_both_orders(name: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b, w = rng.standard_normal((3, 4)) * 1.5, rng.standard_normal((3, 4)) * 1.5, rng.standard_normal((3, 4))
    got = []
    for lib in (gc, torch):
        x, t = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # kl_div's 'mean' warning (checked below)
            y = CALLS[name](lib, x, t)
        weight = lib.tensor(w[: y.shape[0], : y.shape[1]] if y.dim() == 2 else 1.0)
        first = lib.autograd.grad((y * y * weight).sum(), (x, t), create_graph=True, allow_unused=True)
        total = sum((g ** 2).sum() for g in first if g is not None and g.requires_grad)
        second = lib.autograd.grad(total, (x, t), allow_unused=True) if isinstance(total, lib.Tensor) else (None, None)
        got.append((y, first, second))
    (y, g1, g2), (ty, tg1, tg2) = got
    _close(y, ty, f"{name}: value")
    for i in range(2):
        _close(g1[i], tg1[i], f"{name}: gradient {i}", 1e-9)
        _close(g2[i], tg2[i], f"{name}: second-order gradient {i}", 1e-8)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_tangents_match_torch_func_jvp(name: str) -> None:
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)) * 1.5 for _ in range(4)]
    got = []
    for lib in (gc, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            primals, tangents = tuple(lib.tensor(v) for v in arrays[:2]), tuple(lib.tensor(v) for v in arrays[2:])
            got.append(lib.func.jvp(lambda a, b, lib=lib: CALLS[name](lib, a, b), primals, tangents)[1])
    _close(got[0], got[1], f"{name}: tangent", 1e-9)


NODES = [
    ("smooth_l1", lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, beta=0.7), ("beta", "reduction"),
     "SmoothL1LossBackward0", "SmoothL1LossBackwardBackward0"),
    ("smooth_l1 none", lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b, reduction="none"), ("beta", "reduction"),
     "SmoothL1LossBackward0", "SmoothL1LossBackwardBackward0"),
    ("huber", lambda L, a, b: L.nn.functional.huber_loss(a, b, reduction="sum", delta=0.4), ("delta", "reduction"),
     "HuberLossBackward0", "HuberLossBackwardBackward0"),
]


@pytest.mark.parametrize("case", NODES, ids=[c[0] for c in NODES])
def test_nodes_and_saved_values(case: tuple) -> None:
    _, call, _fields, node_name, second_name = case
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    nodes = []
    for lib in (gc, torch):
        x, t = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = call(lib, x, t)
        gx, gt = lib.autograd.grad((y * y).sum(), (x, t), create_graph=True)
        nodes.append((y.grad_fn, gx.grad_fn, gt.grad_fn))
    for ours, theirs in zip(*nodes, strict=True):
        assert ours.name() == theirs.name()
        names = {n for n in dir(theirs) if n.startswith("_saved_")}
        assert {n for n in dir(ours) if n.startswith("_saved_")} == names
        for n in names:
            o, t = getattr(ours, n), getattr(theirs, n)
            if isinstance(t, torch.Tensor):
                _close(o, t, n, 1e-12)
            else:
                assert o == t, n
    assert nodes[0][0].name() == node_name and nodes[0][1].name() == second_name


def test_kl_div_records_pytorchs_composition() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 3)), rng.uniform(0.1, 1, (2, 3))

    def names(node: Any, depth: int = 3) -> list:
        if node is None or depth == 0:
            return []
        return [node.name(), [names(n, depth - 1) for n, _ in node.next_functions]]

    for reduction in ("batchmean", "sum", "none"):
        for log_target in (False, True):
            shown = []
            for lib in (gc, torch):
                y = lib.nn.functional.kl_div(lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True),
                                             reduction=reduction, log_target=log_target)
                shown.append(names(y.grad_fn))
            assert str(shown[0]) == str(shown[1]).replace("torch::autograd::", ""), (reduction, log_target)


def test_warnings_are_pytorchs() -> None:
    for call in (lambda L: L.nn.functional.kl_div(L.zeros(2, 3), L.ones(2, 3) / 3),
                 lambda L: L.nn.functional.smooth_l1_loss(L.zeros(2, 3), L.zeros(3)),
                 lambda L: L.nn.functional.huber_loss(L.zeros(2, 3), L.zeros(3))):
        seen = []
        for lib in (torch, gc):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call(lib)
            seen.append(len(caught))
        assert seen[0] == seen[1] == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.nn.functional.kl_div(gc.zeros(2, 3), gc.ones(2, 3) / 3)
    assert str(caught[0].message).startswith("reduction: 'mean' divides the total loss by both the batch size")


ERRORS = [
    lambda L: L.nn.functional.smooth_l1_loss(L.ones(3), L.ones(3), beta=-1.0),
    lambda L: L.nn.functional.huber_loss(L.ones(3), L.ones(3), delta=0.0),
    lambda L: L.nn.functional.huber_loss(L.ones(3), L.ones(3), weight=L.ones(2)),
    lambda L: L.nn.functional.kl_div(L.ones(3), L.ones(3), reduction="average"),
    lambda L: L.nn.HuberLoss(delta="1"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_pytorchs(i: int) -> None:
    with pytest.raises(Exception) as theirs:
        ERRORS[i](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[i](gc)
    assert str(ours.value) == str(theirs.value)


def test_module_reprs() -> None:
    for make in (lambda L: L.nn.SmoothL1Loss(beta=0.5), lambda L: L.nn.HuberLoss(delta=2.0),
                 lambda L: L.nn.KLDivLoss(reduction="batchmean", log_target=True)):
        assert repr(make(gc)) == repr(make(torch))
    assert gc.nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"


@pytest.mark.parametrize("name", ["smooth_l1 mean", "huber none", "kl batchmean"])
def test_float32(name: str) -> None:
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((16, 8)) * 3, rng.standard_normal((16, 8)) * 3
    out = {}
    for key, lib, dt in (("ours", gc, gc.float32), ("theirs", torch, torch.float32), ("ref", torch, torch.float64)):
        x = lib.tensor(a, dtype=dt, requires_grad=True)
        y = CALLS[name](lib, x, lib.tensor(b, dtype=dt))
        (g,) = lib.autograd.grad(y.sum(), x)
        out[key] = [_np(y), _np(g)]
    for i, what in enumerate(("value", "gradient")):
        assert_float32_close(out["ours"][i], out["theirs"][i], out["ref"][i], steps=256, what=f"{name}: {what}")


@pytest.mark.parametrize("name", ["smooth_l1_loss", "huber_loss", "kl_div"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("dims", [(0, 0), (1, None), (None, 0), (2, 1)])
def test_vmap_reduces_each_sample(name: str, reduction: str, dims: tuple) -> None:
    from gradcalc.autograd import batching

    if reduction == "batchmean" and name != "kl_div":
        return
    rng = np.random.default_rng(4)
    shapes = [(3, 4) if d is None else tuple(np.insert([3, 4], d, 5)) for d in dims]
    a, b = (rng.standard_normal(s) for s in shapes)
    b = np.abs(b) + 0.1 if name == "kl_div" else b
    ours = batching.vmap(lambda x, t: batching.bind(name, x, t, reduction=reduction), dims)(gc.tensor(a), gc.tensor(b))
    theirs = torch.vmap(lambda x, t: getattr(torch.nn.functional, name)(x, t, reduction=reduction), dims)(
        torch.tensor(a), torch.tensor(b))
    _close(ours, theirs, f"vmap of {name}")
