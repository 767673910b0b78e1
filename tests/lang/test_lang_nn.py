"""Modules and optimizers in the language (LANGUAGE.md §9), against PyTorch.

The weights come from torch (`torch.manual_seed`, float64) and are written into the language as list literals
(the shortest round-trip decimals, so the same float64 values); outputs, gradients, optimizer trajectories and a
PINN's loss curve are then compared with torch's. Reprs are compared with torch's repr strings; the bad inputs
with PyTorch's errors (in our words) and with the rule that no message speaks Python.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from gclang_testing import out, run

from gradcalc.lang import Session
from gradcalc.lang.values.builtins import NN_BUILTINS

ROOT = Path(__file__).resolve().parents[2]
RTOL = 1e-10
NN_NAMES = sorted(name for names in NN_BUILTINS.values() for name in names)

# Python's and NumPy's words that no message may contain (LANGUAGE.md §5)
PYTHON_WORDS = re.compile(
    r"object|NoneType|positional argument|keyword argument|__\w+|\b_[a-z]\w*|Traceback|<lambda>|ndarray|"
    r"'(int|float|str|list|tuple|dict|bool|Tensor)'|\b(int|str|float|NoneType) is not|torch\.|gradcalc\.|"
    r"missing \d+ required|takes \d+ positional|unexpected keyword|iterable|subscriptable|callable"
)


def literal(t: torch.Tensor) -> str:
    """A tensor as a list literal of the language: the shortest decimals that round-trip, so the same values."""
    return json.dumps(t.detach().tolist())


def torch_mlp(seed: int, sizes: list[int], act: type = torch.nn.Tanh, bias: bool = True) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        if i:
            layers.append(act())
        layers.append(torch.nn.Linear(a, b, bias=bias, dtype=torch.float64))
    return torch.nn.Sequential(*layers)


def language_mlp(name: str, net: torch.nn.Sequential, act: str = "Tanh()") -> str:
    """The same network in the language, with torch's weights copied in."""
    layers = [
        f"Linear({m.in_features}, {m.out_features}, bias={'true' if m.bias is not None else 'false'})"
        if isinstance(m, torch.nn.Linear) else act
        for m in net
    ]
    lines = [f"{name} = Sequential({', '.join(layers)})", "with no_grad:"]
    for path, p in net.named_parameters():
        index, attr = path.split(".")
        lines.append(f"    copied = {name}[{index}].{attr}.copy_(tensor({literal(p)}))")
    return "\n".join(lines) + "\n"


def session(source: str) -> Session:
    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run(source, "t.gc"), s._err.getvalue()  # type: ignore[attr-defined]
    return s


def close(a: object, b: torch.Tensor) -> None:
    got = torch.tensor(a.detach().numpy()) if hasattr(a, "detach") else torch.tensor(a)  # type: ignore[union-attr]
    torch.testing.assert_close(got, b.detach(), rtol=RTOL, atol=1e-14)


# ---------------------------------------------------------------------------------------------------
# Forward and backward: the same weights give torch's outputs and gradients


ACTIVATIONS = ["Tanh", "ReLU", "Sigmoid", "Softplus", "GELU", "SiLU", "Identity"]


@pytest.mark.parametrize("act", ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_gradients_match_torch(act: str, bias: bool) -> None:
    net = torch_mlp(3, [2, 5, 4, 1], getattr(torch.nn, act), bias)
    x = torch.linspace(-2, 2, 14, dtype=torch.float64).reshape(7, 2)
    y = net(x)
    (y**2).sum().backward()
    s = session(
        language_mlp("net", net, f"{act}()")
        + f"x = tensor({literal(x)})\ny = net(x)\nloss = (y ** 2).sum()\nbackward loss\n"
    )
    close(s.workspace["y"], y)
    mine = dict(s.workspace["net"].named_parameters())  # type: ignore[attr-defined]
    for name, p in net.named_parameters():
        close(mine[name].grad, p.grad)


def test_functional_losses_and_activations_match_torch() -> None:
    F = torch.nn.functional
    torch.manual_seed(0)
    a = torch.randn(4, 3, dtype=torch.float64)
    t = torch.rand(4, 3, dtype=torch.float64)
    cls = torch.tensor([0, 2, 1, 2])
    cases = {
        "mse_loss(a, t)": F.mse_loss(a, t),
        'mse_loss(a, t, reduction="sum")': F.mse_loss(a, t, reduction="sum"),
        'l1_loss(a, t, reduction="none")': F.l1_loss(a, t, reduction="none"),
        "binary_cross_entropy(sigmoid(a), t)": F.binary_cross_entropy(torch.sigmoid(a), t),
        "binary_cross_entropy_with_logits(a, t)": F.binary_cross_entropy_with_logits(a, t),
        "cross_entropy(a, cls)": F.cross_entropy(a, cls),
        "nll_loss(log_softmax(a, dim=1), cls)": F.nll_loss(F.log_softmax(a, dim=1), cls),
        "gelu(a)": F.gelu(a),
        'gelu(a, approximate="tanh")': F.gelu(a, approximate="tanh"),
        "silu(a)": F.silu(a),
        "MSELoss()(a, t)": torch.nn.MSELoss()(a, t),
        'L1Loss(reduction="sum")(a, t)': torch.nn.L1Loss(reduction="sum")(a, t),
        "CrossEntropyLoss(label_smoothing=0.1)(a, cls)": torch.nn.CrossEntropyLoss(label_smoothing=0.1)(a, cls),
        "BCEWithLogitsLoss()(a, t)": torch.nn.BCEWithLogitsLoss()(a, t),
    }
    source = f"a = tensor({literal(a)})\nt = tensor({literal(t)})\ncls = tensor({cls.tolist()}, dtype=int64)\n"
    s = session(source + "".join(f"r{i} = {expr}\n" for i, expr in enumerate(cases)))
    for i, expected in enumerate(cases.values()):
        close(s.workspace[f"r{i}"], expected)


# ---------------------------------------------------------------------------------------------------
# Optimizers: the same trajectories as torch's


OPTIMIZERS = [
    ("SGD", "lr=0.1", {"lr": 0.1}),
    ("SGD", "lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01",
     {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", "lr=0.05, momentum=0.9, nesterov=true", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
    ("SGD", "lr=0.01, maximize=true", {"lr": 0.01, "maximize": True}),
    ("Adam", "lr=0.01", {"lr": 0.01}),
    ("Adam", "lr=0.02, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1, amsgrad=true",
     {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", "lr=0.01, maximize=true", {"lr": 0.01, "maximize": True}),
    ("AdamW", "lr=0.01", {"lr": 0.01}),
    ("AdamW", "lr=0.03, weight_decay=0.2, amsgrad=true", {"lr": 0.03, "weight_decay": 0.2, "amsgrad": True}),
]


@pytest.mark.parametrize("name, args, kwargs", OPTIMIZERS, ids=[f"{n}({a})" for n, a, _ in OPTIMIZERS])
def test_optimizer_trajectories_match_torch(name: str, args: str, kwargs: dict) -> None:
    torch.manual_seed(1)
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    b = torch.randn(2, dtype=torch.float64, requires_grad=True)
    x = torch.randn(5, 3, dtype=torch.float64)
    source = (
        f"w = tensor({literal(w)}) requires_grad\nb = tensor({literal(b)}) requires_grad\nx = tensor({literal(x)})\n"
        f"opt = {name}([w, b], {args})\n"
        "for i in range(60):\n"
        "    opt.zero_grad()\n"
        "    loss = (tanh(x @ w + b) ** 2).sum() + 0.1 * (w ** 4).sum()\n"
        "    backward loss\n"
        "    opt.step()\n"
    )
    s = session(source)
    opt = getattr(torch.optim, name)([w, b], **kwargs)
    for _ in range(60):
        opt.zero_grad()
        loss = (torch.tanh(x @ w + b) ** 2).sum() + 0.1 * (w**4).sum()
        loss.backward()
        opt.step()
    close(s.workspace["w"], w)
    close(s.workspace["b"], b)


def test_pinn_loss_curve_matches_torch() -> None:
    """The PINN step of examples/pinn.gc, from torch's initial weights: the same loss at every step."""
    net = torch_mlp(0, [1, 16, 16, 1])
    x = torch.linspace(0, 2, 32, dtype=torch.float64).reshape(-1, 1).requires_grad_()
    source = language_mlp("net", net) + (
        "opt = Adam(net.parameters(), lr=0.01)\n"
        "x = linspace(0, 2, 32).reshape(-1, 1) requires_grad\n"
        "for step in range(15):\n"
        "    opt.zero_grad()\n"
        "    u = net(x)\n"
        "    du = grad(u, x, ones_like(u), create_graph=true)[0]\n"
        "    d2u = grad(du, x, ones_like(du), create_graph=true)[0]\n"
        "    loss = mean((d2u + u) ** 2) + (u[0] ** 2).sum() + ((du[0] - 1) ** 2).sum()\n"
        "    backward loss\n"
        "    opt.step()\n"
        "    print loss.item()\n"
    )
    losses = [float(v) for v in out(source).split()]
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    expected = []
    for _ in range(15):
        opt.zero_grad()
        u = net(x)
        (du,) = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
        (d2u,) = torch.autograd.grad(du, x, torch.ones_like(du), create_graph=True)
        loss = ((d2u + u) ** 2).mean() + (u[0] ** 2).sum() + ((du[0] - 1) ** 2).sum()
        loss.backward()
        opt.step()
        expected.append(loss.item())
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(expected), rtol=RTOL, atol=0)


def test_a_step_without_gradients_is_skipped_and_non_grad_tensors_are_accepted() -> None:
    """PyTorch's optimizers skip parameters whose .grad is None, and take tensors that do not require grad."""
    s = session(
        "w = [1, 2] requires_grad\nc = [3, 4]\nopt = Adam([w, c], lr=0.1)\nopt.step()\n"
        "loss = (w * w).sum()\nbackward loss\nopt.step()\n"
    )
    w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    c = torch.tensor([3.0, 4.0], dtype=torch.float64)
    opt = torch.optim.Adam([w, c], lr=0.1)
    opt.step()
    (w * w).sum().backward()
    opt.step()
    close(s.workspace["w"], w)
    close(s.workspace["c"], c)


def test_learning_rate_read_and_set() -> None:
    s = session(
        "w = [1., 2.] requires_grad\nopt = SGD([w], lr=0.5)\na = opt.lr\nopt.lr *= 0.5\n"
        "b = opt.param_groups[0][\"lr\"]\nloss = (w * w).sum()\nbackward loss\nopt.step()\n"
    )
    assert s.workspace["a"] == 0.5 and s.workspace["b"] == 0.25
    close(s.workspace["w"], torch.tensor([1.0 - 0.25 * 2.0, 2.0 - 0.25 * 4.0], dtype=torch.float64))


def test_manual_sgd_through_parameters() -> None:
    """`for p in net.parameters():` with an update under no_grad: the textbook loop, as torch runs it."""
    net = torch_mlp(2, [1, 4, 1])
    x = torch.linspace(0, 1, 5, dtype=torch.float64).reshape(-1, 1)
    s = session(
        language_mlp("net", net) + f"x = tensor({literal(x)})\n"
        "for i in range(3):\n"
        "    net.zero_grad()\n"
        "    loss = ((net(x) - x) ** 2).mean()\n"
        "    backward loss\n"
        "    with no_grad:\n"
        "        for p in net.parameters():\n"
        "            p -= 0.1 * p.grad\n"
    )
    for _ in range(3):
        net.zero_grad()
        ((net(x) - x) ** 2).mean().backward()
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
    mine = dict(s.workspace["net"].named_parameters())  # type: ignore[attr-defined]
    for name, p in net.named_parameters():
        close(mine[name], p)


# ---------------------------------------------------------------------------------------------------
# Printing, :vars, seed


REPRS = [
    ("Sequential(Linear(1, 32), Tanh(), Linear(32, 32), Tanh(), Linear(32, 1))",
     lambda nn: nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))),
    ("Sequential(Linear(2, 4), Sequential(ReLU(), Linear(4, 1)), Sigmoid())",
     lambda nn: nn.Sequential(nn.Linear(2, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 1)), nn.Sigmoid())),
    ("Linear(2, 3, bias=false)", lambda nn: nn.Linear(2, 3, bias=False)),
    ("Softplus(beta=2, threshold=10)", lambda nn: nn.Softplus(beta=2, threshold=10)),
    ("Softplus()", lambda nn: nn.Softplus()),
    ('GELU(approximate="tanh")', lambda nn: nn.GELU(approximate="tanh")),
    ("GELU()", lambda nn: nn.GELU()),
    ("ReLU()", lambda nn: nn.ReLU()),
    ("SiLU()", lambda nn: nn.SiLU()),
    ("Identity()", lambda nn: nn.Identity()),
    ('MSELoss(reduction="sum")', lambda nn: nn.MSELoss(reduction="sum")),
    ("L1Loss()", lambda nn: nn.L1Loss()),
    ("BCELoss()", lambda nn: nn.BCELoss()),
    ("BCEWithLogitsLoss()", lambda nn: nn.BCEWithLogitsLoss()),
    ("CrossEntropyLoss(label_smoothing=0.1)", lambda nn: nn.CrossEntropyLoss(label_smoothing=0.1)),
    ("NLLLoss()", lambda nn: nn.NLLLoss()),
]


@pytest.mark.parametrize("expr, make", REPRS, ids=[e for e, _ in REPRS])
def test_a_module_prints_as_torch(expr: str, make: object) -> None:
    assert out(expr) == repr(make(torch.nn)) + "\n"  # type: ignore[operator]
    assert out(f"print {expr}") == repr(make(torch.nn)) + "\n"  # type: ignore[operator]


OPTIMIZER_REPRS = [
    ("SGD([w], lr=0.1)", lambda w: torch.optim.SGD([w], lr=0.1)),
    ("SGD([w], lr=0.1, momentum=0.9, nesterov=true, weight_decay=0.01)",
     lambda w: torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam([w], lr=0.01)", lambda w: torch.optim.Adam([w], lr=0.01)),
    ("Adam([w], lr=0.01, betas=(0.8, 0.9), amsgrad=true, maximize=true)",
     lambda w: torch.optim.Adam([w], lr=0.01, betas=(0.8, 0.9), amsgrad=True, maximize=True)),
    ("AdamW([w])", lambda w: torch.optim.AdamW([w])),
]


@pytest.mark.parametrize("expr, make", OPTIMIZER_REPRS, ids=[e for e, _ in OPTIMIZER_REPRS])
def test_an_optimizer_prints_as_torch(expr: str, make: object) -> None:
    w = torch.tensor([1.0], requires_grad=True)
    assert out(f"w = [1] requires_grad\n{expr}") == repr(make(w)) + "\n"  # type: ignore[operator]


def test_a_parameter_prints_as_torch() -> None:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # the language's default dtype, so that torch's repr has no dtype=
    try:
        expected = repr(torch.nn.Parameter(torch.tensor([[0.5, -1.0]])))
    finally:
        torch.set_default_dtype(previous)
    assert out("lin = Linear(2, 1)\nlin.weight = Parameter(tensor([[0.5, -1]]))\nlin.weight") == expected + "\n"


def test_vars_shows_modules_and_optimizers() -> None:
    text = out("net = Sequential(Linear(1, 32), Tanh(), Linear(32, 32), Tanh(), Linear(32, 1))\n"
               "lin = Linear(1, 1, bias=false)\nopt = Adam(net.parameters(), lr=0.01)\n:vars")
    n = sum(p.numel() for p in torch_mlp(0, [1, 32, 32, 1]).parameters())
    rows = {line.split()[0]: line.split(None, 1)[1] for line in text.splitlines()[1:]}
    assert rows["net"] == f"Sequential  {n:,} parameters" == "Sequential  1,153 parameters"
    assert rows["lin"] == "Linear  1 parameter"
    assert rows["opt"] == "Adam  6 tensors, lr=0.01"


def test_seed_makes_initial_weights_repeat() -> None:
    s = session(
        "seed 0\na = Sequential(Linear(3, 8), Tanh(), Linear(8, 2))\nseed 0\nb = Sequential(Linear(3, 8), "
        "Tanh(), Linear(8, 2))\nseed 1\nc = Sequential(Linear(3, 8), Tanh(), Linear(8, 2))\n"
    )
    a, b, c = (dict(s.workspace[k].named_parameters()) for k in "abc")  # type: ignore[attr-defined]
    for name in a:
        assert a[name].tolist() == b[name].tolist()
        assert a[name].tolist() != c[name].tolist()
        fan_in = 3 if name.startswith("0.") else 8  # PyTorch's bounds: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
        assert a[name].abs().max().item() <= fan_in**-0.5


# ---------------------------------------------------------------------------------------------------
# Attributes, methods, indexing: only the declared surface


def test_attributes_methods_and_indexing() -> None:
    text = out(
        "net = Sequential(Linear(1, 4), Tanh(), Linear(4, 1))\nlen(net)\nnet[0]\nnet[-1].in_features\n"
        "net[0].weight.shape\nnet[0].bias.requires_grad\nnet[1:]\nnet.training\nx = net.eval()\n"
        "net[0].training\nnet.named_parameters()[2][0]\nlen(net.parameters())\nnet.forward\n"
    )
    nn = torch.nn
    net = nn.Sequential(nn.Linear(1, 4), nn.Tanh(), nn.Linear(4, 1))
    assert text == "\n".join([
        "3",
        repr(net[0]),
        "4",
        "(4, 1)",
        "True",
        repr(net[1:]),
        "True",
        "False",
        repr(list(net.named_parameters())[2][0]),
        "4",
        "<method forward of a Sequential module>",
        "",
    ])


@pytest.mark.parametrize(
    "expr",
    ["net.register_parameter", "net.add_module", "net.register_forward_hook", "net.extra_repr", "net.get_submodule",
     "net.forward_pre_hooks", "opt.add_param_group", "opt.defaults", "opt.state", "opt.register_step_pre_hook"],
)
def test_python_internals_are_not_reachable(expr: str) -> None:
    r = run(f"net = Sequential(Linear(1, 2))\nopt = SGD(net.parameters(), lr=0.1)\n{expr}")
    assert not r.ok and "has no attribute" in r.errors[0], r.err


def test_private_names_are_rejected_before_running() -> None:
    r = run("net = Linear(1, 1)\nnet._parameters")
    assert not r.ok and r.out == "" and "'_'" in r.errors[0]


def test_assigning_parameters_and_layers() -> None:
    s = session(
        "lin = Linear(2, 1)\nlin.weight = Parameter(tensor([[1., 2.]]))\nlin.bias = none\n"
        "net = Sequential(Tanh(), Tanh())\nnet[1] = lin\ny = net(tensor([[0.5, -0.5]]))\n"
        "net.head = Tanh()\nz = net.head(y)\nn = len(net.parameters())\n"
    )
    expected = torch.tanh(torch.tensor([[0.5, -0.5]], dtype=torch.float64)) @ torch.tensor(
        [[1.0], [2.0]], dtype=torch.float64)
    close(s.workspace["y"], expected)
    close(s.workspace["z"], torch.tanh(expected))
    assert s.workspace["n"] == 1  # the weight; the bias is none


# ---------------------------------------------------------------------------------------------------
# Bad input


ERRORS = [
    ("Linear(1, 32)(zeros(256, 2))", ["shape (256, 2)", "256x2 and 1x32", "in_features=1"]),
    ("Sequential(Linear(2, 3), Tanh(), Linear(4, 1))(zeros(5, 2))", ["layer [2]", "5x3 and 4x1"]),
    ("Linear(1, 2)(3)", ["0-d"]),
    ("w = 1 requires_grad\nSGD([w * 2])", ["can't optimize a non-leaf"]),
    ("w = 1 requires_grad\nSGD([w], lr=-0.1)", ["Invalid learning rate: -0.1"]),
    ("w = 1 requires_grad\nAdam([w], lr=-1)", ["Invalid learning rate"]),
    ("w = 1 requires_grad\nopt = SGD([w], lr=0.1)\nopt.lr = -1", ["Invalid learning rate"]),
    ("w = 1 requires_grad\nSGD(w)", ["SGD(params, lr=", "list of tensors"]),
    ("SGD([])", ["empty parameter list"]),
    ("w = 1 requires_grad\nSGD([w], nesterov=true)", ["Nesterov momentum requires a momentum"]),
    ("w = 1 requires_grad\nAdam([w], betas=0.9)", ["Adam(params, lr=0.001, betas=(0.9, 0.999)", "pair"]),
    ("w = 1 requires_grad\nAdam([w], lr=\"fast\")", ["argument 'lr' must be a number"]),
    ("w = 1 requires_grad\nAdam([w], foreach=true)", ["foreach"]),
    ("Linear(1)", ["Linear(in_features, out_features, bias=true", "Linear needs argument 'out_features'"]),
    ("Linear(1.5, 2)", ["Linear: argument 'in_features' must be a whole number, not 1.5"]),
    ("Linear(1, 2, 3, 4)", ["takes at most 3 arguments (in_features, out_features, bias)", "give dtype= by name"]),
    ("Linear(1, 2, bias=1)", ["argument 'bias' must be true or false"]),
    ("Linear(1, 2, device=\"cpu\")", ["CPU"]),
    ("Linear(1, 2, biass=false)", ["does not take an argument 'biass'", "bias="]),
    ("Sequential(Linear(1, 2), 3)", ["Sequential(*modules)", "must be a module"]),
    ("Tanh()(\"x\")", ["argument 'input' must be a tensor"]),
    ("Tanh()(zeros(2), zeros(2))", ["takes 1 argument (input)"]),
    ("MSELoss()(zeros(2))", ["needs argument 'target'"]),
    ("mse_loss(zeros(2), zeros(2), reduction=\"avg\")", ["reduction"]),
    ("mse_loss(zeros(2), zeros(2), \"sum\")", ["takes 2 arguments (input, target)", "give reduction="]),
    ("net = Linear(1, 1)\nnet.parameters(1)", ["parameters(recurse=true)", "true or false"]),
    ("net = Linear(1, 1)\nnet.weight = zeros(1, 1)", ["Parameter("]),
    ("net = Linear(1, 1)\nnet.in_features = 2", ["fixed"]),
    ("net = Linear(1, 1)\nnet.foo", ["a Linear module has no attribute 'foo'"]),
    ("net = Linear(1, 1)\nnet.weight()", ["attribute, not a method"]),
    ("net = Linear(1, 1)\nnet[0]", ["can't index a Linear module"]),
    ("net = Sequential(Tanh())\nnet[3]", ["out of range"]),
    ("net = Sequential(Tanh())\nnet[0] = 3", ["module"]),
    ("net = Linear(1, 1)\nlen(net)", ["a Linear module"]),
    ("w = 1 requires_grad\nopt = SGD([w], lr=0.1)\nopt.momentum = 0.5", ["only .lr"]),
    ("w = 1 requires_grad\nopt = SGD([w], lr=0.1)\nopt.param_groups[0][\"lr\"] = 1", ["opt.lr"]),
    ("w = 1 requires_grad\nopt = SGD([w], lr=0.1)\nopt.step(3)", ["step(closure=none)", "function"]),
    ("net = Linear(1, 1)\nnet.load_state_dict(3)", ["dict"]),
    ("zero_grad Linear(1, 1)", ["tensors"]),
]


@pytest.mark.parametrize("source, words", ERRORS, ids=[s.splitlines()[-1] for s, _ in ERRORS])
def test_bad_input_gives_one_clear_error(source: str, words: list[str]) -> None:
    r = run(source)
    assert not r.ok and len(r.errors) == 1, r.err
    message = r.errors[0]
    for word in words:
        assert word in message, (word, message)
    assert not PYTHON_WORDS.search(message), message


ODD = ["none", '"s"', "[1, 2]", "1.5", "-1", "true", "sin", "Tanh()", "(1, 2)", "[[1, 2], [3]]", "w", "[w]"]


@pytest.mark.parametrize("name", NN_NAMES)
def test_odd_arguments_never_speak_python(name: str) -> None:
    """Every nn built-in, and a module's call, with odd arguments by position and by name: a clear error or a
    value, never Python's words, and never a traceback."""
    from gradcalc.lang.values.builtins import FUNCTIONS

    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run("w = 1 requires_grad", "t.gc")
    params = list(FUNCTIONS[name].kw) or ["x"]
    calls = [f"{name}({a})" for a in ODD] + [f"{name}({a}, {b})" for a in ODD[:6] for b in ODD]
    calls += [f"{name}({p}={a})" for p in params for a in ODD]
    calls += [f"Linear(1, 2)({a})" for a in ODD] + [f"MSELoss()({a}, {a})" for a in ODD]
    for call in calls:
        err = io.StringIO()
        s._err = err  # type: ignore[attr-defined]
        s.run(call, "t.gc")
        for line in err.getvalue().splitlines():
            if ": error: " in line or ": warning: " in line:
                assert not PYTHON_WORDS.search(line.split(": ", 2)[-1]), (call, line)


METHOD_ODD = ["none", '"s"', "[1, 2]", "1.5", "true", "f", "Tanh()", "(1, 2)", "w", "[w]", "net.state_dict()",
              "opt.state_dict()"]


def test_odd_arguments_to_methods_never_speak_python() -> None:
    from gradcalc.lang.values.objects import MODULE_METHODS, OPTIMIZER_METHODS

    s = Session(out=io.StringIO(), err=io.StringIO())
    assert s.run("w = 1 requires_grad\nnet = Sequential(Linear(1, 2), Tanh())\nopt = Adam(net.parameters())\n"
                 "def f(a):\n    return a", "t.gc")
    checked = 0
    for obj, methods in (("net", MODULE_METHODS), ("opt", OPTIMIZER_METHODS)):
        for m in methods:
            calls = [f"{obj}.{m}({a})" for a in METHOD_ODD]
            calls += [f"{obj}.{m}({a}, {b})" for a in METHOD_ODD[:4] for b in METHOD_ODD]
            for call in calls:
                err = io.StringIO()
                s._err, s._out = err, io.StringIO()  # type: ignore[attr-defined]
                s.run(call, "t.gc")
                for line in err.getvalue().splitlines():
                    if ": error: " in line:
                        checked += 1
                        assert not PYTHON_WORDS.search(line.split(": ", 2)[-1]), (call, line)
    assert checked > 300


def test_a_failed_statement_changes_nothing() -> None:
    s = session("seed 0\nlin = Linear(1, 1)\nw0 = lin.weight.clone()\nopt = SGD(lin.parameters(), lr=0.1)\n")
    for bad in ["lin.weight = zeros(1, 1)", "opt.lr = -1", "lin(zeros(2, 2))", "opt.momentum = 1"]:
        assert not s.run(bad, "t.gc")
    assert s.run("same = equal(lin.weight, w0)\nlr = opt.lr", "t.gc")
    assert s.workspace["same"] is True and s.workspace["lr"] == 0.1


# ---------------------------------------------------------------------------------------------------
# Help, completion, cold start


def test_the_table_of_nn_built_ins_covers_the_engine() -> None:
    """Every layer, loss and optimizer class of the engine is a built-in, and every function of nn.functional
    is one (from nn.functional, or already from the engine's own functions)."""
    import gradcalc.nn as gnn
    import gradcalc.optim as gopt
    from gradcalc.autograd.ops import FUNCTIONS as ENGINE_FUNCTIONS

    classes = {n for n in gnn.__all__ if isinstance(getattr(gnn, n), type) and issubclass(getattr(gnn, n), gnn.Module)}
    assert set(NN_BUILTINS["nn"]) == classes - {"Module"} | {"Parameter"}
    assert set(NN_BUILTINS["optim"]) == set(gopt.__all__) - {"Optimizer"}
    assert set(NN_BUILTINS["nn.functional"]) == set(gnn.functional.__all__) - set(ENGINE_FUNCTIONS)


@pytest.mark.parametrize("name", NN_NAMES)
def test_every_nn_built_in_has_help_with_the_engine_signature(name: str) -> None:
    import inspect

    from gradcalc.lang.values.builtins import NN_BUILTINS
    from gradcalc.lang.values.nn import HIDDEN
    from gradcalc.lang.values.objects import engine_object

    space = next(s for s, names in NN_BUILTINS.items() if name in names)
    page = out(f":help {name}")
    assert page.startswith(f"{name}("), page
    shown = page.split("): ")[0]
    for p in inspect.signature(engine_object(f"{space}.{name}")).parameters.values():
        if p.name not in HIDDEN and p.kind is not p.VAR_KEYWORD:
            renamed = {"Sequential": "modules", "Identity": "ignored"}  # nn.RENAMED: no `*args` is shown
            assert (p.name if p.name != "args" or name not in renamed else renamed[name]) in shown, (p.name, page)


def test_help_pages_come_from_the_engine() -> None:
    assert out(":help Linear").startswith("Linear(in_features, out_features, bias=true, dtype=none): The affine")
    assert out(":help linear").startswith("linear(input, weight, bias=none): ")
    assert out(":help Adam").startswith("Adam(params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0")
    assert out(":help SGD").startswith("SGD(params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=")
    assert out(":help mse_loss").startswith("mse_loss(input, target, reduction='mean', weight=none): ")
    assert "opt.zero_grad()" in out(":help optimizers")
    assert "modules, losses and optimizers: " in out(":help builtins")


def test_completion_after_a_module_and_an_optimizer() -> None:
    s = session("net = Sequential(Linear(1, 2))\nlin = Linear(1, 1)\nopt = Adam(net.parameters())\n")
    assert {"parameters", "zero_grad", "train", "eval", "named_parameters"} <= set(s.attribute_completions("net"))
    assert {"weight", "bias", "in_features", "out_features"} <= set(s.attribute_completions("lin"))
    assert "grad" in s.attribute_completions("lin.weight")
    assert {"step", "zero_grad", "lr", "param_groups", "betas"} <= set(s.attribute_completions("opt"))
    assert not any(n.startswith("_") for n in s.attribute_completions("net") + s.attribute_completions("opt"))


def test_a_plain_run_does_not_import_nn_or_optim() -> None:
    """Cold start: the nn names are built-ins (help and completion list them) without importing either package."""
    code = (
        "import io, sys\nfrom gradcalc.lang import Session\n"
        "s = Session(out=io.StringIO(), err=io.StringIO())\n"
        "assert s.run('1 + 1\\nx = 3 requires_grad\\n:help builtins\\n:help modules\\n', 'p.gc')\n"
        "assert 'Linear' in s.completions()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('gradcalc.nn', 'gradcalc.optim', "
        "'gradcalc.lang.values.nn', 'gradcalc.lang.values.objects'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT)}, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


# ---------------------------------------------------------------------------------------------------
# examples/pinn.gc


def test_the_pinn_example_trains_to_a_small_residual() -> None:
    """u'' + u = 0, u(0) = 0, u'(0) = 1: the loss falls, and the network ends close to sin(x)."""
    source = (ROOT / "examples" / "pinn.gc").read_text()
    r = run(source, filename="pinn.gc")
    assert r.ok, r.err
    losses = [float(m[1]) for m in re.finditer(r"^step \d+ loss (\S+)$", r.out, re.M)]
    assert len(losses) == 6
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False)), losses
    assert losses[-1] < 1e-4 < losses[0]
    error = float(re.search(r"largest error on \[0, 2\]: (\S+)", r.out)[1])  # type: ignore[index]
    assert error < 1e-3
