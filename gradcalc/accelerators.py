"""What PyTorch code asks about accelerators before it picks a device, answered for a CPU-only library:
`torch.cuda.is_available()`, `torch.backends.mps.is_available()`, `torch.accelerator.is_available()` are False,
so the usual `device = "cuda" if torch.cuda.is_available() else "cpu"` picks the CPU; seeding CUDA does nothing.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def _false(*args: Any, **kwargs: Any) -> bool:
    return False


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


cuda = SimpleNamespace(
    is_available=_false, device_count=lambda: 0, is_initialized=_false, manual_seed=_nothing,
    manual_seed_all=_nothing, synchronize=_nothing, empty_cache=_nothing,
)
accelerator = SimpleNamespace(is_available=_false, current_accelerator=_nothing, device_count=lambda: 0)
backends = SimpleNamespace(
    mps=SimpleNamespace(is_available=_false, is_built=_false),
    cuda=SimpleNamespace(is_built=_false),
    cudnn=SimpleNamespace(is_available=_false, deterministic=False, benchmark=False),
)

__all__ = ["accelerator", "backends", "cuda"]
