"""gradcalc.nn modules against torch.nn: outputs and parameter gradients given the same weights, the
registration API (parameters, named_parameters, children, modules, state_dict keys), reprs, modes, errors."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

import gradcalc
from tests.engine.ops_oracle import torch
from tests.precision import assert_float32_close


def build(lib: Any, kind: str) -> Any:
    nn = lib.nn
    nets = {
        "mlp_tanh": lambda: nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 2)),
        "mlp_mixed": lambda: nn.Sequential(
            nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 6, bias=False), nn.SiLU(),
            nn.Linear(6, 6), nn.Softplus(beta=2.0), nn.Linear(6, 6), nn.GELU("tanh"), nn.Sigmoid(), nn.Identity(),
            nn.Linear(6, 2),
        ),
    }
    return nets[kind]()


def copy_weights(source: Any, target: Any) -> None:
    target.load_state_dict({k: gradcalc.tensor(v.detach().numpy()) for k, v in source.state_dict().items()})


LOSSES = {
    "mse": (lambda nn: nn.MSELoss(), "float"),
    "mse_sum": (lambda nn: nn.MSELoss(reduction="sum"), "float"),
    "l1": (lambda nn: nn.L1Loss(), "float"),
    "bce_logits": (lambda nn: nn.BCEWithLogitsLoss(), "prob"),
    "bce": (lambda nn: nn.Sequential(nn.Sigmoid()), "bce"),
    "cross_entropy": (lambda nn: nn.CrossEntropyLoss(), "class"),
    "nll": (lambda nn: nn.NLLLoss(reduction="sum"), "class"),
}


def _target(lib: Any, kind: str, rng: np.random.Generator) -> Any:
    if kind == "class":
        return lib.tensor(rng.integers(0, 2, size=5))
    if kind in ("prob", "bce"):
        return lib.tensor(rng.random((5, 2)))
    return lib.tensor(rng.standard_normal((5, 2)))


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("kind", ["mlp_tanh", "mlp_mixed"])
def test_outputs_and_gradients_match_torch(kind: str, loss: str) -> None:
    tnet, gnet = build(torch, kind), build(gradcalc, kind)
    copy_weights(tnet, gnet)
    make, target_kind = LOSSES[loss]
    found = []
    for lib, net in ((torch, tnet), (gradcalc, gnet)):
        rng = np.random.default_rng(3)
        x = lib.tensor(rng.standard_normal((5, 3)))
        y = net(x)
        target = _target(lib, target_kind, rng)
        if target_kind == "bce":
            value = lib.nn.BCELoss()(make(lib.nn)(y), target)
        elif loss == "nll":
            value = make(lib.nn)(lib.nn.functional.log_softmax(y, dim=1), target)
        else:
            value = make(lib.nn)(y, target)
        value.backward()
        found.append((y.detach().numpy(), value.item(), {n: p.grad.numpy().copy() for n, p in net.named_parameters()}))
    (ty, tl, tg), (gy, gl, gg) = found
    np.testing.assert_allclose(gy, ty, rtol=1e-12, atol=1e-14)
    assert gl == pytest.approx(tl, rel=1e-12)
    assert gg.keys() == tg.keys()
    for n in tg:
        np.testing.assert_allclose(gg[n], tg[n], rtol=1e-10, atol=1e-13, err_msg=n)


class Custom:
    """The same user-defined module on either library."""

    @staticmethod
    def make(lib: Any) -> Any:
        nn = lib.nn

        class Block(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.scale = nn.Parameter(lib.ones(2))
                self.body = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
                self.register_buffer("offset", lib.zeros(2))
                self.register_buffer("scratch", lib.zeros(1), persistent=False)
                self.head = nn.Linear(2, 1)

            def forward(self, x: Any) -> Any:
                return self.head(self.body(x) * self.scale + self.offset)

        return Block()


def test_registration_matches_torch() -> None:
    t, g = Custom.make(torch), Custom.make(gradcalc)
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(g.state_dict()) == list(t.state_dict())
    assert [n for n, _ in g.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in g.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in g.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert len(list(g.modules())) == len(list(t.modules()))
    assert len(list(g.children())) == len(list(t.children()))
    assert sum(p.numel() for p in g.parameters()) == sum(p.numel() for p in t.parameters())
    assert all(isinstance(p, gradcalc.nn.Parameter) and p.is_leaf and p.requires_grad for p in g.parameters())
    assert repr(g).replace("Block", "X") == repr(t).replace("Block", "X")
    copy_weights(t, g)
    x = np.random.default_rng(0).standard_normal((3, 2))
    np.testing.assert_allclose(g(gradcalc.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-12)


REPRS = {
    "sequential": lambda nn: nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Sequential(nn.ReLU(), nn.Identity())),
    "activations": lambda nn: nn.Sequential(
        nn.ReLU(inplace=True), nn.GELU(), nn.GELU(approximate="tanh"), nn.SiLU(), nn.Softplus(), nn.Softplus(2, 10),
        nn.Sigmoid(),
    ),
    "losses": lambda nn: nn.Sequential(
        nn.MSELoss(), nn.L1Loss(reduction="sum"), nn.BCELoss(), nn.BCEWithLogitsLoss(), nn.CrossEntropyLoss(),
        nn.NLLLoss(),
    ),
    "linear_no_bias": lambda nn: nn.Linear(3, 2, bias=False),
    "empty": lambda nn: nn.Sequential(),
    "module": lambda nn: nn.Module(),
    "slice": lambda nn: nn.Sequential(nn.Linear(1, 2), nn.Tanh(), nn.Linear(2, 1))[1:],
}


@pytest.mark.parametrize("case", sorted(REPRS))
def test_repr_matches_torch(case: str) -> None:
    assert repr(REPRS[case](gradcalc.nn)) == repr(REPRS[case](torch.nn))


@pytest.mark.parametrize("requires_grad", [True, False])
@pytest.mark.parametrize("data", [[[0.25, -1.5]], [1.0, 2.0, 3.0], 0.5])
def test_parameter_repr_matches_torch(data: Any, requires_grad: bool) -> None:
    t = torch.nn.Parameter(torch.tensor(data), requires_grad=requires_grad)
    g = gradcalc.nn.Parameter(gradcalc.tensor(data), requires_grad=requires_grad)
    assert repr(g) == repr(t)
    assert str(g) == str(t)


def test_parameter_is_a_leaf_tensor_sharing_memory() -> None:
    data = gradcalc.tensor([1.0, 2.0])
    p = gradcalc.nn.Parameter(data)
    assert isinstance(p, gradcalc.Tensor) and isinstance(p, gradcalc.nn.Parameter)
    assert not isinstance(data, gradcalc.nn.Parameter)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    with gradcalc.no_grad():
        p.mul_(2)
    assert data.tolist() == [2.0, 4.0]
    assert not isinstance(p * 2, gradcalc.nn.Parameter)
    assert not isinstance(p.detach(), gradcalc.nn.Parameter)
    with pytest.raises(RuntimeError):
        gradcalc.nn.Parameter(gradcalc.tensor([1, 2]))


def test_sequential_indexing() -> None:
    net = gradcalc.nn.Sequential(gradcalc.nn.Linear(1, 2), gradcalc.nn.Tanh(), gradcalc.nn.Linear(2, 1))
    assert len(net) == 3
    assert isinstance(net[0], gradcalc.nn.Linear) and net[-1] is net[2]
    assert [type(m).__name__ for m in net] == ["Linear", "Tanh", "Linear"]
    assert len(net[:2]) == 2
    with pytest.raises(IndexError):
        net[3]
    net.append(gradcalc.nn.Sigmoid())
    assert len(net) == 4
    del net[1]
    assert [type(m).__name__ for m in net] == ["Linear", "Linear", "Sigmoid"]
    assert list(net.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_modes_zero_grad_requires_grad() -> None:
    net = Custom.make(gradcalc)
    assert net.training and net.body[0].training
    assert net.eval() is net and not net.training and not net.body[1].training
    net.train()
    assert net.body[1].training
    net(gradcalc.ones(3, 2)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    with pytest.raises(ValueError):
        net.train("yes")


def test_load_state_dict_errors_match_torch() -> None:
    messages = []
    for lib in (torch, gradcalc):
        net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
        sd = net.state_dict()
        del sd["2.bias"]
        sd["extra"] = lib.zeros(1)
        sd["0.weight"] = lib.zeros(3, 3)
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(sd)
        result = net.load_state_dict({k: v for k, v in net.state_dict().items() if k != "2.bias"}, strict=False)
        messages.append((str(info.value), repr(result), repr(net.load_state_dict(net.state_dict()))))
    assert messages[1] == messages[0]


def test_state_dict_is_detached_and_load_bumps_versions() -> None:
    net = gradcalc.nn.Linear(2, 2)
    sd = net.state_dict()
    assert not sd["weight"].requires_grad
    before = net.weight._version
    net.load_state_dict({k: v * 0 for k, v in sd.items()})
    assert net.weight._version == before + 1
    assert not net.weight.numpy().any() if not net.weight.requires_grad else not net.weight.detach().numpy().any()


def test_dtype_conversion() -> None:
    net = gradcalc.nn.Linear(2, 2)
    net.float()
    assert net.weight.dtype == gradcalc.float32
    y = net(gradcalc.ones(1, 2, dtype=gradcalc.float32))
    assert y.dtype == gradcalc.float32
    net.double()
    assert net.bias.dtype == gradcalc.float64
    assert gradcalc.nn.Linear(2, 2, dtype=gradcalc.float32).weight.dtype == gradcalc.float32


def test_errors() -> None:
    nn = gradcalc.nn

    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(gradcalc.ones(1))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Early()
    m = nn.Module()
    m.w = nn.Parameter(gradcalc.ones(1))
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.w = gradcalc.ones(1)
    with pytest.raises(NotImplementedError, match="forward"):
        m(1)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        m.nothing  # noqa: B018
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.register_parameter("v", gradcalc.ones(1, requires_grad=True) * 2)
    with pytest.raises(TypeError, match="is not a Module"):
        nn.Sequential(1)


def test_deepcopy_copies_parameters_and_grads() -> None:
    import copy

    net = gradcalc.nn.Sequential(gradcalc.nn.Linear(2, 3), gradcalc.nn.Tanh(), gradcalc.nn.Linear(3, 1))
    net(gradcalc.ones(4, 2)).sum().backward()
    twin = copy.deepcopy(net)
    for (name, a), (_, b) in zip(net.named_parameters(), twin.named_parameters(), strict=True):
        assert isinstance(b, gradcalc.nn.Parameter) and b is not a and b.is_leaf and b.requires_grad, name
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())
    with gradcalc.no_grad():
        twin[0].weight.mul_(0)
    assert net[0].weight.detach().numpy().any()
    with pytest.raises(RuntimeError, match="leaf"):
        copy.deepcopy(net[0].weight * 2)


def test_float32_network_matches_torch() -> None:
    """float32 outputs and gradients, each measured against the same network in float64 (tests/precision.py)."""
    found = []
    for lib in (torch, gradcalc):
        net = lib.nn.Sequential(lib.nn.Linear(3, 8, dtype=lib.float32), lib.nn.GELU(), lib.nn.Linear(8, 2))
        net[2].float()
        found.append(net)
    copy_weights(found[0], found[1])
    found[1].float()
    reference = copy.deepcopy(found[0]).double()
    x = np.random.default_rng(0).standard_normal((4, 3)).astype("float32")
    outs = []
    runs = ((torch, found[0], "float32"), (gradcalc, found[1], "float32"), (torch, reference, "float64"))
    for lib, net, dtype in runs:
        y = net(lib.tensor(x.astype(dtype)))
        y.sum().backward()
        outs.append((y.detach().numpy(), str(y.dtype), net[0].weight.grad.numpy()))
    assert outs[1][1] == outs[0][1] == "torch.float32"
    # a few roundings per multiply-add over 3 and 8 inputs, GELU, and back
    assert_float32_close(outs[1][0], outs[0][0], outs[2][0], steps=32, what="output")
    assert_float32_close(outs[1][2], outs[0][2], outs[2][2], steps=32, what="first weight's gradient")


def test_parameter_mark_dies_with_the_tensor() -> None:
    from gradcalc.autograd import tensor as tensor_module

    before = len(tensor_module._PARAMETERS)
    p = gradcalc.nn.Parameter(gradcalc.ones(2))
    (p * 2).sum().backward()
    assert len(tensor_module._PARAMETERS) == before + 1
    del p
    assert len(tensor_module._PARAMETERS) == before
    assert not any(isinstance(gradcalc.ones(2), gradcalc.nn.Parameter) for _ in range(100))
