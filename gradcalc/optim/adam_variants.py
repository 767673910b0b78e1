"""`Adamax`, `NAdam` and `RAdam`, Adam's variants, as PyTorch's `_single_tensor_adamax`, `_single_tensor_nadam`
and `_single_tensor_radam` compute them (the CPU's default path), operation by operation."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.tensor import Tensor
from .optimizer import Optimizer, bump, fma, lerp_into, scalar, step_tensor, zeros_state


def _check(lr: Any, eps: float, betas: tuple[Any, Any], weight_decay: float) -> tuple[float, float]:
    """PyTorch's checks of Adam's family's options, in its order and words; the betas as numbers."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= scalar(lr, "lr"):
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    beta1, beta2 = scalar(betas[0], "betas[0]"), scalar(betas[1], "betas[1]")
    if not 0.0 <= beta1 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {beta1}")
    if not 0.0 <= beta2 < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {beta2}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    return beta1, beta2


def _moments(m: Tensor, v: Tensor, grad: np.ndarray, beta1: float, beta2: float) -> None:
    """exp_avg.lerp_(grad, 1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)."""
    lerp_into(m._data, grad, 1 - beta1)
    bump(m)
    sq = v._data
    sq *= beta2
    sq[...] = fma((1 - beta2) * grad, grad, sq)
    bump(v)
    bump(v)


def _decay(p: Tensor, grad: np.ndarray, lr: float, group: dict[str, Any]) -> np.ndarray:
    """Weight decay: into the gradient (grad + wd · p), or, decoupled, onto the parameter (p ← p (1 - lr wd))."""
    wd = group["weight_decay"]
    if wd == 0:
        return grad
    if group.get("decoupled_weight_decay"):
        p._data *= 1 - lr * wd
        bump(p)
        return grad
    return fma(p._data, wd, grad)


class Adamax(Optimizer):
    """Adamax, Adam with the infinity norm: u ← max(beta2 · u, |g| + eps); p ← p - lr / (1 - beta1^t) · m / u."""

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        betas = _check(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            state["exp_avg"] = zeros_state(p)
            state["exp_inf"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        step_t, m_t, u_t = state["step"], state["exp_avg"], state["exp_inf"]
        step_t._data += 1
        bump(step_t)
        grad = _decay(p, grad, lr, group)
        lerp_into(m_t._data, grad, 1 - beta1)
        bump(m_t)
        u = u_t._data
        u *= beta2
        np.maximum(u, np.abs(grad) + group["eps"], out=u)
        bump(u_t)
        bump(u_t)
        clr = lr / (1 - beta1 ** float(step_t._data))
        p._data += (-clr * m_t._data) / u  # addcdiv_(exp_avg, exp_inf, value=-clr)
        bump(p)


class NAdam(Optimizer):
    """NAdam, Adam with Nesterov momentum: the momentum coefficient mu_t = beta1 (1 - ½ · 0.96^(t ·
    momentum_decay)) and its running product weigh the gradient and the moving average in the step."""

    def __init__(self, params: Any, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        betas = _check(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            mu_product = step_tensor()  # a 0-d tensor of PyTorch's scalar dtype, as the step
            mu_product._data[...] = 1.0
            state["mu_product"] = mu_product
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        beta1, beta2 = group["betas"]
        eps, momentum_decay = group["eps"], group["momentum_decay"]
        if group["maximize"]:
            grad = -grad
        step_t, mu_t, m_t, v_t = state["step"], state["mu_product"], state["exp_avg"], state["exp_avg_sq"]
        step_t._data += 1
        bump(step_t)
        step = float(step_t._data)
        bias_correction2 = 1 - beta2**step
        grad = _decay(p, grad, lr, group)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_t._data *= mu  # in the scalar dtype (float32 under a float32 default), as PyTorch's
        bump(mu_t)
        _moments(m_t, v_t, grad, beta1, beta2)
        denom = np.sqrt(v_t._data / bias_correction2)
        denom += eps
        mu_product = float(mu_t._data)
        mu_product_next = mu_product * mu_next
        data = p._data
        data += ((-lr * (1.0 - mu) / (1.0 - mu_product)) * grad) / denom
        data += (((-lr * mu_next) / (1.0 - mu_product_next)) * m_t._data) / denom
        bump(p)
        bump(p)


class RAdam(Optimizer):
    """RAdam, Adam with the variance of its adaptive learning rate rectified: while the approximated length of
    the moving average rho_t is at most 5, a plain momentum step; then Adam's, scaled by the rectification."""

    def __init__(self, params: Any, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        betas = _check(lr, eps, betas, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict[str, Any], state: dict[str, Any]) -> None:
        if not state:
            state["step"] = step_tensor()
            state["exp_avg"] = zeros_state(p)
            state["exp_avg_sq"] = zeros_state(p)
        lr = scalar(group["lr"], "lr")
        beta1, beta2 = group["betas"]
        if group["maximize"]:
            grad = -grad
        step_t, m_t, v_t = state["step"], state["exp_avg"], state["exp_avg_sq"]
        step_t._data += 1
        bump(step_t)
        step = float(step_t._data)
        grad = _decay(p, grad, lr, group)
        _moments(m_t, v_t, grad, beta1, beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = m_t._data / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            root = np.sqrt(v_t._data)
            root += group["eps"]
            adaptive = (bias_correction2**0.5) / root
            update = corrected * lr * adaptive * rect
        else:
            update = corrected * lr
        p._data[...] = fma(update, -1.0, p._data)  # add_(update, alpha=-1.0)
        bump(p)
