"""gradcalc's autograd engine: PyTorch's autograd semantics on NumPy.

`Tensor` (tensor.py) is what a value is; nodes (node.py) say what each operation's backward computes;
the engine (engine.py) says in what order; grad modes (grad_mode.py) say whether anything is recorded.
"""

from __future__ import annotations

import warnings

from . import collector, forward_ad, graph
from .differentiate import backward, grad
from .function import Function, FunctionCtx
from .grad_mode import (
    detect_anomaly,
    enable_grad,
    inference_mode,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_detect_anomaly,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .node import Node
from .tensor import Tensor

# PyTorch computes inf and nan silently; NumPy warns. `np.errstate` around each operation would cost
# about a microsecond per op, so NumPy's floating-point warnings are silenced where they are raised: here.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gradcalc\.autograd")

# `functional` (jacobian, hessian, ...) loads when first used: a cold start does not need it (an import of the
# submodule sets the attribute too)
def __getattr__(name: str) -> object:
    if name != "functional":
        raise AttributeError(f"module 'gradcalc.autograd' has no attribute {name!r}")
    import importlib  # (here, off the start-up path: only the first use of `functional` comes here)

    return importlib.import_module(f"{__name__}.functional")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"functional"})


# While many nodes are recorded, young survivors of a collection go straight to the oldest generation, so that a
# growing graph does not bring on full collections, each of which walks all of it (collector.py)
collector.install()

__all__ = [
    "Function", "FunctionCtx", "Node", "Tensor", "backward", "detect_anomaly", "enable_grad", "forward_ad",
    "functional", "graph",
    "grad", "gradcheck", "gradgradcheck", "inference_mode", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
    "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_detect_anomaly", "set_grad_enabled",
]
