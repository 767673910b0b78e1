"""`gradcalc.func` (torch.func's transforms) and the products of `autograd.functional` against PyTorch:
values (float64, rtol 1e-9), structure, requires_grad, and grad_fn names under create_graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
import gradcalc.func as gf

torch = pytest.importorskip("torch")
tf = torch.func
torch.set_default_dtype(torch.float64)

RTOL, ATOL = 1e-9, 1e-12


def _np(t: Any) -> np.ndarray:
    return t.detach().numpy()


def same(ours: Any, theirs: Any, path: str = "result", names: bool = False) -> None:
    """Same nesting, shapes, values, requires_grad (and grad_fn names when asked)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), f"{path}: {ours!r}"
        for k, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            same(a, b, f"{path}[{k}]", names)
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{path}: {ours!r}"
        for k in theirs:
            same(ours[k], theirs[k], f"{path}[{k!r}]", names)
        return
    if not isinstance(theirs, torch.Tensor):
        assert ours == theirs, path
        return
    assert isinstance(ours, gc.Tensor), f"{path}: {type(ours)}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape {tuple(ours.shape)} vs {tuple(theirs.shape)}"
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=RTOL, atol=ATOL, err_msg=path)
    assert ours.requires_grad == theirs.requires_grad, f"{path}: requires_grad {ours.requires_grad}"
    if names:
        ours_name = ours.grad_fn.name() if ours.grad_fn is not None else None
        theirs_name = type(theirs.grad_fn).__name__ if theirs.grad_fn is not None else None
        assert ours_name == theirs_name, f"{path}: grad_fn {ours_name} vs {theirs_name}"


def both(scenario: Callable[[Any, Any], Any], names: bool = False) -> None:
    """Run `scenario(lib, func_module)` on both libraries and compare."""
    same(scenario(gc, gf), scenario(torch, tf), names=names)


RNG = np.random.default_rng(0)
X = RNG.standard_normal(4)
Y = RNG.standard_normal((3, 4))
P = RNG.uniform(0.5, 1.5, 3)


# random compositions of the engine's differentiable operations, R^n -> R^m and R^n -> R
def comp_vec(L: Any, x: Any, y: Any) -> Any:
    return (L.tanh(y @ x) * L.sin(x[:3]) + (x[1:] ** 2).exp() / (1.0 + x[0] ** 2)).log1p().abs()


def comp_scalar(L: Any, x: Any, y: Any) -> Any:
    return L.logsumexp(y * x, 1).sum() + (L.softmax(x, 0) * L.sigmoid(x)).sum() + L.norm(y @ x.cos())


def t(L: Any, a: np.ndarray, **kw: Any) -> Any:
    return L.tensor(a, **kw)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), -1])
def test_grad_and_value(argnums: Any) -> None:
    both(lambda L, F: F.grad_and_value(lambda x, y: comp_scalar(L, x, y), argnums=argnums)(t(L, X), t(L, Y)))
    both(lambda L, F: F.grad(lambda x, y: comp_scalar(L, x, y), argnums=argnums)(t(L, X), t(L, Y)))


def test_grad_has_aux_and_pytrees() -> None:
    def f(L: Any, params: dict, x: Any) -> Any:
        h = L.tanh(params["w"] @ x + params["b"][0])
        return (h * h).sum(), {"h": h}

    def scenario(L: Any, F: Any) -> Any:
        params = {"w": t(L, Y), "b": (t(L, P),)}
        return F.grad(lambda p, x: f(L, p, x), has_aux=True)(params, t(L, X))

    both(scenario)


def test_grad_of_grad_and_outside_graph() -> None:
    both(lambda L, F: F.grad(F.grad(lambda x: (x.sin() * x.exp()).sum() * 1.0 if x.ndim else x.sin() * x.exp()))(
        t(L, np.array(0.7))))

    def closure(L: Any, F: Any) -> Any:
        w = t(L, P, requires_grad=True)
        g = F.grad(lambda x: (x * w).sin().sum())(t(L, P * 2))
        (gw,) = L.autograd.grad(g.sum(), w)
        return g, gw

    both(closure)


@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_jacobians(argnums: Any) -> None:
    for fn in ("jacrev", "jacfwd"):
        both(lambda L, F, fn=fn: getattr(F, fn)(lambda x, y: comp_vec(L, x, y), argnums=argnums)(t(L, X), t(L, Y)))
        both(lambda L, F, fn=fn: getattr(F, fn)(
            lambda x, y: (comp_vec(L, x, y), comp_scalar(L, x, y)), argnums=argnums)(t(L, X), t(L, Y)))


def test_jacobians_has_aux() -> None:
    for fn in ("jacrev", "jacfwd"):
        both(lambda L, F, fn=fn: getattr(F, fn)(lambda x: (x.sin() * x, x.cos()), has_aux=True)(t(L, X)))


def test_hessian_and_nested_jacobians() -> None:
    both(lambda L, F: F.hessian(lambda x, y: comp_scalar(L, x, y))(t(L, X), t(L, Y)))
    both(lambda L, F: F.hessian(lambda x, y: comp_scalar(L, x, y), argnums=(0, 1))(t(L, X), t(L, Y)))
    for outer in ("jacrev", "jacfwd"):
        for inner in ("jacrev", "jacfwd"):
            both(lambda L, F, o=outer, i=inner: getattr(F, o)(getattr(F, i)(lambda x: comp_vec(L, x, t(L, Y))))(
                t(L, X)))


def test_vjp_jvp_linearize() -> None:
    v = RNG.standard_normal(3)

    def scenario(L: Any, F: Any) -> Any:
        out, fn = F.vjp(lambda x, y: comp_vec(L, x, y), t(L, X), t(L, Y))
        return out, fn(t(L, v))

    both(scenario)
    both(lambda L, F: F.jvp(lambda x, y: comp_vec(L, x, y), (t(L, X), t(L, Y)), (t(L, X[::-1].copy()), t(L, Y * 2))))
    both(lambda L, F: F.jvp(lambda x: (x.exp(), x.sin()), (t(L, X),), (t(L, X),), has_aux=True))

    def lin(L: Any, F: Any) -> Any:
        out, fn = F.linearize(lambda x: comp_vec(L, x, t(L, Y)), t(L, X))
        return out, fn(t(L, X * 3))

    both(lin)


def test_vmap() -> None:
    both(lambda L, F: F.vmap(lambda x, y: comp_vec(L, x, y), in_dims=(0, None))(t(L, Y), t(L, Y)))
    both(lambda L, F: F.vmap(lambda a, b: a * b.sum(), in_dims=(1, 0), out_dims=1)(t(L, Y), t(L, Y.T.copy())))
    both(lambda L, F: F.vmap(F.vmap(lambda a: a.sin() * 2.0))(t(L, Y)))
    both(lambda L, F: L.vmap(lambda a: (a.exp(), {"s": a.sum()}))(t(L, Y)))

    def with_autograd_grad(L: Any, F: Any) -> Any:
        def g(x: Any) -> Any:
            x = x.detach().requires_grad_(True) if L is gc else x
            with L.enable_grad():
                y = (x.sin() ** 2).sum()
                return L.autograd.grad(y, x)[0]

        return F.vmap(F.grad(lambda x: (x.sin() ** 2).sum()))(t(L, Y)), g(t(L, Y[0], requires_grad=True))

    both(with_autograd_grad)


def test_per_sample_gradients() -> None:
    """The per-sample-gradients example of the torch.func documentation, with plain-tensor parameters."""
    rng = np.random.default_rng(1)
    w1, b1, w2, b2 = rng.standard_normal((8, 5)), rng.standard_normal(8), rng.standard_normal((3, 8)), np.zeros(3)
    data, targets = rng.standard_normal((16, 5)), np.eye(3)[rng.integers(0, 3, 16)]  # one-hot targets

    def scenario(L: Any, F: Any) -> Any:
        params = {"w1": t(L, w1), "b1": t(L, b1), "w2": t(L, w2), "b2": t(L, b2)}

        def loss(p: dict, x: Any, target: Any) -> Any:
            h = L.relu(p["w1"] @ x + p["b1"])
            logits = p["w2"] @ h + p["b2"]
            return -(L.log_softmax(logits, 0) * target).sum()

        return F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, t(L, data), t(L, targets))

    both(scenario)


def test_functional_call() -> None:
    class Affine:
        def __init__(self, L: Any) -> None:
            self.weight = t(L, Y)
            self.bias = t(L, P)

        def __call__(self, x: Any) -> Any:
            return (self.weight @ x + self.bias).tanh().sum()

    def scenario(L: Any, F: Any) -> Any:
        m = Affine(L)
        return F.grad(lambda p, x: F.functional_call(m, p, (x,)))({"weight": t(L, Y * 2), "bias": t(L, P)}, t(L, X))

    # torch's functional_call wants an nn.Module: compare against the same function written directly
    ours = scenario(gc, gf)
    theirs = tf.grad(lambda p, x: (p["weight"] @ x + p["bias"]).tanh().sum())(
        {"weight": torch.tensor(Y * 2), "bias": torch.tensor(P)}, torch.tensor(X))
    same(ours, theirs)


# -- autograd.functional's products -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["vjp", "jvp", "vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("as_tuple", [False, True])
def test_functional_products(name: str, create_graph: bool, as_tuple: bool) -> None:
    def scenario(L: Any, F: Any) -> Any:
        fn = getattr(L.autograd.functional, name)
        x, y = t(L, X, requires_grad=create_graph), t(L, Y)
        if name in ("vjp", "jvp"):
            f = (lambda a, b: comp_vec(L, a, b)) if as_tuple else (lambda a: comp_vec(L, a, y))
            v_out = t(L, RNG_V.standard_normal(3)) if name == "vjp" else None
        else:
            f = (lambda a, b: comp_scalar(L, a, b)) if as_tuple else (lambda a: comp_scalar(L, a, y))
            v_out = None
        inputs = (x, y) if as_tuple else x
        if name == "vjp":
            v = v_out
        else:
            v = (t(L, X[::-1].copy()), t(L, Y * 0.5)) if as_tuple else t(L, X[::-1].copy())
        return fn(f, inputs, v, create_graph=create_graph)

    global RNG_V
    RNG_V = np.random.default_rng(7)
    ours = scenario(gc, gf)
    RNG_V = np.random.default_rng(7)
    theirs = scenario(torch, tf)
    same(ours, theirs, names=create_graph)


RNG_V = np.random.default_rng(7)


def test_jacobian_forward_mode() -> None:
    def scenario(L: Any, F: Any) -> Any:
        return L.autograd.functional.jacobian(lambda x, y: comp_vec(L, x, y), (t(L, X), t(L, Y)), vectorize=True,
                                              strategy="forward-mode")

    both(scenario)
    with pytest.raises(NotImplementedError, match="vectorize"):
        gc.autograd.functional.jacobian(lambda x: x, gc.tensor(X), strategy="forward-mode")


# -- bad input -------------------------------------------------------------------------------------------
def test_bad_input_is_a_clear_error() -> None:
    from gradcalc.autograd import forward_ad as fw

    x = gc.tensor(X)
    with pytest.raises(RuntimeError, match="argnums=2 is out of range"):
        gf.grad(lambda a, b: (a * b).sum(), argnums=2)(x, x)
    with pytest.raises(RuntimeError, match="must return a tensor"):
        gf.grad(lambda a: 1.0)(x)
    with pytest.raises(RuntimeError, match="0-d"):
        gf.grad(lambda a: a * 2)(x)
    with pytest.raises(RuntimeError, match="tangent 0 has shape"):
        gf.jvp(lambda a: a, (x,), (gc.ones(3),))
    with pytest.raises(RuntimeError, match="primals must be a tuple"):
        gf.jvp(lambda a: a, x, (x,))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):  # PyTorch's messages
        gf.vmap(lambda a, b: a + b)(gc.ones(3), gc.ones(4))
    with pytest.raises(ValueError, match="must only return Tensors"):
        gf.vmap(lambda a: 1.0)(gc.ones(3))
    with pytest.raises(RuntimeError, match="shape"):
        with fw.dual_level():
            fw.make_dual(x, gc.ones(3))
    # nothing is left half-done: no level stays open after an error inside jvp
    with pytest.raises(ZeroDivisionError):
        gf.jvp(lambda a: 1 / 0, (x,), (x,))
    assert not fw._open and not fw._active
    with pytest.raises(RuntimeError, match="nested"):
        with fw.dual_level(), fw.dual_level():
            pass
    assert not fw._open and not fw._active


@pytest.mark.parametrize("as_tuple", [False, True])
def test_hessian_forward_over_reverse(as_tuple: bool) -> None:
    def scenario(L: Any, F: Any) -> Any:
        inputs = (t(L, X), t(L, Y)) if as_tuple else t(L, X)
        f = (lambda a, b: comp_scalar(L, a, b)) if as_tuple else (lambda a: comp_scalar(L, a, t(L, Y)))
        return L.autograd.functional.hessian(f, inputs, vectorize=True, outer_jacobian_strategy="forward-mode")

    ours, theirs = scenario(gc, gf), scenario(torch, tf)
    # PyTorch's result keeps a grad_fn here although create_graph is False: compare values and shapes only
    theirs = tuple(tuple(b.detach() for b in r) for r in theirs) if as_tuple else theirs.detach()
    same(ours, theirs)


def test_jacobian_vectorize_and_strict() -> None:
    both(lambda L, F: L.autograd.functional.jacobian(lambda x, y: comp_vec(L, x, y), (t(L, X), t(L, Y)),
                                                     vectorize=True))
    both(lambda L, F: L.autograd.functional.jacobian(lambda x: comp_vec(L, x, t(L, Y)), t(L, X, requires_grad=True),
                                                     create_graph=True))
    for lib in (gc, torch):
        with pytest.raises(RuntimeError):
            lib.autograd.functional.jacobian(lambda x, y: x * 2.0, (lib.tensor(X), lib.tensor(X)), strict=True)
