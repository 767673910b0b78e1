"""LinearLR, CosineAnnealingLR, OneCycleLR and ReduceLROnPlateau against torch.optim.lr_scheduler: each group's
`lr`, `get_last_lr()` and `last_epoch` over many steps (the momentum or beta1 OneCycleLR cycles too),
`state_dict()` and resuming from it, the closed forms of `step(epoch)`, and the errors of bad settings."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.engine.test_lr_scheduler import optimizer

SCHEDULES: dict[str, Callable[[Any, Any], Any]] = {
    "linear": lambda S, opt: S.LinearLR(opt),
    "linear_down": lambda S, opt: S.LinearLR(opt, start_factor=1.0, end_factor=0.05, total_iters=17),
    "linear_up": lambda S, opt: S.LinearLR(opt, start_factor=0.01, end_factor=0.9, total_iters=40),
    "cosine": lambda S, opt: S.CosineAnnealingLR(opt, T_max=10),
    "cosine_eta_min": lambda S, opt: S.CosineAnnealingLR(opt, T_max=7, eta_min=0.003),
    "onecycle": lambda S, opt: S.OneCycleLR(opt, max_lr=1.0, total_steps=61),
    "onecycle_linear": lambda S, opt: S.OneCycleLR(opt, max_lr=[0.3, 2.0], epochs=6, steps_per_epoch=10,
                                                   pct_start=0.25, anneal_strategy="linear", div_factor=10.0,
                                                   final_div_factor=100.0),
    "onecycle_three_phase": lambda S, opt: S.OneCycleLR(opt, max_lr=0.8, total_steps=61, three_phase=True,
                                                        base_momentum=0.8, max_momentum=[0.9, 0.99]),
    "onecycle_no_momentum": lambda S, opt: S.OneCycleLR(opt, max_lr=0.5, total_steps=61, cycle_momentum=False),
}
STEPS = {"onecycle": 60, "onecycle_linear": 59, "onecycle_three_phase": 60, "onecycle_no_momentum": 60}


def _group_view(opt: Any) -> list[Any]:
    keys = ("lr", "momentum", "betas", "initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum")
    return [{k: g[k] for k in keys if k in g} for g in opt.param_groups]


def rates(L: Any, name: str, kind: str) -> list[Any]:
    opt = optimizer(L, kind) if kind != "SGD" else L.optim.SGD(optimizer(L).param_groups[0]["params"] + [
        L.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    if kind == "SGD":  # two groups, momentum on: what OneCycleLR cycles
        opt.add_param_group({"params": [L.zeros(2, requires_grad=True)], "lr": 0.5})
    sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
    seen = [(sched.last_epoch, sched.get_last_lr(), _group_view(opt))]
    for _ in range(STEPS.get(name, 50)):
        opt.step()
        sched.step()
        seen.append((sched.last_epoch, sched.get_last_lr(), _group_view(opt)))
    return seen


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_rates_match_torch(name: str, kind: str) -> None:
    assert rates(gradcalc, name, kind) == rates(torch, name, kind)


def test_cosine_annealing_follows_the_closed_form() -> None:
    """Mathematics, not PyTorch: eta_min + (base - eta_min)(1 + cos(pi t / T)) / 2 over the first T epochs."""
    opt = gradcalc.optim.SGD([gradcalc.zeros(1, requires_grad=True)], lr=0.2)
    sched = gradcalc.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=0.01)
    for t in range(1, 13):
        opt.step()
        sched.step()
        assert sched.get_last_lr()[0] == pytest.approx(0.01 + 0.19 * (1 + math.cos(math.pi * t / 12)) / 2, rel=1e-12)


@pytest.mark.parametrize("name", ["linear_down", "cosine_eta_min", "onecycle_three_phase"])
def test_state_dict_and_resume(name: str) -> None:
    def state(L: Any) -> tuple[Any, list]:
        opt = optimizer(L)
        sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
        for _ in range(5):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        opt2 = optimizer(L)
        opt2.load_state_dict(opt.state_dict())
        sched2 = SCHEDULES[name](L.optim.lr_scheduler, opt2)
        sched2.load_state_dict(saved)
        out = []
        for _ in range(8):
            opt2.step()
            sched2.step()
            out.append(sched2.get_last_lr())
        return {k: v for k, v in saved.items() if k != "_schedule_phases"}, out

    assert state(gradcalc) == state(torch)


@pytest.mark.parametrize("name", ["linear_down", "cosine", "cosine_eta_min"])
def test_closed_form_with_an_epoch(name: str) -> None:
    def seen(L: Any) -> list[Any]:
        opt = optimizer(L)
        sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (3, 7, 2, 10, 25):
                opt.step()
                sched.step(epoch)
                out.append((sched.last_epoch, sched.get_last_lr()))
        return out

    assert seen(gradcalc) == seen(torch)


PLATEAUS: dict[str, dict[str, Any]] = {
    "default": {},
    "patience": {"patience": 2, "factor": 0.5},
    "abs_cooldown": {"patience": 1, "threshold": 0.05, "threshold_mode": "abs", "cooldown": 3, "factor": 0.3},
    "max": {"mode": "max", "patience": 2},
    "max_abs_min_lr": {"mode": "max", "threshold_mode": "abs", "patience": 0, "min_lr": [0.02, 0.1]},
    "min_lr_eps": {"patience": 0, "min_lr": 0.01, "eps": 0.005, "factor": 0.5},
}


def plateau(L: Any, name: str, tensor_metric: bool) -> list[Any]:
    opt = optimizer(L)
    sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, **PLATEAUS[name])
    metrics = np.concatenate([np.linspace(1.0, 0.6, 10), 0.6 + 0.01 * np.sin(np.arange(40)),
                              np.linspace(0.6, 0.2, 10), np.full(20, 0.2)])
    seen = [(sched.last_epoch, sched.get_last_lr())]
    for m in metrics:
        opt.step()
        sched.step(L.tensor(m) if tensor_metric else float(m))
        seen.append((sched.last_epoch, sched.get_last_lr(), [g["lr"] for g in opt.param_groups], sched.best,
                     sched.num_bad_epochs, sched.cooldown_counter, sched.in_cooldown))
    return seen


@pytest.mark.parametrize("tensor_metric", [False, True])
@pytest.mark.parametrize("name", sorted(PLATEAUS))
def test_reduce_on_plateau_matches_torch(name: str, tensor_metric: bool) -> None:
    assert plateau(gradcalc, name, tensor_metric) == plateau(torch, name, tensor_metric)


def test_reduce_on_plateau_state_dict() -> None:
    def state(L: Any) -> Any:
        opt = optimizer(L)
        sched = L.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1)
        for m in (1.0, 1.0, 1.0, 0.5):
            sched.step(m)
        saved = sched.state_dict()
        again = L.optim.lr_scheduler.ReduceLROnPlateau(optimizer(L), mode="max")
        again.load_state_dict(saved)
        again.step(0.5)
        again.step(0.5)
        return {k: v for k, v in saved.items()}, again.get_last_lr(), again.best

    assert state(gradcalc) == state(torch)


ERRORS = {
    "linear start": lambda L, o: L.optim.lr_scheduler.LinearLR(o, start_factor=0.0),
    "linear end": lambda L, o: L.optim.lr_scheduler.LinearLR(o, end_factor=1.5),
    "plateau factor": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0),
    "plateau mode": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, mode="up"),
    "plateau threshold_mode": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, threshold_mode="x"),
    "plateau min_lr": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1]),
    "plateau not an optimizer": lambda L, o: L.optim.lr_scheduler.ReduceLROnPlateau("opt"),
    "onecycle no steps": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0),
    "onecycle total_steps": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=0),
    "onecycle epochs": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
    "onecycle pct_start": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, 1.0, 10, pct_start=1.5),
    "onecycle anneal": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, 1.0, 10, anneal_strategy="exp"),
    "onecycle max_lr": lambda L, o: L.optim.lr_scheduler.OneCycleLR(o, [1.0], 10),
    "onecycle momentum": lambda L, o: L.optim.lr_scheduler.OneCycleLR(L.optim.Adagrad(
        o.param_groups[0]["params"]), 1.0, 10),
    "onecycle too many steps": lambda L, o: [s.step() for s in [L.optim.lr_scheduler.OneCycleLR(o, 1.0, 3)]
                                             for _ in range(4)],
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case: str) -> None:
    found = []
    for lib in (torch, gradcalc):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:  # noqa: PT011 - the type and message are compared
                ERRORS[case](lib, optimizer(lib))
        found.append((type(info.value).__name__, str(info.value)))
    assert found[1] == found[0]
