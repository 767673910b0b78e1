"""gradcalc.optim against torch.optim: parameter trajectories over 100 steps (float64 to PyTorch's own sensitivity
to rounding, float32 to float32 precision), versions, state, state_dict round trips, reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.precision import EPS64, assert_float32_close, assert_float64_within_sensitivity

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "sgd": ("SGD", {"lr": 0.1}),
    "sgd_momentum": ("SGD", {"lr": 0.05, "momentum": 0.9}),
    "sgd_dampening_wd": ("SGD", {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "weight_decay": 0.01}),
    "sgd_nesterov": ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    "sgd_maximize": ("SGD", {"lr": 0.05, "momentum": 0.5, "maximize": True}),
    "adam": ("Adam", {"lr": 0.01}),
    "adam_wd_amsgrad": ("Adam", {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1, "amsgrad": True}),
    "adam_maximize": ("Adam", {"lr": 0.01, "maximize": True}),
    "adam_beta1_small": ("Adam", {"lr": 0.01, "betas": (0.3, 0.9)}),
    "adamw": ("AdamW", {"lr": 0.01}),
    "adamw_amsgrad": ("AdamW", {"lr": 0.03, "weight_decay": 0.2, "amsgrad": True}),
    "rmsprop": ("RMSprop", {"lr": 0.01}),
    # (near its optimum with strong momentum RMSprop amplifies one ulp a step a hundredfold over 100 steps: the
    # float64 test's bound is that measured amplification, whatever the CPU's kernels round)
    "rmsprop_all": ("RMSprop", {"lr": 0.005, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.05, "momentum": 0.8}),
    # centered with momentum: the moving variance E[g²] - E[g]² cancels as the gradient settles, so rounding
    # grows there in any float32 run (PyTorch's too): a gentler rate keeps it measurable
    "rmsprop_centered_momentum": ("RMSprop", {"lr": 0.005, "momentum": 0.5, "centered": True, "weight_decay": 0.01}),
    "rmsprop_centered": ("RMSprop", {"lr": 0.01, "centered": True}),
    "rmsprop_momentum_maximize": ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
    "rmsprop_alpha_small": ("RMSprop", {"lr": 0.01, "alpha": 0.3, "centered": True}),
    "adagrad": ("Adagrad", {"lr": 0.1}),
    "adagrad_all": ("Adagrad", {"lr": 0.2, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5,
                                "eps": 1e-6}),
    "adagrad_maximize": ("Adagrad", {"lr": 0.1, "maximize": True}),
}
SHAPES = [(3, 4), (4,), ()]


def gradient(arrays: list[np.ndarray], sign: float) -> list[np.ndarray]:
    """A smooth, non-quadratic gradient, computed in NumPy so that both libraries get the same one."""
    return [sign * (2.0 * (a - 0.3) + 0.5 * np.cos(3.0 * a)).astype(a.dtype) for a in arrays]


def trajectory(lib: Any, name: str, options: dict[str, Any], dtype: str, steps: int = 100,
               start: str | None = None, jitter: bool = False) -> list[Any]:
    """`steps` optimizer steps from the same seeded start (drawn in `start`'s dtype, default `dtype`, then
    cast), with the same NumPy gradient: the parameters after each step, the version counts, the optimizer.
    `jitter`: each parameter is moved by one ulp (a seeded sign per element) after each step, through its NumPy
    view so that no version changes: the trajectory's sensitivity to rounding."""
    signs = np.random.default_rng(1)
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(start or dtype).astype(dtype), requires_grad=True)
              for s in SHAPES]
    opt = getattr(lib.optim, name)(params, **options)
    sign = -1.0 if options.get("maximize") else 1.0
    out = []
    for _ in range(steps):
        opt.zero_grad()
        for p, g in zip(params, gradient([p.detach().numpy().copy() for p in params], sign), strict=True):
            p.grad = lib.tensor(g)
        opt.step()
        if jitter:
            for p in params:
                view = p.detach().numpy()
                view *= 1 + EPS64 * signs.choice([-1.0, 1.0], view.shape)
        out.append([p.detach().numpy().copy() for p in params])
    return [out, [p._version for p in params], opt]


def assert_trajectory_float64(name: str, options: dict[str, Any]) -> None:
    """gradcalc's float64 trajectory is PyTorch's, step by step, to within 8 roundings a step of PyTorch's own
    sensitivity (tests/precision.py: its run moved one ulp a step), and changes each parameter in place as often."""
    expected, tv, _ = trajectory(torch, name, options, "float64")
    actual, gv, _ = trajectory(gradcalc, name, options, "float64")
    perturbed, _, _ = trajectory(torch, name, options, "float64", jitter=True)
    for i in range(len(SHAPES)):
        assert all(a[i].dtype == np.float64 for a in actual)
        assert_float64_within_sensitivity([a[i] for a in actual], [e[i] for e in expected],
                                          [p[i] for p in perturbed], roundings=8, what=f"param {i}")
    assert gv == tv  # the same number of in-place changes per step


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_matches_torch_float64(config: str) -> None:
    assert_trajectory_float64(*CONFIGS[config])


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_trajectory_matches_torch_float32(config: str) -> None:
    """float32: gradcalc and PyTorch each measured against the same run in float64 (tests/precision.py);
    step k's parameters have been rounded through k steps of a handful of operations each."""
    name, options = CONFIGS[config]
    expected, tv, _ = trajectory(torch, name, options, "float32")
    actual, gv, _ = trajectory(gradcalc, name, options, "float32")
    reference, _, _ = trajectory(torch, name, options, "float64", start="float32")
    for i in range(len(SHAPES)):
        scale = 0.0  # the largest value of the parameter so far: what each step's rounding is relative to
        for step, (e, a, r) in enumerate(zip(expected, actual, reference, strict=True)):
            scale = max(scale, float(np.abs(r[i]).max(initial=0.0)))
            assert_float32_close(a[i], e[i], r[i], steps=8 * (step + 1), scale=scale, what=f"step {step}, param {i}")
    assert gv == tv


@pytest.mark.parametrize("config", ["sgd_momentum", "adam_wd_amsgrad", "adamw", "rmsprop_all",
                                    "rmsprop_centered_momentum", "adagrad_all"])
def test_state_and_state_dict(config: str) -> None:
    name, options = CONFIGS[config]
    results = []
    for lib in (torch, gradcalc):
        _, _, opt = trajectory(lib, name, options, "float64", steps=5)
        sd = opt.state_dict()
        state = {k: {n: (v.numpy().copy() if isinstance(v, lib.Tensor) else v) for n, v in s.items()}
                 for k, s in sd["state"].items()}
        results.append((state, sd["param_groups"], repr(opt)))
    (ts, tg, tr), (gs, gg, gr) = results
    assert gg == tg
    assert gr == tr
    assert ts.keys() == gs.keys()
    for k in ts:
        assert ts[k].keys() == gs[k].keys()
        for n in ts[k]:
            np.testing.assert_allclose(np.asarray(gs[k][n]), np.asarray(ts[k][n]), rtol=1e-12)


def test_load_state_dict_resumes() -> None:
    """Five steps, a state_dict, a fresh optimizer loading it: the next steps are those of one run."""
    name, options = CONFIGS["adam_wd_amsgrad"]
    full, _, _ = trajectory(gradcalc, name, options, "float64", steps=10)
    rng = np.random.default_rng(0)
    params = [gradcalc.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
    opt = gradcalc.optim.Adam(params, **options)

    def run(opt: Any, n: int) -> None:
        for _ in range(n):
            opt.zero_grad()
            for p, g in zip(params, gradient([p.detach().numpy().copy() for p in params], 1.0), strict=True):
                p.grad = gradcalc.tensor(g)
            opt.step()

    run(opt, 5)
    second = gradcalc.optim.Adam(params, **options)
    second.load_state_dict(opt.state_dict())
    run(second, 5)
    for a, b in zip(params, full[-1], strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b)


def test_param_without_grad_is_skipped_and_closure() -> None:
    a = gradcalc.tensor([1.0, 2.0], requires_grad=True)
    b = gradcalc.tensor([3.0], requires_grad=True)
    opt = gradcalc.optim.SGD([a, b], lr=0.5)

    def closure() -> Any:
        opt.zero_grad()
        loss = (a * a).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 5.0
    np.testing.assert_array_equal(a.detach().numpy(), [0.0, 0.0])
    assert b.tolist() == [3.0] and b._version == 0
    assert len(opt.state) == 0 or all(not s for s in opt.state.values())


def test_param_groups_and_zero_grad() -> None:
    a = gradcalc.tensor([1.0], requires_grad=True)
    b = gradcalc.tensor([1.0], requires_grad=True)
    opt = gradcalc.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    (a + b).sum().backward()
    opt.step()
    assert a.item() == pytest.approx(0.9) and b.item() == pytest.approx(0.5)
    opt.zero_grad(set_to_none=False)
    assert a.grad.tolist() == [0.0]
    opt.zero_grad()
    assert a.grad is None
    c = gradcalc.tensor([1.0], requires_grad=True)
    opt.add_param_group({"params": [c], "momentum": 0.9})
    assert opt.param_groups[-1]["lr"] == 0.1 and opt.param_groups[-1]["momentum"] == 0.9


ERRORS = {
    "negative_lr_sgd": lambda L, p: L.optim.SGD([p], lr=-0.1),
    "negative_lr_adam": lambda L, p: L.optim.Adam([p], lr=-1e-3),
    "bad_beta": lambda L, p: L.optim.Adam([p], betas=(1.0, 0.999)),
    "bad_eps": lambda L, p: L.optim.Adam([p], eps=-1.0),
    "non_leaf": lambda L, p: L.optim.SGD([p * 2], lr=0.1),
    "not_a_tensor": lambda L, p: L.optim.SGD([p, 1.0], lr=0.1),
    "a_tensor": lambda L, p: L.optim.SGD(p, lr=0.1),
    "empty": lambda L, p: L.optim.Adam([]),
    "nesterov": lambda L, p: L.optim.SGD([p], lr=0.1, nesterov=True),
    "twice": lambda L, p: L.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
    "set": lambda L, p: L.optim.SGD([{"params": {p}}], lr=0.1),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case: str) -> None:
    found = []
    for lib in (torch, gradcalc):
        p = lib.tensor([1.0], requires_grad=True)
        try:
            ERRORS[case](lib, p)
            found.append(None)
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            found.append((type(e).__name__, str(e).split(":")[0].split(" (")[0]))
    assert found[0] is not None
    assert found[1][0] == found[0][0]
    if case in ("negative_lr_sgd", "negative_lr_adam", "non_leaf"):
        assert found[1][1] == found[0][1]  # PyTorch's words, which users search for
