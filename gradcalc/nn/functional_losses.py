"""The losses over pairs and triplets and the likelihood losses, as PyTorch composes them (ATen's Loss.cpp and
`F.gaussian_nll_loss`): `margin_ranking_loss`, `hinge_embedding_loss`, `cosine_embedding_loss`,
`triplet_margin_loss`, `poisson_nll_loss`, `gaussian_nll_loss`. Their graphs are those operations' nodes, as
PyTorch's are (none of them has a node of its own there)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..autograd.ops import reductions as _R
from ..autograd.ops.elementwise import where
from ..autograd.tensor import Tensor

__all__ = [
    "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
    "triplet_margin_loss",
]


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's _Reduction: the legacy flags (with their warning) or the reduction's name, checked."""
    if size_average is not None or reduce is not None:
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' instead.",
                      stacklevel=3)
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _apply(loss: Tensor, reduction: str) -> Tensor:
    """ATen's apply_loss_reduction."""
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _size(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._make(np.zeros(t._data.shape, dtype=t._data.dtype), False, None)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """max(0, -target·(input1 - input2) + margin): input1 should rank above input2 where target is 1, below
    where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1)}, input2: {_size(input2)}, target: {_size(target)} ")
    return _apply((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002 - PyTorch's names
                         size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where it is -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = _zeros_like(input)
    margin_clamp = (margin - input).clamp_min(0)
    output_margin = where(target != 1, margin_clamp, zeros)
    output_self = where(target != -1, input, zeros)
    return _apply(output_margin + output_self, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (cos along the last
    dim of (N, D) inputs, or of (D,) inputs with a 0-d target)."""
    reduction = _reduction(size_average, reduce, reduction)
    d = target.dim()
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if d == 1 and not (input1.dim() == 2 and input2.dim() == 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if d == 0 and not (input1.dim() == 1 and input2.dim() == 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12
    prod_sum = (input1 * input2).sum(d)
    mag_square1 = (input1 * input1).sum(d) + eps
    mag_square2 = (input2 * input2).sum(d) + eps
    cos = prod_sum / (mag_square1 * mag_square2).sqrt()
    zeros = _zeros_like(cos)
    output_pos = where(target == 1, 1 - cos, zeros)
    output_neg = where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _apply(output_pos + output_neg, reduction)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float, eps: float) -> Tensor:
    dim = max(x1.dim(), x2.dim()) - 1
    return _R.norm(x1 - x2 + eps, p, dim if dim >= 0 else None)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance (`swap`: the smaller
    of d(anchor, negative) and d(positive, negative))."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == pd == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {n}D inputs")
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = dist_neg.minimum(_pairwise_distance(positive, negative, p, eps))
    return _apply((margin + dist_pos - dist_neg).clamp_min(0), reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """The negative log likelihood of `target` under Poisson(rate): exp(input) - target·input with
    `log_input`, else input - target·log(input + eps); `full` adds Stirling's term for target > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """The negative log likelihood of `target` under N(input, var): ½(log var + (input - target)² / var), var
    clamped below at `eps` (without a gradient there); `full` adds ½ log 2π."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor._make(np.full(input._data.shape, var, dtype=input._data.dtype), False, None)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply(loss, reduction)
