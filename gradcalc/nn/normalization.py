"""`BatchNorm1d`, `BatchNorm2d`, `BatchNorm3d`, `LayerNorm`, `GroupNorm` and `InstanceNorm1d`/`2d`/`3d`.

A batch-norm layer normalizes each channel by the batch's statistics in training mode, updating its buffers
`running_mean`, `running_var` (momentum, or a cumulative average with `momentum=None`) and
`num_batches_tracked`, and by the running statistics in evaluation mode (`module.eval()`), as PyTorch's does;
with `track_running_stats=False` it has no buffers and always uses the batch's statistics. The buffers are in
`state_dict()`, after the parameters.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from ..autograd.defaults import default_float
from ..autograd.grad_mode import no_grad
from ..autograd.ops.creation import np_dtype
from ..autograd.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


def _empty(shape: tuple[int, ...], dtype: Any) -> Tensor:
    return Tensor._make(np.empty(shape, dtype=dtype), False, None)


def _affine_parameters(module: Module, shape: tuple[int, ...], dtype: Any, affine: bool, bias: bool) -> None:
    """A normalization layer's `weight` and `bias` of `shape` when `affine` (the bias only with `bias`), each
    registered as None otherwise, as PyTorch's layers do; their values come from `_reset_affine`."""
    if affine:
        module.weight = Parameter(_empty(shape, dtype))
        if bias:
            module.bias = Parameter(_empty(shape, dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module, affine: bool) -> None:
    """An affine normalization layer's weight 1 and bias 0."""
    if affine:
        init.ones_(module.weight)
        if module.bias is not None:
            init.zeros_(module.bias)


class _NormBase(Module):
    """What the batch-norm layers share: the affine parameters, the running statistics and their reset."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if device not in (None, "cpu"):
            raise RuntimeError(f"{type(self).__name__}: gradcalc runs on the CPU only; leave device unset")
        dt = np_dtype(dtype) or default_float()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine_parameters(self, (num_features,), dt, affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._make(np.zeros(num_features, dt), False, None))
            self.register_buffer("running_var", Tensor._make(np.ones(num_features, dt), False, None))
            self.register_buffer("num_batches_tracked", Tensor._make(np.asarray(0, dtype=np.int64), False, None))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Running mean 0, running variance 1, no batch tracked (each an in-place change, as PyTorch's)."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics reset, the weight 1 and the bias 0."""
        self.reset_running_stats()
        _reset_affine(self, self.affine)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        # the batch's statistics in training mode, and in evaluation mode when there are no running ones
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        tracked = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if tracked else None, self.running_var if tracked else None,
                            self.weight, self.bias, use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization of an (N, C) or (N, C, L) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of an (N, C, H, W) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization of an (N, C, D, H, W) input, per channel C."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class LayerNorm(Module):
    """Normalization of each sample over its last dims `normalized_shape`, then an elementwise weight and bias
    (`elementwise_affine`; `bias=False` keeps the weight only)."""

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if device not in (None, "cpu"):
            raise RuntimeError("LayerNorm: gradcalc runs on the CPU only; leave device unset")
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        dt = np_dtype(dtype) or default_float()
        _affine_parameters(self, self.normalized_shape, dt, elementwise_affine, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight 1 and the bias 0."""
        _reset_affine(self, self.elementwise_affine)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalization: each sample's `num_channels` channels in `num_groups` groups, each normalized by its
    own mean and variance, then a per-channel weight (ones) and bias (zeros) with `affine`."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        if device not in (None, "cpu"):
            raise RuntimeError("GroupNorm: gradcalc runs on the CPU only; leave device unset")
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dt = np_dtype(dtype) or default_float()
        _affine_parameters(self, (num_channels,), dt, affine, bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """The weight 1 and the bias 0."""
        _reset_affine(self, self.affine)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_NormBase):
    """Instance normalization: each channel of each sample over its spatial dims; no affine parameters and no
    running statistics by default (`affine=True`, `track_running_stats=True` add them, as PyTorch's)."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)

    def _apply_instance_norm(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of an (N, C, L) or (C, L) input."""

    _no_batch_dim = 2

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of an (N, C, H, W) or (C, H, W) input."""

    _no_batch_dim = 3

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of an (N, C, D, H, W) or (C, D, H, W) input."""

    _no_batch_dim = 4

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")
