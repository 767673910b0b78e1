"""`Linear` (y = x Wᵀ + b) and `Identity`."""

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


class Identity(Module):
    """Returns its input unchanged (any constructor arguments are ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input


class Linear(Module):
    """The affine layer y = x Wᵀ + b, with W of shape (out_features, in_features), initialised as PyTorch
    does: W ~ kaiming_uniform_(a=√5), i.e. U(-1/√in, 1/√in), and b ~ U(-1/√in, 1/√in)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
                raise TypeError(f"Linear: {name} must be a whole number >= 0, not {n!r}")
        if device not in (None, "cpu"):
            raise RuntimeError(f"Linear: gradcalc runs on the CPU only; leave device unset (got {device!r})")
        self.in_features, self.out_features = int(in_features), int(out_features)
        dt = np_dtype(dtype) or default_float()
        self.weight = Parameter(Tensor._make(np.empty((self.out_features, self.in_features), dt), False, None))
        if bias:
            self.bias = Parameter(Tensor._make(np.empty(self.out_features, dt), False, None))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight and bias afresh, as the constructor does."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
