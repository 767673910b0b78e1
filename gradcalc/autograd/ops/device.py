"""Devices: gradcalc computes on the CPU only. `torch.device("cpu")`, `Tensor.device`, `.cpu()`,
`.to("cpu")` and `device=` on the constructors are accepted as no-ops, so PyTorch code runs unchanged; any
other device is a clear error."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from . import basic, creation


class device:  # noqa: N801 - PyTorch's name
    """A device: only `device("cpu")` (also `device("cpu", 0)`, `device(type="cpu")`) exists in gradcalc."""

    __slots__ = ("type", "index")

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index
        name = str(type)
        if ":" in name:
            name, _, number = name.partition(":")
            index = int(number) if number.isdigit() else index
        if name != "cpu":
            raise RuntimeError(f"device {str(type)!r}: gradcalc computes on the CPU only; use 'cpu' (or leave "
                               "the device out)")
        self.type, self.index = "cpu", index

    def __repr__(self) -> str:
        return "device(type='cpu')" if self.index is None else f"device(type='cpu', index={self.index})"

    def __str__(self) -> str:
        return "cpu" if self.index is None else f"cpu:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def check_device(value: Any) -> None:
    """Accept None, "cpu" or a cpu device; any other device is an error."""
    if value is not None:
        device(value)


def _device_of(x: Tensor) -> device:
    return CPU


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
    check_device(device)
    copy = bool(copy)
    for a in target:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, _DEVICE) or (isinstance(a, str) and (a == "cpu" or a.startswith(("cpu:", "cuda", "mps")))):
            check_device(a)
        elif isinstance(a, bool):  # the positional non_blocking / copy of PyTorch's overloads
            continue
        elif a is not None:
            dtype = a
    out = basic.to_dtype(x, dtype) if dtype is not None else x
    return basic.clone(out) if copy and out is x else out


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
PROPERTIES = {"device": _device_of, "is_cpu": lambda x: True, "is_cuda": lambda x: False}


