"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and
`maximize`, as PyTorch's `_single_tensor_sgd` computes it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, scalar


class SGD(Optimizer):
    """p ← p - lr · d, where d is the gradient (plus weight_decay · p), or its momentum buffer
    b ← momentum · b + (1 - dampening) · d (with nesterov: d + momentum · b)."""

    def __init__(self, params: Any, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        lr_value = scalar(lr, "lr")
        if lr_value < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} (lr must be >= 0)")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum} (momentum must be >= 0)")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} (weight_decay must be >= 0)")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
            "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        lr = scalar(group["lr"], "lr")
        momentum, wd = group["momentum"], group["weight_decay"]
        d = -grad if group["maximize"] else grad
        if wd != 0:
            d = fma(p._data, wd, d)  # grad.add(param, alpha=wd): PyTorch's kernels fuse a * alpha + b
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor._make(np.array(d, copy=True), False, None)
            else:
                b = buf._data
                b *= momentum
                b[...] = fma(d, 1 - group["dampening"], b)
                bump(buf)
                bump(buf)
            d = fma(buf._data, momentum, d) if group["nesterov"] else buf._data
        p._data[...] = fma(d, -lr, p._data)
        bump(p)
