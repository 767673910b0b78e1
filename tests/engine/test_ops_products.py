"""The products and solvers of ops/products.py and ops/decompositions.py against PyTorch, over generated cases:
values, first- and second-order gradients, forward-mode tangents, vmap (in_dims 0 and 1), float32 (measured
against a float64 run, tolerances scaled by the condition number where a solve is involved), and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

RTOL, ATOL = 1e-9, 1e-10


def _spd(L: Any, a: Any) -> Any:
    return a @ a.mT + 3 * L.eye(a.shape[-1], dtype=a.dtype)


# name -> (shapes, call(lib, *tensors)); every call returns one tensor
CASES: dict[str, tuple[tuple[tuple[int, ...], ...], Any]] = {
    "cross": (((5, 3), (5, 3)), lambda L, a, b: L.linalg.cross(a, b)),
    "cross dim0": (((3, 4), (3, 1)), lambda L, a, b: L.cross(a, b.expand(3, 4), dim=0)),
    "cross batch": (((2, 4, 3), (4, 3)), lambda L, a, b: L.linalg.cross(a, b.expand(2, 4, 3), dim=-1)),
    "kron": (((2, 3), (3, 2)), lambda L, a, b: L.kron(a, b)),
    "kron ranks": (((2,), (3, 2, 2)), lambda L, a, b: L.kron(a, b)),
    "tensordot 2": (((2, 3, 4), (3, 4, 5)), lambda L, a, b: L.tensordot(a, b, 2)),
    "tensordot 0": (((2, 3), (4,)), lambda L, a, b: L.tensordot(a, b, 0)),
    "tensordot lists": (((2, 3, 4), (4, 2, 3)), lambda L, a, b: L.tensordot(a, b, ([0, 2], [1, 0]))),
    "tensordot all": (((3, 4), (3, 4)), lambda L, a, b: L.tensordot(a, b, 2)),
    "inner": (((2, 3), (4, 3)), lambda L, a, b: L.inner(a, b)),
    "inner vectors": (((3,), (3,)), lambda L, a, b: L.inner(a, b)),
    "inner scalar": (((), (2, 3)), lambda L, a, b: L.inner(a, b)),
    "dist": (((2, 3), (3,)), lambda L, a, b: L.dist(a, b)),
    "dist p1": (((4,), (4,)), lambda L, a, b: L.dist(a, b, 1)),
    "dist p3": (((4,), (2, 4)), lambda L, a, b: L.dist(a, b, 3)),
    "dist pinf": (((4,), (4,)), lambda L, a, b: L.dist(a, b, float("inf"))),
    "cdist": (((4, 3), (5, 3)), lambda L, a, b: L.cdist(a, b)),
    "cdist p1 batch": (((2, 4, 3), (2, 5, 3)), lambda L, a, b: L.cdist(a, b, p=1)),
    "cdist p3": (((4, 2), (3, 2)), lambda L, a, b: L.cdist(a, b, p=3.0)),
    "cdist p0.5": (((4, 2), (3, 2)), lambda L, a, b: L.cdist(a, b, p=0.5)),
    "addmv": (((2,), (2, 3), (3,)), lambda L, c, m, v: L.addmv(c, m, v, beta=0.5, alpha=-2.0)),
    "addmv broadcast": (((1,), (2, 3), (3,)), lambda L, c, m, v: c.addmv(m, v)),
    "addr": (((2, 3), (2,), (3,)), lambda L, c, a, b: L.addr(c, a, b, alpha=3.0)),
    "addr broadcast": (((3,), (2,), (3,)), lambda L, c, a, b: L.addr(c, a, b, beta=2.0)),
    "baddbmm": (((2, 2, 4), (2, 2, 3), (2, 3, 4)), lambda L, c, a, b: L.baddbmm(c, a, b, beta=0.5, alpha=2.0)),
    "baddbmm broadcast": (((4,), (2, 2, 3), (2, 3, 4)), lambda L, c, a, b: c.baddbmm(a, b)),
    "addbmm": (((2, 4), (3, 2, 3), (3, 3, 4)), lambda L, c, a, b: L.addbmm(c, a, b, alpha=0.5)),
    "vdot": (((5,), (5,)), lambda L, a, b: L.vdot(a, b)),
    "vecdot": (((2, 3), (3,)), lambda L, a, b: L.linalg.vecdot(a, b)),
    "vecdot dim": (((3, 2), (3, 2)), lambda L, a, b: L.linalg.vecdot(a, b, dim=0)),
    "multi_dot 3": (((2, 3), (3, 4), (4, 5)), lambda L, a, b, c: L.linalg.multi_dot([a, b, c])),
    "multi_dot vectors": (((3,), (3, 4), (4,)), lambda L, a, b, c: L.linalg.multi_dot([a, b, c])),
    "multi_dot 4": (((2, 3), (3, 4), (4, 5), (5, 2)), lambda L, a, b, c, d: L.linalg.multi_dot([a, b, c, d])),
    "matrix_power 3": (((3, 3),), lambda L, a: L.matrix_power(a, 3)),
    "matrix_power 6 batch": (((2, 3, 3),), lambda L, a: L.linalg.matrix_power(a * 0.5, 6)),
    "matrix_power -2": (((3, 3),), lambda L, a: L.matrix_power(a + 3 * L.eye(3, dtype=a.dtype), -2)),
    "matrix_power 0": (((3, 3),), lambda L, a: L.matrix_power(a, 0)),
    "solve": (((3, 3), (3,)), lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b)),
    "solve matrix": (((3, 3), (3, 2)), lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b)),
    "solve batch": (((2, 3, 3), (2, 3)), lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b)),
    "solve broadcast": (((2, 3, 3), (3, 4)), lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b)),
    "solve right": (((3, 3), (2, 3)), lambda L, a, b: L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), b, left=False)),
    "slogdet": (((3, 3),), lambda L, a: L.linalg.slogdet(a).logabsdet),
    "slogdet batch": (((2, 3, 3),), lambda L, a: L.slogdet(a)[1]),
    "logdet": (((3, 3),), lambda L, a: L.logdet(_spd(L, a))),
    "cholesky": (((3, 3),), lambda L, a: L.linalg.cholesky(_spd(L, a))),
    "cholesky upper batch": (((2, 3, 3),), lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True)),
}


def _draw(shapes: tuple[tuple[int, ...], ...], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _close(a: Any, b: Any, what: str, rtol: float = RTOL) -> None:
    x = np.asarray(a.detach()._data) if isinstance(a, gc.Tensor) else a.detach().numpy(force=True)
    y = b.detach().numpy(force=True)  # (PyTorch's zero gradients of sgn are ZeroTensors)
    assert x.shape == y.shape, what
    np.testing.assert_allclose(x, y, rtol=rtol, atol=ATOL * max(1.0, float(np.abs(y).max(initial=0))), err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_and_gradients_to_second_order(name: str, seed: int) -> None:
    shapes, call = CASES[name]
    arrays = _draw(shapes, seed)
    results = []
    for lib in (gc, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = call(lib, *xs)
        w = lib.tensor(np.random.default_rng(seed + 10).standard_normal(tuple(y.shape)))
        grads = lib.autograd.grad((y * w).sum(), xs, create_graph=True, allow_unused=True)
        pairs = [(x, g) for x, g in zip(xs, grads, strict=True) if g is not None and g.requires_grad]
        if name in NO_FORWARD:  # (cdist's gradient has no derivative in PyTorch: its own test below)
            pairs = []
        second = lib.autograd.grad(sum((g * g).sum() for _, g in pairs), xs, allow_unused=True) if pairs else []
        results.append((y, grads, second, type(y.grad_fn).__name__ if y.grad_fn else None))
    (y0, g0, s0, n0), (y1, g1, s1, n1) = results
    _close(y0, y1, f"{name}: value")
    assert n0 == n1, f"{name}: grad_fn {n0}, PyTorch's {n1}"
    for i, (a, b) in enumerate(zip(g0, g1, strict=True)):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b, f"{name}: gradient {i}")
    for i, (a, b) in enumerate(zip(s0, s1, strict=True)):
        if a is not None and b is not None:
            _close(a, b, f"{name}: second-order gradient {i}")


NO_FORWARD = {"cdist", "cdist p1 batch", "cdist p3", "cdist p0.5"}  # PyTorch has no forward derivative of cdist


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_FORWARD))
def test_forward_mode_tangents(name: str) -> None:
    shapes, call = CASES[name]
    arrays, tangents = _draw(shapes, 3), _draw(shapes, 4)
    outs = []
    for lib in (gc, torch):
        xs = tuple(lib.tensor(a) for a in arrays)
        ts = tuple(lib.tensor(t) for t in tangents)
        outs.append(lib.func.jvp(lambda *a, lib=lib: call(lib, *a), xs, ts)[1])
    _close(outs[0], outs[1], f"{name}: tangent")


def test_cdist_has_no_forward_rule_and_no_second_derivative_as_in_pytorch() -> None:
    for lib in (gc, torch):
        a = lib.tensor(np.arange(6.0).reshape(3, 2) * 0.3, requires_grad=True)
        b = lib.tensor(np.ones((2, 2)))
        (g,) = lib.autograd.grad(lib.cdist(a, b).sum(), a, create_graph=True)
        assert type(g.grad_fn).__name__ == "CdistBackwardBackward0"
        with pytest.raises(RuntimeError, match="the derivative for '_cdist_backward' is not implemented"):
            lib.autograd.grad(g.sum(), a)
        with pytest.raises((NotImplementedError, RuntimeError), match="forward AD"):
            lib.func.jvp(lambda x, lib=lib, b=b: lib.cdist(x, b), (a.detach(),), (lib.ones(3, 2),))


VMAPPED = ["cross", "cross batch", "vecdot", "cdist", "cdist p1 batch", "matrix_power 3", "solve", "solve matrix",
           "slogdet", "cholesky", "kron", "tensordot 2", "inner", "dist", "addmv", "addr", "vdot", "multi_dot 3"]


@pytest.mark.parametrize("name", VMAPPED)
@pytest.mark.parametrize("in_dim", [0, 1])
def test_vmap_over_a_batch_dim(name: str, in_dim: int) -> None:
    shapes, call = CASES[name]
    rng = np.random.default_rng(5)
    arrays = [np.moveaxis(rng.standard_normal((3, *s)), 0, min(in_dim, len(s))) for s in shapes]
    dims = tuple(min(in_dim, len(s)) for s in shapes)
    outs = []
    for lib in (gc, torch):
        xs = [lib.tensor(a) for a in arrays]
        outs.append(lib.func.vmap(lambda *a, lib=lib: call(lib, *a), in_dims=dims)(*xs))
    _close(outs[0], outs[1], f"{name}: vmap in_dims={dims}")


@pytest.mark.parametrize("name", ["cross", "kron", "tensordot 2", "addmv", "baddbmm", "multi_dot 3", "matrix_power 3",
                                  "cdist", "solve matrix", "slogdet", "cholesky"])
def test_float32_against_a_float64_run(name: str) -> None:
    shapes, call = CASES[name]
    arrays = _draw(shapes, 6)
    ours = call(gc, *[gc.tensor(a.astype(np.float32)) for a in arrays])
    theirs = call(torch, *[torch.tensor(a.astype(np.float32)) for a in arrays])
    exact = call(torch, *[torch.tensor(a) for a in arrays])
    # a solve or factorisation loses up to the condition number's digits: its inputs here are A + 3I, SPD + 3I
    condition = 1.0
    if name in ("solve matrix", "slogdet", "cholesky"):
        m = arrays[0] + 3 * np.eye(3) if name != "cholesky" else arrays[0] @ arrays[0].T + 3 * np.eye(3)
        condition = float(np.linalg.cond(m))
    assert_float32_close(np.asarray(ours._data), theirs.numpy(), exact.numpy(), steps=int(10 * condition))


ERRORS = [
    (lambda L: L.linalg.cross(L.ones(4, 2), L.ones(4, 2)), "inputs dimension -1 must have length 3. Got 2 and 2"),
    (lambda L: L.linalg.cross(L.ones(4, 3), L.ones(3)), "inputs must have the same number of dimensions"),
    (lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=-1), "tensordot expects dims >= 0, but got dims=-1"),
    (lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=1), "contracted dimensions need to match, but first has "
     "size 3 in dim -1 and second has size 4 in dim 0"),
    (lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=([1], [0, 1])), "both dimension lists should have same "
     "length"),
    (lambda L: L.inner(L.ones(2, 3), L.ones(4, 5)), "inner() the last dimension must match on both input tensors but "
     "got shapes [2, 3] and [4, 5]"),
    (lambda L: L.cdist(L.ones(4, 3), L.ones(5, 2)), "X1 and X2 must have the same number of columns. X1: 3 X2: 2"),
    (lambda L: L.cdist(L.ones(4), L.ones(5)), "cdist only supports at least 2D tensors, X1 got: 1D"),
    (lambda L: L.cdist(L.ones(4, 3), L.ones(5, 3), p=-1), "cdist only supports non-negative p values"),
    (lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(4)), "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda L: L.addr(L.ones(2, 3), L.ones(2, 1), L.ones(3)), "addr: Expected 1-D argument vec1, but got 2-D"),
    (lambda L: L.baddbmm(L.ones(2, 2, 4), L.ones(2, 2, 3), L.ones(2, 4, 4)), "Expected size for first two dimensions "
     "of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    (lambda L: L.addbmm(L.ones(2, 4), L.ones(2, 2, 3), L.ones(3, 3, 4)), "batch1 and batch2 must have same number of "
     "batches, got 2 and 3"),
    (lambda L: L.vdot(L.ones(3, 1), L.ones(3)), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda L: L.linalg.multi_dot([L.ones(3, 3)]), "multi_dot(): expected at least 2 tensors but got 1"),
    (lambda L: L.linalg.multi_dot([L.ones(3, 3), L.ones(2, 3)]), "multi_dot(): tensors 0 and 1 with shapes [3, 3] "
     "and [2, 3] cannot be multiplied"),
    (lambda L: L.matrix_power(L.ones(3, 2), 2), "linalg.matrix_power: A must be batches of square matrices, but they "
     "are 3 by 2 matrices"),
    (lambda L: L.linalg.solve(L.zeros(3, 3), L.ones(3)), "torch.linalg.solve: The solver failed because the input "
     "matrix is singular."),
    (lambda L: L.linalg.solve(L.eye(3), L.ones(4)), "linalg.solve: Incompatible shapes of A and B for the equation "
     "AX = B (3x3 and 4x1)"),
    (lambda L: L.linalg.cholesky(L.diag(L.tensor([1.0, -1.0, 1.0]))), "linalg.cholesky: The factorization could not "
     "be completed because the input is not positive-definite (the leading minor of order 2 is not "
     "positive-definite)."),
    (lambda L: L.linalg.slogdet(L.ones(2, 3)), "linalg.slogdet: A must be batches of square matrices, but they are 2 "
     "by 3 matrices"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_are_pytorchs(case: int) -> None:
    make, text = ERRORS[case]
    kinds = []
    for lib in (torch, gc):
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared with PyTorch's below
            make(lib)
        assert text in str(info.value), (lib.__name__, str(info.value))
        kinds.append(info.value)
    theirs, ours = kinds
    assert isinstance(ours, RuntimeError) == isinstance(theirs, RuntimeError)
    if isinstance(theirs, torch.linalg.LinAlgError):
        assert isinstance(ours, gc.linalg.LinAlgError)


def test_named_tuples_and_modules_load_at_first_use() -> None:
    import subprocess
    import sys

    code = ("import sys, gradcalc; m = sys.modules; print(any(k in m for k in ('gradcalc.linalg', "
            "'gradcalc.autograd.ops.products', 'gradcalc.autograd.ops.decompositions')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "False"
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    for lib in (gc, torch):
        r = lib.linalg.slogdet(lib.tensor(a))
        assert float(r.sign) == 1.0 and abs(float(r.logabsdet) - np.log(5.0)) < 1e-12
        assert type(r).__name__ == "linalg_slogdet"
