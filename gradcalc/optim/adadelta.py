"""`Adadelta`, as PyTorch's `_single_tensor_adadelta` computes it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, scalar, step_tensor, zeros_state


class Adadelta(Optimizer):
    """Adadelta: moving averages (rate `rho`) of the squared gradient v and of the squared update u; the step
    is Δ = √(u + eps) / √(v + eps) · g, and p ← p - lr · Δ."""

    def __init__(self, params: Any, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach: bool | None = None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= scalar(lr, "lr"):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            state["square_avg"] = zeros_state(p)
            state["acc_delta"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        step_t, sq_t, acc_t = state["step"], state["square_avg"], state["acc_delta"]
        step_t._data += 1
        bump(step_t)
        if group["maximize"]:
            grad = -grad
        if wd != 0:
            grad = fma(p._data, wd, grad)
        sq = sq_t._data
        sq *= rho
        sq[...] = fma((1 - rho) * grad, grad, sq)
        bump(sq_t)
        bump(sq_t)
        std = np.sqrt(sq + eps)
        delta = np.sqrt(acc_t._data + eps)
        delta /= std
        delta *= grad
        acc = acc_t._data
        acc *= rho
        acc[...] = fma((1 - rho) * delta, delta, acc)
        bump(acc_t)
        bump(acc_t)
        p._data[...] = fma(delta, -lr, p._data)  # add_(delta, alpha=-lr)
        bump(p)
