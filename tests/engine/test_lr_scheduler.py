"""gradcalc.optim.lr_scheduler against torch.optim.lr_scheduler: the learning rates over many epochs (each
group's `lr`, `get_last_lr()`, `last_epoch`), `state_dict()` and resuming from it, the closed forms of
`step(epoch)`, the warnings, and a whole training loop with a schedule."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch

SCHEDULES: dict[str, Callable[[Any, Any], Any]] = {
    "step": lambda S, opt: S.StepLR(opt, step_size=3),
    "step_gamma": lambda S, opt: S.StepLR(opt, 4, gamma=0.5),
    "exponential": lambda S, opt: S.ExponentialLR(opt, gamma=0.9),
    "multistep": lambda S, opt: S.MultiStepLR(opt, milestones=[2, 5, 5, 9], gamma=0.3),
    "lambda": lambda S, opt: S.LambdaLR(opt, lambda epoch: 1 / (1 + epoch)),
    "lambda_per_group": lambda S, opt: S.LambdaLR(opt, [lambda e: 0.95**e, lambda e: 1 + e]),
}


def optimizer(L: Any, kind: str = "SGD") -> Any:
    a, b = L.zeros(2, requires_grad=True), L.zeros(3, requires_grad=True)
    return getattr(L.optim, kind)([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)


def lrs_over_epochs(L: Any, name: str, epochs: int = 15, kind: str = "SGD") -> list[Any]:
    opt = optimizer(L, kind)
    sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
    seen = [(sched.last_epoch, sched.get_last_lr(), [g["lr"] for g in opt.param_groups])]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seen.append((sched.last_epoch, sched.get_last_lr(), [g["lr"] for g in opt.param_groups]))
    return seen


@pytest.mark.parametrize("kind", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_rates_match_torch(name: str, kind: str) -> None:
    assert lrs_over_epochs(gradcalc, name, kind=kind) == lrs_over_epochs(torch, name, kind=kind)


@pytest.mark.parametrize("name", ["step", "step_gamma", "exponential", "multistep"])
def test_state_dict_and_resume(name: str) -> None:
    def state(L: Any) -> tuple[dict, list]:
        opt = optimizer(L)
        sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
        for _ in range(5):
            opt.step()
            sched.step()
        saved = sched.state_dict()
        # a new schedule over a new optimizer, loading both states, goes on where the first one was
        opt2 = optimizer(L)
        opt2.load_state_dict(opt.state_dict())
        sched2 = SCHEDULES[name](L.optim.lr_scheduler, opt2)
        sched2.load_state_dict(saved)
        rates = []
        for _ in range(6):
            opt2.step()
            sched2.step()
            rates.append(sched2.get_last_lr())
        return saved, rates

    (ours, our_rates), (theirs, their_rates) = state(gradcalc), state(torch)
    assert ours == theirs
    assert our_rates == their_rates


@pytest.mark.parametrize("name", ["step", "exponential", "multistep"])
def test_closed_form_with_an_epoch(name: str) -> None:
    def rates(L: Any) -> list[Any]:
        opt = optimizer(L)
        sched = SCHEDULES[name](L.optim.lr_scheduler, opt)
        out = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for epoch in (3, 7, 2, 10):
                opt.step()
                sched.step(epoch)
                out.append((sched.last_epoch, sched.get_last_lr()))
        out.append(sorted({str(w.message)[:60] for w in caught}))
        return out

    assert rates(gradcalc) == rates(torch)


def test_the_order_warning_as_torch() -> None:
    def caught(L: Any, optimizer_first: bool) -> list[str]:
        opt = optimizer(L)
        sched = L.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            if optimizer_first:
                opt.step()
            sched.step()
        return [str(w.message) for w in seen]

    for first in (True, False):
        assert caught(gradcalc, first) == caught(torch, first)
    assert caught(gradcalc, False)  # the schedule stepped before the optimizer: warned


def test_errors_as_torch() -> None:
    for attempt in (
        lambda L: L.optim.lr_scheduler.StepLR("not an optimizer", 2),
        lambda L: L.optim.lr_scheduler.StepLR(optimizer(L), 2, last_epoch=3),
        lambda L: L.optim.lr_scheduler.LambdaLR(optimizer(L), [lambda e: 1.0]),
    ):
        with pytest.raises(Exception) as theirs:
            attempt(torch)
        with pytest.raises(Exception) as ours:
            attempt(gradcalc)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value).split(" when ")[0] == str(theirs.value).split(" when ")[0]


def test_training_with_a_schedule() -> None:
    """SGD with momentum and a StepLR on a least-squares fit: the parameters over 30 epochs, as PyTorch's."""
    rng = np.random.default_rng(3)
    xs, ys, w0 = rng.standard_normal((16, 3)), rng.standard_normal(16), rng.standard_normal(3)

    def fit(L: Any) -> list[np.ndarray]:
        x, y = L.tensor(xs), L.tensor(ys)
        w = L.tensor(w0, requires_grad=True)
        opt = L.optim.SGD([w], lr=0.05, momentum=0.9)
        sched = L.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
        out = []
        for _ in range(30):
            opt.zero_grad()
            ((x @ w - y) ** 2).mean().backward()
            opt.step()
            sched.step()
            out.append(w.detach().numpy().copy())
        return out

    for a, b in zip(fit(gradcalc), fit(torch), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
