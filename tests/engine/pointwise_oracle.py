"""The differential harness of test_ops_elementwise.py and test_ops_reductions.py: a function run on
gradcalc and on PyTorch (the oracle) with the same data; values, dtypes, grad_fn names and gradients to
the order asked are compared, in float64 to rtol 1e-9 (float32's precision with `loose`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis.extra import numpy as hnp

import gradcalc as gc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
gc.set_default_dtype(gc.float64)  # both in float64 (tests/conftest.py also sets it for every test)

RTOL, ATOL = 1e-9, 1e-12


def _np(t):
    """A torch tensor's values as an array (torch's zero tensors included)."""
    return torch.zeros_like(t).numpy() if t._is_zerotensor() else t.detach().numpy()


def assert_same(ours, theirs, what: str = "", loose: bool = False) -> None:
    """Same shape, dtype and values (nan where nan, inf where inf), and the same requires_grad."""
    assert (ours is None) == (theirs is None), f"{what}: gradcalc {ours!r}, torch {theirs!r}"
    if theirs is None:
        return
    assert tuple(ours.shape) == tuple(theirs.shape), f"{what}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    assert str(ours.dtype) == str(theirs.dtype), f"{what}: dtype {ours.dtype} vs {theirs.dtype}"
    want = _np(theirs)
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.abs(want)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0  # rounding is relative to the largest entry
    rtol, atol = (RTOL, ATOL) if ours.dtype == gc.float64 and not loose else (1e-5, 1e-6)
    np.testing.assert_allclose(ours.detach().numpy(), want, rtol=rtol, atol=atol * scale, err_msg=what)
    assert ours.requires_grad == theirs.requires_grad, f"{what}: requires_grad {ours.requires_grad}"


def _out(y):
    return y[0] if isinstance(y, tuple) else y


def check(fn_t, fn_g, *arrays, order: int = 2, seed: int = 0, const=(), loose: bool = False) -> None:
    """Compare fn on PyTorch and on gradcalc: the output, the gradients of a random vector-Jacobian product
    by backward, then `order` orders of autograd.grad(create_graph=True) (each next order differentiates a
    random weighted sum of the previous gradients). Inputs at positions in `const` do not require grad;
    `loose` compares at float32's precision."""
    rng = np.random.default_rng(seed)

    def leaves():
        xt = [torch.tensor(a, requires_grad=i not in const) for i, a in enumerate(arrays)]
        xg = [gc.tensor(a, requires_grad=i not in const) for i, a in enumerate(arrays)]
        return xt, xg

    xt, xg = leaves()
    yt, yg = _out(fn_t(*xt)), _out(fn_g(*xg))
    assert_same(yg, yt, "value", loose)
    name_t = yt.grad_fn.name() if yt.grad_fn is not None else None
    assert (yg.grad_fn.name() if yg.grad_fn is not None else None) == name_t
    if not yt.requires_grad:
        return
    v = rng.standard_normal(tuple(yt.shape))
    dtype_t, dtype_g = yt.dtype, yg.dtype  # the gradient of an output comes in the output's dtype
    yt.backward(torch.tensor(v, dtype=dtype_t))
    yg.backward(gc.tensor(v, dtype=dtype_g))
    for i, (a, b) in enumerate(zip(xg, xt, strict=True)):
        assert_same(a.grad, b.grad, f"backward, input {i}", loose)

    xt, xg = leaves()
    ft, fg = _out(fn_t(*xt)), _out(fn_g(*xg))
    vt, vg = torch.tensor(v, dtype=dtype_t), gc.tensor(v, dtype=dtype_g)
    wanted = [i for i in range(len(arrays)) if i not in const]
    for k in range(1, order + 1):
        gt = torch.autograd.grad(ft, [xt[i] for i in wanted], vt, create_graph=True, allow_unused=True)
        gg = gc.autograd.grad(fg, [xg[i] for i in wanted], vg, create_graph=True, allow_unused=True)
        for i, (a, b) in enumerate(zip(gg, gt, strict=True)):
            assert_same(a, b, f"order {k}, input {wanted[i]}", loose)
        live = [i for i, b in enumerate(gt) if b is not None and b.requires_grad]
        if not live:
            return
        ws = [rng.standard_normal(tuple(gt[i].shape)) for i in live]
        ft = sum((gt[i] * torch.tensor(w)).sum() for i, w in zip(live, ws, strict=True))
        fg = sum((gg[i] * gc.tensor(w)).sum() for i, w in zip(live, ws, strict=True))
        vt = vg = None


def shapes(max_dims: int = 3, min_side: int = 1):
    return hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=min_side, max_side=4)
