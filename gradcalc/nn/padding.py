"""The padding layers: `ZeroPad1d/2d/3d`, `ConstantPad1d/2d/3d`, `ReflectionPad1d/2d/3d`, `ReplicationPad1d/2d/3d`
and `CircularPad1d/2d/3d`, each `F.pad` with its mode and a padding given as one number for every side or a tuple
(left, right[, top, bottom[, front, back]]), as PyTorch's."""

from __future__ import annotations

from typing import Any

from ..autograd.tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _ntuple(padding: Any, n: int) -> tuple[int, ...]:
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * n


class _Pad(Module):
    _mode = "constant"
    _sides = 2

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _ntuple(padding, self._sides)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's names
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with `value`: padding (left, right) or one number for both."""


class ConstantPad2d(_ConstantPad):
    """Pad the last two dims with `value`: padding (left, right, top, bottom) or one number for all four."""

    _sides = 4


class ConstantPad3d(_ConstantPad):
    """Pad the last three dims with `value`: padding (left, right, top, bottom, front, back) or one number."""

    _sides = 6


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ReflectionPad1d(_Pad):
    """Pad the last dim with its reflection (the edge not repeated)."""

    _mode = "reflect"


class ReflectionPad2d(_Pad):
    """Pad the last two dims with their reflection (the edge not repeated)."""

    _mode, _sides = "reflect", 4


class ReflectionPad3d(_Pad):
    """Pad the last three dims with their reflection (the edge not repeated)."""

    _mode, _sides = "reflect", 6


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge values."""

    _mode = "replicate"


class ReplicationPad2d(_Pad):
    """Pad the last two dims by repeating their edge values."""

    _mode, _sides = "replicate", 4


class ReplicationPad3d(_Pad):
    """Pad the last three dims by repeating their edge values."""

    _mode, _sides = "replicate", 6


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around."""

    _mode = "circular"


class CircularPad2d(_Pad):
    """Pad the last two dims by wrapping around."""

    _mode, _sides = "circular", 4


class CircularPad3d(_Pad):
    """Pad the last three dims by wrapping around."""

    _mode, _sides = "circular", 6
