"""Devices: gradcalc computes on the CPU only. `torch.device("cpu")`, `Tensor.device`, `.cpu()`,
`.to("cpu")` and `device=` on the constructors are accepted as no-ops, so PyTorch code runs unchanged; any
other device is a clear error, but for `.to("meta")`, which makes a meta tensor (a shape without data: meta.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..devices import CPU, META, check_device, device
from ..meta import is_meta, meta_array
from ..tensor import Tensor
from . import basic, creation
from .core import record


def _device_of(x: Tensor) -> device:
    return META if is_meta(x._data) else CPU


def cpu(x: Tensor) -> Tensor:
    """The tensor itself: it is already on the CPU."""
    return x


_DEVICE = device  # `to` has a parameter of the same name, as PyTorch's


def to(
    x: Tensor, *target: Any, dtype: Any = None, device: Any = None, non_blocking: bool = False, copy: bool = False,
    memory_format: Any = None,
) -> Tensor:
    """`x` converted to a dtype (itself when it has it already); a device, "cpu" or another tensor (whose
    dtype is taken) may be given too, as PyTorch's `Tensor.to` overloads allow. `non_blocking` and `copy`
    are accepted; `copy=True` always gives a new tensor."""
    where = None if device is None else _DEVICE(device)
    copy = bool(copy)
    for a in target:
        if isinstance(a, Tensor):
            dtype = a.dtype
            where = _device_of(a)
        elif isinstance(a, _DEVICE) or (isinstance(a, str) and not _is_dtype_name(a)):
            where = _DEVICE(a)
        elif isinstance(a, bool):  # the positional non_blocking / copy of PyTorch's overloads
            continue
        elif a is not None:
            dtype = a
    if where is not None and where.type == "meta":
        target_dtype = x._data.dtype if dtype is None else creation.np_dtype(dtype)
        return x if is_meta(x._data) and target_dtype == x._data.dtype else to_meta(x, target_dtype)
    if is_meta(x._data):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    out = basic.to_dtype(x, dtype) if dtype is not None else x
    return basic.clone(out) if copy and out is x else out


def _is_dtype_name(text: str) -> bool:
    return text.removeprefix("torch.") in ("float32", "float64", "float", "double", "int64", "long", "bool",
                                           "int32", "int", "uint8")


def to_meta(x: Tensor, dtype: Any = None) -> Tensor:
    """A meta tensor of `x`'s shape (and `dtype`, else x's), recorded as a copy (ToCopyBackward0)."""
    node = record(basic.ToCopyBackward0, x)
    if node is not None:
        node.dtype = x._data.dtype
    data = meta_array(x._data.shape, x._data.dtype if dtype is None else dtype)
    return Tensor._make(data, node is not None, node)  # (not `result`: it would make the array a plain one)


def _accepting_device(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """A constructor that also takes `device=` (and `pin_memory=`, `layout=`), as PyTorch's."""

    @functools.wraps(fn)
    def constructor(*args: Any, device: Any = None, pin_memory: bool = False, layout: Any = None,
                    **kwargs: Any) -> Tensor:
        check_device(device)
        return fn(*args, **kwargs)

    return constructor


_CONSTRUCTORS = ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "full_like",
                 "eye", "arange", "linspace", "rand", "randn")
FUNCTIONS: dict[str, Any] = {name: _accepting_device(creation.FUNCTIONS[name]) for name in _CONSTRUCTORS
                             if name in creation.FUNCTIONS}
FUNCTIONS["device"] = device
METHODS = {"cpu": cpu, "to": to}
PROPERTIES = {"device": _device_of, "is_cpu": lambda x: not is_meta(x._data), "is_cuda": lambda x: False,
              "is_meta": lambda x: is_meta(x._data)}


