"""`Parameter`: a tensor that a module registers as one of its parameters.

PyTorch's Parameter is a Tensor subclass. gradcalc's operations test `type(t) is Tensor` on their hottest
paths, so a subclass would either be missed by them or slow them all; a parameter here is therefore a plain
`Tensor` marked as one (in a registry of tensor.py), and `Parameter` is a class whose `isinstance` test
reads the mark. So `isinstance(p, nn.Parameter)` and `isinstance(p, Tensor)` both hold, `repr(p)` prints PyTorch's
`Parameter containing:` header, and every operation treats a parameter at full speed. The one visible
difference from PyTorch: `type(p)` is `Tensor`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.defaults import default_float
from ..autograd.tensor import Tensor, is_parameter, mark_parameter, version_of


class _ParameterType(type):
    """The metaclass that makes `isinstance(t, Parameter)` true of marked tensors."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type(obj) is Tensor and is_parameter(obj)


class Parameter(metaclass=_ParameterType):
    """A tensor registered as a module parameter: a leaf that requires grad by default.

    `Parameter(data, requires_grad=True)` shares `data`'s memory (and its version counter, as a
    `.detach()` does); assigning one to a module attribute registers it in `parameters()`.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:  # type: ignore[misc]
        if data is None:
            data = Tensor._make(np.empty(0, dtype=default_float()), False, None)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data): data must be a tensor, not {type(data).__name__}; wrap it in tensor(...)"
            )
        t = Tensor._make(data._data, False, None, version_of(data))
        mark_parameter(t)
        if requires_grad:
            t.requires_grad = True  # refuses integer tensors, with the engine's message
        return t
