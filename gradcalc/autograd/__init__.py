"""gradcalc's autograd engine: PyTorch's autograd semantics on NumPy.

`Tensor` (tensor.py) is what a value is; nodes (node.py) say what each operation's backward computes;
the engine (engine.py) says in what order; grad modes (grad_mode.py) say whether anything is recorded.
"""

from __future__ import annotations

import warnings

from . import collector
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

# These load when first used: a cold start needs none of them (`graph`, `functional`, `forward_ad`, `printing`:
# submodules, which an import of them sets as attributes too; `Function`: custom functions; `backward`, `grad`:
# the engine, which the first backward loads)
_LAZY = {"functional": "functional", "graph": "graph", "forward_ad": "forward_ad", "printing": "printing",
         "Function": "function", "FunctionCtx": "function", "backward": "differentiate", "grad": "differentiate"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gradcalc.autograd' has no attribute {name!r}")
    import importlib  # (here, off the start-up path: only the first use of a name above comes here)

    loaded = importlib.import_module(f"{__name__}.{module}")
    if module == name:
        return loaded
    value = globals()[name] = getattr(loaded, name)  # (this function is not called for it again)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# While many nodes are recorded, young survivors of a collection go straight to the oldest generation, so that a
# growing graph does not bring on full collections, each of which walks all of it (collector.py)
collector.install()

__all__ = [
    "Function", "FunctionCtx", "Node", "Tensor", "backward", "detect_anomaly", "enable_grad", "forward_ad",
    "functional", "graph",
    "grad", "gradcheck", "gradgradcheck", "inference_mode", "is_anomaly_check_nan_enabled", "is_anomaly_enabled",
    "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_detect_anomaly", "set_grad_enabled",
]
