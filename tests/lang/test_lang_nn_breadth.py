"""The language's new nn and optim built-ins, from the user's side: the containers (ModuleList, ModuleDict,
ParameterList, ParameterDict), the activation modules and functions, Adamax/NAdam/RAdam/Adadelta and the
schedules LinearLR, CosineAnnealingLR, OneCycleLR, ReduceLROnPlateau, against PyTorch's values and reprs."""

from __future__ import annotations

import re

import pytest
import torch
from gclang_testing import out, run

PYTHON_WORDS = re.compile(r"NoneType|'(int|float|list|dict)' object|Traceback|ndarray|dict_keys|dict_values|<lambda>")


def test_module_list_is_indexed_iterated_and_registered() -> None:
    text = out(
        "layers = ModuleList([Linear(2, 3), Tanh(), Linear(3, 1)])\n"
        "layers = layers.append(LeakyReLU(0.2))\n"
        "print(len(layers))\n"
        "print(layers[-1])\n"
        "print(layers[1:3])\n"
        "for pair in layers.named_parameters():\n"
        "    print(pair[0])\n"
    )
    torch_layers = torch.nn.ModuleList([torch.nn.Linear(2, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1)])
    torch_layers.append(torch.nn.LeakyReLU(0.2))
    expected = "\n".join([
        "4", repr(torch_layers[-1]), repr(torch_layers[1:3]), *(n for n, _ in torch_layers.named_parameters()),
    ]) + "\n"
    assert text == expected


def test_a_loop_over_a_module_list_computes_as_pytorch() -> None:
    torch.manual_seed(0)
    layers = torch.nn.ModuleList([torch.nn.Linear(2, 3, dtype=torch.float64), torch.nn.ELU(0.5),
                                  torch.nn.Linear(3, 2, dtype=torch.float64), torch.nn.Hardswish()])
    lines = ["layers = ModuleList([Linear(2, 3), ELU(0.5), Linear(3, 2), Hardswish()])", "with no_grad:"]
    for name, p in layers.named_parameters():
        index, attr = name.split(".")
        lines.append(f"    c = layers[{index}].{attr}.copy_(tensor({p.detach().tolist()}))")
    lines += ["x = tensor([[0.5, -1.5], [2.0, 0.25]])", "for layer in layers:", "    x = layer(x)", "print(x.tolist())"]
    x = torch.tensor([[0.5, -1.5], [2.0, 0.25]], dtype=torch.float64)
    for layer in layers:
        x = layer(x)
    got = eval(out("\n".join(lines) + "\n"))  # noqa: S307 - a list literal printed by the program
    torch.testing.assert_close(torch.tensor(got, dtype=torch.float64), x.detach(), rtol=1e-12, atol=1e-14)


def test_dict_containers_take_pairs() -> None:
    text = out(
        'heads = ModuleDict([("act", Tanh()), ("out", Linear(2, 1))])\n'
        "print(heads.keys())\n"
        'print(heads["act"])\n'
        'params = ParameterDict([("w", zeros(2)), ("b", ones(1))])\n'
        "print(params.keys())\n"
        "print(len(ParameterList([zeros(2), ones(3)])))\n"
    )
    assert text == "['act', 'out']\nTanh()\n['w', 'b']\n2\n"


@pytest.mark.parametrize("source", ["ModuleList(-1)", "ModuleList([1, 2])", "ModuleDict([1])",
                                    'ParameterDict([("w", Tanh())])', "ParameterList(3)"])
def test_wrong_contents_are_said_in_the_language(source: str) -> None:
    r = run(f"x = {source}\n")
    assert not r.ok and len(r.err.strip().splitlines()) >= 1
    assert not PYTHON_WORDS.search(r.err), r.err
    assert "must be" in r.err


@pytest.mark.parametrize("module", ["LeakyReLU(0.2)", "LeakyReLU(negative_slope=0.1, inplace=true)", "ELU()",
                                    "SELU()", "Hardtanh(-2.0, 2.0)", "ReLU6()", "Mish()", "Softsign()",
                                    "LogSigmoid()", "Hardswish()", "Hardsigmoid()", "GLU()", "GLU(dim=0)",
                                    "CosineSimilarity()", "PairwiseDistance()"])
def test_activation_modules_print_as_pytorch(module: str) -> None:
    python = module.replace("true", "True")
    assert out(f"m = {module}\nm\n") == repr(eval(f"torch.nn.{python}")) + "\n"  # noqa: S307 - our own literals


@pytest.mark.parametrize("call", ["leaky_relu(x, 0.2)", "elu(x)", "hardtanh(x)", "relu6(x * 4.0)",
                                  "hardswish(x * 3.0)", "hardsigmoid(x * 3.0)", "logsigmoid(x)", "mish(x)",
                                  "softsign(x)", "glu(x)", "normalize(x, dim=0)"])
def test_activation_functions_and_their_gradients(call: str) -> None:
    data = [-1.5, -0.25, 0.5, 2.0]
    text = out(f"x = tensor({data}) requires_grad\ny = F.{call}\nbackward y.sum()\nprint(y.tolist())\n"
               "print(x.grad.tolist())\nprint(y.grad_fn)\n")
    x = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    y = eval(f"torch.nn.functional.{call}")  # noqa: S307 - our own calls
    y.sum().backward()
    values, grads, node = text.splitlines()
    torch.testing.assert_close(torch.tensor(eval(values), dtype=torch.float64), y.detach())  # noqa: S307
    torch.testing.assert_close(torch.tensor(eval(grads), dtype=torch.float64), x.grad)  # noqa: S307
    assert node.split(" ")[0].strip("<>") == y.grad_fn.name()


@pytest.mark.parametrize("name", ["Adamax", "NAdam", "RAdam", "Adadelta"])
def test_new_optimizers_train_as_pytorch(name: str) -> None:
    # the language computes in float64 by default: PyTorch's default too, so that NAdam's mu_product (a tensor
    # of the default dtype) is float64 in both
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _train(name)
    finally:
        torch.set_default_dtype(previous)


def _train(name: str) -> None:
    text = out(
        "w = tensor([1.0, -2.0, 0.5]) requires_grad\n"
        f"opt = optim.{name}([w], lr=0.05, weight_decay=0.01)\n"
        "for i in range(20):\n"
        "    opt.zero_grad()\n"
        "    loss = ((w - 0.3) ** 2).sum() + w.sin().sum()\n"
        "    backward loss\n"
        "    opt.step()\n"
        "print(w.tolist())\n"
    )
    w = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
    opt = getattr(torch.optim, name)([w], lr=0.05, weight_decay=0.01)
    for _ in range(20):
        opt.zero_grad()
        (((w - 0.3) ** 2).sum() + w.sin().sum()).backward()
        opt.step()
    torch.testing.assert_close(torch.tensor(eval(text), dtype=torch.float64), w.detach(), rtol=1e-12,  # noqa: S307
                               atol=1e-14)


@pytest.mark.parametrize(("schedule", "python"), [
    ("optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)", "CosineAnnealingLR(opt, T_max=10)"),
    ("optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4)",
     "LinearLR(opt, start_factor=0.25, total_iters=4)"),
    ("optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=13)",
     "OneCycleLR(opt, max_lr=0.5, total_steps=13)"),
])
def test_new_schedules_as_pytorch(schedule: str, python: str) -> None:
    text = out(
        "w = tensor([1.0]) requires_grad\n"
        "opt = optim.SGD([w], lr=0.1, momentum=0.9)\n"
        f"s = {schedule}\n"
        "for i in range(12):\n"
        "    opt.step()\n"
        "    s.step()\n"
        "    print(s.get_last_lr()[0])\n"
    )
    w = torch.tensor([1.0], requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9)
    s = eval(f"torch.optim.lr_scheduler.{python}")  # noqa: S307 - our own calls
    rates = []
    for _ in range(12):
        opt.step()
        s.step()
        rates.append(s.get_last_lr()[0])
    assert [float(v) for v in text.split()] == pytest.approx(rates, rel=1e-15, abs=0)


def test_reduce_on_plateau_steps_with_a_metric() -> None:
    text = out(
        "w = tensor([1.0]) requires_grad\n"
        "opt = optim.Adam([w], lr=0.1)\n"
        'p = optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)\n'
        "for m in [1.0, 0.9, 0.95, 0.93, 0.91, 0.92, 0.99]:\n"
        "    p.step(m)\n"
        "print(p.get_last_lr())\n"
        "print(p.last_epoch)\n"
        "p\n"
    )
    w = torch.tensor([1.0], requires_grad=True)
    p = torch.optim.lr_scheduler.ReduceLROnPlateau(torch.optim.Adam([w], lr=0.1), mode="min", factor=0.5, patience=1)
    for m in [1.0, 0.9, 0.95, 0.93, 0.91, 0.92, 0.99]:
        p.step(m)
    lines = text.splitlines()
    assert lines[:2] == [str(p.get_last_lr()), "7"]
    assert lines[2].startswith('ReduceLROnPlateau(mode="min", factor=0.5, patience=1,')
