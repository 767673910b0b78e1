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
    from .autograd.ops.creation import PYTHON_ONLY as _CREATION
    from .autograd.ops.lazy import Deferred as _Deferred
    from .autograd.tensor import DType, Size, Tensor
finally:
    if _collecting:
        # The objects the imports made (NumPy's and the engine's, most of them for the life of the process) move
        # to the oldest generation at once, as survivors of young collections would: else the first collection
        # after `enable` scans every one of them (5-10 ms, a third of the import). Nothing is held back: the
        # next full collection scans them as it scans every old object (`unfreeze` puts them back among those).
        _gc.freeze()
        _gc.unfreeze()
        _gc.enable()

__version__ = "0.1.0"

float64 = double = DType.of(__import__("numpy").dtype("float64"))
float32 = float = DType.of(__import__("numpy").dtype("float32"))
int64 = long = DType.of(__import__("numpy").dtype("int64"))
bool = DType.of(__import__("numpy").dtype("bool"))  # noqa: A001 - PyTorch's name
int32 = int = DType.of(__import__("numpy").dtype("int32"))  # noqa: A001 - PyTorch's name
uint8 = DType.of(__import__("numpy").dtype("uint8"))  # a generator's state (get_rng_state)

# (the deferred families' names stay out: `__getattr__` below loads the family at first use, ops/lazy.py)
globals().update((_name, _fn) for _name, _fn in _FUNCTIONS.items() if type(_fn) is not _Deferred)
globals().update(_CREATION)  # get_default_dtype, set_default_dtype, FloatTensor, DoubleTensor, ...
# the random family's own objects (its PYTHON_ONLY): the family loads at their first use, as at its functions'
_RANDOM = ("Generator", "default_generator", "seed", "initial_seed", "get_rng_state", "set_rng_state")


def is_tensor(obj: object) -> builtins.bool:
    """True when `obj` is a gradcalc tensor."""
    return isinstance(obj, Tensor)


__all__ = [
    "DType", "Size", "Tensor", "autograd", "enable_grad", "func", "linalg", "nn", "optim", "vmap", "inference_mode",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
    "set_grad_enabled", "get_printoptions", "printoptions", "set_printoptions", "accelerator", "backends", "cuda",
    "float64", "float32", "int64", "double", "long", *_FUNCTIONS, *_CREATION, *_RANDOM,
]


# The function transforms, modules and optimizers load on first use: a plain run (`gradcalc -e '1 + 1'`)
# needs none of them, and importing them would cost every cold start.
_LAZY = {"func": "gradcalc.func", "linalg": "gradcalc.linalg", "nn": "gradcalc.nn", "optim": "gradcalc.optim"}
# Names whose modules load on first use too, so that a cold start does not import them: name -> its module
_LAZY_NAMES = {
    "get_printoptions": "gradcalc.autograd.printing", "printoptions": "gradcalc.autograd.printing",
    "set_printoptions": "gradcalc.autograd.printing",  # (tensor's repr loads it at the first print)
    "accelerator": "gradcalc.accelerators", "backends": "gradcalc.accelerators", "cuda": "gradcalc.accelerators",
    "return_types": "gradcalc.autograd.ops.return_types",  # PyTorch's torch.return_types (return_types.py)
    **dict.fromkeys(_RANDOM, "gradcalc.autograd.ops.random"),
}


def __dir__() -> list[str]:
    # the deferred families' names too (ops/lazy.py), and the names (and the submodule) loaded on first use
    return sorted(set(globals()) | set(_FUNCTIONS) | set(_LAZY_NAMES) | {"accelerators"})


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY:
        return importlib.import_module(_LAZY[name])
    if name == "vmap":
        return importlib.import_module("gradcalc.func").vmap
    if name in _LAZY_NAMES:
        value = globals()[name] = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        return value
    if name == "accelerators":
        return importlib.import_module("gradcalc.accelerators")
    if name in _FUNCTIONS:  # an operation registered after import (autograd.spec.op), or a deferred family's
        fn = _FUNCTIONS[name]
        if type(fn) is _Deferred:
            fn = globals()[name] = fn.load()
        return fn
    raise AttributeError(f"module 'gradcalc' has no attribute {name!r}")
