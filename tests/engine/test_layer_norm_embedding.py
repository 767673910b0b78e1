"""Layer normalization and embeddings against PyTorch: `F.layer_norm` / `nn.LayerNorm` and `F.embedding` /
`nn.Embedding` over generated cases — values, gradients of first and second order, forward-mode tangents, nodes
and saved values, the layers' options (elementwise_affine, bias, padding_idx, max_norm, scale_grad_by_freq,
from_pretrained), float32, PyTorch's errors, and vmap's batching rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from precision import assert_float32_close

import gradcalc as gc
from gradcalc.autograd import batching

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
TF = torch.nn.functional


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: Any, theirs: Any, what: str, rtol: float = 1e-10) -> None:
    if ours is None or theirs is None:
        assert ours is None and theirs is None, what
        return
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=1e-12, err_msg=what)


def _grads(lib: Any, y: Any, inputs: list, g: np.ndarray) -> tuple:
    total = (y * y * lib.tensor(g)).sum()
    first = lib.autograd.grad(total, inputs, create_graph=True)
    second = lib.autograd.grad(sum((t * t).sum() for t in first), inputs, allow_unused=True)
    return first, second


# -- layer_norm ---------------------------------------------------------------------------------------------------
def _ln_case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 5, rng.integers(1, 5)))
    k = int(rng.integers(1, len(shape) + 1))
    normalized = shape[len(shape) - k:]
    return {"x": rng.standard_normal(shape) * 2 + 1, "normalized": normalized,
            "w": rng.standard_normal(normalized) if rng.random() < 0.7 else None,
            "b": rng.standard_normal(normalized) if rng.random() < 0.7 else None,
            "eps": float(rng.choice([1e-5, 0.1])), "g": rng.standard_normal(shape)}


def _ln(lib: Any, case: dict, ones_weight: bool = False) -> dict:
    """`ones_weight`: a weight of ones that requires no grad in place of none, the same function (PyTorch's double
    backward fails with a bias but no weight: "Expected a proper Tensor but got None ... 'other'")."""
    x = lib.tensor(case["x"], requires_grad=True)
    w = None if case["w"] is None else lib.tensor(case["w"], requires_grad=True)
    if w is None and ones_weight:
        w = lib.ones(case["normalized"])
    b = None if case["b"] is None else lib.tensor(case["b"], requires_grad=True)
    y = lib.nn.functional.layer_norm(x, list(case["normalized"]), w, b, case["eps"])
    node = y.grad_fn
    saved = {n: getattr(node, f"_saved_{n}") for n in ("input", "weight", "bias", "result1", "result2",
                                                       "normalized_shape")}
    inputs = [t for t in (x, w, b) if t is not None and t.requires_grad]
    first, second = _grads(lib, y, inputs, case["g"])
    return {"y": y, "first": first, "second": second, "saved": saved, "name": node.name(),
            "second_node": first[0].grad_fn.name()}


@pytest.mark.parametrize("seed", range(30))
def test_layer_norm_matches_pytorch(seed: int) -> None:
    case = _ln_case(seed)
    ours = _ln(gc, case)
    try:
        theirs = _ln(torch, case)
    except RuntimeError as exc:
        assert "Expected a proper Tensor but got None" in str(exc) and case["w"] is None
        theirs = _ln(torch, case, ones_weight=True)
        theirs["saved"]["weight"] = None
    _close(ours["y"], theirs["y"], "output")
    for i, (a, b) in enumerate(zip(ours["first"], theirs["first"], strict=True)):
        _close(a, b, f"gradient {i}", 1e-9)
    for i, (a, b) in enumerate(zip(ours["second"], theirs["second"], strict=True)):
        if a is None or b is None:
            assert np.allclose(0.0 if a is None else _np(a), 0.0) and np.allclose(0.0 if b is None else _np(b), 0.0)
            continue
        _close(a, b, f"second-order gradient {i}", 1e-8)
    assert ours["name"] == theirs["name"] == "NativeLayerNormBackward0"
    assert ours["second_node"] == theirs["second_node"] == "NativeLayerNormBackwardBackward0"
    assert ours["saved"]["normalized_shape"] == theirs["saved"]["normalized_shape"]
    for n in ("input", "weight", "bias", "result1", "result2"):
        _close(ours["saved"][n], theirs["saved"][n], f"_saved_{n}", 1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_layer_norm_tangents_match_torch_func_jvp(seed: int) -> None:
    case = _ln_case(50 + seed)
    rng = np.random.default_rng(seed)
    arrays = [case["x"]] + [case[k] for k in ("w", "b") if case[k] is not None]
    tangents = [rng.standard_normal(np.shape(a)) for a in arrays]
    got = []
    for lib in (gc, torch):
        def f(x: Any, *params: Any, lib: Any = lib) -> Any:
            it = iter(params)
            w = next(it) if case["w"] is not None else None
            b = next(it) if case["b"] is not None else None
            return lib.nn.functional.layer_norm(x, list(case["normalized"]), w, b, case["eps"])

        got.append(lib.func.jvp(f, tuple(lib.tensor(a) for a in arrays), tuple(lib.tensor(t) for t in tangents))[1])
    _close(got[0], got[1], "tangent", 1e-9)


@pytest.mark.parametrize("options", [{}, {"elementwise_affine": False}, {"bias": False}, {"eps": 0.01}])
def test_the_layer_norm_module(options: dict) -> None:
    mods = [lib.nn.LayerNorm([3, 4], **options) for lib in (gc, torch)]
    assert repr(mods[0]) == repr(mods[1])
    assert [n for n, _ in mods[0].named_parameters()] == [n for n, _ in mods[1].named_parameters()]
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    _close(mods[0](gc.tensor(x)), mods[1](torch.tensor(x)), "LayerNorm")
    assert repr(gc.nn.LayerNorm(5)) == repr(torch.nn.LayerNorm(5))


def test_layer_norm_float32() -> None:
    rng = np.random.default_rng(1)
    x, g, w = rng.standard_normal((8, 6)) * 5 + 3, rng.standard_normal((8, 6)), rng.standard_normal(6)
    out = {}
    for name, lib, dt in (("ours", gc, gc.float32), ("theirs", torch, torch.float32), ("ref", torch, torch.float64)):
        t, wt = lib.tensor(x, dtype=dt, requires_grad=True), lib.tensor(w, dtype=dt, requires_grad=True)
        y = lib.nn.functional.layer_norm(t, [6], wt)
        gx, gw = lib.autograd.grad((y * lib.tensor(g, dtype=dt)).sum(), (t, wt))
        out[name] = [_np(v) for v in (y, gx, gw)]
    for i, what in enumerate(("output", "input gradient", "weight gradient")):
        assert_float32_close(out["ours"][i], out["theirs"][i], out["ref"][i], steps=32, what=what)


LN_ERRORS = [
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), [2]),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), [4, 3, 1]),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), [3], L.ones(2)),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), [3], None, L.ones(2)),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), []),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3), 3),
    lambda L: L.nn.functional.layer_norm(L.ones(4, 3).long(), [3]),
]


@pytest.mark.parametrize("i", range(len(LN_ERRORS)))
def test_layer_norm_errors_are_pytorchs(i: int) -> None:
    with pytest.raises(Exception) as theirs:
        LN_ERRORS[i](torch)
    with pytest.raises(type(theirs.value)) as ours:
        LN_ERRORS[i](gc)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("batched_weight", [False, True])
def test_layer_norm_vmap(d: int, batched_weight: bool) -> None:
    rng = np.random.default_rng(d)
    x, w = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 4) if batched_weight else (4,))
    x = np.moveaxis(x, 0, d)
    dims = (d, 0 if batched_weight else None)
    ours = batching.vmap(lambda a, ww: batching.bind("layer_norm", a, [4], ww, None), dims)(gc.tensor(x), gc.tensor(w))
    theirs = torch.vmap(lambda a, ww: TF.layer_norm(a, [4], ww), dims)(torch.tensor(x), torch.tensor(w))
    _close(ours, theirs, "vmap of layer_norm")


# -- embedding --------------------------------------------------------------------------------------------------------
EMB_CASES = [
    {"idx": [[1, 2, 1], [4, 0, 1]]},
    {"idx": [[1, 2, 1], [4, 0, 1]], "padding_idx": 1},
    {"idx": [[1, 2, 1], [4, 0, 1]], "padding_idx": -1},
    {"idx": [3, 3, 3, 0], "scale_grad_by_freq": True},
    {"idx": [[3, 1], [3, 3]], "scale_grad_by_freq": True, "padding_idx": 1},
    {"idx": 2},
    {"idx": [[0, 4], [2, 2]], "max_norm": 0.8},
    {"idx": [[0, 4], [2, 2]], "max_norm": 1.5, "norm_type": 1.0},
]


@pytest.mark.parametrize("case", EMB_CASES, ids=[str(c) for c in EMB_CASES])
def test_embedding_matches_pytorch(case: dict) -> None:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((5, 3))
    options = {k: v for k, v in case.items() if k != "idx"}
    results = []
    for lib in (gc, torch):
        w = lib.tensor(table, requires_grad=True)
        idx = lib.tensor(case["idx"])
        y = lib.nn.functional.embedding(idx, w, **options)
        node = y.grad_fn
        saved = {n: getattr(node, f"_saved_{n}") for n in ("indices", "padding_idx", "scale_grad_by_freq", "sparse",
                                                            "weight_sym_argsize_0")}
        g = rng.standard_normal(tuple(y.shape))
        (first,) = lib.autograd.grad((y * y * lib.tensor(g)).sum(), w, create_graph=True)
        (second,) = lib.autograd.grad((first ** 3).sum(), w)
        results.append((y, first, second, saved, node.name(), first.grad_fn.name(), w, w._version))
        rng = np.random.default_rng(0)
        rng.standard_normal((5, 3))
    (y, g1, g2, saved, name, name2, w, v), (ty, tg1, tg2, tsaved, tname, tname2, tw, tv) = results
    _close(y, ty, "output")
    _close(g1, tg1, "gradient")
    _close(g2, tg2, "second-order gradient")
    _close(w, tw, "the table (max_norm renormalizes it in place)")
    assert v == tv and name == tname == "EmbeddingBackward0" and name2 == tname2 == "EmbeddingDenseBackwardBackward0"
    for n in ("padding_idx", "scale_grad_by_freq", "sparse", "weight_sym_argsize_0"):
        assert saved[n] == tsaved[n], n
    np.testing.assert_array_equal(_np(saved["indices"]), _np(tsaved["indices"]))


def test_embedding_tangent() -> None:
    table, tangent = np.random.default_rng(1).standard_normal((2, 5, 3))
    idx = [[0, 4], [2, 2]]
    got = [lib.func.jvp(lambda w, lib=lib: lib.nn.functional.embedding(lib.tensor(idx), w, padding_idx=2),
                        (lib.tensor(table),), (lib.tensor(tangent),))[1] for lib in (gc, torch)]
    _close(got[0], got[1], "tangent")


def test_the_embedding_module() -> None:
    gc.manual_seed(0)
    e = gc.nn.Embedding(6, 3, padding_idx=2)
    assert repr(e) == repr(torch.nn.Embedding(6, 3, padding_idx=2))
    np.testing.assert_array_equal(_np(e.weight[2]), 0.0)
    assert np.std(_np(gc.nn.Embedding(1000, 10).weight)) == pytest.approx(1.0, abs=0.05)  # N(0, 1)
    for kw in ({"max_norm": 1.0}, {"norm_type": 1.0}, {"scale_grad_by_freq": True}, {"padding_idx": -1}):
        assert repr(gc.nn.Embedding(6, 3, **kw)) == repr(torch.nn.Embedding(6, 3, **kw))
    table = np.arange(12.0).reshape(4, 3)
    for freeze in (True, False):
        ours = gc.nn.Embedding.from_pretrained(gc.tensor(table), freeze=freeze)
        theirs = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze)
        assert ours.weight.requires_grad == theirs.weight.requires_grad and repr(ours) == repr(theirs)
        _close(ours(gc.tensor([3, 0])), theirs(torch.tensor([3, 0])), "from_pretrained")


EMB_ERRORS = [
    lambda L: L.nn.functional.embedding(L.tensor([1.0, 2.0]), L.ones(5, 3)),
    lambda L: L.nn.functional.embedding(L.tensor([1, 5]), L.ones(5, 3)),
    lambda L: L.nn.functional.embedding(L.tensor([1, -1]), L.ones(5, 3)),
    lambda L: L.nn.functional.embedding(L.tensor([1, 2]), L.ones(5)),
    lambda L: L.nn.functional.embedding(L.tensor([1, 2]), L.ones(5, 3), padding_idx=5),
    lambda L: L.nn.functional.embedding(L.tensor([1, 2]), L.ones(5, 3), padding_idx=-6),
    lambda L: L.nn.Embedding(5, 3, padding_idx=7),
    lambda L: L.nn.Embedding.from_pretrained(L.ones(4)),
]


@pytest.mark.parametrize("i", range(len(EMB_ERRORS)))
def test_embedding_errors_are_pytorchs(i: int) -> None:
    with pytest.raises(Exception) as theirs:
        EMB_ERRORS[i](torch)
    with pytest.raises(type(theirs.value)) as ours:
        EMB_ERRORS[i](gc)
    assert str(ours.value).startswith(str(theirs.value))


@pytest.mark.parametrize("dims", [(0, None), (1, None), (None, 0), (0, 0), (1, 2)])
def test_embedding_vmap(dims: tuple) -> None:
    rng = np.random.default_rng(2)
    di, dw = dims
    idx = rng.integers(0, 5, (4, 3) if di is not None else (3,))
    if di == 1:
        idx = idx.T
    table = rng.standard_normal((4, 5, 3) if dw is not None else (5, 3))
    if dw == 2:
        table = np.moveaxis(table, 0, 2)
    ours = batching.vmap(lambda i, w: batching.bind("embedding", i, w), dims)(gc.tensor(idx), gc.tensor(table))
    theirs = torch.vmap(lambda i, w: TF.embedding(i, w), dims)(torch.tensor(idx), torch.tensor(table))
    _close(ours, theirs, "vmap of embedding")
