"""`RMSprop` and `Adagrad`, as PyTorch's `_single_tensor_rmsprop` and `_single_tensor_adagrad` compute them."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, lerp_into, scalar, step_tensor, zeros_state


class RMSprop(Optimizer):
    """RMSprop: a moving average v of the squared gradient (rate `alpha`); p ← p - lr · g / (√v + eps).
    `centered` divides by the moving variance instead (√(v - ḡ²)); `momentum` keeps a buffer
    b ← momentum · b + g / (√v + eps) and steps by it."""

    def __init__(self, params: Any, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        lr_value = scalar(lr, "lr")
        for name, value in (("learning rate", lr_value), ("epsilon value", eps), ("momentum value", momentum),
                            ("weight_decay value", weight_decay), ("alpha value", alpha)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = {
            "lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            state["square_avg"] = zeros_state(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = zeros_state(p)
            if group["centered"]:
                state["grad_avg"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        alpha, eps, wd, momentum = group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if group["maximize"]:
            grad = -grad
        step_t = state["step"]
        step_t._data += 1
        bump(step_t)
        data = p._data
        if wd != 0:
            grad = fma(data, wd, grad)
        sq_t = state["square_avg"]
        sq = sq_t._data
        sq *= alpha
        sq[...] = fma((1 - alpha) * grad, grad, sq)
        bump(sq_t)
        bump(sq_t)
        if group["centered"]:
            ga_t = state["grad_avg"]
            lerp_into(ga_t._data, grad, 1 - alpha)
            bump(ga_t)
            avg = np.sqrt(fma(-1 * ga_t._data, ga_t._data, sq))
        else:
            avg = np.sqrt(sq)
        avg += eps
        if momentum > 0:
            buf_t = state["momentum_buffer"]
            buf = buf_t._data
            buf *= momentum
            buf += (1 * grad) / avg
            bump(buf_t)
            bump(buf_t)
            data[...] = fma(buf, -lr, data)
        else:
            data += (-lr * grad) / avg
        bump(p)


class Adagrad(Optimizer):
    """Adagrad: the sum s of squared gradients (from `initial_accumulator_value`); p ← p - clr · g / (√s + eps)
    with clr = lr / (1 + (step - 1) · lr_decay)."""

    def __init__(self, params: Any, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        lr_value = scalar(lr, "lr")
        for name, value in (("learning rate", lr_value), ("lr_decay value", lr_decay),
                            ("weight_decay value", weight_decay),
                            ("initial_accumulator_value value", initial_accumulator_value),
                            ("epsilon value", eps)):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {name}: {value}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:  # PyTorch makes every parameter's state at once
            for p in group["params"]:
                state = self.state[p]
                state["step"] = step_tensor()
                state["sum"] = Tensor._make(np.full_like(p._data, initial_accumulator_value), False, None)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        lr = scalar(group["lr"], "lr")
        step_t = state["step"]
        step_t._data += 1
        bump(step_t)
        step = float(step_t._data)
        if group["maximize"]:
            grad = -grad
        data = p._data
        if group["weight_decay"] != 0:
            grad = fma(data, group["weight_decay"], grad)
        clr = lr / (1 + (step - 1) * group["lr_decay"])
        sum_t = state["sum"]
        s = sum_t._data
        s[...] = fma(1 * grad, grad, s)
        bump(sum_t)
        std = np.sqrt(s)
        std += group["eps"]
        data += (-clr * grad) / std
        bump(p)
