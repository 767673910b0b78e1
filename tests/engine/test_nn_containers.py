"""nn.ModuleList, ModuleDict, ParameterList, ParameterDict against PyTorch's: the same program run on both
libraries (module reprs, state_dict keys, parameter names, list and dict operations, errors)."""

from __future__ import annotations

from typing import Any

import pytest

import gradcalc

torch = pytest.importorskip("torch")


def _program(lib: Any) -> list[Any]:
    nn = lib.nn
    lib.manual_seed(0)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
            self.layers.append(nn.Tanh())
            self.layers.insert(1, nn.ReLU())
            self.layers.extend([nn.Linear(2, 3), nn.Linear(2, 3)])
            self.heads = nn.ModuleDict({"b": nn.Linear(2, 1), "a": nn.Sigmoid()})
            self.heads.update([("c", nn.Identity())])
            self.pl = nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), lib.ones(4)])
            self.pl.append(lib.ones(1, 1).double())
            self.pd = nn.ParameterDict({"z": lib.zeros(1), "y": nn.Parameter(lib.ones(2, 2).double())})
            self.pd["x"] = lib.ones(3)

    m = Net()
    out: list[Any] = [
        repr(m), list(m.state_dict().keys()), [n for n, _ in m.named_parameters()],
        [tuple(p.shape) for p in m.parameters()], len(m.layers), repr(m.layers[-1]), repr(m.layers[-7]),
        repr(m.layers[1:3]), repr(m.layers[::2]), repr(m.layers + nn.ModuleList([nn.ReLU()])),
        [type(x).__name__ for x in m.layers], list(m.heads.keys()), "a" in m.heads, "q" in m.heads,
        [type(v).__name__ for v in m.heads.values()], repr(m.pl[1:]), len(m.pl), len(m.pd), list(m.pd),
        [tuple(p.shape) for p in m.pl], [tuple(v.shape) for v in m.pd.values()],
        isinstance(m.pl[1], nn.Parameter), m.pl[1].requires_grad, isinstance(m.pd["z"], nn.Parameter),
    ]
    del m.layers[0]
    out.append(repr(m.layers))
    out.append(type(m.layers.pop(-1)).__name__)
    del m.layers[1:3]
    out.append(list(m.state_dict().keys()))
    m.layers[0] = nn.Linear(2, 5)
    out.append(repr(m.layers))
    out.append(type(m.heads.pop("b")).__name__)
    out.append(m.pd.pop("y").shape == (2, 2))
    out.append(m.pd.get("nope", 3))
    out += [repr(nn.ModuleList()), repr(nn.ModuleDict()), repr(nn.ParameterList()), repr(nn.ParameterDict())]
    for bad in (lambda: m.layers[10], lambda: m.layers[-10], lambda: m.heads["zz"], lambda: m.pl[5],
                lambda: nn.ModuleList(3), lambda: m.pl.extend(lib.ones(2)), lambda: m.pd[1],
                lambda: m.pl(lib.ones(1)), lambda: nn.ModuleDict([("a",)])):
        try:
            bad()
            out.append("no error")
        except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
            out.append((type(exc).__name__, str(exc)))
    return out


@pytest.mark.usefixtures("pytorch_default_dtype")
def test_containers_as_pytorch() -> None:
    ours, theirs = _program(gradcalc), _program(torch)
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o == t, f"item {i}:\n{o}\n---- PyTorch:\n{t}"


def test_module_list_trains_through_an_optimizer() -> None:
    """The parameters a ModuleList registers are what an optimizer steps (values as PyTorch's)."""
    results = []
    for lib in (gradcalc, torch):
        lib.manual_seed(0)
        layers = lib.nn.ModuleList([lib.nn.Linear(3, 3, dtype=lib.float64) for _ in range(2)])
        with lib.no_grad():
            for i, p in enumerate(layers.parameters()):
                p.copy_(lib.linspace(-1, 1, p.numel(), dtype=lib.float64).reshape(p.shape) * (i + 1))
        opt = lib.optim.SGD(layers.parameters(), lr=0.1)
        x = lib.linspace(0, 1, 6, dtype=lib.float64).reshape(2, 3)
        for _ in range(3):
            opt.zero_grad()
            y = x
            for layer in layers:
                y = lib.tanh(layer(y))
            (y * y).sum().backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in layers.parameters()])
    for o, t in zip(*results, strict=True):
        assert abs(o - t).max() < 1e-12
