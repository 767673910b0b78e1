"""gradcalc.optim.LBFGS against torch.optim.LBFGS, as PINN code uses it (a closure per step): the first 20
steps' parameters in float64, with and without the strong-Wolfe line search, on Rosenbrock's function, an
ill-conditioned quadratic and a small MLP regression; losses, evaluation counts (branch for branch), versions, the
state and its state_dict; errors.

The float64 bound is PyTorch's own sensitivity (tests/precision.py): how far PyTorch's run moves when one input
changes by one ulp. L-BFGS's iterations amplify rounding, some a millionfold (Rosenbrock's valley with the default
20 iterations a step), and PyTorch's float64 kernels round otherwise on other CPUs (the generic kernels multiply
and add separately where AVX2 fuses); gradcalc's forward and backward round a few operations otherwise again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.precision import assert_float32_close, assert_float64_within_sensitivity

STEPS = 20


def rosenbrock(L: Any, dtype: str, nudge: bool = False) -> tuple[list[Any], Callable[[], Any]]:
    start = np.array([-1.5, 2.0])
    if nudge:
        start[0] = np.nextafter(start[0], 0)
    x = L.tensor(start.astype(dtype), requires_grad=True)
    return [x], lambda: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def quadratic(L: Any, dtype: str, nudge: bool = False) -> tuple[list[Any], Callable[[], Any]]:
    """½ xᵀAx - bᵀx with A's eigenvalues from 1 to 100."""
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    a = L.tensor((q * np.geomspace(1, 100, 6)) @ q.T)
    b = L.tensor(rng.standard_normal(6))
    start = rng.standard_normal(6)
    if nudge:
        start[0] = np.nextafter(start[0], 9)
    x = L.tensor(start.astype(dtype), requires_grad=True)
    a, b = a.to(x.dtype), b.to(x.dtype)
    return [x], lambda: 0.5 * (x @ (a @ x)) - b @ x


def mlp(L: Any, dtype: str, nudge: bool = False) -> tuple[list[Any], Callable[[], Any]]:
    """A 1-8-1 tanh network fitted to sin(3x) on 32 points (PINN notebooks' scale)."""
    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, (32, 1))
    ys = np.sin(3 * xs)
    if nudge:
        xs[0, 0] = np.nextafter(xs[0, 0], 2)
    x, y = L.tensor(xs.astype(dtype)), L.tensor(ys.astype(dtype))
    w1 = L.tensor(rng.standard_normal((1, 8)).astype(dtype), requires_grad=True)
    b1 = L.tensor((rng.standard_normal(8) * 0.1).astype(dtype), requires_grad=True)
    w2 = L.tensor((rng.standard_normal((8, 1)) / 8**0.5).astype(dtype), requires_grad=True)
    return [w1, b1, w2], lambda: ((L.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


PROBLEMS = {"rosenbrock": rosenbrock, "quadratic": quadratic, "mlp": mlp}


def run(L: Any, problem: str, options: dict[str, Any], dtype: str = "float64", nudge: bool = False,
        steps: int = STEPS) -> dict[str, Any]:
    params, loss_fn = PROBLEMS[problem](L, dtype, nudge)
    opt = L.optim.LBFGS(params, **options)

    def closure() -> Any:
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    trajectory, losses = [], []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        trajectory.append(np.concatenate([p.detach().numpy().reshape(-1).copy() for p in params]))
    state = opt.state[params[0]]
    return {"trajectory": np.array(trajectory), "losses": np.array(losses), "versions": [p._version for p in params],
            "counts": (state["func_evals"], state["n_iter"]), "opt": opt}


OPTIONS = {
    "default": {},
    "strong_wolfe": {"line_search_fn": "strong_wolfe"},
    "short_history": {"lr": 0.5, "max_iter": 5, "history_size": 3},
    "short_history_wolfe": {"lr": 0.5, "max_iter": 5, "history_size": 3, "line_search_fn": "strong_wolfe"},
    "few_evaluations": {"max_iter": 10, "max_eval": 7, "tolerance_grad": 1e-5, "tolerance_change": 1e-12},
    "one_iteration": {"max_iter": 1},
    "one_iteration_wolfe": {"max_iter": 1, "line_search_fn": "strong_wolfe"},
    "small_rate": {"lr": 0.1, "max_iter": 5},
}
# (the quadratic with `small_rate` converges within the 20 steps: what follows steers by gradients of rounding
# noise, which PyTorch's matrix products round otherwise)
EXACT = [(p, o) for p in ("rosenbrock", "quadratic") for o in OPTIONS if (p, o) != ("quadratic", "small_rate")] + [
    ("mlp", o) for o in ("one_iteration", "one_iteration_wolfe", "small_rate")]


# how many one-ulp nudges gradcalc's run may be from PyTorch's: the nudge enters once, at the start, and is
# amplified by every later iteration; rounding differences enter at every iteration, each amplified as much or less
NUDGES = 20


@pytest.mark.parametrize(("problem", "options"), EXACT)
def test_first_steps_match_torch_float64(problem: str, options: str) -> None:
    ours, theirs = run(gradcalc, problem, OPTIONS[options]), run(torch, problem, OPTIONS[options])
    nudged = run(torch, problem, OPTIONS[options], nudge=True)
    assert_float64_within_sensitivity(ours["trajectory"], theirs["trajectory"], nudged["trajectory"],
                                      roundings=NUDGES, what="parameters")
    assert_float64_within_sensitivity(ours["losses"][:, None], theirs["losses"][:, None], nudged["losses"][:, None],
                                      roundings=NUDGES, what="losses")
    assert ours["counts"] == theirs["counts"]  # the same evaluations and iterations, branch for branch
    assert ours["versions"] == theirs["versions"]  # the same in-place changes of each parameter


@pytest.mark.parametrize("options", ["default", "strong_wolfe", "short_history"])
def test_mlp_within_torchs_own_sensitivity(options: str) -> None:
    """PyTorch's defaults on the MLP: 20 iterations a step amplify rounding, in PyTorch's own runs too."""
    theirs, ours = run(torch, "mlp", OPTIONS[options]), run(gradcalc, "mlp", OPTIONS[options])
    nudged = run(torch, "mlp", OPTIONS[options], nudge=True)
    assert_float64_within_sensitivity(ours["trajectory"], theirs["trajectory"], nudged["trajectory"],
                                      roundings=NUDGES, what="parameters")
    assert float(ours["losses"][-1]) <= 1.5 * float(theirs["losses"][-1]) + 1e-12  # it fits as well


@pytest.mark.parametrize("options", ["short_history", "one_iteration", "small_rate"])
def test_float32_quadratic(options: str) -> None:
    """float32: gradcalc and PyTorch each measured against PyTorch's float64 run (tests/precision.py)."""
    ours = run(gradcalc, "quadratic", OPTIONS[options], "float32", steps=5)["trajectory"]
    theirs = run(torch, "quadratic", OPTIONS[options], "float32", steps=5)["trajectory"]
    reference = run(torch, "quadratic", OPTIONS[options], "float64", steps=5)["trajectory"]
    iterations = OPTIONS[options].get("max_iter", 20)
    for step in range(5):
        assert_float32_close(ours[step], theirs[step], reference[step], steps=40 * iterations * (step + 1),
                             what=f"step {step}")


def test_state_dict_matches_torch() -> None:
    """The state after three steps, entry by entry, to within PyTorch's own sensitivity (its run nudged)."""
    options = {"history_size": 4, "max_iter": 6, "line_search_fn": "strong_wolfe"}
    ours, theirs, nudged = (run(lib, "rosenbrock", options, steps=3, nudge=nudge)["opt"].state_dict()
                            for lib, nudge in ((gradcalc, False), (torch, False), (torch, True)))
    assert ours["param_groups"] == theirs["param_groups"]
    assert ours["state"].keys() == theirs["state"].keys() == {0}
    mine, its, moved = ours["state"][0], theirs["state"][0], nudged["state"][0]
    assert mine.keys() == its.keys()

    def values(entry: Any) -> np.ndarray:
        entries = entry if isinstance(entry, list) else [entry]
        return np.concatenate([np.asarray(e.numpy() if hasattr(e, "numpy") else e, dtype=np.float64).reshape(-1)
                               for e in entries if e is not None] or [np.zeros(0)])

    for key, value in its.items():
        if isinstance(value, list):
            assert len(mine[key]) == len(value), key
            assert [m is None for m in mine[key]] == [v is None for v in value], key
        assert_float64_within_sensitivity(values(mine[key])[None], values(value)[None], values(moved[key])[None],
                                          roundings=NUDGES, what=key)


def test_load_state_dict_resumes() -> None:
    options = {"history_size": 4, "max_iter": 3}
    whole = run(gradcalc, "rosenbrock", options, steps=6)["trajectory"]
    params, loss_fn = rosenbrock(gradcalc, "float64")
    first = gradcalc.optim.LBFGS(params, **options)

    def closure_of(opt: Any) -> Callable[[], Any]:
        def closure() -> Any:
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        return closure

    for _ in range(3):
        first.step(closure_of(first))
    second = gradcalc.optim.LBFGS(params, **options)
    second.load_state_dict(first.state_dict())
    for _ in range(3):
        second.step(closure_of(second))
    np.testing.assert_array_equal(params[0].detach().numpy(), whole[-1])


@pytest.mark.parametrize("case", ["groups", "line_search", "no_closure", "negative_lr"])
def test_errors_as_torch(case: str) -> None:
    def attempt(L: Any) -> None:
        a = L.zeros(2, requires_grad=True)
        b = L.zeros(2, requires_grad=True)
        if case == "groups":
            L.optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])
        elif case == "negative_lr":
            L.optim.LBFGS([a], lr=-1)
        else:
            opt = L.optim.LBFGS([a], line_search_fn="wolfe" if case == "line_search" else None)

            def closure() -> Any:
                opt.zero_grad()
                loss = ((a - 1) ** 2).sum()
                loss.backward()
                return loss

            opt.step(closure) if case == "line_search" else opt.step()

    with pytest.raises(Exception) as theirs:
        attempt(torch)
    with pytest.raises(Exception) as ours:
        attempt(gradcalc)
    assert type(ours.value) is type(theirs.value)
    if case != "no_closure":
        assert str(ours.value) == str(theirs.value)


def test_the_closure_runs_with_grad_mode_on_and_the_step_without() -> None:
    x = gradcalc.tensor([3.0, -1.0], requires_grad=True)
    opt = gradcalc.optim.LBFGS([x], max_iter=3)
    modes = []

    def closure() -> Any:
        modes.append(gradcalc.is_grad_enabled())
        opt.zero_grad()
        loss = (x**2).sum()
        loss.backward()
        return loss

    with gradcalc.no_grad():
        loss = opt.step(closure)
    assert all(modes) and len(modes) == 3
    assert loss.item() == 10.0 and x.is_leaf and x.requires_grad
