"""`F.group_norm` and `F.instance_norm`: normalization over groups of channels and over each channel of each
sample, written over `batch_norm` as ATen's `instance_norm` (and PyTorch's group norm before its fused kernel)
is: the input viewed as one batch whose channels are the groups (or the sample-channel pairs), normalized by its
own statistics, then the per-channel weight and bias. Values, gradients and double backward are batch_norm's.
"""

from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..autograd.ops.batch_norm import batch_norm
from ..autograd.tensor import Tensor

__all__ = ["group_norm", "instance_norm"]


def _verify_batch_size(size: list[int]) -> None:
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size: list[int]) -> None:
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size torch.Size({size})")


def _per_channel(t: Tensor | None, ndim: int) -> Tensor | None:
    return None if t is None else t.reshape((1, -1) + (1,) * (ndim - 2))


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002 - PyTorch's names
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize each sample's channels in `num_groups` groups by the group's mean and biased variance, then
    `* weight + bias` per channel."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    shape = list(input.shape)
    n, c = shape[0], shape[1]
    if num_groups <= 0 or c % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {shape} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {shape}")
    _verify_batch_size([n * c // num_groups, num_groups] + shape[2:])
    out = batch_norm(input.reshape(1, n * num_groups, -1), None, None, None, None, True, 0.0, eps).reshape(shape)
    if weight is not None:
        out = out * _per_channel(weight, len(shape))
    if bias is not None:
        out = out + _per_channel(bias, len(shape))
    return out


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None, bias: Tensor | None = None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample over its spatial dims (`use_input_stats`), or by the running
    statistics; in the first case the running statistics, if given, move towards the batch's mean of them."""
    if use_input_stats:
        _verify_spatial_size(list(input.shape))
    shape = list(input.shape)
    b, c = shape[0], shape[1]
    repeat = lambda t: None if t is None else t.repeat(b)  # noqa: E731 - ATen's repeat_if_defined
    mean_, var_ = repeat(running_mean), repeat(running_var)
    out = batch_norm(input.reshape([1, b * c] + shape[2:]), mean_, var_, repeat(weight), repeat(bias),
                     use_input_stats, momentum, eps)
    with no_grad():  # ATen writes the batch's mean of the updated copies back into the caller's buffers
        if running_mean is not None:
            running_mean.copy_(mean_.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(var_.view(b, c).mean(0))
    return out.view(shape)
