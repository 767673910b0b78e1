"""gradcalc: a command-line autodiff calculator whose engine mirrors PyTorch's autograd on NumPy.

`import gradcalc as torch` runs PyTorch snippets restricted to the supported subset:
`gradcalc.tensor`, `gradcalc.sin`, `Tensor.backward`, `gradcalc.no_grad`, `gradcalc.autograd.grad`, ...
"""

from __future__ import annotations

import builtins
import gc as _gc

# Importing the engine makes some thousands of long-lived objects (classes, functions, the operations' specs) and
# no garbage: the cyclic collector, run meanwhile, would only walk them again and again, at every start-up. Off
# while they are made; back on (if it was) once they are.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from . import autograd
    from .autograd.grad_mode import (
        enable_grad,
        inference_mode,
        is_anomaly_check_nan_enabled,
        is_anomaly_enabled,
        is_grad_enabled,
        is_inference_mode_enabled,
        no_grad,
        set_grad_enabled,
    )
    from .autograd.ops import FUNCTIONS as _FUNCTIONS
    from .autograd.ops.reductions import return_types  # noqa: F401 - PyTorch's name
    from .autograd.tensor import DType, Size, Tensor
finally:
    if _collecting:
        _gc.enable()

__version__ = "0.1.0"

float64 = double = DType.of(__import__("numpy").dtype("float64"))
float32 = float = DType.of(__import__("numpy").dtype("float32"))
int64 = long = DType.of(__import__("numpy").dtype("int64"))
bool = DType.of(__import__("numpy").dtype("bool"))  # noqa: A001 - PyTorch's name

globals().update(_FUNCTIONS)


def is_tensor(obj: object) -> builtins.bool:
    """True when `obj` is a gradcalc tensor."""
    return isinstance(obj, Tensor)


def get_default_dtype() -> DType:
    """gradcalc's default floating dtype: float64."""
    return float64


__all__ = [
    "DType", "Size", "Tensor", "autograd", "enable_grad", "func", "nn", "optim", "vmap", "inference_mode",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
    "set_grad_enabled", "float64", "float32", "int64", "double", "long", *_FUNCTIONS,
]


# The function transforms, modules and optimizers load on first use: a plain run (`gradcalc -e '1 + 1'`)
# needs none of them, and importing them would cost every cold start.
_LAZY = {"func": "gradcalc.func", "nn": "gradcalc.nn", "optim": "gradcalc.optim"}


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY:
        return importlib.import_module(_LAZY[name])
    if name == "vmap":
        return importlib.import_module("gradcalc.func").vmap
    if name in _FUNCTIONS:  # an operation registered after import (autograd.spec.op)
        return _FUNCTIONS[name]
    raise AttributeError(f"module 'gradcalc' has no attribute {name!r}")
