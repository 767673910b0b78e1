"""Group and instance normalization against PyTorch: `F.group_norm` / `nn.GroupNorm` and `F.instance_norm` /
`nn.InstanceNorm1d/2d/3d` over generated shapes and groups — values, gradients of first and second order,
float32, the running statistics in training and evaluation mode, parameters, repr, state_dict keys, and
PyTorch's errors."""

from __future__ import annotations

import warnings
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


def _check(fn: Any, arrays: list[np.ndarray | None], seed: int) -> None:
    """fn(lib, *tensors): values, first and second-order gradients of every tensor argument, against PyTorch."""
    rng = np.random.default_rng(seed)
    res = {}
    for lib in (torch, gc):
        ts = [None if a is None else lib.tensor(a, requires_grad=True) for a in arrays]
        y = fn(lib, *ts)
        w = lib.tensor(np.random.default_rng(seed).standard_normal(tuple(y.shape)))
        wrt = [t for t in ts if t is not None]
        first = lib.autograd.grad((y * y * w).sum(), wrt, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), wrt, allow_unused=True)
        res[lib.__name__] = [y, *first, *second]
    del rng
    for i, (t, g) in enumerate(zip(res["torch"], res["gradcalc"], strict=True)):
        if t is None:
            assert g is None or not np.any(_np(g)), i
            continue
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-8, atol=1e-10, err_msg=f"result {i}")


GN_CASES = [(shape, groups, affine) for shape, groups_list in (((2, 4), (1, 2, 4)), ((3, 6, 5), (1, 2, 3, 6)),
                                                               ((2, 4, 3, 2), (2, 4)), ((1, 2, 2, 2, 2), (1, 2)))
            for groups in groups_list for affine in ("none", "weight", "both")
            if np.prod(shape) // shape[0] // groups > 1]


@pytest.mark.parametrize("shape,groups,affine", GN_CASES)
def test_group_norm(shape: tuple, groups: int, affine: str) -> None:
    rng = np.random.default_rng(len(shape) * 100 + groups)
    c = shape[1]
    w = rng.standard_normal(c) if affine != "none" else None
    b = rng.standard_normal(c) if affine == "both" else None
    _check(lambda L, x, w=None, b=None: L.nn.functional.group_norm(x, groups, w, b, eps=1e-4),
           [rng.standard_normal(shape) * 3 + 1, w, b], seed=groups)


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 2, 3, 3), (2, 2, 2, 2, 3)])
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_functional(shape: tuple, affine: bool) -> None:
    rng = np.random.default_rng(len(shape))
    c = shape[1]
    w, b = (rng.standard_normal(c), rng.standard_normal(c)) if affine else (None, None)
    _check(lambda L, x, w=None, b=None: L.nn.functional.instance_norm(x, weight=w, bias=b, eps=1e-3),
           [rng.standard_normal(shape), w, b], seed=len(shape))


def test_instance_norm_running_stats_functional() -> None:
    """use_input_stats with running statistics updates them to the batch's mean; without uses them."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 5))
    rm, rv = rng.standard_normal(4), rng.random(4) + 0.5
    out = {}
    for lib in (torch, gc):
        m, v = lib.tensor(rm), lib.tensor(rv)
        a = lib.nn.functional.instance_norm(lib.tensor(x), m, v, use_input_stats=True, momentum=0.3)
        b = lib.nn.functional.instance_norm(lib.tensor(x), m, v, use_input_stats=False)
        out[lib.__name__] = [a, b, m, v]
    for t, g in zip(out["torch"], out["gradcalc"], strict=True):
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,shape", [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
                                        ("InstanceNorm2d", (2, 3, 4, 2)), ("InstanceNorm2d", (3, 4, 2)),
                                        ("InstanceNorm3d", (2, 3, 2, 2, 2))])
@pytest.mark.parametrize("kw", [{}, {"affine": True}, {"track_running_stats": True},
                                {"affine": True, "track_running_stats": True, "momentum": None}])
def test_instance_norm_modules_train_and_eval(name: str, shape: tuple, kw: dict) -> None:
    rng = np.random.default_rng(1)
    theirs, ours = getattr(torch.nn, name)(3, **kw), getattr(gc.nn, name)(3, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(-1, 1)
    ours.load_state_dict({k: gc.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    for mode in ("train", "train", "eval"):
        getattr(theirs, mode)()
        getattr(ours, mode)()
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(_np(ours(gc.tensor(x))), _np(theirs(torch.tensor(x))), rtol=1e-9, atol=1e-11)
        for (k, t), g in zip(theirs.state_dict().items(), ours.state_dict().values(), strict=True):
            np.testing.assert_allclose(_np(g), t.numpy(), rtol=1e-12, atol=1e-14, err_msg=f"{mode} {k}")


@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"bias": False}, {"eps": 1e-3}])
def test_group_norm_module(kw: dict) -> None:
    theirs, ours = torch.nn.GroupNorm(2, 6, **kw), gc.nn.GroupNorm(2, 6, **kw)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(_np(v), theirs.state_dict()[k].numpy())  # ones and zeros
    x = np.random.default_rng(2).standard_normal((4, 6, 3))
    xt, xg = torch.tensor(x, requires_grad=True), gc.tensor(x, requires_grad=True)
    theirs(xt).pow(3).sum().backward()
    ours(xg).pow(3).sum().backward()
    np.testing.assert_allclose(_np(xg.grad), _np(xt.grad), rtol=1e-9, atol=1e-11)
    for p, q in zip(theirs.parameters(), ours.parameters(), strict=True):
        np.testing.assert_allclose(_np(q.grad), _np(p.grad), rtol=1e-9, atol=1e-11)


@pytest.mark.usefixtures("pytorch_default_dtype")
@pytest.mark.parametrize("which", ["group", "instance"])
def test_float32(which: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6, 7)) * 5 + 2
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    got = {}
    for key, lib, dt in (("ref", torch, torch.float64), ("theirs", torch, torch.float32), ("ours", gc, gc.float32)):
        ts = [lib.tensor(a, dtype=dt, requires_grad=True) for a in (x, w, b)]
        F = lib.nn.functional
        y = F.group_norm(ts[0], 3, ts[1], ts[2]) if which == "group" else \
            F.instance_norm(ts[0], weight=ts[1], bias=ts[2])
        grads = lib.autograd.grad((y * lib.tensor(x, dtype=dt)).sum(), ts)
        got[key] = [_np(v) for v in (y, *grads)]
    for i, (o, t, r) in enumerate(zip(got["ours"], got["theirs"], got["ref"], strict=True)):
        assert_float32_close(o, t, r, steps=64, what=f"{which} {i}")


ERRORS = [
    lambda L: L.nn.functional.group_norm(L.ones(2, 5, 3), 2),
    lambda L: L.nn.functional.group_norm(L.ones(2), 2),
    lambda L: L.nn.functional.group_norm(L.ones(2, 4, 3), 2, L.ones(3)),
    lambda L: L.nn.functional.group_norm(L.ones(2, 4, 3), 2, None, L.ones(5)),
    lambda L: L.nn.functional.group_norm(L.ones(1, 4, 1), 4),
    lambda L: L.nn.GroupNorm(3, 4),
    lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 1)),
    lambda L: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 4, 5)),
    lambda L: L.nn.InstanceNorm2d(3)(L.ones(2, 3)),
    lambda L: L.nn.InstanceNorm1d(3, affine=True)(L.ones(2, 4, 5)),
]


@pytest.mark.parametrize("make", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_pytorchs(make: Any) -> None:
    t, g = both_raise(make)
    # PyTorch 2.13 prints a wrong bias shape ("bias of shape [0]"): its text is compared up to the shapes there
    ours, theirs = str(g).splitlines()[0], str(t).splitlines()[0]
    assert ours == theirs or ("bias of shape" in theirs and ours.split(" of shape")[0] == theirs.split(" of shape")[0])


def test_instance_norm_warns_for_mismatched_features_without_affine() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="does not match num_features"):
            gc.nn.InstanceNorm1d(3)(gc.ones(2, 4, 5))
