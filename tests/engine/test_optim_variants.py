"""Adamax, NAdam, RAdam and Adadelta against torch.optim: trajectories over 100 steps (float64 to PyTorch's
own sensitivity to rounding, float32 to float32 precision against a float64 run), version counts, state and
state_dict, reprs, resuming from a state_dict, and the errors of bad options."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.engine.test_optim import SHAPES, assert_trajectory_float64, gradient, trajectory
from tests.precision import assert_float32_close

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "adamax": ("Adamax", {}),
    "adamax_all": ("Adamax", {"lr": 0.01, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1}),
    "adamax_maximize": ("Adamax", {"lr": 0.01, "maximize": True}),
    "nadam": ("NAdam", {}),
    "nadam_all": ("NAdam", {"lr": 0.01, "betas": (0.85, 0.99), "eps": 1e-6, "weight_decay": 0.05,
                            "momentum_decay": 0.01}),
    "nadam_decoupled": ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "nadam_maximize": ("NAdam", {"lr": 0.01, "maximize": True}),
    "radam": ("RAdam", {}),
    "radam_all": ("RAdam", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.05}),
    "radam_decoupled": ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    "radam_maximize": ("RAdam", {"lr": 0.01, "maximize": True}),
    "adadelta": ("Adadelta", {}),
    "adadelta_all": ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.1}),
    "adadelta_maximize": ("Adadelta", {"lr": 0.5, "maximize": True}),
}


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_matches_torch_float64(config: str) -> None:
    assert_trajectory_float64(*CONFIGS[config])


@pytest.mark.usefixtures("pytorch_default_dtype")
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_matches_torch_float32(config: str) -> None:
    """float32 (under the float32 default, so that NAdam's mu_product is float32 in both, as PyTorch keeps it):
    gradcalc and PyTorch each measured against the same run in float64."""
    name, options = CONFIGS[config]
    expected, tv, _ = trajectory(torch, name, options, "float32")
    actual, gv, _ = trajectory(gradcalc, name, options, "float32")
    reference, _, _ = trajectory(torch, name, options, "float64", start="float32")
    for i in range(len(SHAPES)):
        # the size of a float32 run's error over this trajectory: PyTorch's largest, at any step (how the error
        # of one run grows from step to step depends on its kernels' rounding order: AVX2's fused multiply-adds,
        # which gradcalc's arithmetic follows, or the generic kernels' separate ones)
        envelope = max(float(np.abs(np.asarray(e[i], np.float64) - r[i]).max(initial=0.0))
                       for e, r in zip(expected, reference, strict=True))
        scale = 0.0
        for step, (e, a, r) in enumerate(zip(expected, actual, reference, strict=True)):
            scale = max(scale, float(np.abs(r[i]).max(initial=0.0)))
            assert_float32_close(a[i], e[i], r[i], steps=8 * (step + 1), scale=scale, envelope=envelope,
                                 what=f"step {step}, param {i}")
    assert gv == tv


@pytest.mark.parametrize("config", ["adamax_all", "nadam_all", "nadam_decoupled", "radam_all", "adadelta_all"])
def test_state_and_state_dict(config: str) -> None:
    name, options = CONFIGS[config]
    results = []
    for lib in (torch, gradcalc):
        _, _, opt = trajectory(lib, name, options, "float64", steps=5)
        sd = opt.state_dict()
        state = {k: {n: (v.numpy().copy() if isinstance(v, lib.Tensor) else v) for n, v in s.items()}
                 for k, s in sd["state"].items()}
        dtypes = {k: {n: str(v.dtype) for n, v in s.items()} for k, s in sd["state"].items()}
        results.append((state, sd["param_groups"], repr(opt), dtypes))
    (ts, tg, tr, td), (gs, gg, gr, gd) = results
    assert gg == tg
    assert gr == tr
    assert gd == td
    for k in ts:
        assert list(ts[k]) == list(gs[k])  # the same entries, in PyTorch's order
        for n in ts[k]:
            np.testing.assert_allclose(np.asarray(gs[k][n]), np.asarray(ts[k][n]), rtol=1e-12)


@pytest.mark.parametrize("config", ["adamax_all", "nadam_all", "radam_all", "adadelta_all"])
def test_load_state_dict_resumes(config: str) -> None:
    """Five steps, a state_dict, a fresh optimizer loading it: the next five steps are those of one run."""
    name, options = CONFIGS[config]
    full, _, _ = trajectory(gradcalc, name, options, "float64", steps=10)
    rng = np.random.default_rng(0)
    params = [gradcalc.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]

    def run(opt: Any, n: int) -> None:
        for _ in range(n):
            opt.zero_grad()
            for p, g in zip(params, gradient([p.detach().numpy().copy() for p in params], 1.0), strict=True):
                p.grad = gradcalc.tensor(g)
            opt.step()

    opt = getattr(gradcalc.optim, name)(params, **options)
    run(opt, 5)
    second = getattr(gradcalc.optim, name)(params, **options)
    second.load_state_dict(opt.state_dict())
    run(second, 5)
    for a, b in zip(params, full[-1], strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b)


ERRORS = {
    f"{name} {what}": (name, kwargs)
    for name in ("Adamax", "NAdam", "RAdam")
    for what, kwargs in (("lr", {"lr": -0.1}), ("eps", {"eps": -1.0}), ("beta0", {"betas": (1.0, 0.9)}),
                         ("beta1", {"betas": (0.9, -0.1)}), ("wd", {"weight_decay": -1.0}))
} | {
    "NAdam momentum_decay": ("NAdam", {"momentum_decay": -0.1}),
    "Adadelta lr": ("Adadelta", {"lr": -1.0}),
    "Adadelta rho": ("Adadelta", {"rho": 1.5}),
    "Adadelta eps": ("Adadelta", {"eps": -1.0}),
    "Adadelta wd": ("Adadelta", {"weight_decay": -1.0}),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case: str) -> None:
    name, kwargs = ERRORS[case]
    found = []
    for lib in (torch, gradcalc):
        p = lib.tensor([1.0], requires_grad=True)
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type and message are compared
            getattr(lib.optim, name)([p], **kwargs)
        found.append((type(info.value).__name__, str(info.value)))
    assert found[1] == found[0]


def test_defaults_as_torch() -> None:
    for name in ("Adamax", "NAdam", "RAdam", "Adadelta"):
        groups = []
        for lib in (torch, gradcalc):
            p = lib.tensor([1.0], requires_grad=True)
            groups.append({k: v for k, v in getattr(lib.optim, name)([p]).param_groups[0].items() if k != "params"})
        assert groups[1] == groups[0], name
