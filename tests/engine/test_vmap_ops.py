"""vmap of every operation with a batching rule, against `torch.func.vmap` (issue 22).

Each registered operation's sample call (autograd/spec.py: written with PyTorch's API, run on gradcalc and on
PyTorch alike) is mapped with random `in_dims` (None for some inputs, negative dims for others), at random batch
sizes, alone, nested in a second vmap level, and under `grad`; values are compared in float64, and in float32
against a float64 reference (tests/precision.py). None of these may take the per-sample loop: every operation
of the specs has a rule, so the fallback's performance warning must not appear.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import gradcalc as gc
from gradcalc.autograd import spec
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

SAMPLED = sorted(name for name, op in spec.OPS.items() if op.sample is not None)
FALLBACK = "There is a performance drop because we have not yet implemented the batching rule"


def _draw(op: spec.OpSpec, seed: int, levels: int) -> tuple[list[np.ndarray], list[tuple[Any, ...]]]:
    """Arrays for the sample's inputs, each batched at `levels` random dims (None: not mapped at that level),
    with at least one input mapped at every level; returns the arrays and, per level (outermost first), the
    in_dims."""
    rng = np.random.default_rng(seed)
    shapes = [list(s) for s in op.sample.shapes]
    dims_per_level: list[tuple[Any, ...]] = []
    for _ in range(levels):  # innermost first: each level inserts its batch dim into the shapes so far
        size = int(rng.integers(1, 4))
        dims: list[Any] = []
        for s in shapes:
            if rng.random() < 0.3:
                dims.append(None)
                continue
            pos = int(rng.integers(0, len(s) + 1))
            s.insert(pos, size)
            dims.append(pos - (len(s)) if rng.random() < 0.5 else pos)  # negative half the time
        if all(d is None for d in dims):
            shapes[0].insert(0, size)
            dims[0] = 0
        dims_per_level.append(tuple(dims))
    arrays = [op.sample.domain.draw(rng, tuple(s)) for s in shapes]
    return arrays, dims_per_level[::-1]


def _loop(f: Any, in_dims: tuple[Any, ...]) -> Any:
    """vmap by its definition, on PyTorch: f on each sample, the results stacked at 0 (the reference where
    torch.func.vmap itself fails: its batching rule of nested mse_loss does)."""

    def mapped(*xs: Any) -> Any:
        size = next(x.shape[d] for x, d in zip(xs, in_dims, strict=True) if d is not None)
        outs = [_outputs(f(*[x if d is None else x.select(d, i) for x, d in zip(xs, in_dims, strict=True)]))
                for i in range(size)]
        return tuple(torch.stack(list(col)) for col in zip(*outs, strict=True))

    return mapped


def _mapped(lib: Any, f: Any, dims_per_level: list[tuple[Any, ...]], loop: bool = False) -> Any:
    for dims in reversed(dims_per_level):  # the innermost level wraps f first
        f = _loop(f, dims) if loop else lib.func.vmap(f, in_dims=dims)
    return f


def _outputs(y: Any) -> list[Any]:
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _run(lib: Any, op: spec.OpSpec, arrays: list[np.ndarray], dims: list[tuple[Any, ...]], dtype: Any,
         grad: bool = False, loop: bool = False) -> list[np.ndarray] | str:
    """The mapped sample on `lib` (its values), or the error's type name; `loop`: PyTorch's, sample by
    sample."""
    xs = [lib.tensor(a, dtype=dtype) for a in arrays]

    def f(*a: Any) -> Any:
        return op.sample.call(lib, *a)

    if grad:
        def loss(*a: Any) -> Any:
            total = 0.0
            for k, y in enumerate(_outputs(op.sample.call(lib, *a))):
                if y.is_floating_point():
                    total = total + (y * (k + 1.5)).sin().sum()
            return total

        f = lib.func.grad(loss)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.filterwarnings("error", message=".*performance drop.*")
            out = _mapped(lib, f, dims, loop)(*xs)
    except Exception as exc:  # noqa: BLE001 - the error's type is compared with PyTorch's
        return type(exc).__name__ + (": " + str(exc) if FALLBACK in str(exc) else "")
    # (force: sgn's gradient in PyTorch is a ZeroTensor)
    return [np.asarray(y.detach().numpy(force=True) if isinstance(y, torch.Tensor) else y.detach().numpy())
            for y in _outputs(out)]


def _theirs(op: spec.OpSpec, arrays: list[np.ndarray], dims: list[tuple[Any, ...]], dtype: Any,
            grad: bool = False) -> tuple[list[np.ndarray] | str, list[np.ndarray] | str | None]:
    """torch.func.vmap's result, and where it fails, the per-sample loop's."""
    theirs = _run(torch, op, arrays, dims, dtype, grad)
    return theirs, (_run(torch, op, arrays, dims, dtype, grad, loop=True) if isinstance(theirs, str) else None)


def _same(name: str, ours: Any, theirs: Any, what: str) -> None:
    assert not isinstance(ours, str), f"{name} {what}: gradcalc {ours}, PyTorch's values"
    assert len(ours) == len(theirs), what
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape, f"{name} {what}: shape {a.shape} against {b.shape}"
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True, err_msg=f"{name} {what}")


def _compare(name: str, ours: Any, both: tuple[Any, Any], what: str) -> None:
    """gradcalc's mapped result against torch.func.vmap's; where PyTorch's vmap fails, gradcalc's may fail
    too (PyTorch's error; never the fallback's) or give what the per-sample loop gives (PyTorch's vmap fails
    where its own rule is wrong: nested mse_loss)."""
    theirs, loop = both
    if not isinstance(theirs, str):
        _same(name, ours, theirs, what)
    elif isinstance(ours, str):  # PyTorch's error (by its type)
        assert ours == theirs, f"{name} {what}: gradcalc {ours}, PyTorch {theirs}"
    else:
        assert not isinstance(loop, str), f"{name} {what}: gradcalc gives values where PyTorch fails: {theirs}"
        _same(name, ours, loop, what)


def _cases(name: str) -> list[tuple[int, int]]:
    return [(seed, levels) for seed in range(3) for levels in (1, 2)]


@pytest.mark.parametrize("name", SAMPLED)
def test_vmap_of_each_operation_matches_torch(name: str) -> None:
    op = spec.OPS[name]
    torch.set_default_dtype(torch.float64)
    for seed, levels in _cases(name):
        arrays, dims = _draw(op, seed, levels)
        what = f"in_dims {dims}, shapes {[a.shape for a in arrays]}"
        _compare(name, _run(gc, op, arrays, dims, gc.float64), _theirs(op, arrays, dims, torch.float64), what)


@pytest.mark.parametrize("name", SAMPLED)
def test_vmap_of_grad_of_each_operation_matches_torch(name: str) -> None:
    op = spec.OPS[name]
    torch.set_default_dtype(torch.float64)
    for seed in range(2):
        arrays, dims = _draw(op, 10 + seed, 1)
        what = f"vmap(grad) in_dims {dims}, shapes {[a.shape for a in arrays]}"
        _compare(name, _run(gc, op, arrays, dims, gc.float64, grad=True),
                 _theirs(op, arrays, dims, torch.float64, grad=True), what)


@pytest.mark.parametrize("name", SAMPLED)
def test_vmap_of_each_operation_in_float32(name: str) -> None:
    op = spec.OPS[name]
    arrays, dims = _draw(op, 20, 1)
    ours = _run(gc, op, arrays, dims, gc.float32)
    theirs = _theirs(op, arrays, dims, torch.float32)
    reference = _theirs(op, arrays, dims, torch.float64)
    if isinstance(reference[0], str):  # PyTorch's vmap fails: gradcalc fails as it does, or gives what its loop does
        if isinstance(ours, str) or isinstance(reference[1], str):
            _compare(name, ours, reference, "float32")
            return
        theirs, reference = (theirs[1] if theirs[1] is not None else theirs[0]), reference[1]
    else:
        theirs, reference = theirs[0], reference[0]
    assert not isinstance(ours, str), f"{name}: {ours}"
    for k, (a, b, r) in enumerate(zip(ours, theirs, reference, strict=True)):
        if b.dtype != np.float32:  # indices, masks: exact
            assert a.dtype == b.dtype, f"{name}[{k}]: dtype {a.dtype} against {b.dtype}"
            np.testing.assert_array_equal(a, b)
            continue
        scale = max(float(np.abs(r).max(initial=0.0)), max(float(np.abs(v).max(initial=0)) for v in arrays))
        assert_float32_close(a, b, r, steps=64, scale=scale, what=f"{name}[{k}] in_dims {dims}")
