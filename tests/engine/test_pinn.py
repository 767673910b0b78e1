"""A small physics-informed network trained on both libraries from the same weights: u(x) by a tanh MLP,
u'' by autograd.grad(create_graph=True) twice, the residual u'' + u = 0 with u(0) = 0 and u'(0) = 1, Adam.
The loss curves and the final weights must agree (float64)."""

from __future__ import annotations

from typing import Any

import numpy as np

import gradcalc
from tests.engine.ops_oracle import torch


def train(lib: Any, weights: dict[str, np.ndarray], steps: int) -> tuple[list[float], dict[str, np.ndarray]]:
    nn = lib.nn
    net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    net.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = lib.optim.Adam(net.parameters(), lr=1e-2)
    x = lib.linspace(0, 3, 12).reshape(-1, 1).requires_grad_()
    x0 = lib.zeros(1, 1, requires_grad=True)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        u = net(x)
        (du,) = lib.autograd.grad(u, x, lib.ones_like(u), create_graph=True)
        (d2u,) = lib.autograd.grad(du, x, lib.ones_like(du), create_graph=True)
        u0 = net(x0)
        (du0,) = lib.autograd.grad(u0, x0, lib.ones_like(u0), create_graph=True)
        loss = nn.functional.mse_loss(d2u, -u) + (u0**2).sum() + ((du0 - 1.0) ** 2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.numpy().copy() for k, v in net.state_dict().items()}


def test_pinn_loss_curve_matches_torch() -> None:
    torch.manual_seed(0)
    reference = torch.nn.Sequential(
        torch.nn.Linear(1, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1)
    )
    weights = {k: v.detach().numpy().copy() for k, v in reference.state_dict().items()}
    expected, t_final = train(torch, weights, 20)
    actual, g_final = train(gradcalc, weights, 20)
    np.testing.assert_allclose(actual, expected, rtol=1e-9)
    assert expected[-1] < expected[0]  # it trains
    for k in t_final:
        np.testing.assert_allclose(g_final[k], t_final[k], rtol=1e-9, atol=1e-12, err_msg=k)
