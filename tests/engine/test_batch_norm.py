"""Batch normalization against PyTorch: `F.batch_norm` over generated cases (2-d to 5-d inputs, with and without
the affine parameters and running statistics, training and evaluation mode): values, gradients of first and
second order, forward-mode tangents, the running statistics it updates, the nodes and their saved values; the
`BatchNorm1d/2d/3d` layers over many steps in both modes (momentum, a cumulative average, no tracked statistics,
no bias), their buffers, versions and `state_dict`; float32 within `tests/precision.py`'s bound; PyTorch's errors;
and vmap's batching rule, its error for running statistics that are not batched included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from precision import assert_float32_close

import gradcalc as gc
from gradcalc.autograd import batching

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
RTOL, ATOL = 1e-10, 1e-12


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def _close(ours: Any, theirs: Any, what: str, rtol: float = RTOL) -> None:
    if ours is None or theirs is None:
        assert ours is None and theirs is None, what
        return
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=rtol, atol=ATOL, err_msg=what)


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    spatial = (int(n) for n in rng.integers(1, 4, rng.integers(0, 4)))
    shape = (int(rng.integers(2, 5)), int(rng.integers(1, 4)), *spatial)
    c = shape[1]
    return {
        "x": rng.standard_normal(shape) * rng.uniform(0.5, 3) + rng.uniform(-2, 2),
        "w": rng.standard_normal(c) if rng.random() < 0.7 else None,
        "b": rng.standard_normal(c) if rng.random() < 0.7 else None,
        "rm": rng.standard_normal(c) * 0.3 if rng.random() < 0.7 else None,
        "rv": rng.uniform(0.5, 2, c),
        "training": bool(rng.random() < 0.6),
        "momentum": float(rng.choice([0.1, 0.5, 1.0, 0.0])),
        "eps": float(rng.choice([1e-5, 1e-3, 0.5])),
        "g": rng.standard_normal(shape),
    }


def _run(lib: Any, case: dict, ones_weight: bool = False) -> dict:
    """The forward, the saved values, and gradients of first and second order. `ones_weight`: a weight of ones
    that requires no grad in place of none, the same function (PyTorch's double backward fails without a weight
    in evaluation mode: "Expected a proper Tensor but got None ... 'other'")."""
    x = lib.tensor(case["x"], requires_grad=True)
    w = None if case["w"] is None else lib.tensor(case["w"], requires_grad=True)
    if w is None and ones_weight:
        w = lib.ones(case["x"].shape[1])
    b = None if case["b"] is None else lib.tensor(case["b"], requires_grad=True)
    rm = None if case["rm"] is None else lib.tensor(case["rm"])
    rv = None if rm is None else lib.tensor(case["rv"])
    training = case["training"] or rm is None
    y = lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training, momentum=case["momentum"], eps=case["eps"])
    inputs = [t for t in (x, w, b) if t is not None and t.requires_grad]
    node = y.grad_fn
    saved = {name: getattr(node, f"_saved_{name}") for name in
             ("eps", "training", "input", "weight", "running_mean", "running_var", "result1", "result2")}
    total = (y * y * lib.tensor(case["g"])).sum()
    grads = lib.autograd.grad(total, inputs, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in grads), inputs, allow_unused=True)
    return {"y": y, "grads": grads, "second": second, "rm": rm, "rv": rv, "node": node, "saved": saved}


@pytest.mark.parametrize("seed", range(40))
def test_batch_norm_matches_pytorch(seed: int) -> None:
    case = _case(seed)
    ours = _run(gc, case)
    try:
        theirs = _run(torch, case)
    except RuntimeError as exc:
        assert "Expected a proper Tensor but got None" in str(exc) and case["w"] is None
        theirs = _run(torch, case, ones_weight=True)
        theirs["saved"]["weight"] = None
    _close(ours["y"], theirs["y"], "output")
    for i, (a, b) in enumerate(zip(ours["grads"], theirs["grads"], strict=True)):
        _close(a, b, f"gradient {i}", 1e-9)
    for i, (a, b) in enumerate(zip(ours["second"], theirs["second"], strict=True)):
        if a is None or b is None:  # an unused input: PyTorch may give zeros where gradcalc gives None, or back
            assert np.allclose(0.0 if a is None else _np(a), 0.0) and np.allclose(0.0 if b is None else _np(b), 0.0)
            continue
        _close(a, b, f"second-order gradient {i}", 1e-8)
    for key in ("rm", "rv"):  # the running statistics, updated in place
        _close(ours[key], theirs[key], key, 1e-12)
    node, tnode = ours["node"], theirs["node"]
    assert node.name() == tnode.name() == "NativeBatchNormBackward0"
    for name in ("eps", "training"):
        assert ours["saved"][name] == theirs["saved"][name]
    for name in ("input", "weight", "running_mean", "running_var", "result1", "result2"):
        _close(ours["saved"][name], theirs["saved"][name], f"_saved_{name}", 1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_forward_mode_tangents_match_torch_func_jvp(seed: int) -> None:
    case = _case(100 + seed)
    rng = np.random.default_rng(seed)
    arrays = [case["x"]] + [case[k] for k in ("w", "b") if case[k] is not None]
    tangents = [rng.standard_normal(np.shape(a)) for a in arrays]
    training = case["training"] or case["rm"] is None
    got = []
    for lib in (gc, torch):
        def f(x: Any, *params: Any, lib: Any = lib) -> Any:
            it = iter(params)
            w = next(it) if case["w"] is not None else None
            b = next(it) if case["b"] is not None else None
            rm = None if case["rm"] is None else lib.tensor(case["rm"])
            rv = None if rm is None else lib.tensor(case["rv"])
            return lib.nn.functional.batch_norm(x, rm, rv, w, b, training=training, eps=case["eps"])

        _, t = lib.func.jvp(f, tuple(lib.tensor(a) for a in arrays), tuple(lib.tensor(t) for t in tangents))
        got.append(t)
    _close(got[0], got[1], "tangent", 1e-9)


def test_the_create_graph_node_is_pytorchs() -> None:
    x = np.random.default_rng(0).standard_normal((4, 3, 2))
    nodes = []
    for lib in (gc, torch):
        t = lib.tensor(x, requires_grad=True)
        w = lib.ones(3, requires_grad=True)
        y = lib.nn.functional.batch_norm(t, None, None, w, training=True)
        gx, gw = lib.autograd.grad((y ** 3).sum(), (t, w), create_graph=True)
        assert gx.grad_fn is gw.grad_fn  # one node, two of its three outputs
        nodes.append(gx.grad_fn)
    ours, theirs = nodes
    assert ours.name() == theirs.name() == "NativeBatchNormBackwardBackward0"
    assert [n is None for n, _ in ours.next_functions] == [n is None for n, _ in theirs.next_functions]
    for name in ("grad_out", "input", "save_mean", "save_invstd", "weight"):
        _close(getattr(ours, f"_saved_{name}"), getattr(theirs, f"_saved_{name}"), name, 1e-12)
    assert ours._saved_train == theirs._saved_train and ours._saved_eps == theirs._saved_eps
    assert ours._saved_running_mean is None and theirs._saved_running_mean is None


# -- the layers over many steps ----------------------------------------------------------------------------------
LAYERS = [
    ("1d", lambda L, **kw: L.nn.BatchNorm1d(3, **kw), (6, 3)),
    ("1d 3-d input", lambda L, **kw: L.nn.BatchNorm1d(3, **kw), (4, 3, 5)),
    ("2d", lambda L, **kw: L.nn.BatchNorm2d(3, **kw), (4, 3, 2, 3)),
    ("3d", lambda L, **kw: L.nn.BatchNorm3d(2, **kw), (3, 2, 2, 2, 2)),
]
OPTIONS = [{}, {"momentum": None}, {"momentum": 0.7, "eps": 1e-3}, {"affine": False}, {"track_running_stats": False},
           {"bias": False}, {"affine": False, "track_running_stats": False}]


@pytest.mark.parametrize("layer", LAYERS, ids=[layer[0] for layer in LAYERS])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
def test_layers_over_many_steps_in_both_modes(layer: tuple, options: dict) -> None:
    _, make, shape = layer
    mods = [make(lib, **options) for lib in (gc, torch)]
    assert repr(mods[0]) == repr(mods[1])
    rng = np.random.default_rng(7)
    for step in range(25):
        if step in (8, 20):
            for m in mods:
                m.eval()
        if step in (14, 22):
            for m in mods:
                m.train()
        x, g = rng.standard_normal(shape) * 2 + 0.5, rng.standard_normal(shape)
        outs = []
        for lib, m in zip((gc, torch), mods, strict=True):
            t = lib.tensor(x, requires_grad=True)
            y = m(t)
            (y * lib.tensor(g)).sum().backward()
            if step % 5 == 4:
                with lib.no_grad():
                    m(t * 0.5)  # a forward under no_grad: the statistics move all the same in training mode
            outs.append((y, t.grad, [p.grad for p in m.parameters()]))
        (y, gx, gp), (ty, tgx, tgp) = outs
        _close(y, ty, f"step {step}: output")
        _close(gx, tgx, f"step {step}: input gradient", 1e-9)
        for a, b in zip(gp, tgp, strict=True):
            _close(a, b, f"step {step}: parameter gradient", 1e-9)
        ours, theirs = mods[0].state_dict(), mods[1].state_dict()
        assert list(ours) == list(theirs)
        for key in theirs:
            assert str(ours[key].dtype) == str(theirs[key].dtype), key
            _close(ours[key], theirs[key], f"step {step}: {key}", 1e-12)
        for (name, a), (_, b) in zip(mods[0].named_buffers(), mods[1].named_buffers(), strict=True):
            assert a._version == b._version, (step, name)


def test_load_state_dict_and_a_fresh_layer_in_evaluation_mode() -> None:
    rng = np.random.default_rng(3)
    trained = [lib.nn.BatchNorm1d(4) for lib in (gc, torch)]
    for _ in range(5):
        x = rng.standard_normal((8, 4)) * 3 - 1
        for lib, m in zip((gc, torch), trained, strict=True):
            m(lib.tensor(x))
    fresh = [lib.nn.BatchNorm1d(4).eval() for lib in (gc, torch)]
    for m, t in zip(fresh, trained, strict=True):
        m.load_state_dict(t.state_dict())
    x = rng.standard_normal((2, 4))
    _close(fresh[0](gc.tensor(x)), fresh[1](torch.tensor(x)), "eval output after load_state_dict")
    assert fresh[0].num_batches_tracked.item() == 5


@pytest.mark.parametrize("training", [True, False])
def test_float32_within_pytorchs_precision(training: bool) -> None:
    rng = np.random.default_rng(9)
    x, g = rng.standard_normal((16, 5, 3)) * 4 + 2, rng.standard_normal((16, 5, 3))
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    rm, rv = rng.standard_normal(5), rng.uniform(0.5, 2, 5)
    results = {}
    for name, lib, dtype in (("ours", gc, gc.float32), ("theirs", torch, torch.float32),
                             ("reference", torch, torch.float64)):
        t = lib.tensor(x, dtype=dtype, requires_grad=True)
        wt, bt = lib.tensor(w, dtype=dtype, requires_grad=True), lib.tensor(b, dtype=dtype)
        rmt, rvt = lib.tensor(rm, dtype=dtype), lib.tensor(rv, dtype=dtype)
        y = lib.nn.functional.batch_norm(t, rmt, rvt, wt, bt, training=training)
        gx, gw = lib.autograd.grad((y * lib.tensor(g, dtype=dtype)).sum(), (t, wt))
        results[name] = [_np(v).astype(np.float64) if name == "ours" else _np(v) for v in (y, gx, gw, rmt, rvt)]
        if name == "ours":
            results[name] = [_np(v) for v in (y, gx, gw, rmt, rvt)]
    for i, what in enumerate(("output", "input gradient", "weight gradient", "running_mean", "running_var")):
        assert_float32_close(results["ours"][i], results["theirs"][i], results["reference"][i], steps=64,
                             what=what)


# -- errors ---------------------------------------------------------------------------------------------------------
ERRORS = [
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(2), L.ones(3), training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3), L.ones(2), training=False),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, L.ones(2), training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, None, L.ones(2), training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, training=False),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), L.zeros(3), None, training=False),
    lambda L: L.nn.functional.batch_norm(L.ones(1, 3), None, None, training=True),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, training=True, eps=0.0),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3), None, None, training=False, eps=-1.0),
    lambda L: L.nn.functional.batch_norm(L.ones(4, 3, dtype=L.float32), L.zeros(3), L.ones(3), training=True),
    lambda L: L.nn.BatchNorm1d(3)(L.ones(4, 3, 2, 2)),
    lambda L: L.nn.BatchNorm2d(3)(L.ones(4, 3)),
    lambda L: L.nn.BatchNorm3d(3)(L.ones(4, 3, 2)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_pytorchs(i: int) -> None:
    with pytest.raises(Exception) as theirs:
        ERRORS[i](torch)
    with pytest.raises(type(theirs.value)) as ours:
        ERRORS[i](gc)
    assert str(ours.value).startswith(str(theirs.value))


def test_integral_input_is_pytorchs_error() -> None:
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.functional.batch_norm(torch.ones(4, 3).long(), None, None, training=True)
    with pytest.raises(NotImplementedError) as ours:
        gc.nn.functional.batch_norm(gc.ones(4, 3).long(), None, None, training=True)
    assert str(ours.value) == str(theirs.value)


def test_an_empty_batch_in_evaluation_mode() -> None:
    for lib in (gc, torch):
        y = lib.nn.functional.batch_norm(lib.ones(0, 3), lib.zeros(3), lib.ones(3), training=False)
        assert tuple(y.shape) == (0, 3)


# -- vmap -------------------------------------------------------------------------------------------------------------
def _both_vmap(f: Any, arrays: list[np.ndarray], in_dims: Any, **unused: Any) -> None:
    ours = batching.vmap(lambda *a: f(gc, lambda name, *args, **kw: batching.bind(name, *args, **kw), *a),
                         in_dims)(*[gc.tensor(a) for a in arrays])
    theirs = torch.vmap(lambda *a: f(torch, lambda name, *args, **kw: getattr(torch.nn.functional, name)(*args, **kw),
                                     *a), in_dims)(*[torch.tensor(a) for a in arrays])
    _close(ours, theirs, "vmap")


@pytest.mark.parametrize("d", [0, 1, 2])
def test_vmap_normalizes_each_sample_by_its_own_statistics(d: int) -> None:
    rng = np.random.default_rng(d)
    x = rng.standard_normal((4, 3, 2))
    x = np.moveaxis(np.stack([x * (i + 1) + i for i in range(5)]), 0, d)
    w = rng.standard_normal(3)
    _both_vmap(lambda L, F, a: F("batch_norm", a, None, None, L.tensor(w), None, training=True), [x], d)
    _both_vmap(lambda L, F, a: F("batch_norm", a, L.zeros(3), L.ones(3) * 2, training=False), [x], d)


def test_vmap_with_batched_running_statistics_updates_each_samples() -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 4, 3))
    stats = []
    for lib, vmap, bind in ((gc, batching.vmap, batching.bind),
                            (torch, torch.vmap, lambda name, *a, **kw: getattr(torch.nn.functional, name)(*a, **kw))):
        rm, rv = lib.zeros(5, 3), lib.ones(5, 3)
        out = vmap(lambda a, m, v, bind=bind: bind("batch_norm", a, m, v, training=True, momentum=0.3))(
            lib.tensor(x), rm, rv)
        stats.append((out, rm, rv))
    for a, b in zip(*stats, strict=True):
        _close(a, b, "batched statistics")


def test_vmap_with_statistics_not_batched_is_pytorchs_error() -> None:
    x = np.ones((5, 4, 3))
    with pytest.raises(RuntimeError) as theirs:
        torch.vmap(lambda a: torch.nn.functional.batch_norm(a, torch.zeros(3), torch.ones(3), training=True))(
            torch.tensor(x))
    with pytest.raises(RuntimeError) as ours:
        batching.vmap(lambda a: batching.bind("batch_norm", a, gc.zeros(3), gc.ones(3), training=True))(gc.tensor(x))
    assert str(ours.value) == str(theirs.value)
