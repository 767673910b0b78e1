"""The device type: gradcalc computes on the CPU only (`torch.device("cpu")`), and makes meta tensors (shapes
without data: meta.py) with `.to("meta")`. Below the operations, so that the constructors can check their
`device=` without importing the operations that wrap them (ops/device.py)."""

from __future__ import annotations

from typing import Any


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
        if name not in ("cpu", "meta"):
            if name not in _KNOWN:
                raise RuntimeError(f"Expected one of {', '.join(_KNOWN)} device type at start of device string: "
                                   f"{name}")
            raise RuntimeError(f"device {str(type)!r}: gradcalc computes on the CPU only; use 'cpu' (or leave "
                               "the device out)")
        self.type, self.index = name, index

    def __repr__(self) -> str:
        tail = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{tail})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


_KNOWN = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
          "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")  # PyTorch's device types
CPU = device("cpu")
META = device("meta")


def check_device(value: Any) -> None:
    """Accept None, "cpu" or a cpu device; any other device is an error."""
    if value is not None and device(value).type != "cpu":
        raise RuntimeError("device 'meta': gradcalc makes meta tensors only with .to('meta') of a tensor or a "
                           "module; make the tensor on the CPU (leave the device out)")
