"""Convolutions and their gradients against PyTorch over many generated shapes (ops/windows.py's kernels:
im2col products, the unit-stride input gradient's shifted adds, the weight gradient's sum over the batch).

Each case draws a convolution (1-d or 2-d, plain or transposed) with its stride, padding, dilation, groups and
batch size, runs `y = conv(x, w, b)` and the backward of `(y * r).sum()` on both engines, and compares the
output and the three gradients: float64 to 1e-12 of the values' size, float32 as `tests/precision.py` allows
(PyTorch's own float32 error measured against its float64 run).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.precision import assert_float32_close

torch = pytest.importorskip("torch")

KINDS = ("conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d")


def _case(seed: int) -> dict[str, Any]:
    """A convolution's shapes and parameters, drawn so that every output has at least one position."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    nd = 1 if kind.endswith("1d") else 2
    transposed = "transpose" in kind
    groups = int(rng.choice([1, 1, 2, 3]))
    cin, cout = groups * int(rng.integers(1, 4)), groups * int(rng.integers(1, 4))
    kernel = tuple(int(k) for k in rng.integers(1, 4, nd))
    stride = tuple(int(s) for s in rng.choice([1, 1, 2], nd))
    dilation = tuple(int(d) for d in rng.choice([1, 1, 2], nd))
    padding = tuple(int(p) for p in rng.integers(0, 3, nd))
    size = tuple(int(s) for s in rng.integers(4, 9, nd))
    if not transposed:  # the padded input holds one dilated kernel at least
        size = tuple(max(s, (k - 1) * d + 1 - 2 * p) for s, k, d, p in zip(size, kernel, dilation, padding,
                                                                            strict=True))
    batch = int(rng.choice([1, 2, 5]))
    if transposed:
        w_shape = (cin, cout // groups, *kernel)
        # the output must not be empty, and output padding below stride or dilation
        padding = tuple(min(p, ((s - 1) * st + d * (k - 1)) // 2) for p, s, st, d, k in zip(
            padding, size, stride, dilation, kernel, strict=True))
        extra = tuple(int(rng.integers(0, max(st, d))) for st, d in zip(stride, dilation, strict=True))
    else:
        w_shape, extra = (cout, cin // groups, *kernel), (0,) * nd
    return {"kind": kind, "x": (batch, cin, *size), "w": w_shape, "b": (cout,), "stride": stride,
            "padding": padding, "dilation": dilation, "groups": groups, "output_padding": extra,
            "bias": bool(rng.integers(0, 2)), "seed": seed}


def _run(lib: Any, case: dict[str, Any], arrays: dict[str, np.ndarray], dtype: str) -> list[np.ndarray]:
    """y and the gradients of (y * r).sum() in x, w and b (b's only when the case has a bias)."""
    t = {k: lib.tensor(v.astype(dtype), requires_grad=k != "r") for k, v in arrays.items()}
    kw = {"stride": case["stride"], "padding": case["padding"], "dilation": case["dilation"],
          "groups": case["groups"]}
    if "transpose" in case["kind"]:
        kw["output_padding"] = case["output_padding"]
    bias = t["b"] if case["bias"] else None
    y = getattr(lib.nn.functional, case["kind"])(t["x"], t["w"], bias, **kw)
    (y * lib.tensor(arrays["r"][tuple(slice(0, n) for n in y.shape)].astype(dtype))).sum().backward()
    out = [y.detach().numpy(), t["x"].grad.numpy(), t["w"].grad.numpy()]
    return out + ([t["b"].grad.numpy()] if case["bias"] else [])


def _arrays(case: dict[str, Any]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1000 + case["seed"])
    big = tuple(3 * n + 8 for n in case["x"][2:])  # at least the output's size, which r is cut to
    return {"x": rng.standard_normal(case["x"]), "w": rng.standard_normal(case["w"]),
            "b": rng.standard_normal(case["b"]), "r": rng.standard_normal((case["x"][0], 64, *big))}


CASES = [_case(seed) for seed in range(48)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['kind']}-{c['seed']}")
def test_float64_as_torch(case: dict[str, Any]) -> None:
    arrays = _arrays(case)
    ours, theirs = _run(gradcalc, case, arrays, "float64"), _run(torch, case, arrays, "float64")
    for name, a, b in zip(("y", "x.grad", "w.grad", "b.grad"), ours, theirs, strict=False):
        assert a.shape == b.shape, name
        scale = max(float(np.abs(b).max(initial=0.0)), 1.0)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale, err_msg=f"{case} {name}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['kind']}-{c['seed']}")
def test_float32_as_torch(case: dict[str, Any]) -> None:
    arrays = _arrays(case)
    ours, theirs = _run(gradcalc, case, arrays, "float32"), _run(torch, case, arrays, "float32")
    reference = _run(torch, case, arrays, "float64")
    # the longest sum any result is (a weight's gradient: over the batch and every position of the input)
    steps = case["x"][0] * math.prod(case["x"][2:]) * math.prod(case["w"][2:]) + case["x"][1]
    for name, a, b, ref in zip(("y", "x.grad", "w.grad", "b.grad"), ours, theirs, reference, strict=False):
        assert_float32_close(a, b, ref, steps=steps, what=f"{case} {name}")


@pytest.mark.parametrize("stride", [1, 2])
def test_a_non_finite_weight_gives_torch_s_input_gradient(stride: int) -> None:
    """The unit-stride input gradient adds zeros times the weight where the gradient has no position: an
    infinite weight must not turn them into NaN (the kernel falls back to the exact fold)."""
    rng = np.random.default_rng(7)
    x, w, r = rng.standard_normal((2, 2, 7, 6)), rng.standard_normal((3, 2, 3, 2)), rng.standard_normal((2, 3, 5, 5))
    w[1, 0, 2, 1] = np.inf
    grads = []
    for lib in (gradcalc, torch):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(xt, wt, stride=stride)
        (y * lib.tensor(r[tuple(slice(0, n) for n in y.shape)])).sum().backward()
        grads.append(xt.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)
