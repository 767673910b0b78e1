"""`gradcalc.nn.functional` against PyTorch's: values, gradients of first and second order, and the nodes
recorded (forward and under create_graph) for linear, the activations and the losses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import gradcalc
import gradcalc.nn.functional as GF
from tests.engine.ops_oracle import arrays_for, check, name_of, torch

TF = torch.nn.functional


def F(lib: Any) -> Any:  # noqa: N802 - reads as `F.linear`
    return TF if lib is torch else GF


CASES: dict[str, tuple[Any, list[tuple[int, ...]]]] = {
    "linear_2d_bias": (lambda L, x, w, b: F(L).linear(x, w, b), [(3, 4), (5, 4), (5,)]),
    "linear_2d": (lambda L, x, w: F(L).linear(x, w), [(3, 4), (5, 4)]),
    "linear_1d_bias": (lambda L, x, w, b: F(L).linear(x, w, b), [(4,), (5, 4), (5,)]),
    "linear_1d": (lambda L, x, w: F(L).linear(x, w), [(4,), (5, 4)]),
    "linear_3d_bias": (lambda L, x, w, b: F(L).linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear_3d": (lambda L, x, w: F(L).linear(x, w), [(2, 3, 4), (5, 4)]),
    "linear_4d_bias": (lambda L, x, w, b: F(L).linear(x, w, b), [(2, 2, 3, 4), (5, 4), (5,)]),
    "linear_noncontiguous": (lambda L, x, w, b: F(L).linear(x.transpose(0, 1), w, b), [(3, 2, 4), (5, 4), (5,)]),
    "linear_input_only": (lambda L, x, w, b: F(L).linear(x, w.detach(), b.detach()), [(3, 4), (5, 4), (5,)]),
    "linear_column": (lambda L, x, w, b: F(L).linear(x, w, b), [(6, 1), (3, 1), (3,)]),
    "addmm_scaled": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2.0), [(3, 5), (3, 4), (4, 5)]),
    "relu": (lambda L, x: F(L).relu(x), [(3, 4)]),
    "tanh": (lambda L, x: F(L).tanh(x), [(3, 4)]),
    "sigmoid": (lambda L, x: F(L).sigmoid(x), [(3, 4)]),
    "softplus": (lambda L, x: F(L).softplus(x, beta=2.0, threshold=1.0), [(3, 4)]),
    "gelu": (lambda L, x: F(L).gelu(x), [(3, 4)]),
    "gelu_tanh": (lambda L, x: F(L).gelu(x, approximate="tanh"), [(3, 4)]),
    "silu": (lambda L, x: F(L).silu(x), [(3, 4)]),
    "softmax": (lambda L, x: F(L).softmax(x, dim=1), [(3, 4)]),
    "log_softmax": (lambda L, x: F(L).log_softmax(x, dim=0), [(3, 4)]),
    "mse": (lambda L, x, t: F(L).mse_loss(x, t), [(3, 4), (3, 4)]),
    "mse_sum": (lambda L, x, t: F(L).mse_loss(x, t, reduction="sum"), [(3, 4), (3, 4)]),
    "mse_none": (lambda L, x, t: F(L).mse_loss(x, t, reduction="none"), [(3, 4), (3, 4)]),
    "mse_weight": (lambda L, x, t, w: F(L).mse_loss(x, t, weight=w), [(3, 4), (3, 4), (3, 4)]),
    "mse_scalar": (lambda L, x, t: F(L).mse_loss(x, t), [(), ()]),
    "bce_logits": (lambda L, x, t: F(L).binary_cross_entropy_with_logits(x, t.sigmoid()), [(3, 4), (3, 4)]),
    "bce_logits_pos_weight": (
        lambda L, x, t: F(L).binary_cross_entropy_with_logits(
            x, t.detach().sigmoid(), weight=L.tensor([0.5, 1.0, 2.0, 1.5]), pos_weight=L.tensor([1.0, 2.0, 3.0, 0.5])
        ),
        [(3, 4), (3, 4)],
    ),
    "bce_logits_none": (
        lambda L, x, t: F(L).binary_cross_entropy_with_logits(x, t.detach().sigmoid(), reduction="none"),
        [(3, 4), (3, 4)],
    ),
    "bce": (lambda L, x, t: F(L).binary_cross_entropy(x.sigmoid(), t.detach().sigmoid()), [(3, 4), (3, 4)]),
    "bce_weight_sum": (
        lambda L, x, t: F(L).binary_cross_entropy(
            x.sigmoid(), t.detach().sigmoid(), weight=L.tensor([1.0, 2.0, 0.5, 3.0]), reduction="sum"
        ),
        [(3, 4), (3, 4)],
    ),
    "cross_entropy": (lambda L, x: F(L).cross_entropy(x, L.tensor([0, 3, 1])), [(3, 4)]),
    "cross_entropy_weight_ignore": (
        lambda L, x: F(L).cross_entropy(x, L.tensor([0, 3, -100]), weight=L.tensor([1.0, 2.0, 3.0, 4.0])), [(3, 4)]
    ),
    "cross_entropy_none": (
        lambda L, x: F(L).cross_entropy(x, L.tensor([0, 3, 5]), ignore_index=5, reduction="none"), [(3, 4)]
    ),
    "cross_entropy_probs": (lambda L, x, t: F(L).cross_entropy(x, t.detach().softmax(1)), [(3, 4), (3, 4)]),
    "cross_entropy_probs_weight_sum": (
        lambda L, x, t: F(L).cross_entropy(x, t.detach().softmax(1), weight=L.tensor([1.0, 2.0, 3.0, 4.0]),
                                           reduction="sum"),
        [(3, 4), (3, 4)],
    ),
    "cross_entropy_1d": (lambda L, x: F(L).cross_entropy(x, L.tensor(2)), [(4,)]),
    "cross_entropy_3d": (lambda L, x: F(L).cross_entropy(x, L.tensor([[0, 1], [2, 3]])), [(2, 4, 2)]),
    "cross_entropy_4d_none": (
        lambda L, x: F(L).cross_entropy(x, L.tensor([[[0, 1]], [[2, 3]]]), reduction="none"), [(2, 4, 1, 2)]
    ),
    "cross_entropy_smoothing": (lambda L, x: F(L).cross_entropy(x, L.tensor([0, 3, 1]), label_smoothing=0.1), [(3, 4)]),
    "cross_entropy_smoothing_weight_ignore": (
        lambda L, x: F(L).cross_entropy(
            x, L.tensor([0, 3, -100]), weight=L.tensor([1.0, 2.0, 3.0, 4.0]), label_smoothing=0.2
        ),
        [(3, 4)],
    ),
    "cross_entropy_smoothing_none": (
        lambda L, x: F(L).cross_entropy(x, L.tensor([0, 3, 1]), label_smoothing=0.3, reduction="none"), [(3, 4)]
    ),
    "cross_entropy_smoothing_sum_3d": (
        lambda L, x: F(L).cross_entropy(x, L.tensor([[0, 1], [2, 3]]), label_smoothing=0.1, reduction="sum"),
        [(2, 4, 2)],
    ),
    "cross_entropy_probs_smoothing": (
        lambda L, x, t: F(L).cross_entropy(x, t.detach().softmax(1), label_smoothing=0.25), [(3, 4), (3, 4)]
    ),
    "nll_sum": (lambda L, x: F(L).nll_loss(x, L.tensor([0, 3, 1]), reduction="sum"), [(3, 4)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_against_torch(case: str) -> None:
    scenario, shapes = CASES[case]
    check(scenario, arrays_for(*shapes))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_l1_loss(reduction: str) -> None:
    """First order and the create_graph gradient's graph (PyTorch's second order here is a zero tensor)."""
    x0, t0 = arrays_for((3, 4), (3, 4))
    found = []
    for lib in (torch, gradcalc):
        x, t = lib.tensor(x0, requires_grad=True), lib.tensor(t0)
        y = F(lib).l1_loss(x, t, reduction=reduction)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        found.append((y.detach().numpy(), name_of(y.grad_fn), g.detach().numpy(), graph(g.grad_fn)))
    (ty, tn, tg, tgraph), (gy, gn, gg, ggraph) = found
    np.testing.assert_allclose(gy, ty, rtol=1e-12)
    np.testing.assert_allclose(gg, tg, rtol=1e-12)
    assert (gn, ggraph) == (tn, tgraph)


def graph(fn: Any) -> Any:
    """The recorded graph below a node, depth first, as names."""
    if fn is None:
        return None
    name = name_of(fn)
    if name == "AccumulateGrad":
        return name
    return [name, [graph(n) for n, _ in fn.next_functions]]


GRAPHS = {
    "linear_1d_bias": ((4,), True),
    "linear_1d": ((4,), False),
    "linear_2d_bias": ((3, 4), True),
    "linear_2d": ((3, 4), False),
    "linear_3d_bias": ((2, 3, 4), True),
    "linear_3d": ((2, 3, 4), False),
    "linear_4d_bias": ((2, 2, 3, 4), True),
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_linear_records_torchs_graph(case: str) -> None:
    shape, bias = GRAPHS[case]
    found = []
    for lib in (torch, gradcalc):
        x = lib.zeros(*shape, requires_grad=True)
        w = lib.ones(5, shape[-1], requires_grad=True)
        b = lib.ones(5, requires_grad=True) if bias else None
        y = F(lib).linear(x, w, b)
        (gx, gw) = lib.autograd.grad(y.sum(), (x, w), create_graph=True)
        found.append((graph(y.grad_fn), graph(gx.grad_fn), graph(gw.grad_fn), y._version))
    assert found[1] == found[0]


def test_pinn_second_derivative_graph() -> None:
    """u'' of a tanh layer by grad(create_graph=True) twice: the same nodes as PyTorch, the same values."""
    rng = np.random.default_rng(1)
    x0, w1, b1, w2 = (rng.standard_normal(s) for s in ((5, 1), (8, 1), (8,), (1, 8)))
    found = []
    for lib in (torch, gradcalc):
        x = lib.tensor(x0, requires_grad=True)
        W1, B1, W2 = (lib.tensor(a, requires_grad=True) for a in (w1, b1, w2))
        u = F(lib).linear(F(lib).tanh(F(lib).linear(x, W1, B1)), W2)
        (du,) = lib.autograd.grad(u, x, lib.ones_like(u), create_graph=True)
        (d2u,) = lib.autograd.grad(du, x, lib.ones_like(du), create_graph=True)
        loss = ((d2u + u) ** 2).mean()
        loss.backward()
        found.append((graph(d2u.grad_fn), d2u.detach().numpy(), [p.grad.numpy() for p in (W1, B1, W2)]))
    assert found[1][0] == found[0][0]
    np.testing.assert_allclose(found[1][1], found[0][1], rtol=1e-12)
    for a, b in zip(found[1][2], found[0][2], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11)


ERRORS = {
    "linear_shapes": lambda L: F(L).linear(L.zeros(3, 4), L.zeros(5, 3)),
    "mse_reduction": lambda L: F(L).mse_loss(L.zeros(3), L.zeros(3), reduction="avg"),
    "bce_range": lambda L: F(L).binary_cross_entropy(L.tensor([1.5]), L.tensor([1.0])),
    "bce_shapes": lambda L: F(L).binary_cross_entropy(L.tensor([0.5]), L.tensor([1.0, 0.0])),
    "bce_logits_shapes": lambda L: F(L).binary_cross_entropy_with_logits(L.tensor([0.5]), L.tensor([1.0, 0.0])),
    "nll_target_bounds": lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 3])),
    "gelu_approximate": lambda L: F(L).gelu(L.zeros(2), approximate="fast"),
    "bce_weight_requires_grad": lambda L: F(L).binary_cross_entropy(
        L.tensor([0.5], requires_grad=True), L.tensor([1.0]), weight=L.tensor([1.0], requires_grad=True)
    ).backward(),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_as_torch(case: str) -> None:
    kinds = []
    for lib in (torch, gradcalc):
        try:
            ERRORS[case](lib)
            kinds.append(None)
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            kinds.append(type(e).__name__)
    assert kinds[0] is not None
    assert kinds[1] == kinds[0]


def test_mse_broadcast_warns() -> None:
    with pytest.warns(UserWarning, match="broadcast"):
        GF.mse_loss(gradcalc.zeros(3, 4), gradcalc.zeros(4))
