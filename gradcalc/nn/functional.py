"""`gradcalc.nn.functional`: PyTorch's `torch.nn.functional` for the layers gradcalc has, as functions.

`linear`, the activations `relu tanh sigmoid softplus gelu silu`, `softmax log_softmax`, and the losses
`mse_loss l1_loss binary_cross_entropy binary_cross_entropy_with_logits cross_entropy nll_loss`.
"""

from __future__ import annotations

import warnings

from ..autograd.ops import elementwise as _E
from ..autograd.ops import softmax as _S
from ..autograd.ops import unary as _U
from ..autograd.ops.classification import cross_entropy, nll_loss
from ..autograd.ops.losses import binary_cross_entropy, binary_cross_entropy_with_logits, l1_loss, mse_loss
from ..autograd.ops.nn import gelu, linear, silu
from ..autograd.tensor import Tensor

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "gelu", "l1_loss", "linear",
    "log_softmax", "mse_loss", "nll_loss", "relu", "sigmoid", "silu", "softmax", "softplus", "tanh",
]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """max(0, x) elementwise; with inplace=True the input itself is changed and returned."""
    return input.relu_() if inplace else _U.relu(input)


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """tanh(x) elementwise."""
    return _U.tanh(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-x)) elementwise."""
    return _U.sigmoid(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta elementwise, and x itself where beta x > threshold."""
    return _E.softplus(input, beta, threshold)


def _softmax_dim(name: str, ndim: int) -> int:
    # PyTorch's implicit choice, kept for old code, with its warning
    warnings.warn(
        f"{name}(): no dim was given, so one is chosen implicitly (as PyTorch's old behaviour); pass dim= "
        "to say which dimension sums to one",
        UserWarning,
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: object = None) -> Tensor:  # noqa: A002
    """exp(x) / sum(exp(x)) along `dim`."""
    return _S.softmax(input, _softmax_dim("softmax", input.dim()) if dim is None else dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: object = None) -> Tensor:  # noqa: A002
    """log(softmax(x)) along `dim`, computed stably."""
    return _S.log_softmax(input, _softmax_dim("log_softmax", input.dim()) if dim is None else dim, dtype)


# -- convolution, pooling and the rest of the layers the tutorials' CNNs use (issue 21) --------------------------
from ..autograd.ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d, pad  # noqa: E402
from ..autograd.ops.encoding import one_hot  # noqa: E402
from ..autograd.ops.pooling import (  # noqa: E402
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)

__all__ += [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "conv_transpose1d",
    "conv_transpose2d", "max_pool1d", "max_pool2d", "one_hot", "pad",
]
