"""Padding and resampling against PyTorch: `F.pad` in modes reflect/replicate/circular (1, 2 and 3 padded dims,
with and without a batch dim, negative pads), `F.interpolate` (nearest, nearest-exact, linear, bilinear,
trilinear; size or scale_factor, align_corners, recompute_scale_factor), `F.pixel_shuffle`/`pixel_unshuffle`, and
the layers (ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad, Upsample, PixelShuffle): values,
first and second-order gradients, float32, vmap, repr, and PyTorch's errors."""

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


def _check(fn: Any, shape: tuple, seed: int = 0) -> None:
    """fn(lib, x): the values, and first and second-order gradients, against PyTorch's."""
    x = np.random.default_rng(seed).standard_normal(shape)
    res = {}
    for lib in (torch, gc):
        t = lib.tensor(x, requires_grad=True)
        y = fn(lib, t)
        w = lib.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(y.shape)))
        (g,) = lib.autograd.grad((y * y * w).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g * g * g).sum(), t)
        res[lib.__name__] = (y, g, gg)
    for what, t, g in zip(("value", "gradient", "second"), res["torch"], res["gradcalc"], strict=True):
        assert tuple(g.shape) == tuple(t.shape), what
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-9, atol=1e-11, err_msg=what)


PAD_CASES = [(mode, pads, shape) for mode in ("reflect", "replicate", "circular")
             for pads, shape in (((2, 1), (2, 3, 4)), ((1, 3), (3, 5)), ((0, 2), (1, 1, 3)),
                                 ((2, 1, 1, 2), (2, 3, 4, 5)), ((1, 0, 2, 2), (3, 4, 5)),
                                 ((1, 1, 1, 0, 2, 1), (1, 3, 4, 5, 3)), ((1, 2, 0, 1, 1, 1), (2, 3, 3, 3)),
                                 ((-1, 2), (2, 3, 4)), ((2, -1, 1, 1), (1, 2, 4, 4)))]


@pytest.mark.parametrize("mode,pads,shape", PAD_CASES)
def test_pad_modes(mode: str, pads: tuple, shape: tuple) -> None:
    _check(lambda L, x: L.nn.functional.pad(x, pads, mode=mode), shape, seed=len(pads))


INTERP_CASES = [(mode, shape, kw, ac)
                for mode, shape in (("nearest", (2, 3, 5)), ("nearest", (1, 2, 5, 4)), ("nearest", (1, 2, 3, 4, 2)),
                                    ("nearest-exact", (2, 3, 5)), ("nearest-exact", (1, 2, 5, 4)),
                                    ("linear", (2, 3, 5)), ("bilinear", (2, 3, 5, 4)), ("trilinear", (1, 2, 3, 4, 5)))
                for kw in ({"scale_factor": 2}, {"scale_factor": 1.7}, {"scale_factor": 0.6},
                           {"scale_factor": 0.6, "recompute_scale_factor": True}, {"size": 7}, {"size": 2},
                           {"size": 1}, {"scale_factor": 3.0})
                for ac in ((None,) if mode.startswith("nearest") else (False, True))]


@pytest.mark.parametrize("mode,shape,kw,ac", INTERP_CASES)
def test_interpolate(mode: str, shape: tuple, kw: dict, ac: bool | None) -> None:
    _check(lambda L, x: L.nn.functional.interpolate(x, mode=mode, align_corners=ac, **kw), shape)


def test_interpolate_per_dim_sizes_and_factors() -> None:
    _check(lambda L, x: L.nn.functional.interpolate(x, size=(3, 7), mode="bilinear"), (1, 2, 4, 5))
    _check(lambda L, x: L.nn.functional.interpolate(x, scale_factor=(1.5, 0.5), mode="nearest"), (1, 2, 4, 6))
    _check(lambda L, x: L.nn.functional.interpolate(x, scale_factor=(2, 1.3, 0.7), mode="trilinear",
                                                    align_corners=True), (1, 1, 2, 3, 4))


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 4), 2), ((9, 2, 2), 3), ((2, 1, 4, 1, 1), 2), ((1, 4, 1, 2), 2)])
def test_pixel_shuffle(shape: tuple, r: int) -> None:
    _check(lambda L, x: L.nn.functional.pixel_shuffle(x, r), shape)
    up = tuple(shape[:-3]) + (shape[-3] // (r * r), shape[-2] * r, shape[-1] * r)
    _check(lambda L, x: L.nn.functional.pixel_unshuffle(x, r), up)


@pytest.mark.usefixtures("pytorch_default_dtype")
@pytest.mark.parametrize("fn", [
    lambda L, x: L.nn.functional.interpolate(x, scale_factor=1.7, mode="bilinear"),
    lambda L, x: L.nn.functional.interpolate(x, size=(5, 9), mode="bilinear", align_corners=True),
    lambda L, x: L.nn.functional.pad(x, (2, 2, 1, 1), mode="reflect"),
])
def test_float32(fn: Any) -> None:
    x = np.random.default_rng(2).standard_normal((2, 3, 6, 7)) * 4
    got = {}
    for key, lib, dt in (("ref", torch, torch.float64), ("theirs", torch, torch.float32), ("ours", gc, gc.float32)):
        t = lib.tensor(x, dtype=dt, requires_grad=True)
        y = fn(lib, t)
        (g,) = lib.autograd.grad((y * y).sum(), t)
        got[key] = (_np(y), _np(g))
    for i in range(2):
        assert_float32_close(got["ours"][i], got["theirs"][i], got["ref"][i], steps=16, what=f"result {i}")


def test_vmap_through_pad_and_interpolate() -> None:
    x = np.random.default_rng(3).standard_normal((4, 2, 3, 5))
    for in_dims in (0, 1):
        xs = np.moveaxis(x, 0, in_dims)
        for fn in (lambda L, t: L.nn.functional.pad(t, (1, 2), mode="reflect"),
                   lambda L, t: L.nn.functional.interpolate(t, scale_factor=2, mode="linear")):
            theirs = torch.func.vmap(lambda t, fn=fn: fn(torch, t), in_dims=in_dims)(torch.tensor(xs))
            ours = gc.func.vmap(lambda t, fn=fn: fn(gc, t), in_dims=in_dims)(gc.tensor(xs))
            np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-12, atol=1e-14)


LAYERS = [("ZeroPad1d", (2,)), ("ZeroPad2d", (1,)), ("ZeroPad2d", ((1, 0, 2, 1),)), ("ZeroPad3d", (1,)),
          ("ConstantPad1d", ((1, 2), 3.5)), ("ConstantPad2d", (1, -2.0)), ("ConstantPad3d", ((1, 0, 0, 1, 1, 0), 1.0)),
          ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 0, 2, 1),)), ("ReflectionPad3d", (1,)),
          ("ReplicationPad1d", ((3, 0),)), ("ReplicationPad2d", (2,)), ("ReplicationPad3d", ((1, 0, 0, 1, 1, 0),)),
          ("CircularPad1d", (1,)), ("CircularPad2d", ((1, 0, 2, 1),)), ("CircularPad3d", (1,)),
          ("Upsample", (None, 2)), ("Upsample", ((3, 7), None, "bilinear")),
          ("Upsample", (None, 1.5, "bilinear", True)),
          ("UpsamplingNearest2d", (None, 2)), ("UpsamplingBilinear2d", ((5, 5),)), ("PixelShuffle", (2,)),
          ("PixelUnshuffle", (2,))]


@pytest.mark.parametrize("name,args", LAYERS)
def test_layers(name: str, args: tuple) -> None:
    theirs, ours = getattr(torch.nn, name)(*args), getattr(gc.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == [] == list(theirs.state_dict())
    shape = (2, 4, 4, 4, 4) if name.endswith("3d") else (1, 4, 4, 6) if "Pad2d" in name or "Upsampl" in name \
        or "Pixel" in name else (2, 3, 5)
    _check(lambda L, x: (theirs if L is torch else ours)(x), shape)


ERRORS = [
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (3, 3), mode="reflect"),
    lambda L: L.nn.functional.pad(L.ones(3), (1, 1), mode="reflect"),
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1, 1, 1, 1, 1, 1, 1), mode="reflect"),
    lambda L: L.nn.functional.pad(L.ones(2, 3), (1, 1, 1, 1), mode="replicate"),
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), mode="foo"),
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1,), mode="reflect"),
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (4, 1), mode="circular"),
    lambda L: L.nn.functional.pad(L.ones(1, 2, 3), (1, 1), mode="replicate", value=1.0),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3, 4), mode="linear", scale_factor=2),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3), mode="bilinear", scale_factor=2),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3), scale_factor=2, align_corners=True),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3), size=4, scale_factor=2),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3), size=(2, 3)),
    lambda L: L.nn.functional.interpolate(L.ones(1, 2, 3), mode="foo", size=3),
    lambda L: L.nn.functional.pixel_shuffle(L.ones(2, 3), 2),
    lambda L: L.nn.functional.pixel_shuffle(L.ones(1, 5, 2, 2), 2),
    lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 1, 3, 4), 2),
    lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 1, 4, 3), 2),
]


@pytest.mark.parametrize("make", ERRORS, ids=range(len(ERRORS)))
def test_errors_are_pytorchs(make: Any) -> None:
    t, g = both_raise(make)
    assert str(g) == str(t)
