"""The default floating dtype: what a Python float, a float factory (`zeros`, `rand`, `linspace`, ...) and an
integral input promoted to floating (`sin` of an int64 tensor) become.

In the Python API it is PyTorch's: float32 when gradcalc is imported, changed for the whole process by
`gradcalc.set_default_dtype`. The language computes in float64 (LANGUAGE.md section 1) without changing it for
Python code in the same process: a session runs its statements under `default_dtype(float64)`, which sets a
default for this thread only, for as long as it runs. Both are read by `default_float()`.
"""

from __future__ import annotations

from _thread import _local  # what threading.local is (`threading` itself is kept off the start-up path)
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

FLOAT32 = np.dtype("float32")
FLOAT64 = np.dtype("float64")

# the process's default, as `torch.set_default_dtype` sets it (a list: one mutable cell, read without a lock)
_process = [FLOAT32]


class _ThreadDefault(_local):
    dtype: np.dtype | None = None  # set by `default_dtype(...)` in this thread; None: the process's


_thread = _ThreadDefault()


def default_float() -> np.dtype:
    """The default floating dtype in force here (this thread's, else the process's)."""
    d = _thread.dtype
    return _process[0] if d is None else d


def set_process_default(dtype: np.dtype) -> None:
    """Make `dtype` (float32 or float64) the process's default (`gradcalc.set_default_dtype`)."""
    _process[0] = dtype


@contextmanager
def default_dtype(dtype: np.dtype) -> Iterator[None]:
    """Within the block, in this thread only, `dtype` is the default (the language's sessions: float64)."""
    previous = _thread.dtype
    _thread.dtype = dtype
    try:
        yield
    finally:
        _thread.dtype = previous
