"""Random compositions of batched operations under vmap, against `torch.func.vmap` (issue 22).

A generated program chains operations that have batching rules (elementwise, reductions with keepdim, matrix
products, transposes, softmax, indexing, joins, where, clamp) on a sample `x` with two other inputs `y` (the
sample's shape) and `w` (a square matrix). Each program is mapped with random in_dims (None for some inputs,
negative dims), nested in a second level, and composed with grad, jacrev and jacfwd in both orders (the
transform inside vmap, and vmap inside the transform), in float64 and in float32.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

M, N = 3, 4  # a sample's shape (the programs keep it, or its transpose)

# (name, the operation on (lib, t, y, w) -> t); all keep the shape (M, N), or (N, M) for those marked "T"
UNARY = ["sin", "tanh", "sigmoid", "cos", "atan", "relu", "abs", "exp"]
STEPS: list[tuple[str, Callable[..., Any]]] = [
    *[(u, lambda L, t, y, w, u=u: getattr(L, u)(t) if u != "exp" else (t * 0.3).exp()) for u in UNARY],
    ("mul y", lambda L, t, y, w: t * y),
    ("add y", lambda L, t, y, w: L.add(t, y, alpha=0.5)),
    ("sub row", lambda L, t, y, w: t - y[0]),
    ("div", lambda L, t, y, w: t / (y * y + 1.0)),
    ("matmul w", lambda L, t, y, w: t @ w * 0.5),
    ("mm y.T", lambda L, t, y, w: L.mm(t, y.T)[:, :1] * t),
    ("center", lambda L, t, y, w: t - t.mean(-1, keepdim=True)),
    ("sum0", lambda L, t, y, w: t * t.sum(0, keepdim=True)),
    ("amax", lambda L, t, y, w: t - t.amax(dim=1, keepdim=True)),
    ("softmax", lambda L, t, y, w: L.softmax(t, dim=-1)),
    ("log_softmax", lambda L, t, y, w: L.log_softmax(t, 0)),
    ("logsumexp", lambda L, t, y, w: t + L.logsumexp(t, 1, keepdim=True)),
    ("norm", lambda L, t, y, w: t / (t.norm(dim=1, keepdim=True) + 1.0)),
    ("where", lambda L, t, y, w: L.where(t > y, t, y * 0.5)),
    ("clamp", lambda L, t, y, w: t.clamp(-0.8, 0.8)),
    ("maximum", lambda L, t, y, w: L.maximum(t, y)),
    ("pow", lambda L, t, y, w: (t * t + 0.5) ** 1.5),
    ("flip rows", lambda L, t, y, w: t[[2, 0, 1]]),
    ("slice cat", lambda L, t, y, w: L.cat([t[1:], t[:1]], 0)),
    ("stack sum", lambda L, t, y, w: L.stack([t, y], 0).sum(0)),
    ("reshape", lambda L, t, y, w: t.reshape(N, M).reshape(M, N)),
    ("unsqueeze", lambda L, t, y, w: (t.unsqueeze(0) * y.unsqueeze(1)).mean(1)),
    ("transpose twice", lambda L, t, y, w: t.transpose(0, 1).contiguous().t()),
    ("permute expand", lambda L, t, y, w: t.permute(1, 0).unsqueeze(0).expand(2, N, M).mean(0).T),
    ("setitem clone", lambda L, t, y, w: _set(t, y)),
    ("in place", lambda L, t, y, w: _inplace(t, y)),
    ("linear", lambda L, t, y, w: L.nn.functional.linear(t, w, y[0])),
    ("gelu", lambda L, t, y, w: L.nn.functional.gelu(t)),
    ("var", lambda L, t, y, w: t * t.var(1, keepdim=True)),
]


def _set(t: Any, y: Any) -> Any:
    u = t.clone()
    u[0] = y[1] * 2.0
    return u


def _inplace(t: Any, y: Any) -> Any:
    u = t * 1.0
    u.mul_(y).add_(1.0)
    return u


def program(seed: int) -> tuple[str, Callable[..., Any]]:
    rng = random.Random(seed)
    steps = [rng.choice(STEPS) for _ in range(rng.randint(2, 5))]

    def f(L: Any, x: Any, y: Any, w: Any) -> Any:
        t = x
        for _, step in steps:
            t = step(L, t, y, w)
        return t

    return " > ".join(name for name, _ in steps), f


def _insert(rng: np.random.Generator, shape: list[int], size: int) -> int:
    pos = int(rng.integers(0, len(shape) + 1))
    shape.insert(pos, size)
    return pos - len(shape) if rng.random() < 0.5 else pos


def draw(seed: int, levels: int) -> tuple[list[np.ndarray], list[tuple[Any, ...]]]:
    """Arrays for (x, y, w) and in_dims per level (outermost first); x is mapped at every level."""
    rng = np.random.default_rng(seed)
    shapes = [[M, N], [M, N], [N, N]]
    per_level = []
    for _ in range(levels):
        size = int(rng.integers(1, 4))
        dims = tuple(_insert(rng, s, size) if k == 0 or rng.random() < 0.5 else None for k, s in enumerate(shapes))
        per_level.append(dims)
    return [rng.standard_normal(s) for s in shapes], per_level[::-1]


def _vmapped(lib: Any, f: Any, per_level: list[tuple[Any, ...]]) -> Any:
    for dims in reversed(per_level):
        f = lib.func.vmap(f, in_dims=dims)
    return f


# how the program is mapped and differentiated: (name, build(lib, f, per_level) -> function of (x, y, w))
def _plain(lib: Any, f: Any, lv: list) -> Any:
    return _vmapped(lib, f, lv)


def _grad_inside(lib: Any, f: Any, lv: list) -> Any:
    return _vmapped(lib, lib.func.grad(lambda x, y, w: (f(x, y, w) ** 2).sum(), argnums=(0, 1)), lv)


def _jacrev_inside(lib: Any, f: Any, lv: list) -> Any:
    return _vmapped(lib, lib.func.jacrev(f), lv)


def _jacfwd_inside(lib: Any, f: Any, lv: list) -> Any:
    return _vmapped(lib, lib.func.jacfwd(f, argnums=1), lv)


def _grad_outside(lib: Any, f: Any, lv: list) -> Any:
    return lib.func.grad(lambda x, y, w: _vmapped(lib, f, lv)(x, y, w).sin().sum(), argnums=(0, 2))


def _jacrev_outside(lib: Any, f: Any, lv: list) -> Any:
    return lib.func.jacrev(lambda x, y, w: _vmapped(lib, f, lv)(x, y, w).sum(-1))


def _vjp_inside(lib: Any, f: Any, lv: list) -> Any:
    def g(x: Any, y: Any, w: Any) -> Any:
        out, pull = lib.func.vjp(f, x, y, w)
        return pull(out.cos())

    return _vmapped(lib, g, lv)


def _jvp_inside(lib: Any, f: Any, lv: list) -> Any:
    return _vmapped(lib, lambda x, y, w: lib.func.jvp(lambda x: f(x, y, w), (x,), (y,))[1], lv)


MODES = {"vmap": _plain, "vmap(grad)": _grad_inside, "vmap(jacrev)": _jacrev_inside,
         "vmap(jacfwd)": _jacfwd_inside, "grad(vmap)": _grad_outside, "jacrev(vmap)": _jacrev_outside,
         "vmap(vjp)": _vjp_inside, "vmap(jvp)": _jvp_inside}


def run(lib: Any, seed: int, levels: int, mode: str, dtype: Any) -> list[np.ndarray]:
    _, f = program(seed)
    arrays, per_level = draw(seed, levels)
    xs = [lib.tensor(a, dtype=dtype) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.filterwarnings("error", message=".*performance drop.*")  # no operation may take the loop
        out = MODES[mode](lib, lambda x, y, w: f(lib, x, y, w), per_level)(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    return [o.detach().numpy() for o in outs]


CASES = [(seed, levels, mode) for seed in range(24) for levels in (1, 2) for mode in MODES
         if levels == 1 or seed % 3 == 0]


@pytest.mark.parametrize(("seed", "levels", "mode"), CASES)
def test_composition_matches_torch(seed: int, levels: int, mode: str) -> None:
    torch.set_default_dtype(torch.float64)
    what = f"{program(seed)[0]} under {mode}, in_dims {draw(seed, levels)[1]}"
    ours, theirs = run(gc, seed, levels, mode, gc.float64), run(torch, seed, levels, mode, torch.float64)
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape, f"{what}: shape {a.shape} against {b.shape}"
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11, err_msg=what)


@pytest.mark.parametrize(("seed", "mode"), [(s, m) for s in range(8) for m in ("vmap", "vmap(grad)", "jacrev(vmap)")])
def test_composition_in_float32(seed: int, mode: str) -> None:
    what = f"{program(seed)[0]} under {mode}, in_dims {draw(seed, 2)[1]}"
    ours, theirs = run(gc, seed, 2, mode, gc.float32), run(torch, seed, 2, mode, torch.float32)
    reference = run(torch, seed, 2, mode, torch.float64)
    for a, b, r in zip(ours, theirs, reference, strict=True):
        assert_float32_close(a, b, r, steps=200, scale=max(1.0, float(np.abs(r).max(initial=0))), what=what)


def test_the_programs_cover_every_step() -> None:
    used = {name for seed in range(24) for name in program(seed)[0].split(" > ")}
    assert len(used) >= len(STEPS) - 4, set(n for n, _ in STEPS) - used
