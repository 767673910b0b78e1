"""The activations of nn.functional added with their specs (ops/activations.py) and their modules, against
PyTorch over generated cases: values, first and second-order gradients, forward-mode tangents, vmap, grad_fn
names, the in-place forms' graphs, float32 precision, errors, and the modules' reprs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

# name -> (call with PyTorch's API on library L, the input's scale: spreads it over the function's kinks)
CASES: dict[str, tuple[Callable[[Any, Any], Any], float]] = {
    "leaky_relu": (lambda L, x: L.nn.functional.leaky_relu(x), 1.0),
    "leaky_relu 0.3": (lambda L, x: L.nn.functional.leaky_relu(x, 0.3), 1.0),
    "leaky_relu slope>1": (lambda L, x: L.nn.functional.leaky_relu(x, negative_slope=1.7), 1.0),
    "elu": (lambda L, x: L.nn.functional.elu(x), 2.0),
    "elu 0.4": (lambda L, x: L.nn.functional.elu(x, alpha=0.4), 2.0),
    "selu": (lambda L, x: L.nn.functional.selu(x), 2.0),
    "torch.selu": (lambda L, x: L.selu(x), 2.0),
    "hardtanh": (lambda L, x: L.nn.functional.hardtanh(x), 2.0),
    "hardtanh -0.5 2": (lambda L, x: L.nn.functional.hardtanh(x, -0.5, 2.0), 2.0),
    "relu6": (lambda L, x: L.nn.functional.relu6(x), 5.0),
    "hardswish": (lambda L, x: L.nn.functional.hardswish(x), 4.0),
    "hardsigmoid": (lambda L, x: L.nn.functional.hardsigmoid(x), 4.0),
    "logsigmoid x6": (lambda L, x: L.nn.functional.logsigmoid(x), 6.0),
    "mish": (lambda L, x: L.nn.functional.mish(x), 3.0),
    "softsign": (lambda L, x: L.nn.functional.softsign(x), 3.0),
    "glu": (lambda L, x: L.nn.functional.glu(x), 2.0),
    "glu dim 0": (lambda L, x: L.nn.functional.glu(x, 0), 2.0),
}
SHAPES = [(4,), (2, 6), (4, 2, 2), (2, 0)]
# PyTorch has no second derivative of hardsigmoid (its backward's derivative is NotImplemented)
NO_SECOND = {"hardsigmoid"}


def _shapes(name: str) -> list[tuple[int, ...]]:
    if name == "glu dim 0":
        return [(4,), (2, 6), (4, 2, 2), (2, 0)]
    return SHAPES


def _draw(shape: tuple[int, ...], scale: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _pairs() -> list[tuple[str, tuple[int, ...], int]]:
    return [(name, shape, seed) for name in CASES for shape in _shapes(name) for seed in range(3)]


@pytest.mark.usefixtures("float64_default_dtype")
@pytest.mark.parametrize(("name", "shape", "seed"), _pairs())
def test_values_and_two_orders_of_gradients(name: str, shape: tuple[int, ...], seed: int) -> None:
    torch.set_default_dtype(torch.float64)
    call, scale = CASES[name]
    data = _draw(shape, scale, seed)
    weights = None
    got = []
    for lib in (gradcalc, torch):
        x = lib.tensor(data, requires_grad=True)
        y = call(lib, x)
        if weights is None:
            weights = np.random.default_rng(seed + 100).standard_normal(tuple(y.shape))
        w = lib.tensor(weights)
        (g,) = lib.autograd.grad((y * y * w).sum(), x, create_graph=True)
        out = [_np(y), _np(g), y.grad_fn.name() if y.numel() else ""]
        if name not in NO_SECOND and g.requires_grad:
            (gg,) = lib.autograd.grad((g * g).sum(), x)
            out.append(_np(gg))
        got.append(out)
    ours, theirs = got
    assert ours[2] == theirs[2]
    for i, (o, t) in enumerate(zip(ours[:2] + ours[3:], theirs[:2] + theirs[3:], strict=True)):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-13, err_msg=f"{name}: output {i}")


@pytest.mark.parametrize(("name", "shape", "seed"), [p for p in _pairs() if p[1] != (2, 0)])
def test_float32_against_a_float64_reference(name: str, shape: tuple[int, ...], seed: int) -> None:
    call, scale = CASES[name]
    data = _draw(shape, scale, seed)
    results = {}
    for key, lib, dtype in (("ours", gradcalc, gradcalc.float32), ("theirs", torch, torch.float32),
                            ("ref", torch, torch.float64)):
        x = lib.tensor(data, dtype=dtype, requires_grad=True)
        y = call(lib, x)
        (g,) = lib.autograd.grad(y.sum(), x)
        results[key] = (_np(y), _np(g))
    for i in range(2):
        assert_float32_close(results["ours"][i], results["theirs"][i], results["ref"][i], steps=8,
                             what=f"{name} {'value' if i == 0 else 'gradient'}")


@pytest.mark.usefixtures("float64_default_dtype")
@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_mode_and_vmap(name: str) -> None:
    torch.set_default_dtype(torch.float64)
    call, scale = CASES[name]
    data = _draw((4, 4, 2), scale, 5)
    tangent = _draw((4, 4, 2), 1.0, 6)
    got = []
    for lib in (gradcalc, torch):
        x, t = lib.tensor(data), lib.tensor(tangent)
        value, jvp = lib.func.jvp(lambda a, lib=lib: call(lib, a), (x,), (t,))
        batched0 = lib.func.vmap(lambda a, lib=lib: call(lib, a))(x)
        batched1 = lib.func.vmap(lambda a, lib=lib: call(lib, a), in_dims=1)(x)
        got.append([_np(value), _np(jvp), _np(batched0), _np(batched1)])
    for i, (o, t) in enumerate(zip(*got, strict=True)):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-13, err_msg=f"{name}: output {i}")


IN_PLACE = {
    "leaky_relu_": lambda L, x: L.nn.functional.leaky_relu_(x, 0.2),
    "leaky_relu inplace": lambda L, x: L.nn.functional.leaky_relu(x, 0.05, inplace=True),
    "elu_": lambda L, x: L.nn.functional.elu_(x, 0.7),
    "elu inplace": lambda L, x: L.nn.functional.elu(x, inplace=True),
    "selu_": lambda L, x: L.nn.functional.selu_(x),
    "hardtanh_": lambda L, x: L.nn.functional.hardtanh_(x, -0.4, 0.9),
    "relu6 inplace": lambda L, x: L.nn.functional.relu6(x * 4.0, inplace=True),
    "hardswish inplace": lambda L, x: L.nn.functional.hardswish(x * 4.0, inplace=True),
    "hardsigmoid inplace": lambda L, x: L.nn.functional.hardsigmoid(x * 4.0, inplace=True),
    "mish inplace": lambda L, x: L.nn.functional.mish(x, inplace=True),
    "LeakyReLU module": lambda L, x: L.nn.LeakyReLU(0.1, inplace=True)(x),
}


def _node_names(node: Any) -> list[str]:
    out, stack, seen = [], [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n.name().rsplit("::", 1)[-1])
        stack.extend(m for m, _ in n.next_functions)
    return out


@pytest.mark.usefixtures("float64_default_dtype")
@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms(name: str) -> None:
    """The value written into the input, its version, the graph (and the create_graph gradient's) by node
    names, and both orders of gradients."""
    torch.set_default_dtype(torch.float64)
    data = _draw((5,), 1.5, 11)
    got = []
    for lib in (gradcalc, torch):
        leaf = lib.tensor(data, requires_grad=True)
        x = leaf * 1.0
        before = x._version
        y = IN_PLACE[name](lib, x)
        (g,) = lib.autograd.grad((y * y).sum(), leaf, create_graph=True)
        second = lib.autograd.grad(g.sum(), leaf)[0] if "hardsigmoid" not in name else None
        # (the create_graph gradient's nodes less PyTorch's clone of the input it saves before overwriting it,
        # which gradcalc's in-place operations do not record, for every operation alike: x.sin_() too)
        got.append([_np(y), y is x or name.endswith("module"), x._version - before, _node_names(y.grad_fn),
                    [n for n in _node_names(g.grad_fn) if n != "CloneBackward0"], _np(g),
                    None if second is None else _np(second)])
    ours, theirs = got
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        if isinstance(o, np.ndarray):
            np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-13, err_msg=f"{name}: item {i}")
        else:
            assert o == t, f"{name}: item {i}"


def test_in_place_leaky_relu_with_a_negative_slope_refuses_backward() -> None:
    messages = []
    for lib in (gradcalc, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True) * 1.0
        y = lib.nn.functional.leaky_relu_(x, -0.1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_hardsigmoid_has_no_second_derivative_as_pytorch() -> None:
    for lib in (gradcalc, torch):
        x = lib.tensor([0.5, -1.0, 4.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).pow(2).sum(), x, create_graph=True)
        assert g.grad_fn.name().endswith("NotImplemented")
        with pytest.raises(RuntimeError, match="hardsigmoid_backward"):
            g.sum().backward()


ERRORS = {
    "glu odd": lambda L: L.nn.functional.glu(L.ones(3)),
    "glu scalar": lambda L: L.nn.functional.glu(L.tensor(1.0)),
    "glu dim": lambda L: L.nn.functional.glu(L.ones(2, 2), 2),
    "hardtanh bounds": lambda L: L.nn.functional.hardtanh(L.ones(2), 1.0, 0.0),
    "Hardtanh bounds": lambda L: L.nn.Hardtanh(1.0, 0.0),
    "leaky_relu int": lambda L: L.nn.functional.leaky_relu(L.ones(2, dtype=L.int64)),
    "elu_ leaf": lambda L: L.nn.functional.elu_(L.ones(2, requires_grad=True)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_pytorch(name: str) -> None:
    raised = []
    for lib in (gradcalc, torch):
        try:
            ERRORS[name](lib)
            raised.append(None)
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            raised.append(type(exc))
    assert raised[0] is not None and raised[0] is raised[1], raised


def _module_reprs(lib: Any) -> list[str]:
    nn = lib.nn
    return [repr(m) for m in (
        nn.LeakyReLU(), nn.LeakyReLU(0.2), nn.LeakyReLU(0.2, True), nn.ELU(), nn.ELU(0.5, inplace=True), nn.SELU(),
        nn.SELU(True), nn.Hardtanh(), nn.Hardtanh(-2, 3, True), nn.ReLU6(), nn.ReLU6(True), nn.Mish(),
        nn.Mish(True), nn.Softsign(), nn.LogSigmoid(), nn.Hardswish(), nn.Hardswish(True), nn.Hardsigmoid(),
        nn.GLU(), nn.GLU(1), nn.CosineSimilarity(), nn.CosineSimilarity(0, 1e-3), nn.PairwiseDistance(),
        nn.Sequential(nn.Linear(2, 3), nn.LeakyReLU(0.1), nn.Linear(3, 1), nn.Hardtanh(-2.0, 2.0)),
    )]


def test_module_reprs_as_pytorch() -> None:
    assert _module_reprs(gradcalc) == _module_reprs(torch)


@pytest.mark.usefixtures("float64_default_dtype")
@pytest.mark.parametrize("seed", range(4))
def test_modules_compute_their_functions(seed: int) -> None:
    torch.set_default_dtype(torch.float64)
    data = _draw((4, 4), 2.0, seed)
    got = []
    for lib in (gradcalc, torch):
        nn = lib.nn
        x = lib.tensor(data)
        mods = [nn.LeakyReLU(0.3), nn.ELU(0.6), nn.SELU(), nn.Hardtanh(-0.5, 1.5), nn.ReLU6(), nn.Mish(),
                nn.Softsign(), nn.LogSigmoid(), nn.Hardswish(), nn.Hardsigmoid(), nn.GLU(), nn.GLU(0)]
        got.append([_np(m(x)) for m in mods])
    for o, t in zip(*got, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-12, atol=1e-13)
