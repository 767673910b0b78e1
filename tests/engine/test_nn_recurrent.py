"""The recurrent layers against PyTorch: `nn.RNN`, `nn.LSTM`, `nn.GRU` and the cells `RNNCell`, `LSTMCell`,
`GRUCell` over generated configurations (layers, bias, batch_first, bidirectional, proj_size, nonlinearity,
unbatched input, given or missing initial states), with PyTorch's weights copied in: outputs, final states,
gradients of the input, the initial states and every parameter, second order, float32; parameter names, shapes,
initialisation bounds, repr, state_dict keys, train/eval with dropout, and PyTorch's errors."""

from __future__ import annotations

import itertools
import math
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


def _pair(name: str, *args: Any, dtype: Any = None, **kwargs: Any) -> tuple[Any, Any]:
    """The torch module and gradcalc's with the same arguments, gradcalc's weights copied from torch's."""
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(gc.nn, name)(*args, **kwargs)
    if dtype == "float32":
        theirs, ours = theirs.float(), ours.float()
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    with gc.no_grad():
        for key, p in ours.named_parameters():
            assert tuple(p.shape) == tuple(state[key].shape), key
            p.copy_(gc.tensor(state[key].numpy()))
    return theirs, ours


def _flat(out: Any) -> list:
    """An RNN's result (output, h) / (output, (h, c)) or a cell's (h / (h, c)) as a flat list of tensors."""
    if not isinstance(out, tuple):
        return [out]
    return [t for o in out for t in _flat(o)]


RNN_CASES = [
    dict(name=name, num_layers=layers, bias=bias, batch_first=bf, bidirectional=bi, extra=extra)
    for name, extra in (("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("GRU", {}), ("LSTM", {}),
                        ("LSTM", {"proj_size": 2}))
    for layers, bias, bf, bi in itertools.product((1, 2), (True, False), (False, True), (False, True))
    if not (layers == 2 and not bias and bf)  # keeps the table to the combinations that differ
]


def _inputs(case: dict, batched: bool, with_hidden: bool, rng: np.random.Generator, hidden: int = 4,
            seq: int = 3, batch: int = 2) -> tuple[np.ndarray, list[np.ndarray]]:
    x = rng.standard_normal((batch, seq, 3) if case["batch_first"] else (seq, batch, 3))
    if not batched:
        x = x[0] if case["batch_first"] else x[:, 0]
    states: list[np.ndarray] = []
    if with_hidden:
        d = case["num_layers"] * (2 if case["bidirectional"] else 1)
        h = case["extra"].get("proj_size", 0) or hidden
        shapes = [(d, batch, h)] + ([(d, batch, hidden)] if case["name"] == "LSTM" else [])
        states = [rng.standard_normal(s if batched else (s[0], s[2])) for s in shapes]
    return x, states


def _call(lib: Any, module: Any, x: np.ndarray, states: list[np.ndarray], dtype: Any) -> tuple[list, list]:
    xt = lib.tensor(x, dtype=dtype, requires_grad=True)
    st = [lib.tensor(s, dtype=dtype, requires_grad=True) for s in states]
    hx = None if not st else st[0] if len(st) == 1 else tuple(st)
    return [xt, *st], _flat(module(xt, hx))


@pytest.mark.parametrize("case", RNN_CASES, ids=lambda c: f"{c['name']}-{c['num_layers']}-{c['bias']}-"
                         f"{c['batch_first']}-{c['bidirectional']}-{'-'.join(map(str, c['extra'].values()))}")
@pytest.mark.parametrize("batched,with_hidden", [(True, False), (True, True), (False, True)])
def test_rnn_layers_match_pytorch(case: dict, batched: bool, with_hidden: bool) -> None:
    """Values, first-order gradients of the input, initial states and every parameter, and second order."""
    rng = np.random.default_rng(hash((case["name"], batched, with_hidden)) % 2**32)
    kw = dict(num_layers=case["num_layers"], bias=case["bias"], batch_first=case["batch_first"],
              bidirectional=case["bidirectional"], **case["extra"])
    theirs, ours = _pair(case["name"], 3, 4, **kw)
    x, states = _inputs(case, batched, with_hidden, rng)
    results = {}
    for lib, module, dt in ((torch, theirs, torch.float64), (gc, ours, gc.float64)):
        inputs, outs = _call(lib, module, x, states, dt)
        assert all(o.dtype == dt for o in outs)
        weights = [lib.tensor(rng.standard_normal(tuple(o.shape)), dtype=dt) for o in outs]
        total = sum((o * o * w).sum() for o, w in zip(outs, weights, strict=True))
        wrt = inputs + list(module.parameters())
        first = lib.autograd.grad(total, wrt, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), wrt, allow_unused=True)
        results[lib.__name__] = (outs, first, second)
        rng = np.random.default_rng(hash((case["name"], batched, with_hidden)) % 2**32)  # same weights again
        _inputs(case, batched, with_hidden, rng)
    (to, tf, ts), (go, gf, gs) = results["torch"], results["gradcalc"]
    for kind, t_list, g_list in (("output", to, go), ("first", tf, gf), ("second", ts, gs)):
        for i, (t, g) in enumerate(zip(t_list, g_list, strict=True)):
            if t is None:
                assert g is None or not np.any(_np(g)), f"{kind} {i}"
                continue
            assert tuple(g.shape) == tuple(t.shape), f"{kind} {i}"
            np.testing.assert_allclose(_np(g), _np(t), rtol=1e-9, atol=1e-11, err_msg=f"{kind} {i}")


@pytest.mark.parametrize("name,extra", [("RNN", {}), ("GRU", {}), ("LSTM", {}), ("LSTM", {"proj_size": 3})])
def test_rnn_float32(name: str, extra: dict) -> None:
    """float32 against a float64 run of PyTorch, as close as PyTorch's own float32 run."""
    rng = np.random.default_rng(7)
    theirs, ours = _pair(name, 5, 6, num_layers=2, bidirectional=True, **extra)
    t32 = getattr(torch.nn, name)(5, 6, num_layers=2, bidirectional=True, **extra)
    t32.load_state_dict(theirs.state_dict())
    t32, ours = t32.float(), ours.float()
    x = rng.standard_normal((7, 3, 5))
    got = {}
    for key, lib, module, dt in (("ref", torch, theirs, torch.float64), ("theirs", torch, t32, torch.float32),
                                 ("ours", gc, ours, gc.float32)):
        xt = lib.tensor(x, dtype=dt, requires_grad=True)
        out = _flat(module(xt))
        total = sum(o.sum() for o in out)
        grads = lib.autograd.grad(total, [xt, *module.parameters()])
        got[key] = [_np(v) for v in (*out, *grads)]
    for i, (o, t, r) in enumerate(zip(got["ours"], got["theirs"], got["ref"], strict=True)):
        assert_float32_close(o, t, r, steps=64, what=f"{name} result {i}")


@pytest.mark.parametrize("name,extra", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}),
                                        ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("batched,with_hidden", [(True, False), (True, True), (False, True), (False, False)])
def test_cells_match_pytorch(name: str, extra: dict, batched: bool, with_hidden: bool) -> None:
    theirs, ours = _pair(name, 3, 4, **extra)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3) if batched else (3,))
    states = [rng.standard_normal((2, 4) if batched else (4,)) for _ in range(2 if name == "LSTMCell" else 1)]
    w = [rng.standard_normal((2, 4) if batched else (4,)) for _ in range(2)]
    res = {}
    for lib, module in ((torch, theirs), (gc, ours)):
        xt = lib.tensor(x, requires_grad=True)
        st = [lib.tensor(s, requires_grad=True) for s in states] if with_hidden else []
        hx = None if not st else st[0] if len(st) == 1 else tuple(st)
        outs = _flat(module(xt, hx))
        total = sum((o * o * lib.tensor(v)).sum() for o, v in zip(outs, w, strict=False))
        wrt = [xt, *st, *module.parameters()]
        first = lib.autograd.grad(total, wrt, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in first), wrt, allow_unused=True)
        res[lib.__name__] = [*outs, *first, *second]
    for i, (t, g) in enumerate(zip(res["torch"], res["gradcalc"], strict=True)):
        if t is None:
            assert g is None or not np.any(_np(g))
            continue
        np.testing.assert_allclose(_np(g), _np(t), rtol=1e-9, atol=1e-11, err_msg=f"{name} result {i}")


def test_parameters_init_and_repr() -> None:
    """PyTorch's names and order, shapes, U(-1/√hidden, 1/√hidden) draws and repr."""
    configs = [("LSTM", (3, 4), dict(num_layers=2, bidirectional=True)), ("GRU", (3, 8), dict(bias=False)),
               ("RNN", (2, 5), dict(nonlinearity="relu", batch_first=True, dropout=0.5, num_layers=3)),
               ("LSTM", (3, 4), dict(proj_size=2)), ("RNNCell", (3, 4), dict(nonlinearity="relu")),
               ("LSTMCell", (3, 4), dict(bias=False)), ("GRUCell", (3, 9), {})]
    for name, args, kw in configs:
        theirs, ours = getattr(torch.nn, name)(*args, **kw), getattr(gc.nn, name)(*args, **kw)
        assert repr(ours) == repr(theirs)
        assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
        bound = 1 / math.sqrt(args[1])
        values = np.concatenate([_np(p).ravel() for p in ours.parameters()])
        assert np.all(np.abs(values) <= bound) and values.std() > bound / 3  # uniform, not constant
        assert all(p.requires_grad and p.is_leaf for p in ours.parameters())


def test_dtype_argument() -> None:
    lstm = gc.nn.LSTM(3, 4, dtype=gc.float32)
    assert all(p.dtype == gc.float32 for p in lstm.parameters())
    out, (h, c) = lstm(gc.randn(5, 2, 3, dtype=gc.float32))
    assert out.dtype == h.dtype == c.dtype == gc.float32


def test_dropout_between_layers_train_and_eval() -> None:
    """Dropout acts between layers in training mode only; evaluation mode is PyTorch's values exactly."""
    theirs, ours = _pair("LSTM", 3, 4, num_layers=2, dropout=0.5)
    x = np.random.default_rng(0).standard_normal((6, 2, 3))
    theirs.eval()
    ours.eval()
    np.testing.assert_allclose(_np(ours(gc.tensor(x))[0]), _np(theirs(torch.tensor(x))[0]), rtol=1e-10)
    ours.train()
    gc.manual_seed(0)
    a = _np(ours(gc.tensor(x))[0])
    b = _np(ours(gc.tensor(x))[0])
    assert not np.allclose(a, b)  # a fresh mask each call
    single_t, single = _pair("GRU", 3, 4)  # no dropout at all with one layer: train is eval
    np.testing.assert_allclose(_np(single(gc.tensor(x))[0]), _np(single_t(torch.tensor(x))[0]), rtol=1e-10)


def test_nodes_recorded() -> None:
    """The graph is of PyTorch's ordinary nodes: a stack of the steps, cat of the two directions, transpose."""
    assert type(gc.nn.LSTM(3, 4)(gc.randn(2, 1, 3))[0].grad_fn).__name__ == "StackBackward0"
    assert type(gc.nn.GRU(3, 4, bidirectional=True)(gc.randn(2, 1, 3))[0].grad_fn).__name__ == "CatBackward0"
    assert type(gc.nn.RNN(3, 4, batch_first=True)(gc.randn(1, 2, 3))[0].grad_fn).__name__ == "TransposeBackward0"
    assert type(gc.nn.LSTMCell(3, 4)(gc.randn(2, 3))[0].grad_fn).__name__ == "MulBackward0"


def _same_error(make: Any) -> None:
    t, g = both_raise(make)
    assert str(g).splitlines()[0] == str(t).splitlines()[0]


RNN_ERRORS = [
    lambda L: L.nn.LSTM(3, 4, dropout=1.5),
    lambda L: L.nn.LSTM(3, 4, dropout=True),
    lambda L: L.nn.GRU(3, 0),
    lambda L: L.nn.GRU(0, 3),
    lambda L: L.nn.RNN(3, 4.0),
    lambda L: L.nn.RNN(3, 4, num_layers=0),
    lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda L: L.nn.LSTM(3, 4, proj_size=4),
    lambda L: L.nn.LSTM(3, 4, proj_size=-1),
    lambda L: L.nn.LSTM(3, 4, bias=1),
    lambda L: L.nn.LSTM(3, 4, batch_first=1),
    lambda L: L.nn.LSTM(3, 4)(L.ones(5, 2, 2)),
    lambda L: L.nn.LSTM(3, 4)(L.ones(5, 2, 3, 1)),
    lambda L: L.nn.GRU(3, 4)(L.ones(5, 2, 3, 1)),
    lambda L: L.nn.RNN(3, 4)(L.ones(5, 2, 3, 1)),
    lambda L: L.nn.RNN(3, 4)(L.ones(5, 2, 3), L.zeros(1, 3, 4)),
    lambda L: L.nn.RNN(3, 4)(L.ones(5, 2, 3), L.zeros(3, 4)),
    lambda L: L.nn.GRU(3, 4)(L.ones(5, 3), L.zeros(1, 1, 4)),
    lambda L: L.nn.LSTM(3, 4)(L.ones(5, 2, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 5))),
    lambda L: L.nn.LSTM(3, 4)(L.ones(5, 2, 3), (L.zeros(2, 2, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.ones(5, 2, 3, dtype=L.float32)),
    lambda L: L.nn.RNNCell(3, 4)(L.ones(2, 2)),
    lambda L: L.nn.GRUCell(3, 4)(L.ones(2, 3, 1)),
    lambda L: L.nn.GRUCell(3, 4)(L.ones(2, 3), L.ones(3, 4)),
    lambda L: L.nn.GRUCell(3, 4)(L.ones(2, 3), L.ones(2, 5)),
    lambda L: L.nn.LSTMCell(3, 4)(L.ones(2, 3), (L.ones(2, 4), L.ones(2, 4, 1))),
    lambda L: L.nn.LSTMCell(3, 4)(L.ones(2, 3), (L.ones(2, 4), L.ones(3, 4))),
    lambda L: L.nn.RNNCell(3, 4)(L.ones(2, 3), L.ones(2, 4, 1)),
]


@pytest.mark.parametrize("make", RNN_ERRORS, ids=range(len(RNN_ERRORS)))
def test_errors_are_pytorchs(make: Any) -> None:
    _same_error(make)


def test_dropout_warning_for_one_layer() -> None:
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        gc.nn.GRU(3, 4, dropout=0.2)


def test_import_gradcalc_loads_no_layer() -> None:
    """The new layers and functions live in gradcalc.nn, which `import gradcalc` does not load."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = "import sys, gradcalc\nprint(sorted(m for m in sys.modules if m.startswith('gradcalc.nn')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                          env={"PYTHONPATH": str(root)}, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
