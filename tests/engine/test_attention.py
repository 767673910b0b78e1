"""Attention against PyTorch: `F.scaled_dot_product_attention` over generated shapes and masks (boolean, float,
causal, fully masked rows, scale, grouped-query) and `nn.MultiheadAttention` / `F.multi_head_attention_forward`
over its options (batch_first, kdim/vdim, bias, add_bias_kv, add_zero_attn, key_padding_mask, attn_mask,
need_weights, average_attn_weights, unbatched), with PyTorch's weights copied in: values, first and second-order
gradients, float32, parameter names, init, repr, train/eval dropout, and PyTorch's errors."""

from __future__ import annotations

import contextlib
import itertools
import warnings
from typing import Any

import numpy as np
import pytest
from precision import assert_float32_close

import gradcalc as gc
from tests.engine.ops_oracle import both_raise

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
# PyTorch's CPU picks its fused flash kernel, which has no second derivative; its math path (the composition
# gradcalc records) has: the oracle runs that one wherever second order is compared
def MATH() -> Any:  # noqa: N802
    return torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH)


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _compare(res: dict, rtol: float = 1e-9, atol: float = 1e-11) -> None:
    for i, (t, g) in enumerate(zip(res["torch"], res["gradcalc"], strict=True)):
        if t is None:
            assert g is None or not np.any(_np(g)), i
            continue
        assert tuple(g.shape) == tuple(t.shape), i
        np.testing.assert_allclose(_np(g), _np(t), rtol=rtol, atol=atol, err_msg=f"result {i}")


SDPA_CASES = list(itertools.product(
    [((4, 5), (6, 5), (6, 7)), ((2, 4, 5), (2, 6, 5), (2, 6, 3)), ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5)),
     ((2, 3, 4, 4), (1, 3, 4, 4), (1, 3, 4, 2))],
    ["none", "bool", "float", "causal", "bool_full_row", "broadcast_bool"],
    [None, 0.25, -0.4],
))


@pytest.mark.parametrize("shapes,mask,scale", SDPA_CASES)
def test_sdpa(shapes: tuple, mask: str, scale: float | None) -> None:
    rng = np.random.default_rng(abs(hash((shapes, mask, scale))) % 2**32)
    arrays = [rng.standard_normal(s) for s in shapes]
    L, S = shapes[0][-2], shapes[1][-2]
    m: Any = None
    if mask in ("bool", "bool_full_row"):
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True
        if mask == "bool_full_row":
            m[1] = False  # a query that may attend to nothing: zeros, as ATen's safe softmax
    elif mask == "broadcast_bool":  # one more dim than a 2-d query has: PyTorch's error, then gradcalc's
        m = rng.random((1, L, S)) > 0.3
        if len(shapes[0]) == 2:
            for lib in (torch, gc):
                with pytest.raises(RuntimeError, match=r"output with shape \[4, 6\] doesn't match the broadcast"):
                    lib.nn.functional.scaled_dot_product_attention(*map(lib.tensor, arrays), attn_mask=lib.tensor(m))
            return
    elif mask == "float":
        m = rng.standard_normal((L, S))
    res = {}
    for lib in (torch, gc):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        kw: dict = {"scale": scale}
        if mask == "causal":
            kw["is_causal"] = True
        elif m is not None:
            kw["attn_mask"] = lib.tensor(m)
        with MATH() if lib is torch else contextlib.nullcontext():
            y = lib.nn.functional.scaled_dot_product_attention(*ts, **kw)
            w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
            first = lib.autograd.grad((y * y * w).sum(), ts, create_graph=True)
            second = lib.autograd.grad(sum((g * g).sum() for g in first), ts)
        res[lib.__name__] = [y, *first, *second]
    _compare(res)


def test_sdpa_float_mask_gradient_and_gqa() -> None:
    rng = np.random.default_rng(4)
    q, k, v = rng.standard_normal((2, 4, 3, 5)), rng.standard_normal((2, 2, 6, 5)), rng.standard_normal((2, 2, 6, 5))
    m = rng.standard_normal((3, 6))
    res = {}
    for lib in (torch, gc):
        ts = [lib.tensor(a, requires_grad=True) for a in (q, k, v, m)]
        y = lib.nn.functional.scaled_dot_product_attention(*ts[:3], attn_mask=ts[3], enable_gqa=True)
        res[lib.__name__] = [y, *lib.autograd.grad((y * y).sum(), ts)]
    _compare(res)


@pytest.mark.usefixtures("pytorch_default_dtype")
def test_sdpa_float32() -> None:
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((2, 3, 8, 16)) * 2 for _ in range(3)]
    got = {}
    for key, lib, dt in (("ref", torch, torch.float64), ("theirs", torch, torch.float32), ("ours", gc, gc.float32)):
        ts = [lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
        y = lib.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
        got[key] = [_np(v) for v in (y, *lib.autograd.grad((y * y).sum(), ts))]
    for i, (o, t, r) in enumerate(zip(got["ours"], got["theirs"], got["ref"], strict=True)):
        assert_float32_close(o, t, r, steps=64, what=f"sdpa {i}")


def test_sdpa_dropout_train_only_draws() -> None:
    q = gc.randn(2, 4, 5)
    gc.manual_seed(0)
    a = gc.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = gc.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert not np.allclose(_np(a), _np(b))
    ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(_np(q)),) * 3, dropout_p=0.0)
    np.testing.assert_allclose(_np(gc.nn.functional.scaled_dot_product_attention(q, q, q)), _np(ref), rtol=1e-10)


def _mha_pair(*args: Any, **kw: Any) -> tuple[Any, Any]:
    theirs, ours = torch.nn.MultiheadAttention(*args, **kw), gc.nn.MultiheadAttention(*args, **kw)
    assert repr(ours) == repr(theirs)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: gc.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


MHA_OPTIONS = [{}, {"batch_first": True}, {"kdim": 3, "vdim": 2}, {"add_bias_kv": True},
               {"add_zero_attn": True}, {"bias": False}, {"add_bias_kv": True, "add_zero_attn": True,
                                                          "batch_first": True}]
MHA_CALLS = [{}, {"need_weights": False}, {"average_attn_weights": False}, {"key_padding_mask": "bool"},
             {"key_padding_mask": "float", "need_weights": False}, {"attn_mask": "bool"},
             {"attn_mask": "float3d", "key_padding_mask": "float"}, {"attn_mask": "causal", "is_causal": True}]


@pytest.mark.parametrize("options", MHA_OPTIONS, ids=range(len(MHA_OPTIONS)))
@pytest.mark.parametrize("call", MHA_CALLS, ids=range(len(MHA_CALLS)))
@pytest.mark.parametrize("self_attention", [False, True])
def test_multihead_attention(options: dict, call: dict, self_attention: bool) -> None:
    if self_attention and "kdim" in options:
        pytest.skip("self-attention has one embedding size")
    rng = np.random.default_rng(abs(hash((str(options), str(call), self_attention))) % 2**32)
    theirs, ours = _mha_pair(4, 2, **options)
    N, L, S = 2, 3, 3 if self_attention else 5
    bf = options.get("batch_first", False)
    shape = lambda n, d: (N, n, d) if bf else (n, N, d)  # noqa: E731
    q = rng.standard_normal(shape(L, 4))
    k = q if self_attention else rng.standard_normal(shape(S, options.get("kdim", 4)))
    v = q if self_attention else rng.standard_normal(shape(S, options.get("vdim", 4)))
    masks: dict[str, Any] = {}
    if call.get("key_padding_mask") == "bool":
        masks["key_padding_mask"] = rng.random((N, S)) > 0.6
        masks["key_padding_mask"][:, 0] = False
    elif call.get("key_padding_mask") == "float":
        masks["key_padding_mask"] = rng.standard_normal((N, S))
    if call.get("attn_mask") == "bool":
        masks["attn_mask"] = rng.random((L, S)) > 0.6
        masks["attn_mask"][:, 0] = False
    elif call.get("attn_mask") == "float3d":
        masks["attn_mask"] = rng.standard_normal((N * 2, L, S))
    elif call.get("attn_mask") == "causal":
        masks["attn_mask"] = np.triu(np.ones((L, S), dtype=bool), 1)
    res = {}
    for lib, module in ((torch, theirs), (gc, ours)):
        qt = lib.tensor(q, requires_grad=True)
        kt = qt if self_attention else lib.tensor(k, requires_grad=True)
        vt = qt if self_attention else lib.tensor(v, requires_grad=True)
        kw = {**call, **{name: lib.tensor(m) for name, m in masks.items()}}
        with warnings.catch_warnings(), MATH() if lib is torch else contextlib.nullcontext():
            warnings.simplefilter("ignore")
            out, weights = module(qt, kt, vt, **kw)
            wrt = list(dict.fromkeys([qt, kt, vt])) + list(module.parameters())
            total = (out * out).sum() + (0 if weights is None else (weights * weights).sum())
            first = lib.autograd.grad(total, wrt, create_graph=True)
            second = lib.autograd.grad(sum((g * g).sum() for g in first), wrt, allow_unused=True)
        res[lib.__name__] = [out, weights, *first, *second]
    _compare(res)


def test_multihead_attention_unbatched_and_init() -> None:
    theirs, ours = _mha_pair(6, 3)
    rng = np.random.default_rng(0)
    q, kv = rng.standard_normal((4, 6)), rng.standard_normal((5, 6))
    kpm = np.array([False, True, False, False, True])
    t_out = theirs(torch.tensor(q), torch.tensor(kv), torch.tensor(kv), key_padding_mask=torch.tensor(kpm))
    g_out = ours(gc.tensor(q), gc.tensor(kv), gc.tensor(kv), key_padding_mask=gc.tensor(kpm))
    for t, g in zip(t_out, g_out, strict=True):
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-10, atol=1e-12)
    fresh = gc.nn.MultiheadAttention(6, 3)
    bound = np.sqrt(6 / (6 + 18))  # xavier_uniform_ of the (18, 6) in_proj_weight
    assert np.all(np.abs(_np(fresh.in_proj_weight)) <= bound)
    assert not np.any(_np(fresh.in_proj_bias)) and not np.any(_np(fresh.out_proj.bias))
    assert type(fresh.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_multihead_attention_dropout_train_and_eval() -> None:
    theirs, ours = _mha_pair(4, 2, dropout=0.5)
    x = np.random.default_rng(1).standard_normal((3, 2, 4))
    theirs.eval()
    ours.eval()
    np.testing.assert_allclose(_np(ours(*(gc.tensor(x),) * 3)[0]), _np(theirs(*(torch.tensor(x),) * 3)[0]),
                               rtol=1e-10, atol=1e-12)
    ours.train()
    a, b = ours(*(gc.tensor(x),) * 3)[1], ours(*(gc.tensor(x),) * 3)[1]
    assert not np.allclose(_np(a), _np(b))


ERRORS = [
    lambda L: L.nn.functional.scaled_dot_product_attention(L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2, 3, 4),
                                                            attn_mask=L.ones(3, 3, dtype=L.bool), is_causal=True),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.ones(2, 3, 4), L.ones(2, 3, 4), L.ones(2, 3, 4),
                                                            attn_mask=L.ones(3, 3, dtype=L.int64)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.ones(4), L.ones(4), L.ones(4)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.ones(2, 3, dtype=L.float64), L.ones(2, 3, dtype=L.float32),
                                                            L.ones(2, 3, dtype=L.float64)),
    lambda L: L.nn.MultiheadAttention(5, 2),
    lambda L: L.nn.MultiheadAttention(0, 2),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 4), L.ones(3, 4)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4),
                                            attn_mask=L.ones(3, 2)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4),
                                            attn_mask=L.ones(3, 3, dtype=L.int64)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4), is_causal=True),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4), L.ones(3, 2, 4), L.ones(3, 2, 4),
                                            key_padding_mask=L.ones(3, 3, dtype=L.bool)),
    lambda L: L.nn.MultiheadAttention(4, 2)(L.ones(3, 2, 4, 1), L.ones(3, 2, 4), L.ones(3, 2, 4)),
]


@pytest.mark.parametrize("make", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_pytorchs(make: Any) -> None:
    t, g = both_raise(make)
    assert str(g).splitlines()[0] == str(t).splitlines()[0]
