"""The language's training built-ins beyond SGD and Adam (LANGUAGE.md §9), against PyTorch: RMSprop, Adagrad
and LBFGS trajectories, learning-rate schedules, the random factories and a Generator, modules' `to`/`cpu`/
`apply`/buffers; and the language's float64 whatever Python code in the same process set as its default."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from gclang_testing import out, run

import gradcalc
from tests.lang.test_lang_nn import PYTHON_WORDS, close, literal, session
from tests.precision import assert_float64_within_sensitivity


def _start() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, str]:
    torch.manual_seed(1)
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, dtype=torch.float64, requires_grad=True)
    x = torch.randn(5, 3, dtype=torch.float64)
    source = (f"w = tensor({literal(w)}) requires_grad\nb = tensor({literal(b)}) requires_grad\n"
              f"x = tensor({literal(x)})\n")
    return w, b, x, source


def _loss(L: Any, w: Any, b: Any, x: Any) -> Any:
    return (L.tanh(x @ w + b) ** 2).sum() + 0.1 * (w**4).sum()


OPTIMIZERS = [
    ("RMSprop", "lr=0.01", {"lr": 0.01}),
    ("RMSprop", "lr=0.005, alpha=0.9, eps=1e-6, weight_decay=0.05, momentum=0.8",
     {"lr": 0.005, "alpha": 0.9, "eps": 1e-6, "weight_decay": 0.05, "momentum": 0.8}),
    ("RMSprop", "lr=0.01, centered=true, maximize=true", {"lr": 0.01, "centered": True, "maximize": True}),
    ("Adagrad", "lr=0.1", {"lr": 0.1}),
    ("Adagrad", "lr=0.2, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6",
     {"lr": 0.2, "lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-6}),
]


@pytest.mark.parametrize("name, args, kwargs", OPTIMIZERS, ids=[f"{n}({a})" for n, a, _ in OPTIMIZERS])
def test_optimizer_trajectories_match_torch(name: str, args: str, kwargs: dict) -> None:
    w, b, x, source = _start()
    s = session(source + f"opt = {name}([w, b], {args})\n"
                "for i in range(60):\n    opt.zero_grad()\n"
                "    loss = (tanh(x @ w + b) ** 2).sum() + 0.1 * (w ** 4).sum()\n    backward loss\n    opt.step()\n")
    opt = getattr(torch.optim, name)([w, b], **kwargs)
    for _ in range(60):
        opt.zero_grad()
        _loss(torch, w, b, x).backward()
        opt.step()
    close(s.workspace["w"], w)
    close(s.workspace["b"], b)


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_with_a_closure_matches_torch(line_search: str | None) -> None:
    """Rosenbrock's function from (-1.5, 2), as PINN code drives LBFGS: a closure per step. L-BFGS amplifies
    rounding in Rosenbrock's valley, so the bound is PyTorch's own sensitivity (tests/precision.py): its run with
    the start nudged one ulp."""
    option = f', line_search_fn="{line_search}"' if line_search else ""
    s = session(f"w = [-1.5, 2.] requires_grad\nopt = LBFGS([w], history_size=5, max_iter=4{option})\n"
                "def closure():\n    opt.zero_grad()\n    loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2\n"
                "    backward loss\n    return loss\n"
                "for i in range(10):\n    last = opt.step(closure)\n")

    def torch_run(start: float) -> np.ndarray:
        w = torch.tensor([start, 2.0], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([w], history_size=5, max_iter=4, line_search_fn=line_search)

        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = (1 - w[0]) ** 2 + 100 * (w[1] - w[0] ** 2) ** 2
            loss.backward()
            return loss

        for _ in range(10):
            last = opt.step(closure)
        return np.concatenate([w.detach().numpy(), [last.item()]])

    ours = np.concatenate([s.workspace["w"].detach().numpy(), [s.workspace["last"].item()]])
    assert s.workspace["w"].dtype == gradcalc.float64
    assert_float64_within_sensitivity(ours[None], torch_run(-1.5)[None], torch_run(np.nextafter(-1.5, 0))[None],
                                      roundings=20, what="w and the last loss")


def test_schedules_match_torch() -> None:
    w = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    text = out(
        "w = [0., 0.] requires_grad\nopt = SGD([w], lr=0.1)\ns1 = StepLR(opt, step_size=2, gamma=0.5)\n"
        "s2 = ExponentialLR(opt, gamma=0.9)\n"
        "for epoch in range(5):\n    opt.step()\n    s1.step()\n    s2.step()\n    print s1.get_last_lr(), opt.lr\n"
        "s1.last_epoch\ns1\nMultiStepLR(SGD([w], lr=1.), milestones=[1, 3], gamma=0.1)\n"
    )
    opt = torch.optim.SGD([w], lr=0.1)
    s1 = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    lines = []
    for _ in range(5):
        opt.step()
        s1.step()
        s2.step()
        lines.append(f"{s1.get_last_lr()} {opt.param_groups[0]['lr']}")
    assert text.splitlines() == [*lines, "5", "StepLR(step_size=2, gamma=0.5, last_epoch=5)",
                                 "MultiStepLR(milestones=[1, 3], gamma=0.1, last_epoch=0)"]


def test_generator_and_random_built_ins() -> None:
    text = out(
        "g = Generator()\ng.manual_seed(3)\na = rand(4, generator=g)\ng.manual_seed(3)\nb = rand(4, generator=g)\n"
        "all(a == b)\ng.initial_seed()\ng\n"
        "seed 5\nc = randn(3)\nseed 5\nall(c == randn(3))\n"
        "r = randint(2, 5, (1000,), generator=g)\nr.dtype\nr.min().item()\nr.max().item()\n"
        "normal(0, 1, (2, 3)).shape\nnormal(zeros(4), 2.).shape\nrandn_like(ones(2, 2)).dtype\n"
        "randperm(6).sort()[0]\nrandint_like(zeros(3), 4).dtype\n"
        "x = zeros(1000)\ny = x.uniform_(-1, 1)\n(x.min() >= -1).item()\n(x.max() < 1).item()\n"
    )
    assert text.splitlines() == [
        "Generator(seed=3)", "Generator(seed=3)", "tensor(True)", "3", "Generator(seed=3)", "tensor(True)", "int64",
        "2", "4", "(2, 3)", "(4,)",
        "float64", "tensor([0, 1, 2, 3, 4, 5])", "float64", "True", "True",
    ]


def test_help_of_the_new_built_ins() -> None:
    for name, start in [("RMSprop", "RMSprop(params, lr=0.01, alpha=0.99"), ("LBFGS", "LBFGS(params, lr=1"),
                        ("StepLR", "StepLR(optimizer, step_size, gamma=0.1"), ("Generator", "Generator()"),
                        ("randint", "randint(low=0, high=none, size=none"), ("normal", "normal(mean=0.0, std=1.0")]:
        assert out(f":help {name}").startswith(start)


@pytest.mark.parametrize("source, expected", [
    ("g = Generator()\ng.manual_seed(1.5)", "Generator.manual_seed: a seed is a whole number, not 1.5"),
    ("g = Generator()\ng.foo", "a random generator has no attribute 'foo'"),
    ("g = Generator()\ng.seed = 3", "can't assign to .seed of a random generator: seed it with .manual_seed(n)"),
    ("StepLR(3, 2)", "StepLR: argument 'optimizer' must be an optimizer"),
    ("w = [1.] requires_grad\nMultiStepLR(SGD([w]), 3)", "MultiStepLR: argument 'milestones' must be a list of whole"),
    ("w = [1.] requires_grad\ns = StepLR(SGD([w]), 2)\ns.last_epoch = 4", "can't assign to .last_epoch"),
    ("w = [1.] requires_grad\nLBFGS([w]).step()", "LBFGS.step"),
    ("randint(5, 5, (2,))", "random_ expects 'from' to be less than 'to'"),
    ("normal(0, -1, (2,))", "normal expects std >= 0.0"),
])
def test_wrong_uses_say_what_is_wrong(source: str, expected: str) -> None:
    r = run(source)
    assert not r.ok
    assert r.errors and r.errors[0].startswith(expected), r.errors
    assert not PYTHON_WORDS.search(r.errors[0]), r.errors[0]


def test_modules_to_cpu_apply_and_buffers() -> None:
    text = out(
        "net = Sequential(Linear(2, 3), Tanh(), Linear(3, 1))\nnet.to(\"cpu\")[0].weight.dtype\n"
        "net.to(float32)[0].weight.dtype\nnet.cpu()[2].bias.dtype\nnet.double()[0].weight.dtype\n"
        "def visit(m):\n    print \"visit\"\nn = net.apply(visit)\n"
        "lin = Linear(1, 1)\nlin.register_buffer(\"running\", zeros(2))\nlin.running\nlen(lin.buffers())\n"
        "lin.state_dict()\n"
    )
    assert text.splitlines()[:10] == ["float64", "float32", "float32", "float64", *["visit"] * 4,
                                      "tensor([0., 0.])", "1"]
    assert "running" in text.splitlines()[-1]


def test_python_code_setting_float32_leaves_the_language_in_float64(pytorch_default_dtype: None) -> None:
    assert gradcalc.get_default_dtype() == gradcalc.float32
    text = out("x = [1.5, 2.]\nx.dtype\nzeros(2).dtype\nrand(2).dtype\nLinear(2, 2).weight.dtype\nx")
    assert text.splitlines() == ["float64", "float64", "float64", "float64", "tensor([1.5000, 2.0000])"]
    assert gradcalc.get_default_dtype() == gradcalc.float32
