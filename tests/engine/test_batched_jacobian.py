"""The batched backward of `func.jacrev` / `jacobian(vectorize=True)` (autograd/batched.py) against
`torch.func.jacrev`: random compositions of the operations marked batchable (broadcasting, 0-d values,
float32 and float64), checked to take the batched pass; and graphs it must not run (an unmarked operation,
a hook, freed saved values), checked to fall back to the loop with the same values or errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
import gradcalc.func as gf
from gradcalc.autograd import batched, spec

torch = pytest.importorskip("torch")


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Per batched.rows call, whether it ran the batched pass (True) or declined (False)."""
    seen: list[bool] = []
    real = batched.rows

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(batched, "rows", spy)
    return seen


# -- random programs: each step is a function of the library (gradcalc or torch), the value and the inputs
Step = Callable[[Any, Any, list], Any]

UNARY = ["sin", "cos", "exp", "tanh", "sigmoid", "relu", "abs", "atan", "sinh"]


def _unary(name: str) -> Step:
    return lambda T, z, env: getattr(T, name)(z)


def _steps(rng: np.random.Generator, shape: tuple[int, ...], inputs: list[tuple[int, ...]]) -> list[Step]:
    """A random program of 3 to 7 steps from a value of `shape`; shapes are followed to keep each step valid."""
    steps: list[Step] = []
    for _ in range(int(rng.integers(3, 8))):
        nd = len(shape)
        choices = ["unary", "scalar", "binary", "binary"]
        if nd >= 1:
            choices += ["sum", "mean", "index", "slice", "unsqueeze"]
        if nd >= 2:
            choices += ["transpose", "permute", "reshape", "matmul"]
        if nd == 1:
            choices += ["dot", "mv", "expand", "reshape"]
        kind = choices[int(rng.integers(len(choices)))]
        if kind == "unary":
            steps.append(_unary(UNARY[int(rng.integers(len(UNARY)))]))
        elif kind == "scalar":
            k = int(rng.integers(7))
            steps.append([
                lambda T, z, env: z * 1.5, lambda T, z, env: z + 0.25, lambda T, z, env: 2.0 - z,
                lambda T, z, env: z / 3.0, lambda T, z, env: z**2, lambda T, z, env: 1.3**z,
                lambda T, z, env: -z,
            ][k])
        elif kind == "binary":
            # another input (broadcast against this value where the shapes allow it) or a constant
            j = int(rng.integers(len(inputs)))
            try:
                out = np.broadcast_shapes(shape, inputs[j])
            except ValueError:
                j, out = -1, shape
            if j >= 0:
                k = int(rng.integers(6))
                op = [
                    lambda T, a, b: a + b, lambda T, a, b: a - b, lambda T, a, b: a * b,
                    lambda T, a, b: a / (b * b + 1.0), lambda T, a, b: T.maximum(a, b),
                    lambda T, a, b: T.where(a > b, a, b * 0.5),
                ][k]
                steps.append(lambda T, z, env, op=op, j=j: op(T, z, env[j]) if j % 2 == 0 else op(T, env[j], z))
                shape = out
            else:
                c = rng.standard_normal(shape[-1:] if shape else ())
                steps.append(lambda T, z, env, c=c: z * T.tensor(c, dtype=z.dtype) + T.tensor(c, dtype=z.dtype))
        elif kind in ("sum", "mean"):
            dim = int(rng.integers(-nd, nd))
            keep = bool(rng.integers(2))
            if rng.integers(3) == 0:
                steps.append(lambda T, z, env, kind=kind: getattr(z, kind)())
                shape = ()
            else:
                steps.append(lambda T, z, env, kind=kind, dim=dim, keep=keep: getattr(z, kind)(dim, keepdim=keep))
                d = dim % nd
                shape = shape[:d] + ((1,) if keep else ()) + shape[d + 1:]
        elif kind == "index":
            i = int(rng.integers(shape[0]))
            steps.append(lambda T, z, env, i=i: z[i])
            shape = shape[1:]
        elif kind == "slice":
            steps.append(lambda T, z, env: z[1:])
            shape = (max(shape[0] - 1, 0),) + shape[1:]
            if shape[0] == 0:
                steps[-1] = lambda T, z, env: z[0:]
                shape = (1,) + shape[1:]
        elif kind == "unsqueeze":
            steps.append(lambda T, z, env: z.unsqueeze(0) * 1.0)
            shape = (1,) + shape
        elif kind == "transpose":
            steps.append(lambda T, z, env: z.transpose(0, 1))
            shape = (shape[1], shape[0]) + shape[2:]
        elif kind == "permute":
            order = tuple(int(i) for i in rng.permutation(nd))
            steps.append(lambda T, z, env, order=order: z.permute(*order))
            shape = tuple(shape[i] for i in order)
        elif kind == "reshape":
            n = int(np.prod(shape))
            target = (n,) if nd >= 2 else ((1, n) if rng.integers(2) else (n, 1))
            steps.append(lambda T, z, env, target=target: z.reshape(target))
            shape = target
        elif kind == "matmul":
            m = rng.standard_normal((shape[-1], 3))
            steps.append(lambda T, z, env, m=m: z @ T.tensor(m, dtype=z.dtype))
            shape = shape[:-1] + (3,)
        elif kind == "dot":
            v = rng.standard_normal(shape)
            steps.append(lambda T, z, env, v=v: T.dot(z, T.tensor(v, dtype=z.dtype)))
            shape = ()
        elif kind == "mv":
            m = rng.standard_normal((2, shape[0]))
            steps.append(lambda T, z, env, m=m: T.mv(T.tensor(m, dtype=z.dtype), z))
            shape = (2,)
        elif kind == "expand":
            steps.append(lambda T, z, env: z.expand(2, -1) * 1.0)
            shape = (2,) + shape
    return steps


SHAPES = [(3,), (2, 3), (4, 1), (), (1, 3), (2, 1, 3)]


def _program(seed: int) -> tuple[Callable, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 3))
    shapes = [SHAPES[int(rng.integers(len(SHAPES)))] for _ in range(k)]
    values = [rng.uniform(0.2, 1.2, s) for s in shapes]
    steps = _steps(rng, shapes[0], shapes)

    def f(T: Any) -> Callable:
        def run(*xs: Any) -> Any:
            z = xs[0]
            for step in steps:
                z = step(T, z, list(xs))
            return z

        return run

    return f, values


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(60))
def test_random_programs_batched_match_torch(seed: int, dtype: str, used: list[bool]) -> None:
    f, values = _program(seed)
    argnums = tuple(range(len(values)))
    ours = gf.jacrev(f(gc), argnums=argnums)(*(gc.tensor(v, dtype=getattr(gc, dtype)) for v in values))
    theirs = torch.func.jacrev(f(torch), argnums=argnums)(*(torch.tensor(v, dtype=getattr(torch, dtype))
                                                             for v in values))
    tol = dict(rtol=1e-9, atol=1e-12) if dtype == "float64" else dict(rtol=2e-5, atol=1e-6)
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert used and all(used), "a program of marked operations only must take the batched pass"


def test_chunks_and_budget(monkeypatch: pytest.MonkeyPatch, used: list[bool]) -> None:
    """Rows in chunks (chunk_size, or the memory budget) give the same Jacobian."""
    c = np.linspace(0.5, 1.5, 60).reshape(20, 3)

    def f(T: Any) -> Callable:
        return lambda x: ((x * T.tensor(c)).sin() * x).tanh().reshape(60)

    x = np.array([0.1, 0.2, 0.3])
    expected = torch.func.jacrev(f(torch))(torch.tensor(x)).numpy()
    for size in (None, 1, 7, 60, 1000):
        got = gf.jacrev(f(gc), chunk_size=size)(gc.tensor(x)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(batched, "BUDGET", 200)  # a row's largest gradient has 60 elements: chunks of 3
    np.testing.assert_allclose(gf.jacrev(f(gc))(gc.tensor(x)).numpy(), expected, rtol=1e-12, atol=1e-14)
    assert all(used)


def test_functional_jacobian_vectorize(used: list[bool]) -> None:
    def f(T: Any) -> Callable:
        return lambda a, b: ((a[:, None] * b).exp().sum(0), (a * 2.0).sin())

    a, b = np.array([0.3, -0.2]), np.array([[0.1, 0.5, 0.7], [0.2, 0.4, 0.6]])
    ours = gc.autograd.functional.jacobian(f(gc), (gc.tensor(a), gc.tensor(b)), vectorize=True)
    theirs = torch.autograd.functional.jacobian(f(torch), (torch.tensor(a), torch.tensor(b)), vectorize=True)
    for row_a, row_b in zip(ours, theirs, strict=True):
        for x, y in zip(row_a, row_b, strict=True):
            np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-14)
    assert used and all(used)


# -- what falls back to the loop -------------------------------------------------------------------------
def test_unmarked_operation_falls_back(used: list[bool]) -> None:
    def f(T: Any) -> Callable:
        return lambda x: T.softmax(x.sin() * x, 0) * 2.0  # softmax's node is not marked batchable

    x = np.array([0.3, -0.7, 1.1, 0.4])
    got = gf.jacrev(f(gc))(gc.tensor(x)).numpy()
    np.testing.assert_allclose(got, torch.func.jacrev(f(torch))(torch.tensor(x)).numpy(), rtol=1e-12)
    assert used == [False]


def test_hook_falls_back_and_runs(used: list[bool]) -> None:
    calls = []

    def f(x: Any) -> Any:
        y = x.sin()
        y.register_hook(lambda g: calls.append(1))
        return y * 3.0

    got = gf.jacrev(f)(gc.tensor([0.1, 0.2, 0.3])).numpy()
    np.testing.assert_allclose(got, np.diag(3.0 * np.cos([0.1, 0.2, 0.3])), rtol=1e-12)
    assert used == [False] and len(calls) == 3  # the loop: one backward per row


def test_create_graph_and_forward_mode_keep_the_loop(used: list[bool]) -> None:
    """Inside another transform (a graph is kept) or under forward mode the batched pass is not tried: of
    jacrev(jacrev(f)) only the outer one tries it, of jacfwd(jacrev(f)) neither."""
    x = np.array([0.3, -0.4])

    def f(T: Any) -> Callable:
        return lambda v: (v.sin() * v).sum()

    for outer in ("jacrev", "jacfwd"):
        got = getattr(gf, outer)(gf.jacrev(f(gc)))(gc.tensor(x)).numpy()
        want = getattr(torch.func, outer)(torch.func.jacrev(f(torch)))(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        assert len(used) == (1 if outer == "jacrev" else 0)
        used.clear()


def _fixed_cases() -> list[tuple[str, Callable, list[tuple[int, ...]]]]:
    m = np.random.default_rng(1).standard_normal((3, 2))
    return [
        ("bmm", lambda T, a, b: T.bmm(a, b).exp(), [(2, 3, 4), (2, 4, 2)]),
        ("matmul 3-d", lambda T, a, b: (a @ b).sin(), [(2, 3, 4), (4, 2)]),
        ("vector @ matrix", lambda T, a, b: (a @ b) * a.sum(), [(3,), (3, 2)]),
        ("t", lambda T, a, b: (a.t() * b).cos(), [(2, 3), (3, 2)]),
        ("squeeze", lambda T, a, b: a.squeeze() * b.squeeze(1), [(1, 3), (3, 1)]),
        ("clamp", lambda T, a, b: T.clamp(a, 0.3, 0.9) * T.clamp(b, min=0.5) - T.clamp(a, max=0.6), [(4,), (4,)]),
        ("alias", lambda T, a, b: a[...] * b[..., 0], [(3,), (3, 2)]),
        ("minimum", lambda T, a, b: T.minimum(a, b).sqrt(), [(2, 3), (3,)]),
        ("constants", lambda T, a, b: (a * T.tensor(m)).sum(1, keepdim=True) + b.mean(), [(3, 2), (2, 2)]),
        ("scalar output", lambda T, a, b: (a * b).sum(), [(3,), ()]),
        ("output is the input", lambda T, a, b: a, [(2, 2), (3,)]),
        ("independent input", lambda T, a, b: a.exp(), [(3,), (2,)]),
        ("output reused", lambda T, a, b: (lambda y: y * y + y.tanh())(a * b), [(3,), (3,)]),
    ]


@pytest.mark.parametrize("case", _fixed_cases(), ids=lambda c: c[0])
def test_fixed_cases_batched_match_torch(case: Any, used: list[bool]) -> None:
    _, fn, shapes = case
    rng = np.random.default_rng(5)
    values = [rng.uniform(0.1, 1.2, s) for s in shapes]
    ours = gf.jacrev(lambda *xs: fn(gc, *xs), argnums=(0, 1))(*(gc.tensor(v) for v in values))
    theirs = torch.func.jacrev(lambda *xs: fn(torch, *xs), argnums=(0, 1))(*(torch.tensor(v) for v in values))
    for a, b in zip(ours, theirs, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
    assert used and all(used)


def test_changed_saved_value_falls_back_to_the_loops_error(used: list[bool]) -> None:
    def f(x: Any) -> Any:
        a = x * 1.0
        b = a.sin()  # saves a
        a.add_(1.0)  # ... which changes here: backward must refuse
        return b

    with pytest.raises(RuntimeError, match="changed in place"):
        gf.jacrev(f)(gc.tensor([0.1, 0.2]))
    assert used == [False]


# -- arrays reused inside the batched walk (temporaries.spare_times, the walk's pool and in-place sums) -------
def _fan_outs(T: Any, x: Any, c: Any) -> Any:
    """Gradients that fan out (one value feeding three nodes, `z + z`, `z * z`), a broadcast constant, a view
    of the seed, and products by a number, an array and a 0-d value."""
    z = x * c
    for _ in range(3):
        z = (z.sin() * z + z.exp() * 0.1).tanh()
        z = (z + z * z + (z * x).sigmoid() * z.sum(0) * 0.1).tanh()
        z = ((z + (z * 1.5).exp().cos() * z) + z.sin()).tanh()  # `+` hands one array to a sum and a product
    return (z.reshape(-1) * z.reshape(-1)[0]).reshape(2, -1)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reused_arrays_match_torch_and_change_nothing(dtype: str, used: list[bool],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from gradcalc.autograd import temporaries

    c_np = np.linspace(0.5, 1.5, 60).reshape(15, 4)
    x_np = np.array([0.1, -0.2, 0.3, 0.4])
    c, x = gc.tensor(c_np, dtype=getattr(gc, dtype)), gc.tensor(x_np, dtype=getattr(gc, dtype))
    spared = []
    real = temporaries.spare_times

    def spy(f: Any, g: Any, last: bool = True) -> Any:
        spared.append(last and g is temporaries.state.spare)
        return real(f, g, last)

    monkeypatch.setattr(temporaries, "spare_times", spy)
    import gradcalc.autograd.ops.arithmetic as A
    import gradcalc.autograd.ops.unary as U
    monkeypatch.setattr(A, "spare_times", spy)
    monkeypatch.setattr(U, "spare_times", spy)

    ours = gf.jacrev(lambda v: _fan_outs(gc, v, c))(x).numpy()
    tc, tx = torch.tensor(c_np, dtype=getattr(torch, dtype)), torch.tensor(x_np, dtype=getattr(torch, dtype))
    theirs = torch.func.jacrev(lambda v: _fan_outs(torch, v, tc))(tx).numpy()
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else dict(rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(ours, theirs, **tol)
    assert used and all(used) and any(spared), "the walk must have handed gradients over"
    np.testing.assert_array_equal(c.numpy(), c_np.astype(dtype))  # nothing outside the walk was written
    np.testing.assert_array_equal(x.numpy(), x_np.astype(dtype))
    # the same Jacobian, to the last bit, with no array reused
    monkeypatch.setattr(temporaries, "REUSE_TEMPORARIES", False)
    np.testing.assert_array_equal(gf.jacrev(lambda v: _fan_outs(gc, v, c))(x).numpy(), ours)


# -- every operation's spec: its sample call (spec.py), batched exactly when all its nodes say they can be --------
SAMPLED = sorted(name for name, op in spec.OPS.items() if op.sample is not None)


def _graph(root: Any) -> list:
    """Every node below `root`, each once."""
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(nxt for nxt, _ in n.next_functions)
    return out


@pytest.mark.parametrize("name", SAMPLED)
def test_every_specs_batched_backward_matches_torch_jacrev(name: str) -> None:
    """`batched.rows` runs exactly when every node of the sample's graph declares a batched backward in its spec,
    and then gives torch.func.jacrev's Jacobian."""
    op = spec.OPS[name]

    def inputs(lib: Any) -> list:
        rng = np.random.default_rng(5)
        return [lib.tensor(op.sample.domain.draw(rng, s), requires_grad=True) for s in op.sample.shapes]

    xs, txs = inputs(gc), [t.detach() for t in inputs(torch)]
    ys = op.sample.call(gc, *xs)
    for k, y in enumerate(ys if isinstance(ys, tuple) else (ys,)):
        if not y.requires_grad:
            continue
        nodes = [n for n in _graph(y.grad_fn) if n.name() != "AccumulateGrad"]
        runs = all(type(n).batchable and n.num_outputs == 1 for n in nodes)
        rows = batched.rows(y, xs)
        assert (rows is not None) == runs, f"{name}: the batched backward {'did not run' if runs else 'ran'}"
        if rows is None:
            continue

        def output(*a: Any, k: int = k) -> Any:
            out = op.sample.call(torch, *a)
            return out[k] if isinstance(out, tuple) else out

        theirs = torch.func.jacrev(output, argnums=tuple(range(len(txs))))(*txs)
        for i, (o, t) in enumerate(zip(rows, theirs, strict=True)):
            np.testing.assert_allclose(o, t.numpy(force=True), rtol=1e-9, atol=1e-11,  # (force: sgn's ZeroTensor)
                                       err_msg=f"{name}: d out {k} / d in {i}")


def test_saved_tensors_hooks_keep_the_batched_pass_off_only_their_own_graphs() -> None:
    """A graph whose saved values a pack hook packed runs the loop (its unpack hook must run per backward, as
    PyTorch's); once the hooks' block is left, a new graph takes the batched pass again."""
    from gradcalc.autograd.graph import saved_tensors_hooks

    x = gc.tensor([1.0, 2.0], dtype=gc.float64, requires_grad=True)
    unpacked: list[int] = []
    with saved_tensors_hooks(lambda t: t, lambda t: (unpacked.append(1), t)[1]):
        packed = x.sin() * x
    assert batched.rows(packed, [x]) is None
    fresh = x.sin() * x
    rows = batched.rows(fresh, [x])
    assert rows is not None
    xt = torch.tensor([1.0, 2.0], dtype=torch.float64)
    np.testing.assert_allclose(rows[0], torch.func.jacrev(lambda v: v.sin() * v)(xt).numpy(), rtol=1e-15)
