"""max_pool2d against PyTorch over generated cases: kernel, stride, padding, dilation and ceil mode drawn, inputs
with ties (small integers), NaNs and infinities, so that both of pooling.py's paths (the fast maxima and
PyTorch's scan) are held to PyTorch's values, indices and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc

torch = pytest.importorskip("torch")


def _case(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
    stride = tuple(int(s) for s in rng.integers(1, 4, 2))
    dilation = tuple(int(d) for d in rng.choice([1, 1, 2], 2))
    padding = tuple(int(rng.integers(0, ((k - 1) * d + 1) // 2 + 1)) for k, d in zip(kernel, dilation, strict=True))
    if seed % 3:  # most cases without padding: the fast path's
        padding = (0, 0)
    if seed % 8 < 3:  # the usual 2 x 2 windows 2 apart, odd sizes too
        kernel, stride, dilation, padding = (2, 2), (2, 2), (1, 1), tuple(min(p, 1) for p in padding)
    size = tuple(int(rng.integers((k - 1) * d + 1, 10)) for k, d in zip(kernel, dilation, strict=True))
    x = rng.integers(-3, 4, (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *size)).astype(np.float64)
    special = seed % 4  # 0: none, 1: a NaN, 2: infinities, 3: a NaN and an infinity
    if special in (1, 3):
        x.flat[int(rng.integers(0, x.size))] = np.nan
    if special in (2, 3):
        x.flat[int(rng.integers(0, x.size))] = np.inf
        x.flat[int(rng.integers(0, x.size))] = -np.inf
    return {"x": x, "kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation,
            "ceil_mode": bool(seed % 5 == 0), "seed": seed}


def _run(lib: Any, case: dict[str, Any], dtype: str) -> list[np.ndarray]:
    x = lib.tensor(case["x"].astype(dtype), requires_grad=True)
    y, i = lib.nn.functional.max_pool2d(x, case["kernel"], case["stride"], case["padding"], case["dilation"],
                                        case["ceil_mode"], return_indices=True)
    r = np.random.default_rng(case["seed"]).standard_normal(tuple(y.shape)).astype(dtype)
    (y * lib.tensor(r)).sum().backward()
    return [y.detach().numpy(), i.numpy(), x.grad.numpy()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(40))
def test_max_pool2d_as_torch(seed: int, dtype: str) -> None:
    case = _case(seed)
    ours, theirs = _run(gradcalc, case, dtype), _run(torch, case, dtype)
    for name, a, b in zip(("values", "indices", "grad"), ours, theirs, strict=True):
        assert a.dtype == b.dtype, name
        # each value is one element of the input and each gradient one element of r (windows that overlap
        # add a few, in the scan's order): exact but for those sums' rounding
        np.testing.assert_allclose(a, b, rtol=4 * np.finfo(dtype).eps, atol=0, err_msg=f"{name} {case}")
