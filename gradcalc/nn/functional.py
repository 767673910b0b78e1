"""`gradcalc.nn.functional`: PyTorch's `torch.nn.functional` for the layers gradcalc has, as functions.

`linear`, the activations `relu tanh sigmoid softplus gelu silu leaky_relu elu selu hardtanh relu6 hardswish
hardsigmoid logsigmoid mish softsign glu` (and the in-place `leaky_relu_ elu_ selu_ hardtanh_`), `softmax
log_softmax`, `normalize cosine_similarity pairwise_distance`, the losses
`mse_loss l1_loss binary_cross_entropy binary_cross_entropy_with_logits cross_entropy nll_loss smooth_l1_loss
huber_loss kl_div` (and `margin_ranking_loss hinge_embedding_loss cosine_embedding_loss triplet_margin_loss
poisson_nll_loss gaussian_nll_loss`), `dropout dropout1d dropout2d dropout3d`, `batch_norm layer_norm group_norm
instance_norm`, `embedding`, `scaled_dot_product_attention multi_head_attention_forward`, `pad` (every mode),
`interpolate pixel_shuffle pixel_unshuffle`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..autograd.grad_mode import no_grad
from ..autograd.ops import activations as _A
from ..autograd.ops import dropout as _D
from ..autograd.ops import elementwise as _E
from ..autograd.ops import logarithms as _L
from ..autograd.ops import reductions as _R
from ..autograd.ops import softmax as _S
from ..autograd.ops import trigonometric as _T
from ..autograd.ops.activations import (
    elu,
    elu_,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    relu6,
    selu,
    selu_,
)
from ..autograd.ops.batch_norm import batch_norm
from ..autograd.ops.classification import cross_entropy, nll_loss
from ..autograd.ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ..autograd.ops.divergence import kl_div
from ..autograd.ops.dropout import dropout
from ..autograd.ops.embedding import embedding
from ..autograd.ops.encoding import one_hot
from ..autograd.ops.losses import binary_cross_entropy, binary_cross_entropy_with_logits, l1_loss, mse_loss
from ..autograd.ops.nn import gelu, linear, silu
from ..autograd.ops.normalization import layer_norm
from ..autograd.ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ..autograd.ops.smooth_activations import glu, logsigmoid, mish
from ..autograd.ops.smooth_losses import huber_loss, smooth_l1_loss
from ..autograd.tensor import Tensor
from .functional_attention import multi_head_attention_forward, scaled_dot_product_attention
from .functional_losses import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    poisson_nll_loss,
    triplet_margin_loss,
)
from .functional_norms import group_norm, instance_norm
from .functional_resample import interpolate, pad, pixel_shuffle, pixel_unshuffle

__all__ = [
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "dropout",
    "dropout1d", "dropout2d", "dropout3d", "embedding", "gelu", "huber_loss", "kl_div", "l1_loss", "layer_norm",
    "linear", "log_softmax", "mse_loss", "nll_loss", "relu", "sigmoid", "silu", "smooth_l1_loss", "softmax",
    "softplus", "tanh",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "conv1d", "conv2d", "conv_transpose1d",
    "conv_transpose2d", "max_pool1d", "max_pool2d", "one_hot", "pad",
    "cosine_similarity", "elu", "elu_", "glu", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "leaky_relu",
    "leaky_relu_", "logsigmoid", "mish", "normalize", "pairwise_distance", "relu6", "selu", "selu_", "softsign",
    "group_norm", "instance_norm", "multi_head_attention_forward", "scaled_dot_product_attention",
    "interpolate", "pixel_shuffle", "pixel_unshuffle",
    "cosine_embedding_loss", "gaussian_nll_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
    "triplet_margin_loss",
]


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002 - PyTorch's names
    """max(0, x) elementwise; with inplace=True the input itself is changed and returned."""
    if inplace:
        return input.relu_()
    # handed on as the caller's expression would hand a temporary to relu itself (this frame's name dropped
    # first), so that `F.relu(conv(x))` writes into the dying tensor's array as `relu(conv(x))` does
    # (temporaries.temporary_argument): no new array of the activation's size; a named input keeps its values
    held = [input]
    del input
    return _A.relu(held.pop())


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """tanh(x) elementwise."""
    return _T.tanh(input)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-x)) elementwise."""
    return _L.sigmoid(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta elementwise, and x itself where beta x > threshold."""
    return _E.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|) elementwise (PyTorch's composite: its nodes are the division's, the sum's and abs's)."""
    return input / (input.abs() + 1)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:  # noqa: A002
    """`input` divided by its p-norm along `dim` (at least `eps`), as PyTorch's composite records it."""
    denom = _R.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (broadcast together): each divided by its 2-norm,
    clamped below at `eps` without a gradient, then the products summed, as PyTorch computes it."""
    if x1.shape != x2.shape:  # PyTorch's expand_outplace: each expanded only where its shape differs
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        x1 = x1 if tuple(x1.shape) == shape else x1.expand(shape)
        x2 = x2 if tuple(x2.shape) == shape else x2.expand(shape)
    n1 = _R.norm(x1, 2, dim, keepdim=True).clone()
    n2 = _R.norm(x2, 2, dim, keepdim=True).clone()
    with no_grad():  # PyTorch clamps the (cloned) norms in place without recording it
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dimension (of the larger of the two)."""
    dim = max(x1.dim(), x2.dim()) - 1
    return _R.norm(x1 - x2 + eps, p, dim if dim >= 0 else None, keepdim=keepdim)


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


# -- channel-wise dropout: PyTorch's Python over feature_dropout ---------------------------------------------
def _channels(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:  # noqa: A002
    """feature_dropout on `input`, given a batch dim of one first when it has none (PyTorch's no-batch form)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if batched:
        return _D.feature_dropout_(input, p, training) if inplace else _D.feature_dropout(input, p, training)
    if inplace:  # written through a view with a batch dim of one (PyTorch reshapes the tensor itself in place)
        _D.feature_dropout_(input.unsqueeze(0), p, training)
        return input
    return _D.feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of an (N, C, L) or (C, L) input with probability p in training mode (the others
    scaled by 1/(1-p))."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    n = input.dim()
    if n not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {n}D input. Note that dropout1d exists to provide "
            "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    return _channels(input, p, training, inplace, n == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels (2-d feature maps) of an (N, C, H, W) input with probability p in training mode (the
    others scaled by 1/(1-p)); a 3-d input is taken as (N, C, L), as PyTorch does, with its warning."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    n = input.dim()
    if n not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {n}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if n == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape (C, H, "
            "W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _channels(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels (3-d feature maps) of an (N, C, D, H, W) or (C, D, H, W) input with probability p in
    training mode (the others scaled by 1/(1-p))."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    n = input.dim()
    if n not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {n}-D input to dropout3d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channels(input, p, training, inplace, n == 5)
