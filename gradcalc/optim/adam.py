"""`Adam` and `AdamW`, as PyTorch's `_single_tensor_adam` computes them (AdamW is Adam with the weight
decay applied to the parameter directly, `decoupled_weight_decay`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, lerp_into, scalar, step_tensor, zeros_state


class Adam(Optimizer):
    """Adam: moving averages m (of the gradient, rate betas[0]) and v (of its square, rate betas[1]),
    bias-corrected; p ← p - lr · m̂ / (√v̂ + eps). `amsgrad` uses the running maximum of v."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        if not 0.0 <= scalar(lr, "lr"):
            raise ValueError(f"Invalid learning rate: {lr} (lr must be >= 0)")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps} (eps must be >= 0)")
        betas = (scalar(betas[0], "betas[0]"), scalar(betas[1], "betas[1]"))
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta} (each beta must be in [0, 1))")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} (weight_decay must be >= 0)")
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
            "maximize": maximize, "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
            "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        beta1, beta2 = group["betas"]
        wd, eps = group["weight_decay"], group["eps"]
        if group["maximize"]:
            grad = -grad
        step_t, m_t, v_t = state["step"], state["exp_avg"], state["exp_avg_sq"]
        step_t._data += 1
        bump(step_t)
        data = p._data
        if wd != 0:
            if group["decoupled_weight_decay"]:
                data *= 1 - lr * wd
                bump(p)
            else:
                grad = fma(data, wd, grad)
        # m.lerp_(grad, 1 - beta1): PyTorch's lerp, from whichever end is nearer the weight
        lerp_into(m_t._data, grad, 1 - beta1)
        v = v_t._data
        v *= beta2
        v[...] = fma((1 - beta2) * grad, grad, v)  # addcmul_: value * t1 fused with the rest
        bump(m_t)
        bump(v_t)
        step = float(step_t._data)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2**0.5
        if group["amsgrad"]:
            most = state["max_exp_avg_sq"]
            np.maximum(most._data, v, out=most._data)
            bump(most)
            denom = np.sqrt(most._data) / bias_correction2_sqrt
        else:
            denom = np.sqrt(v) / bias_correction2_sqrt
        denom += eps
        data += -step_size * m_t._data / denom
        bump(p)


class AdamW(Adam):
    """Adam with decoupled weight decay: p ← p (1 - lr · weight_decay) before the Adam step."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
