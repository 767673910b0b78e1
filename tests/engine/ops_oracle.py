"""The differential harness of the `test_ops_*` files: one scenario, written against PyTorch's API, run
on gradcalc and on PyTorch (the oracle) with the same data, and everything observable compared:
forward values, dtype, `requires_grad`, `is_leaf`, the `grad_fn` name; first-order gradients by a plain
`backward` (gradcalc's bare-array path) and by `autograd.grad(..., create_graph=True)` (the recorded
path), with the grad_fn names of those gradients; second-order gradients through them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")
torch.set_default_dtype(torch.float64)
gradcalc.set_default_dtype(gradcalc.float64)  # both in float64 (tests/conftest.py also sets it for every test)

RTOL = 1e-9
Scenario = Callable[..., Any]  # (lib, *tensors) -> tensor or tuple of tensors


def name_of(fn: Any) -> str | None:
    if fn is None:
        return None
    return fn.name() if isinstance(fn, gradcalc.autograd.Node) else type(fn).__name__


def describe(t: Any) -> Any:
    """A tensor as plain data: (values, dtype, requires_grad, is_leaf, grad_fn name)."""
    if t is None:
        return None
    data = t.detach().numpy(force=True) if isinstance(t, torch.Tensor) else np.asarray(t._data)
    dtype = str(t.dtype).removeprefix("torch.")
    return (np.array(data), dtype, t.requires_grad, t.is_leaf, name_of(t.grad_fn))


def assert_same(expected: Any, actual: Any, where: str, names: bool = True) -> None:
    """Compare two `describe`d values (or lists of them)."""
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{where}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{i}]", names)
        return
    if expected is None:
        assert actual is None, f"{where}: expected None, got {actual!r}"
        return
    assert actual is not None, f"{where}: expected a tensor, got None"
    assert actual[0].shape == expected[0].shape, f"{where}: shape {actual[0].shape} != {expected[0].shape}"
    np.testing.assert_allclose(actual[0], expected[0], rtol=RTOL, atol=1e-12, err_msg=where, equal_nan=True)
    assert actual[1:4] == expected[1:4], (
        f"{where}: (dtype, requires_grad, is_leaf) {actual[1:4]} != {expected[1:4]}"
    )
    if names:
        assert actual[4] == expected[4], f"{where}: grad_fn {actual[4]} != {expected[4]}"


def _tuple(out: Any) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _inputs(lib: Any, arrays: list[np.ndarray]) -> list[Any]:
    return [lib.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]


def run(lib: Any, scenario: Scenario, arrays: list[np.ndarray], seed: int) -> dict[str, Any]:
    """Everything observable about `scenario` on `lib`."""
    rng = np.random.default_rng(seed)
    report: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warnings are checked by the tests that expect them
        xs = _inputs(lib, arrays)
        outs = _tuple(scenario(lib, *xs))
        report["out"] = [describe(o) for o in outs]
        diff = [o for o in outs if o.requires_grad]
        if not diff:
            return report
        upstream = [rng.standard_normal(o.shape) for o in diff]
        wrt = [x for x in xs if x.requires_grad]

        # first order by a plain backward (no graph recorded)
        loss = sum((o * lib.tensor(u)).sum() for o, u in zip(diff, upstream, strict=True))
        loss.backward()
        report["backward"] = [describe(x.grad) for x in wrt]

        # first order recorded, then second order through it
        xs = _inputs(lib, arrays)
        wrt = [x for x in xs if x.requires_grad]
        outs = [o for o in _tuple(scenario(lib, *xs)) if o.requires_grad]
        vs = [lib.tensor(u, requires_grad=True) for u in upstream]
        gs = lib.autograd.grad(outs, wrt, grad_outputs=vs, create_graph=True, allow_unused=True)
        report["grad"] = [describe(g) for g in gs]
        weights = [rng.standard_normal(x.shape) for x in wrt]
        terms = [(g * lib.tensor(w)).sum() for g, w in zip(gs, weights, strict=True)
                 if g is not None and g.requires_grad]
        if terms:
            second = lib.autograd.grad(sum(terms), wrt + vs, allow_unused=True)
            report["second"] = [describe(g) for g in second]
    return report


def check(scenario: Scenario, arrays: list[np.ndarray], seed: int = 0, grad_names: bool = True) -> None:
    """Run `scenario` on both libraries and compare; `grad_names=False` skips the grad_fn names of the
    gradients (where gradcalc's double-backward graph is built differently)."""
    expected = run(torch, scenario, arrays, seed)
    actual = run(gradcalc, scenario, arrays, seed)
    assert actual.keys() == expected.keys(), f"reported {sorted(actual)} != {sorted(expected)}"
    for key in expected:
        assert_same(expected[key], actual[key], key, names=grad_names or key == "out")


def same_outcome(scenario: Callable[[Any], Any]) -> None:
    """Both libraries raise the same exception type, or agree on the value (a plain-data scenario)."""
    results = []
    for lib in (torch, gradcalc):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = scenario(lib)
            results.append(("ok", [describe(v) for v in _tuple(value)]))
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            results.append(("error", type(e).__name__))
    expected, actual = results
    assert actual[0] == expected[0], f"torch: {expected}, gradcalc: {actual}"
    if expected[0] == "error":
        assert actual[1] == expected[1], f"torch raised {expected[1]}, gradcalc {actual[1]}"
    else:
        assert_same(expected[1], actual[1], "value")


def both_raise(make: Callable[[Any], Any]) -> tuple[BaseException, BaseException]:
    """Run `make` on PyTorch and on gradcalc (warnings silenced): both must raise, an exception of the very same
    type. Returns (PyTorch's, gradcalc's), for the caller to compare their texts."""
    errors = []
    for lib in (torch, gradcalc):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared below
                make(lib)
        errors.append(info.value)
    theirs, ours = errors
    assert type(ours) is type(theirs), (ours, theirs)
    return theirs, ours


def same_error(scenario: Callable[[Any], Any], same_text: bool) -> None:
    """`same_outcome` for a scenario that fails; with `same_text`, gradcalc's message also begins with PyTorch's
    (its first line is PyTorch's text)."""
    same_outcome(scenario)
    if same_text:
        texts = []
        for lib in (torch, gradcalc):
            with pytest.raises(Exception) as info:  # noqa: PT011 - the type is compared by same_outcome
                scenario(lib)
            texts.append(str(info.value).splitlines()[0])
        assert texts[1] == texts[0]


def jvp_values(lib: Any, f: Callable[..., Any], xs: list[np.ndarray], ts: list[np.ndarray]) -> list[np.ndarray]:
    """`lib.func.jvp(f, xs, ts)` on tensors made from the arrays: [output, tangent] as arrays."""
    out, tangent = lib.func.jvp(f, tuple(lib.tensor(x) for x in xs), tuple(lib.tensor(t) for t in ts))
    return [np.asarray(out.detach().numpy()), np.asarray(tangent.detach().numpy())]


def same_jvp(make: Callable[[Any], Callable[..., Any]], shapes: list[tuple[int, ...]], atol: float) -> None:
    """The function `make(lib)` has the same output and tangent in both libraries (rtol 1e-12, `atol`), at seeded
    random primals and tangents of the given shapes."""
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(s) for s in shapes]
    ts = [rng.standard_normal(s) for s in shapes]
    for ours, theirs in zip(jvp_values(gradcalc, make(gradcalc), xs, ts), jvp_values(torch, make(torch), xs, ts),
                            strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=atol)


def same_vmap(make: Callable[[Any], Callable[..., Any]], in_dim: int) -> None:
    """`func.vmap(make(lib), in_dims=in_dim)` gives the same values in both libraries (rtol 1e-12, atol 1e-14),
    over a seeded (5, 3, 4) batch whose batch dim is at `in_dim` (0 or 1)."""
    data = np.random.default_rng(3).standard_normal((5, 3, 4) if in_dim == 0 else (3, 5, 4))
    ours = gradcalc.func.vmap(make(gradcalc), in_dims=in_dim)(gradcalc.tensor(data))
    theirs = torch.func.vmap(make(torch), in_dims=in_dim)(torch.tensor(data))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-14)


def arrays_for(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    """Random float64 arrays of the given shapes."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]
