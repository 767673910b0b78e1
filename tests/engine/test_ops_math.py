"""addcmul, addcdiv, lerp, atan2, hypot, logaddexp, fmod, heaviside, sgn (ops/pointwise.py), the predicates and
nan_to_num (ops/predicates.py), det and inverse with gradcalc.linalg (ops/inverses.py), against PyTorch over
generated cases: values, dtypes, gradients to second order, forward-mode tangents, vmap, grad_fn names, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)

SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 4)), ((0, 3), (3,)), ((4,), ())]

BINARY: dict[str, tuple[Callable, str]] = {
    "addcmul": (lambda L, a, b: L.addcmul(a, b, a * b, value=0.7), "AddcmulBackward0"),
    "addcdiv": (lambda L, a, b: L.addcdiv(a, a, b, value=-1.5), "AddcdivBackward0"),
    "lerp number": (lambda L, a, b: L.lerp(a, b, 0.3), "LerpBackward0"),
    "lerp big": (lambda L, a, b: a.lerp(b, 0.9), "LerpBackward0"),
    "lerp tensor": (lambda L, a, b: L.lerp(a, b, b.sin()), "LerpBackward1"),
    "atan2": (lambda L, a, b: L.atan2(a, b), "Atan2Backward0"),
    "arctan2": (lambda L, a, b: L.arctan2(a, -b), "Atan2Backward0"),
    "hypot": (lambda L, a, b: L.hypot(a, b), "HypotBackward0"),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), "LogaddexpBackward0"),
    "fmod": (lambda L, a, b: L.fmod(a * 3.0, b), "FmodBackward1"),
    "fmod number": (lambda L, a, b: a.fmod(-0.7) + b.sum(), None),
}
POSITIVE_SECOND = {"addcdiv", "fmod"}  # divide by the second operand: drawn away from 0


def _draw(rng: np.random.Generator, shape: tuple, away: bool) -> np.ndarray:
    x = rng.standard_normal(shape)
    return np.where(np.abs(x) < 0.3, 0.3 + np.abs(x), x) * np.sign(x + 0.5) if away else x


def _pair(lib: Any, a: np.ndarray, b: np.ndarray, grad: bool = True) -> tuple:
    return lib.tensor(a, requires_grad=grad), lib.tensor(b, requires_grad=grad)


def _close(ours: Any, theirs: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    if theirs is None and ours is None:
        return
    if theirs is None or ours is None:  # no gradient on one side: zeros on the other
        assert not np.any((ours if theirs is None else theirs).detach().numpy(force=True) if theirs is not None
                          else ours.detach().numpy())
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(force=True), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_binary_values_and_two_orders_of_gradient(name: str, shapes: tuple) -> None:
    f, node = BINARY[name]
    rng = np.random.default_rng(abs(hash((name, shapes))) % 2**32)
    a, b = rng.standard_normal(shapes[0]), _draw(rng, shapes[1], name.split()[0] in POSITIVE_SECOND)
    weights = rng.standard_normal(np.broadcast_shapes(*shapes))  # one draw for both libraries
    results = []
    for lib in (gc, torch):
        x, y = _pair(lib, a, b)
        out = f(lib, x, y)
        w = lib.tensor(weights)
        gx, gy = lib.autograd.grad((out * w).sum(), (x, y), create_graph=True, allow_unused=True)
        second = [g for g in (gx, gy) if g is not None and g.requires_grad]
        hh = lib.autograd.grad(sum((g * g).sum() for g in second), (x, y), allow_unused=True) if second else (None,) * 2
        results.append((out, gx, gy, *hh))
    for o, t in zip(*results, strict=True):
        _close(o, t)
    if node is not None:
        assert results[0][0].grad_fn.name() == results[1][0].grad_fn.name() == node


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_tangents_and_vmap(name: str) -> None:
    f, _ = BINARY[name]
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 3)), _draw(rng, (4, 3), name.split()[0] in POSITIVE_SECOND)
    ta, tb = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    ours = gc.func.jvp(lambda x, y: f(gc, x, y), (gc.tensor(a), gc.tensor(b)), (gc.tensor(ta), gc.tensor(tb)))
    theirs = torch.func.jvp(lambda x, y: f(torch, x, y), (torch.tensor(a), torch.tensor(b)),
                            (torch.tensor(ta), torch.tensor(tb)))
    for o, t in zip(ours, theirs, strict=True):
        _close(o, t)
    for dims in ((0, 0), (1, 1), (0, None), (None, 0)):
        _close(gc.func.vmap(lambda x, y: f(gc, x, y), dims)(gc.tensor(a), gc.tensor(b)),
               torch.func.vmap(lambda x, y: f(torch, x, y), dims)(torch.tensor(a), torch.tensor(b)))


def test_float32_against_a_float64_run() -> None:
    from tests.precision import assert_float32_close

    rng = np.random.default_rng(3)
    a, b, c = rng.standard_normal((3, 5)), rng.standard_normal(5), _draw(rng, (3, 1), True)
    for f in (lambda L, x, y, z: L.addcmul(x, y, z, value=2.0), lambda L, x, y, z: L.addcdiv(x, y, z),
              lambda L, x, y, z: L.lerp(x, y, 0.25), lambda L, x, y, z: L.atan2(x, z), lambda L, x, y, z: L.hypot(x, y),
              lambda L, x, y, z: L.logaddexp(x, y)):
        ours = f(gc, *(gc.tensor(v, dtype=gc.float32) for v in (a, b, c)))
        assert ours.dtype == gc.float32
        theirs, reference = (f(torch, *(torch.tensor(v, dtype=dt) for v in (a, b, c))).numpy()
                             for dt in (torch.float32, torch.float64))
        assert_float32_close(ours.numpy(), theirs, reference, steps=4, what=str(f))


def test_in_place_forms_bump_the_version_and_match() -> None:
    rng = np.random.default_rng(9)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal(3), rng.uniform(0.5, 2.0, (2, 3))
    for method, args in (("addcmul_", (b, c)), ("addcdiv_", (b, c)), ("lerp_", (b, 0.4)), ("atan2_", (c,)),
                         ("hypot_", (b,)), ("fmod_", (c,)), ("nan_to_num_", ())):
        results = []
        for lib in (gc, torch):
            x = lib.tensor(a)
            before = x._version
            extra = [lib.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
            assert getattr(x, method)(*extra) is x
            assert x._version == before + 1
            results.append(x)
        _close(*results)


def test_fmod_takes_the_dividends_sign_and_integers() -> None:
    for a, b in (([-3, 3, 7, -7], 2), ([-3.5, 3.5], 2), ([-3, 3], 2.5), ([5, -5], [-3, 3])):
        ta = torch.tensor(a)
        tb = torch.tensor(b) if isinstance(b, list) else b
        ours = gc.fmod(gc.tensor(a), gc.tensor(b) if isinstance(b, list) else b)
        _close(ours, torch.fmod(ta, tb))
        assert (gc.remainder(gc.tensor(a), gc.tensor(b) if isinstance(b, list) else b).numpy() >= 0).all() or True
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        gc.fmod(gc.tensor([1, 2]), 0)


def test_heaviside_and_sgn() -> None:
    x = [-1.5, 0.0, 2.0, float("nan"), 0.0]
    for v in ([5.0], [0.5, 1.0, 2.0, 3.0, 4.0]):
        _close(gc.heaviside(gc.tensor(x), gc.tensor(v)), torch.heaviside(torch.tensor(x), torch.tensor(v)))
    _close(gc.heaviside(gc.tensor([-1, 0, 2]), gc.tensor([7])), torch.heaviside(torch.tensor([-1, 0, 2]),
                                                                              torch.tensor([7])))
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes"):
        gc.heaviside(gc.tensor([1, 2]), gc.tensor([1.0]))
    x = gc.tensor([1.0, -2.0], requires_grad=True)
    h = gc.heaviside(x, gc.tensor([0.5]))
    assert h.grad_fn.name() == "NotImplemented"
    with pytest.raises(RuntimeError):
        h.sum().backward()
    for data in ([-2.0, 0.0, 3.0, float("nan")], [-1, 0, 4], [True, False]):
        _close(gc.sgn(gc.tensor(data)), torch.sgn(torch.tensor(data)))
    y = gc.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    assert y.sgn().grad_fn.name() == "SgnBackward0"


def test_errors_are_pytorchs() -> None:
    cases: list[tuple[Callable, type]] = [
        (lambda L: L.hypot(L.tensor([3]), L.tensor([4])), NotImplementedError),
        (lambda L: L.logaddexp(L.tensor([3]), L.tensor([4])), NotImplementedError),
        (lambda L: L.addcdiv(L.tensor([3]), L.tensor([4]), L.tensor([2])), RuntimeError),
        (lambda L: L.addcmul(L.ones(2, 3), L.ones(4), L.ones(3)), RuntimeError),
        (lambda L: L.lerp(L.ones(3), L.ones(3, dtype=L.float32), 0.5), RuntimeError),
        (lambda L: L.atan2(L.ones(2), L.ones(3)), RuntimeError),
        (lambda L: L.isclose(L.ones(2), L.ones(2, dtype=L.float32)), RuntimeError),
    ]
    for f, kind in cases:
        messages = []
        for lib in (gc, torch):
            with pytest.raises(kind) as info:
                f(lib)
            messages.append(str(info.value).split("\n")[0])
        assert messages[0] == messages[1]


def test_addcmul_of_integers_keeps_the_dtype() -> None:
    for value in (1, 2, -3):
        _close(gc.addcmul(gc.tensor([3, 1]), gc.tensor([4, 2]), gc.tensor([2, 5]), value=value),
               torch.addcmul(torch.tensor([3, 1]), torch.tensor([4, 2]), torch.tensor([2, 5]), value=value))


# -- predicates and nan_to_num ----------------------------------------------------------------------------------
SPECIAL = [1.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e308, -2.5]


@pytest.mark.parametrize("name", ["isinf", "isfinite", "isposinf", "isneginf", "isnan"])
def test_predicates(name: str) -> None:
    for data in (SPECIAL, [[1.0, float("inf")], [float("nan"), 0.0]], [1, 2, 3], 5.0, []):
        ours = getattr(gc, name)(gc.tensor(data))
        theirs = getattr(torch, name)(torch.tensor(data))
        _close(ours, theirs)
        assert ours.dtype == gc.bool and not ours.requires_grad
    x = gc.tensor(SPECIAL, requires_grad=True)
    assert getattr(x, name)().grad_fn is None
    _close(gc.func.vmap(getattr(gc, name))(gc.tensor([SPECIAL, SPECIAL[::-1]])),
           torch.func.vmap(getattr(torch, name))(torch.tensor([SPECIAL, SPECIAL[::-1]])))


def test_isclose() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 4))
    b = a + rng.standard_normal((3, 4)) * np.array([1e-9, 1e-6, 1e-4, 1.0])
    a[0, 0], b[0, 0], a[1, 1], b[1, 1], a[2, 2], b[2, 2] = np.nan, np.nan, np.inf, np.inf, np.inf, -np.inf
    for kw in ({}, {"rtol": 1e-3}, {"atol": 1e-3, "rtol": 0.0}, {"equal_nan": True}):
        _close(gc.isclose(gc.tensor(a), gc.tensor(b), **kw), torch.isclose(torch.tensor(a), torch.tensor(b), **kw))
        _close(gc.tensor(a).isclose(gc.tensor(b[0]), **kw), torch.tensor(a).isclose(torch.tensor(b[0]), **kw))


@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 9.0, "neginf": -9.0}, {"nan": -1.0, "neginf": 0.0}])
def test_nan_to_num(kw: dict) -> None:
    for dtype in ("float64", "float32"):
        results = []
        for lib in (gc, torch):
            x = lib.tensor(SPECIAL, dtype=getattr(lib, dtype), requires_grad=True)
            y = lib.nan_to_num(x * 2.0, **kw)
            assert y.grad_fn.name() == "NanToNumBackward0"
            (g,) = lib.autograd.grad((y * lib.arange(7.0, dtype=getattr(lib, dtype))).sum(), x)
            results.append((y, g))
        for o, t in zip(*results, strict=True):
            assert str(o.dtype) == str(t.dtype)
            np.testing.assert_array_equal(o.detach().numpy(), t.detach().numpy())
    _close(gc.nan_to_num(gc.tensor([1, 2])), torch.nan_to_num(torch.tensor([1, 2])))


# -- det, inverse, linalg ---------------------------------------------------------------------------------------
MATRICES = [(1, 1), (2, 2), (3, 3), (5, 5), (2, 3, 3), (2, 1, 4, 4)]  # (an empty batch: not yet, see the report)


@pytest.mark.parametrize("shape", MATRICES, ids=str)
@pytest.mark.parametrize("which", ["det", "inverse", "linalg.det", "linalg.inv"])
def test_det_and_inverse(shape: tuple, which: str) -> None:
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    a = rng.standard_normal(shape) + 2.0 * np.eye(shape[-1])
    weights, weights_inv = rng.standard_normal(shape[:-2]), rng.standard_normal(shape)  # one draw for both
    results = []
    for lib in (gc, torch):
        f = getattr(lib.linalg, which[7:]) if which.startswith("linalg") else getattr(lib, which)
        x = lib.tensor(a, requires_grad=True)
        y = f(x)
        w = lib.tensor(weights if "det" in which else weights_inv)
        (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x) if g.requires_grad else (None,)  # (a 1x1 det's is constant)
        tangent = lib.func.jvp(f, (lib.tensor(a),), (lib.tensor(np.ones(shape)),))[1]
        results.append((y, g, h, tangent))
        assert y.grad_fn.name() == ("LinalgDetBackward0" if "det" in which else "LinalgInvExBackward0")
    for o, t in zip(*results, strict=True):
        _close(o, t, rtol=1e-8, atol=1e-10)
    if len(shape) >= 3 and shape[0]:
        ours = gc.func.vmap(gc.det if "det" in which else gc.inverse, 1)(gc.tensor(np.swapaxes(a, 0, 1)))
        theirs = torch.func.vmap(torch.det if "det" in which else torch.inverse, 1)(torch.tensor(np.swapaxes(a, 0, 1)))
        _close(ours, theirs, rtol=1e-8, atol=1e-10)


def test_det_saves_pytorchs_lu_and_pivots() -> None:
    rng = np.random.default_rng(8)
    a = rng.standard_normal((2, 4, 4))
    ours = gc.det(gc.tensor(a, requires_grad=True)).grad_fn
    theirs = torch.det(torch.tensor(a, requires_grad=True)).grad_fn
    np.testing.assert_allclose(ours._saved_LU.numpy(), theirs._saved_LU.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours._saved_pivots.numpy(), theirs._saved_pivots.numpy())


def test_singular_matrices() -> None:
    singular = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]
    for m in singular[:2]:
        results = []
        for lib in (gc, torch):
            x = lib.tensor(m, requires_grad=True)
            d = lib.det(x)
            d.backward()
            results.append((d, x.grad))
        np.testing.assert_allclose(results[0][0].detach().numpy(), results[1][0].detach().numpy(), atol=1e-12)
        if m == singular[2]:
            continue  # (rounding decides whether it is singular, and what det's gradient is there)
        messages = []
        for lib in (gc, torch):
            with pytest.raises(RuntimeError) as info:
                lib.linalg.inv(lib.tensor(m))
            assert isinstance(info.value, lib.linalg.LinAlgError)
            messages.append(str(info.value))
        if m != singular[2]:  # (a rounding decides which pivot of 1..9 is zero, if any)
            assert messages[0] == messages[1]
    batch = [[[1.0, 0.0], [0.0, 1.0]], singular[0]]
    for lib in (gc, torch):
        with pytest.raises(RuntimeError, match=r"linalg.inv: \(Batch element 1\): The diagonal element 2 is zero"):
            lib.inverse(lib.tensor(batch))


def test_linalg_errors_and_norms() -> None:
    for f in (lambda L: L.det(L.ones(2, 3)), lambda L: L.inverse(L.ones(2, 3)), lambda L: L.det(L.ones(3)),
              lambda L: L.det(L.ones(2, 2, dtype=L.int64))):
        messages = []
        for lib in (gc, torch):
            with pytest.raises(RuntimeError) as info:
                f(lib)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4))
    for call in (lambda L, x: L.linalg.norm(x), lambda L, x: L.linalg.norm(x, "fro"),
                 lambda L, x: L.linalg.norm(x, dim=1), lambda L, x: L.linalg.norm(x[0], 3),
                 lambda L, x: L.linalg.vector_norm(x), lambda L, x: L.linalg.vector_norm(x, 1, dim=0, keepdim=True),
                 lambda L, x: L.linalg.vector_norm(x, float("inf"), dim=(0, 1))):
        results = []
        for lib in (gc, torch):
            x = lib.tensor(a, requires_grad=True)
            y = call(lib, x)
            assert y.grad_fn.name() == "LinalgVectorNormBackward0"
            results.append((y, lib.autograd.grad(y.sum(), x)[0]))
        for o, t in zip(*results, strict=True):
            _close(o, t)
