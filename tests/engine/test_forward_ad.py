"""Forward-mode AD (`autograd.forward_ad`) against PyTorch's, op by op, in float64 to rtol 1e-9.

The op list comes from the engine's specs: every registered operation's sample call (`spec.OPS`, the `unary`
rows among them) is a case, beside the composite cases below; every differentiable function of `ops.FUNCTIONS`
must have one, so a new op without a sample fails `test_every_op_has_a_case`. Each case is checked three ways:
the tangent (JVP) itself; forward-over-reverse (the tangent of a gradient computed with create_graph: a
Hessian-vector product); reverse-over-forward (the gradient of a tangent with respect to the primal).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import forward_ad as gfw
from gradcalc.autograd import spec
from gradcalc.autograd.ops import FUNCTIONS

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
tfw = torch.autograd.forward_ad

RTOL, ATOL = 1e-9, 1e-12

# name: (input shapes, kind of values, f(lib, *tensors)). Kinds: "any" standard normal, "pos" in (0.5, 2),
# "unit" in (-0.9, 0.9) (asin, acos), "dist" well separated values (max, sort: no ties).
Case = tuple[tuple[tuple[int, ...], ...], str, Callable[..., Any]]
CASES: dict[str, Case] = {
    "addmm": (((3,), (2, 4), (4, 3)), "any", lambda L, b, x, w: L.addmm(b, x, w)),
    "binary_cross_entropy_with_logits": (
        ((4,), (4,)), "unit", lambda L, a, t: L.nn.functional.binary_cross_entropy_with_logits(a, (t + 1.0) / 2.0)),
    "add": (((2, 3), (3,)), "any", lambda L, a, b: L.add(a, b, alpha=2.0)),
    "sub": (((2, 3), (2, 3)), "any", lambda L, a, b: L.sub(a, b, alpha=0.5) - (1.5 - a)),
    "mul": (((2, 3), (2, 1)), "any", lambda L, a, b: L.mul(a, b) * 3.0),
    "div": (((2, 3), (3,)), "pos", lambda L, a, b: L.div(a, b) + 2.0 / b + a / 4.0),
    "neg": (((3,),), "any", lambda L, a: L.neg(a)),
    "pow": (((3,), (3,)), "pos", lambda L, a, b: L.pow(a, b) + a**3 + 2.0**b + a**0.5),
    "remainder": (((4,), (4,)), "pos", lambda L, a, b: L.remainder(a * 3.0, b) + a % 0.7),
    "clamp": (((6,),), "any", lambda L, a: L.clamp(a, -0.5, 0.5)),
    "clip": (((6,),), "any", lambda L, a: L.clip(a, min=-0.3)),
    "clamp_min": (((6,),), "any", lambda L, a: L.clamp_min(a, 0.1)),
    "clamp_max": (((6,),), "any", lambda L, a: L.clamp_max(a, 0.1)),
    "clamp_tensor": (((6,), (6,), (6,)), "any", lambda L, a, lo, hi: L.clamp(a, lo, lo + hi.abs())),
    "maximum": (((5,), (5,)), "any", lambda L, a, b: L.maximum(a, b)),
    "minimum": (((5,), (5,)), "any", lambda L, a, b: L.minimum(a, b)),
    "softplus": (((5,),), "any", lambda L, a: L.nn.functional.softplus(a * 3.0, beta=2.0, threshold=4.0)
                 if L is torch else L.softplus(a * 3.0, beta=2.0, threshold=4.0)),
    "where": (((5,), (5,)), "any", lambda L, a, b: L.where(a > b, a * b, b.exp())),
    "amax": (((3, 4),), "dist", lambda L, a: L.amax(a, 1)),
    "amin": (((3, 4),), "dist", lambda L, a: L.amin(a, 0)),
    "max": (((3, 4),), "dist", lambda L, a: L.max(a, 1)[0] + L.max(a)),
    "min": (((3, 4),), "dist", lambda L, a: L.min(a, 0)[0] + L.min(a)),
    "logsumexp": (((3, 4),), "any", lambda L, a: L.logsumexp(a, 1)),
    "log_softmax": (((3, 4),), "any", lambda L, a: L.log_softmax(a, 1)),
    "softmax": (((3, 4),), "any", lambda L, a: L.softmax(a, 0)),
    "mean": (((3, 4),), "any", lambda L, a: L.mean(a, 1) + L.mean(a)),
    "sum": (((3, 4),), "any", lambda L, a: L.sum(a, 0, keepdim=True) + L.sum(a) + L.sum(a, axis=1, keepdims=True)),
    "square": (((3,),), "any", lambda L, a: L.square(a)),
    "prod": (((3, 4),), "pos", lambda L, a: L.prod(a, 1) + L.prod(a)),
    "norm": (((3, 4),), "any", lambda L, a: L.norm(a) + L.norm(a, dim=1).sum() + L.norm(a, p=1)),
    "std": (((3, 4),), "any", lambda L, a: L.std(a, 1)),
    "var": (((3, 4),), "any", lambda L, a: L.var(a, 0, correction=0)),
    "cat": (((2, 3), (1, 3)), "any", lambda L, a, b: L.cat([a, b], 0)),
    "concat": (((2, 3), (2, 1)), "any", lambda L, a, b: L.concat([a, b], 1)),
    "concatenate": (((2, 3), (2, 1)), "any", lambda L, a, b: L.concatenate([a, b], 1)),
    "stack": (((2, 3), (2, 3)), "any", lambda L, a, b: L.stack([a, b], 1)),
    "chunk": (((4, 3),), "any", lambda L, a: L.chunk(a, 2, 0)),
    "split": (((5, 3),), "any", lambda L, a: L.split(a, [2, 3], 0)),
    "unbind": (((2, 3),), "any", lambda L, a: L.unbind(a, 1)),
    "flatten": (((2, 3, 2),), "any", lambda L, a: L.flatten(a, 1)),
    "narrow": (((4, 3),), "any", lambda L, a: L.narrow(a, 0, 1, 2)),
    "permute": (((2, 3, 4),), "any", lambda L, a: L.permute(a, (2, 0, 1))),
    "reshape": (((2, 3),), "any", lambda L, a: L.reshape(a, (3, 2)) * 1.0),
    "select": (((2, 3),), "any", lambda L, a: L.select(a, 1, 2)),
    "squeeze": (((2, 1, 3),), "any", lambda L, a: L.squeeze(a, 1)),
    "unsqueeze": (((2, 3),), "any", lambda L, a: L.unsqueeze(a, 1)),
    "swapaxes": (((2, 3),), "any", lambda L, a: L.swapaxes(a, 0, 1)),
    "swapdims": (((2, 3),), "any", lambda L, a: L.swapdims(a, 0, 1)),
    "t": (((2, 3),), "any", lambda L, a: L.t(a)),
    "transpose": (((2, 3, 4),), "any", lambda L, a: L.transpose(a, 0, 2)),
    "bmm": (((2, 3, 4), (2, 4, 2)), "any", lambda L, a, b: L.bmm(a, b)),
    "dot": (((3,), (3,)), "any", lambda L, a, b: L.dot(a, b)),
    "ger": (((3,), (2,)), "any", lambda L, a, b: L.ger(a, b)),
    "outer": (((3,), (2,)), "any", lambda L, a, b: L.outer(a, b)),
    "matmul": (((2, 3, 4), (4,)), "any", lambda L, a, b: L.matmul(a, b) + (a @ a.transpose(1, 2)).sum(0)[0]),
    "mm": (((2, 3), (3, 4)), "any", lambda L, a, b: L.mm(a, b)),
    "mv": (((2, 3), (3,)), "any", lambda L, a, b: L.mv(a, b)),
    "clone": (((3,),), "any", lambda L, a: L.clone(a)),
    "sort": (((3, 4),), "dist", lambda L, a: L.sort(a, 1)[0]),
    "movedim": (((2, 3, 4),), "any", lambda L, a: L.movedim(a, 0, 2)),
    "moveaxis": (((2, 3, 4),), "any", lambda L, a: L.moveaxis(a, (0, 1), (1, 2))),
    "diag": (((3,),), "any", lambda L, a: L.diag(a, 1)[:3, 1:] + L.diag(L.diag(a))),
    "index_add": (((3, 2), (2, 2)), "any", lambda L, a, s: L.index_add(a, 0, L.tensor([2, 2]), s, alpha=0.5)),
    "index_add_": (((3, 2), (2, 2)), "any", lambda L, a, s: (a * 1.0).index_add_(0, L.tensor([0, 2]), s)),
    "inplace unary": (((4,),), "any", lambda L, a: (a * 1.0).sin_().exp_()),
    # nonlinear functions of selections: their gradients carry tangents through the selections' adjoints
    "selections squared": (((4, 3),), "any", lambda L, a: (a[1:, 0] ** 2).sum() + a[[0, 2, 0], 1].exp().sum()
                           + a[0].sin().sum() + L.select(a, 1, 2).tanh().sum()),
    "reorders squared": (((3, 4),), "dist", lambda L, a: (L.sort(a, 1)[0] ** 3).sum() + (L.diag(a) ** 2).sum()
                         + (L.diag(a[0]) ** 2).sum()),
    "index_add squared": (((3, 2), (2, 2)), "any", lambda L, a, s: L.index_add(a, 0, L.tensor([2, 0]), s) ** 2),
    # methods that are not module functions
    "getitem": (((4, 3),), "any", lambda L, a: a[1:, 0] + a[[0, 2, 0], 1] + a[a[:, 2] > 0].sum()),
    "expand": (((3, 1),), "any", lambda L, a: a.expand(3, 4)),
    "view": (((2, 3),), "any", lambda L, a: a.view(6)),
    "to": (((3,),), "any", lambda L, a: a.to(L.float64) * a.double()),
    "contiguous": (((2, 3),), "any", lambda L, a: a.t().contiguous()),
    "mT": (((2, 3),), "any", lambda L, a: a.mT),
}
# every registered operation's own sample (the specs'), as a case of its own name
# (but cdist's: PyTorch has no forward derivative of it; test_specs.py checks both raise)
for _op in spec.OPS.values():
    if _op.sample is not None and _op.name != "cdist":
        CASES[f"spec {_op.name}"] = (_op.sample.shapes, _op.sample.domain, _op.sample.call)

# no derivative (comparisons, integer results, creation), or no forward derivative in PyTorch either
NOT_DIFFERENTIABLE = {
    "argmax", "argmin", "eq", "ge", "gt", "le", "lt", "ne", "isnan", "logical_and", "logical_not", "logical_or",
    "detach", "floor_divide", "heaviside", "isinf", "isfinite", "isposinf", "isneginf", "isclose",
    "arange", "as_tensor", "empty", "eye", "full", "full_like", "linspace",
    "manual_seed", "ones", "ones_like", "rand", "randn", "tensor", "zeros", "zeros_like", "all", "any", "allclose",
    "equal", "device", "randint", "normal", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
    "multinomial", "is_floating_point", "numel", "empty_like", "logspace",
}


def test_every_op_has_a_case() -> None:
    covered = set(CASES) | {name for op in spec.OPS.values() if op.sample is not None for name in op.names}
    missing = sorted(set(FUNCTIONS) - covered - NOT_DIFFERENTIABLE)
    assert not missing, f"ops without a forward-mode test case: {missing}"


def _arrays(shapes: tuple[tuple[int, ...], ...], kind: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if isinstance(kind, spec.Domain):
        return [kind.draw(rng, s) for s in shapes]
    out = []
    for s in shapes:
        if kind == "pos":
            out.append(rng.uniform(0.5, 2.0, s))
        elif kind == "unit":
            out.append(rng.uniform(-0.9, 0.9, s))
        elif kind == "dist":
            n = int(np.prod(s))
            out.append(rng.permutation(np.arange(n, dtype=np.float64)).reshape(s) * 0.37 - 1.0)
        else:
            out.append(rng.standard_normal(s))
    return out


def _flat(y: Any) -> list:
    return list(y) if isinstance(y, tuple) else [y]


def _np(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return torch.zeros_like(t).numpy() if t._is_zerotensor() else t.detach().numpy()
    return t.detach().numpy()


def _close(ours: Any, theirs: Any, what: str) -> None:
    a, b = _np(ours), _np(theirs)
    if a is None or b is None:  # a missing tangent is a zero one
        ref = a if a is not None else b
        if ref is not None:
            np.testing.assert_allclose(ref, np.zeros_like(ref), atol=ATOL, err_msg=what)
        return
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(b).max(initial=0))), err_msg=what)


def _jvp(L: Any, fw: Any, f: Callable, xs: list[np.ndarray], ts: list[np.ndarray]) -> list:
    with fw.dual_level():
        duals = [fw.make_dual(L.tensor(x), L.tensor(t)) for x, t in zip(xs, ts, strict=True)]
        return [(fw.unpack_dual(y).primal, fw.unpack_dual(y).tangent) for y in _flat(f(L, *duals))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_torch(name: str) -> None:
    shapes, kind, f = CASES[name]
    xs = _arrays(shapes, kind, 1)
    ts = _arrays(shapes, "any", 2)
    theirs = _jvp(torch, tfw, f, xs, ts)
    ours = _jvp(gc, gfw, f, xs, ts)
    assert len(ours) == len(theirs)
    for i, ((op, ot), (tp, tt)) in enumerate(zip(ours, theirs, strict=True)):
        _close(op, tp, f"{name} primal {i}")
        _close(ot, tt, f"{name} tangent {i}")


def _forward_over_reverse(L: Any, fw: Any, f: Callable, xs: list[np.ndarray], ts: list[np.ndarray],
                          ws: list[np.ndarray]) -> list:
    """The tangent of grad(<f(x), w>, x) along t: a Hessian-vector product."""
    with fw.dual_level():
        duals = [fw.make_dual(L.tensor(x, requires_grad=True), L.tensor(t)) for x, t in zip(xs, ts, strict=True)]
        ys = _flat(f(L, *duals))
        total = sum((y * L.tensor(w)).sum() for y, w in zip(ys, ws, strict=True))
        gs = L.autograd.grad(total, duals, create_graph=True, allow_unused=True)
        return [None if g is None else fw.unpack_dual(g).tangent for g in gs]


def _reverse_over_forward(L: Any, fw: Any, f: Callable, xs: list[np.ndarray], ts: list[np.ndarray],
                          ws: list[np.ndarray]) -> list:
    """grad(<tangent of f(x), w>, x)."""
    leaves = [L.tensor(x, requires_grad=True) for x in xs]
    with fw.dual_level():
        duals = [fw.make_dual(x, L.tensor(t)) for x, t in zip(leaves, ts, strict=True)]
        tangents = [fw.unpack_dual(y).tangent for y in _flat(f(L, *duals))]
        total = sum((t * L.tensor(w)).sum() for t, w in zip(tangents, ws, strict=True) if t is not None)
    if not isinstance(total, L.Tensor) or not total.requires_grad:
        return [None] * len(xs)
    return list(L.autograd.grad(total, leaves, allow_unused=True))


SECOND_ORDER_SKIP = {"remainder"}  # PyTorch's forward-over-reverse of remainder needs floor_divide's jvp


@pytest.mark.parametrize("name", sorted(set(CASES) - SECOND_ORDER_SKIP))
@pytest.mark.parametrize("how", ["forward_over_reverse", "reverse_over_forward"])
def test_second_order_matches_torch(name: str, how: str) -> None:
    shapes, kind, f = CASES[name]
    xs = _arrays(shapes, kind, 3)
    ts = _arrays(shapes, "any", 4)
    with torch.no_grad():
        out_shapes = [tuple(y.shape) for y in _flat(f(torch, *[torch.tensor(x) for x in xs]))]
    ws = _arrays(tuple(out_shapes), "any", 5)
    run = _forward_over_reverse if how == "forward_over_reverse" else _reverse_over_forward
    try:
        theirs = run(torch, tfw, f, xs, ts, ws)
    except (NotImplementedError, RuntimeError) as e:
        pytest.skip(f"PyTorch has no {how} for {name}: {str(e)[:80]}")
    ours = run(gc, gfw, f, xs, ts, ws)
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        _close(o, t, f"{name} {how} input {i}")


# -- custom Functions, gradcheck's modes, levels ----------------------------------------------------------
def _my_sin(L: Any) -> Any:
    class MySin(L.autograd.Function):
        @staticmethod
        def forward(x: Any, scale: float) -> Any:
            return x.sin() * scale

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            x, scale = inputs
            ctx.save_for_backward(x)
            ctx.x, ctx.scale = x, scale

        @staticmethod
        def backward(ctx: Any, g: Any) -> tuple:
            (x,) = ctx.saved_tensors
            return g * x.cos() * ctx.scale, None

        @staticmethod
        def jvp(ctx: Any, t: Any, _: Any) -> Any:
            return t * ctx.x.cos() * ctx.scale

    return MySin


def test_custom_function_jvp_matches_torch() -> None:
    xs, ts = _arrays(((4,),), "any", 8), _arrays(((4,),), "any", 9)
    f = lambda L, x: _my_sin(L).apply(x * 2.0, 3.0).exp()  # noqa: E731
    for (op, ot), (tp, tt) in zip(_jvp(gc, gfw, f, xs, ts), _jvp(torch, tfw, f, xs, ts), strict=True):
        _close(op, tp, "primal")
        _close(ot, tt, "tangent")


def test_custom_function_without_jvp_is_a_clear_error() -> None:
    class NoJvp(gc.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2.0

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2.0

    with gfw.dual_level():
        with pytest.raises(NotImplementedError, match="jvp"):
            NoJvp.apply(gfw.make_dual(gc.ones(2), gc.ones(2)))


def test_numpy_inside_forward() -> None:
    class ViaNumpy(gc.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return gc.tensor(np.sin(x.numpy()))

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    x = gc.tensor([0.5, 1.0], requires_grad=True)
    assert ViaNumpy.apply(x).requires_grad


def test_gradcheck_modes() -> None:
    x = gc.tensor([0.3, 0.5, 0.9], requires_grad=True)
    y = gc.tensor([[1.0, 2.0, 3.0]], requires_grad=True)

    def f(a: Any, b: Any) -> Any:
        return (a * b).sin().exp() * a.sum(), gc.norm(a)
    assert gc.autograd.gradcheck(f, (x, y), check_forward_ad=True, check_batched_grad=True,
                                 check_batched_forward_grad=True, check_grad_dtypes=True)
    assert gc.autograd.gradcheck(f, (x, y), check_forward_ad=True, check_backward_ad=False)
    assert gc.autograd.gradgradcheck(lambda a: (a.sin() * a.exp()).tanh(), (x,), check_fwd_over_rev=True)

    class WrongJvp(gc.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any) -> Any:
            return a.sin()

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t * 2.0

    with pytest.raises(RuntimeError, match="forward-mode JVP"):
        gc.autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)


def test_levels_close_and_forget() -> None:
    x = gc.tensor([1.0, 2.0])
    with gfw.dual_level():
        d = gfw.make_dual(x, gc.ones(2))
        y = d * d
    assert gfw.unpack_dual(y).tangent is None
    assert not gfw._open and not gfw._active
    with gfw.dual_level():  # tangents of a closed level are not seen by a new one
        assert gfw.unpack_dual(y).tangent is None
        assert gfw.unpack_dual(d.sin()).tangent is None
    with pytest.raises(RuntimeError, match="no forward AD level"):
        gfw.make_dual(x, gc.ones(2))


def test_no_level_costs_nothing_observable() -> None:
    """Once forward mode was used, ordinary computation still records and differentiates as before."""
    x = gc.tensor([0.5, 1.5], requires_grad=True)
    y = (x.sin() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.sin([0.5, 1.5]) + np.array([0.5, 1.5]) * np.cos([0.5, 1.5]))
    assert getattr(y, "_fw", None) is None


def test_custom_function_save_for_forward_matches_torch() -> None:
    def make(L: Any) -> Any:
        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                ctx.save_for_backward(x)
                ctx.save_for_forward(x)
                return x**3

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                return g * 3.0 * x**2

            @staticmethod
            def jvp(ctx: Any, t: Any) -> Any:
                (x,) = ctx.saved_tensors
                return t * 3.0 * x**2

        return Cube

    xs, ts = _arrays(((3,),), "any", 10), _arrays(((3,),), "any", 11)
    f = lambda L, x: make(L).apply(x.sin())  # noqa: E731
    for (op, ot), (tp, tt) in zip(_jvp(gc, gfw, f, xs, ts), _jvp(torch, tfw, f, xs, ts), strict=True):
        _close(op, tp, "primal")
        _close(ot, tt, "tangent")


# -- methods and in-place changes (through views too) under forward mode --------------------------------
def _setitem(z: Any, index: Any, value: Any) -> Any:
    z[index] = value
    return z


METHOD_CASES: dict[str, Callable[..., Any]] = {
    "setitem": lambda L, a, b: _setitem(a * 1.0, 1, b),
    "setitem advanced": lambda L, a, b: _setitem(a * 1.0, L.tensor([0, 2]), b * 2.0),
    "copy_": lambda L, a, b: (a * 0.0).copy_(b.expand(3, 4)),
    "expand_as": lambda L, a, b: b.expand_as(a) * a,
    "view_as": lambda L, a, b: a.reshape(12).view_as(a),
    "T": lambda L, a, b: a.T,
    "mH": lambda L, a, b: a.mH,
    "fill_": lambda L, a, b: (a * 1.0).fill_(2.0) + a,
    "zero_": lambda L, a, b: (a * 1.0).zero_() + b,
    "clamp_": lambda L, a, b: (a * 1.0).clamp_(-0.5, 0.5),
    "pow_": lambda L, a, b: (a * 1.0).pow_(2),
    "+=": lambda L, a, b: (a * 1.0).__iadd__(b),
    "*= a dual": lambda L, a, b: (a * 1.0).__imul__(b),
    "sub_ alpha": lambda L, a, b: (a * 1.0).sub_(b, alpha=2.0),
    "where method": lambda L, a, b: a.where(a > 0, b),
    "in place through a view": lambda L, a, b: (lambda z: (z[0].mul_(b), z)[1])(a * 1.0),
    "a view after its base changed": lambda L, a, b: (lambda z, v: (z.mul_(b), v * 1.0)[1])(*(lambda z: (z, z[1]))(
        a * 1.0)),
}


@pytest.mark.parametrize("name", sorted(METHOD_CASES))
def test_methods_and_inplace_match_torch(name: str) -> None:
    f = METHOD_CASES[name]
    xs, ts = _arrays(((3, 4), (4,)), "any", 12), _arrays(((3, 4), (4,)), "any", 13)
    for (op, ot), (tp, tt) in zip(_jvp(gc, gfw, f, xs, ts), _jvp(torch, tfw, f, xs, ts), strict=True):
        _close(op, tp, f"{name} primal")
        _close(ot, tt, f"{name} tangent")


def test_tangents_survive_backward_and_later_inplace_changes() -> None:
    """Tangents are computed before a backward lets saved values go, and before an in-place change
    overwrites values their rules read (PyTorch computes them with the operation)."""
    def run(L: Any, fw: Any) -> list:
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, L.tensor([1.0, -1.0, 0.5]))
            y, z, w = L.softmax(d * 2.0, 0), L.logsumexp(d, 0), L.norm(d)
            (y.sum() + z + w).backward()
            e = d * 1.0
            v = L.var(e)
            e.add_(1.0)
            return [fw.unpack_dual(r).tangent.detach().numpy().copy() for r in (y, z, w, v)]

    for ours, theirs in zip(run(gc, gfw), run(torch, tfw), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_printing_and_make_dual_node_match_torch() -> None:
    def run(L: Any, fw: Any) -> list[str]:
        with fw.dual_level():
            x = L.tensor([1.0, 2.0], requires_grad=True)
            d = fw.make_dual(x, L.ones(2))
            s = fw.make_dual(L.tensor(2.0), L.tensor(1.0))
            return [type(d.grad_fn).__name__ if L is torch else d.grad_fn.name(),
                    repr(L.tensor(3.0) * s), repr(fw.make_dual(L.tensor([1.0, 2.0]), L.ones(2)) * 2.0),
                    repr(L.ones(2, 2) * fw.make_dual(L.tensor([1.0, 2.0]), L.ones(2)))]

    assert run(gc, gfw) == run(torch, tfw)
