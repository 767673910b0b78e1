"""Dropout against PyTorch: `F.dropout`, `F.dropout1d/2d/3d`, `feature_dropout`, `native_dropout` and the
`nn.Dropout*` layers.

gradcalc's masks come from its own stream, so they cannot equal PyTorch's draw for draw. Two kinds of test:
- exact: PyTorch draws (its `F.dropout` on the CPU records `input * noise`, the noise being its MulBackward0's
  `_saved_other`), and gradcalc is given that very mask through `ops.dropout.keep_mask`, the one draw every
  dropout makes; then values, gradients (first and second order), tangents, nodes and saved values must be
  PyTorch's;
- by distribution: the fraction kept is Binomial(n, 1 - p) (checked at a 6-sigma bound), the kept elements are
  scaled by exactly 1/(1-p), channel-wise masks are constant per channel, and a seed repeats its masks.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import batching
from gradcalc.autograd.ops import dropout as D

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
TF = torch.nn.functional


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _inject(monkeypatch: pytest.MonkeyPatch, masks: list[np.ndarray]) -> list[tuple]:
    """Make gradcalc's draws return `masks` in order (each checked to have the shape asked); returns the calls."""
    calls: list[tuple] = []

    def given(input: Any, shape: tuple[int, ...], p: float) -> gc.Tensor:  # noqa: A002
        calls.append((tuple(shape), p))
        mask = masks.pop(0)
        assert mask.shape == tuple(shape)
        return gc.tensor(mask.astype(bool))

    monkeypatch.setattr(D, "keep_mask", given)
    return calls


def _torch_mask(y: Any) -> np.ndarray:
    """The mask PyTorch drew, read from its MulBackward0's saved noise."""
    assert y.grad_fn.name() == "MulBackward0"
    return _np(y.grad_fn._saved_other) != 0


CASES = [
    ("dropout", (4, 5), 0.3, lambda L, x, p: L.nn.functional.dropout(x, p)),
    ("dropout 3-d", (2, 3, 4), 0.7, lambda L, x, p: L.nn.functional.dropout(x, p, training=True)),
    ("dropout1d", (3, 4, 5), 0.4, lambda L, x, p: L.nn.functional.dropout1d(x, p)),
    ("dropout2d", (2, 3, 2, 2), 0.5, lambda L, x, p: L.nn.functional.dropout2d(x, p)),
    ("dropout3d", (2, 3, 2, 2, 2), 0.25, lambda L, x, p: L.nn.functional.dropout3d(x, p)),
    ("feature_dropout", (2, 3, 4), 0.6, lambda L, x, p: L.feature_dropout(x, p, True)),
    ("module", (6, 4), 0.2, lambda L, x, p: L.nn.Dropout(p)(x)),
    ("module 2d", (2, 5, 3, 3), 0.5, lambda L, x, p: L.nn.Dropout2d(p)(x)),
]


@pytest.mark.parametrize("name, shape, p, call", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_with_pytorchs_mask_everything_is_pytorchs(name: str, shape: tuple, p: float, call: Any, seed: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    data, weights = rng.standard_normal(shape), rng.standard_normal(shape)
    torch.manual_seed(seed)
    tx = torch.tensor(data, requires_grad=True)
    ty = call(torch, tx * 1.5, p)
    mask = _torch_mask(ty)
    _inject(monkeypatch, [mask])
    gx = gc.tensor(data, requires_grad=True)
    gy = call(gc, gx * 1.5, p)
    np.testing.assert_array_equal(_np(gy), _np(ty))
    assert gy.grad_fn.name() == "MulBackward0" and gy.grad_fn._saved_self is None
    np.testing.assert_array_equal(_np(gy.grad_fn._saved_other), _np(ty.grad_fn._saved_other))
    # first and second order
    grads = []
    for lib, x, y in ((gc, gx, gy), (torch, tx, ty)):
        w = lib.tensor(weights)
        (g,) = lib.autograd.grad((y * y * w).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        grads.append((g, gg))
    for ours, theirs in zip(*grads, strict=True):
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-12, atol=1e-14)


def test_the_tangent_is_the_mask_times_the_tangent(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    torch.manual_seed(3)
    mask = _torch_mask(TF.dropout(torch.tensor(x, requires_grad=True), 0.4))
    _inject(monkeypatch, [mask])
    _, ours = gc.func.jvp(lambda a: gc.nn.functional.dropout(a, 0.4), (gc.tensor(x),), (gc.tensor(t),))
    noise = torch.tensor(mask, dtype=torch.float64) / 0.6
    _, theirs = torch.func.jvp(lambda a: a * noise, (torch.tensor(x),), (torch.tensor(t),))
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-15)


def test_evaluation_mode_and_p_zero_return_the_input_itself() -> None:
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    for f in (lambda L, a: L.nn.functional.dropout(a, 0.5, training=False),
              lambda L, a: L.nn.functional.dropout(a, 0.0),
              lambda L, a: L.nn.Dropout(0.5).eval()(a)):
        assert (f(gc, x) is x) == (f(torch, tx) is tx) is True
    y = gc.nn.functional.dropout(x, 1.0)  # p = 1: input * zeros(())
    ty = TF.dropout(tx, 1.0)
    np.testing.assert_array_equal(_np(y), _np(ty))
    assert y.grad_fn.name() == ty.grad_fn.name() == "MulBackward0"
    assert tuple(y.grad_fn._saved_other.shape) == tuple(ty.grad_fn._saved_other.shape) == ()


def test_in_place_dropout(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(4)
    tx = torch.randn(4, 3, requires_grad=True)
    ty = tx * 2.0
    out = TF.dropout(ty, 0.5, inplace=True)
    assert out is ty and ty._version == 1
    _inject(monkeypatch, [_torch_mask(ty), _torch_mask(ty)])  # the second for the refused call (drawn first)
    gx = gc.tensor(_np(tx), requires_grad=True)
    gy = gx * 2.0
    assert gc.nn.functional.dropout(gy, 0.5, inplace=True) is gy and gy._version == 1
    np.testing.assert_array_equal(_np(gy), _np(ty))
    gy.sum().backward()
    ty.sum().backward()
    np.testing.assert_array_equal(_np(gx.grad), _np(tx.grad))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        TF.dropout(tx, 0.5, inplace=True)
    with pytest.raises(RuntimeError, match="leaf"):
        gc.nn.functional.dropout(gx, 0.5, inplace=True)


def test_native_dropout_with_pytorchs_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(5)
    tx = torch.randn(3, 4, requires_grad=True)
    tout, tmask = torch.native_dropout(tx, 0.3, True)
    _inject(monkeypatch, [_np(tmask)])
    gx = gc.tensor(_np(tx), requires_grad=True)
    out, mask = gc.native_dropout(gx, 0.3, True)
    np.testing.assert_array_equal(_np(out), _np(tout))
    np.testing.assert_array_equal(_np(mask), _np(tmask))
    node, tnode = out.grad_fn, tout.grad_fn
    assert node.name() == tnode.name() == "NativeDropoutBackward0"
    assert node._saved_p == tnode._saved_p
    np.testing.assert_array_equal(_np(node._saved_result1), _np(tnode._saved_result1))
    w = np.random.default_rng(5).standard_normal((3, 4))
    grads = []
    for lib, x, y in ((gc, gx, out), (torch, tx, tout)):
        (g,) = lib.autograd.grad((y * y * lib.tensor(w)).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        grads.append((g, gg, g.grad_fn.name()))
    assert grads[0][2] == grads[1][2]
    for ours, theirs in zip(grads[0][:2], grads[1][:2], strict=True):
        np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-12)


# -- by distribution --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_the_fraction_kept_and_the_scale(p: float) -> None:
    gc.manual_seed(11)
    n = 200_000
    y = gc.nn.functional.dropout(gc.ones(n), p)
    values = _np(y)
    kept = values != 0
    np.testing.assert_array_equal(values[kept], np.float64(1.0) / (1 - p))
    expected, sigma = n * (1 - p), np.sqrt(n * p * (1 - p))
    assert abs(kept.sum() - expected) < 6 * sigma


def test_float32_scale_is_pytorchs() -> None:
    x32 = torch.ones(1000, dtype=torch.float32)
    torch.manual_seed(0)
    theirs = TF.dropout(x32, 0.3)
    gc.manual_seed(0)
    ours = gc.nn.functional.dropout(gc.ones(1000, dtype=gc.float32), 0.3)
    assert ours.dtype == gc.float32
    assert set(np.unique(_np(ours))) == set(np.unique(theirs.numpy())) == {0.0, np.float32(1) / np.float32(0.7)}


def test_channel_masks_are_constant_per_channel() -> None:
    gc.manual_seed(2)
    y = _np(gc.nn.functional.dropout2d(gc.ones(8, 16, 3, 3), 0.5))
    per_channel = y.reshape(8, 16, 9)
    assert (per_channel == per_channel[:, :, :1]).all()
    assert 0 < (per_channel[:, :, 0] == 0).sum() < 8 * 16
    y1 = _np(gc.nn.functional.dropout1d(gc.ones(16, 5), 0.5))  # (C, L): channels are the rows
    assert (y1 == y1[:, :1]).all()


def test_a_seed_repeats_the_masks() -> None:
    def masks() -> list[np.ndarray]:
        gc.manual_seed(123)
        d = gc.nn.Dropout(0.5)
        return [_np(d(gc.ones(10, 10))) for _ in range(3)]

    first, again = masks(), masks()
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])  # each forward draws afresh


# -- errors and warnings ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.dropout(L.ones(3), 1.5),
    lambda L: L.nn.functional.dropout(L.ones(3), -0.1),
    lambda L: L.nn.Dropout(2.0),
    lambda L: L.nn.functional.dropout2d(L.ones(2, 2, 2), -1.0),
])
def test_probability_out_of_range(call: Any) -> None:
    with pytest.raises(ValueError) as theirs:
        call(torch)
    with pytest.raises(ValueError) as ours:
        call(gc)
    assert str(ours.value) == str(theirs.value)


def test_dropout1d_needs_2_or_3_dims() -> None:
    with pytest.raises(RuntimeError) as theirs:
        TF.dropout1d(torch.ones(2, 2, 2, 2))
    with pytest.raises(RuntimeError) as ours:
        gc.nn.functional.dropout1d(gc.ones(2, 2, 2, 2))
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape, fn", [((2, 3, 4), "dropout2d"), ((2, 3), "dropout2d"), ((2, 3, 4), "dropout3d")])
def test_dropout2d_3d_warnings(shape: tuple, fn: str) -> None:
    messages = []
    for lib in (torch, gc):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            getattr(lib.nn.functional, fn)(lib.ones(*shape), 0.5, training=False)
        messages.append([str(w.message) for w in seen])
    assert messages[1] == messages[0] and messages[0]


def test_integral_input() -> None:
    with pytest.raises(RuntimeError) as theirs:
        TF.dropout(torch.tensor([1, 2, 3]), 0.5)
    with pytest.raises(RuntimeError) as ours:
        gc.nn.functional.dropout(gc.tensor([1, 2, 3]), 0.5)
    assert str(ours.value) == str(theirs.value)
    np.testing.assert_array_equal(_np(gc.nn.functional.dropout(gc.tensor([1, 2]), 1.0)), [0, 0])


def test_module_repr() -> None:
    for make in (lambda L: L.nn.Dropout(), lambda L: L.nn.Dropout(0.3, inplace=True), lambda L: L.nn.Dropout1d(0.2),
                 lambda L: L.nn.Dropout2d(), lambda L: L.nn.Dropout3d(0.1)):
        assert repr(make(gc)) == repr(make(torch))


# -- vmap: the batching rules and randomness ------------------------------------------------------------------------
def test_vmap_randomness_error_is_pytorchs() -> None:
    x = np.ones((3, 4))
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda a: TF.dropout(a, 0.5))(torch.tensor(x))
    with pytest.raises(RuntimeError) as ours:
        batching.vmap(lambda a: batching.bind("dropout", a, 0.5))(gc.tensor(x))
    assert str(ours.value) == str(theirs.value)
    # no mask drawn, no error: evaluation mode, p = 0, p = 1
    for args in ((0.5, False), (0.0, True), (1.0, True)):
        ours_v = batching.vmap(lambda a, args=args: batching.bind("dropout", a, *args))(gc.tensor(x))
        theirs_v = torch.vmap(lambda a, args=args: TF.dropout(a, *args))(torch.tensor(x))
        np.testing.assert_array_equal(_np(ours_v), _np(theirs_v))


@pytest.mark.parametrize("d", [0, 1])
def test_vmap_randomness_different_and_same(d: int) -> None:
    x = gc.ones(6, 40) if d == 0 else gc.ones(40, 6)
    gc.manual_seed(0)
    with D.vmap_randomness("different"):
        out = _np(batching.vmap(lambda a: batching.bind("dropout", a, 0.5), in_dims=d)(x))
    assert out.shape == (6, 40) and not all(np.array_equal(out[0], row) for row in out[1:])
    with D.vmap_randomness("same"):
        out = _np(batching.vmap(lambda a: batching.bind("dropout", a, 0.5), in_dims=d)(x))
    assert all(np.array_equal(out[0], row) for row in out[1:]) and set(np.unique(out)) == {0.0, 2.0}
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"), D.vmap_randomness("sometimes"):
        pass


def test_vmap_channel_dropout_draws_per_sample_and_channel() -> None:
    gc.manual_seed(1)
    with D.vmap_randomness("different"):
        out = _np(batching.vmap(lambda a: batching.bind("feature_dropout", a, 0.5, True))(gc.ones(4, 3, 5, 2)))
    per_channel = out.reshape(4, 3, 5, 2)
    assert (per_channel == per_channel[..., :1]).all()  # one value a (sample, row, channel)
    with D.vmap_randomness("same"):
        out = _np(batching.vmap(lambda a: batching.bind("feature_dropout", a, 0.5, True))(gc.ones(4, 3, 5, 2)))
    assert all(np.array_equal(out[0], row) for row in out[1:])
