"""`Conv1d`, `Conv2d`, `ConvTranspose1d`, `ConvTranspose2d`: PyTorch's convolution layers, their parameters' shapes,
initialisation (kaiming_uniform_ with a=√5, the bias uniform in ±1/√fan_in, drawn from gradcalc's stream) and
repr."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd.defaults import default_float
from ..autograd.ops.creation import np_dtype
from ..autograd.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter

_PADDING_STRINGS = ("same", "valid")


def _tuple(value: Any, n: int, name: str, owner: str) -> tuple[int, ...]:
    """An int or a sequence of `n` ints, as an n-tuple (PyTorch's _single/_pair)."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    if len(items) != n or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in items):
        raise TypeError(f"{owner}: {name} must be a whole number or {n} of them, not {value!r}")
    return tuple(int(v) for v in items)


class _ConvNd(Module):
    """What every convolution layer shares (PyTorch's _ConvNd)."""

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None, output_padding: Any = 0) -> None:
        super().__init__()
        owner, n = type(self).__name__, self._dims
        for name, v in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{owner}: {name} must be a whole number, not {v!r}")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if device not in (None, "cpu"):
            raise RuntimeError(f"{owner}: gradcalc runs on the CPU only; leave device unset (got {device!r})")
        if padding_mode != "zeros":
            if padding_mode in ("reflect", "replicate", "circular"):
                raise NotImplementedError(f"{owner}: padding_mode '{padding_mode}' is not in gradcalc (only 'zeros')")
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        self.kernel_size = _tuple(kernel_size, n, "kernel_size", owner)
        self.stride = _tuple(stride, n, "stride", owner)
        self.dilation = _tuple(dilation, n, "dilation", owner)
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {set(_PADDING_STRINGS)}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _tuple(padding, n, "padding", owner)
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.transposed, self.output_padding = self._transposed, _tuple(output_padding, n, "output_padding", owner)
        self.padding_mode = padding_mode
        dt = np_dtype(dtype) or default_float()
        shape = ((self.in_channels, self.out_channels // self.groups) if self.transposed else
                 (self.out_channels, self.in_channels // self.groups)) + self.kernel_size
        self.weight = Parameter(Tensor._make(np.empty(shape, dt), False, None))
        if bias:
            self.bias = Parameter(Tensor._make(np.empty(self.out_channels, dt), False, None))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias afresh, as the constructor does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        n = self._dims
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        return s


class Conv1d(_ConvNd):
    """The 1-d convolution layer: input (N, C_in, L) or (C_in, L), weight (C_out, C_in/groups, k)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] | str = 0,
                 dilation: int | tuple[int, ...] = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_ConvNd):
    """The 2-d convolution layer: input (N, C_in, H, W) or (C_in, H, W), weight (C_out, C_in/groups, kH, kW)."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] | str = 0,
                 dilation: int | tuple[int, ...] = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if isinstance(padding, str):
            raise ValueError(f"{type(self).__name__}: padding must be a number or a tuple, not {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> tuple[int, ...]:  # noqa: A002
        """The output padding that gives `output_size` (PyTorch's _output_padding), or the layer's own."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        size = list(output_size)[-n:]
        spatial = tuple(input.shape)[-n:]
        smallest = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d] + self.dilation[d] * (
            self.kernel_size[d] - 1) + 1 for d in range(n)]
        for d in range(n):
            if not smallest[d] <= size[d] < smallest[d] + self.stride[d]:
                raise ValueError(f"requested an output size of {size}, but valid sizes range from {smallest} to "
                                 f"{[s + st - 1 for s, st in zip(smallest, self.stride, strict=True)]} (for an input "
                                 f"of {list(spatial)})")
        return tuple(size[d] - smallest[d] for d in range(n))


class ConvTranspose1d(_ConvTransposeNd):
    """The 1-d transposed convolution layer: input (N, C_in, L), weight (C_in, C_out/groups, k)."""

    _dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                 output_padding: int | tuple[int, ...] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, ...] = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """The 2-d transposed convolution layer: input (N, C_in, H, W), weight (C_in, C_out/groups, kH, kW)."""

    _dims = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, ...],
                 stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                 output_padding: int | tuple[int, ...] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int, ...] = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, groups, bias,
                         dilation, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups, self.dilation)
