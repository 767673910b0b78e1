"""Constructors: `tensor`, `zeros`, `ones`, `full`, `eye`, `arange`, `linspace`, `rand`, `randn`, `*_like`.

Every constructor takes `dtype=` and `requires_grad=`; results are leaves. Floating values default to
float64 (gradcalc's default dtype); `tensor` of Python ints or bools keeps int64/bool, as PyTorch does.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any

import numpy as np

from ..tensor import DType, Tensor, float32, float64, int64

_rng_lock = threading.Lock()
_rng: Any = None  # made on first use: importing numpy.random costs a cold start ~13 ms


def _generator() -> Any:
    global _rng
    if _rng is None:
        _rng = np.random.default_rng(0)
    return _rng


def np_dtype(dtype: Any) -> np.dtype | None:
    """NumPy's dtype for a gradcalc/NumPy dtype or its name (None stays None)."""
    if dtype is None:
        return None
    if isinstance(dtype, DType):
        return dtype.np
    if isinstance(dtype, str):
        dtype = dtype.removeprefix("torch.")
        dtype = {"float": "float32", "double": "float64", "long": "int64"}.get(dtype, dtype)
    return np.dtype(dtype)


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data, False, None)
    if requires_grad:
        t.requires_grad = True
    return t


def _size(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for n in size:
        if isinstance(n, Tensor):
            n = n.item()
        if isinstance(n, float) and not n.is_integer():
            raise TypeError(f"a size must be a whole number, not {n}")
        if int(n) < 0:
            raise RuntimeError(f"a size cannot be negative, got {int(n)}")
        out.append(int(n))
    return tuple(out)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (a number, nested lists, an array or a tensor)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "tensor(t) of a tensor copies it; use t.clone().detach() to say so explicitly",
            UserWarning,
            stacklevel=2,
        )
        data = data._data
    if isinstance(data, (list, tuple)):
        data = _unwrap(data)
    want = np_dtype(dtype)
    arr = np.array(data, dtype=want, order="C")
    if want is None:
        # an array (or tensor) keeps its floating dtype, as in PyTorch; Python numbers take the default
        keeps = isinstance(data, np.ndarray | np.generic) and arr.dtype in (float64, float32)
        if arr.dtype.kind == "f":
            arr = arr if keeps else arr.astype(float64, copy=False)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(int64, copy=False)
        elif arr.dtype.kind not in "b":
            raise TypeError(f"cannot make a tensor from {type(data).__name__} values")
    return _leaf(arr, requires_grad)


def _unwrap(data: Any) -> Any:
    """Lists may hold 0-d/1-d tensors (`tensor([a, b])`): take their values."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        return [_unwrap(d) for d in data]
    return data


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """`data` as a tensor, without copying a tensor that already has the dtype."""
    if isinstance(data, Tensor) and (dtype is None or np_dtype(dtype) == data._data.dtype):
        return data
    return tensor(data, dtype=dtype)


def _filled(size: tuple, value: Any, dtype: Any, requires_grad: bool) -> Tensor:
    return _leaf(np.full(_size(size), value, dtype=np_dtype(dtype) or float64), requires_grad)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given size."""
    return _filled(size, 0, dtype, requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    return _filled(size, 1, dtype, requires_grad)


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size (gradcalc fills it with zeros)."""
    return _filled(size, 0, dtype, requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with `fill_value`."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None and isinstance(fill_value, bool):
        dtype = "bool"
    elif dtype is None and isinstance(fill_value, int):
        dtype = "int64"
    return _filled((size,), fill_value, dtype, requires_grad)


def zeros_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros with `t`'s shape and dtype."""
    return _leaf(np.zeros_like(t._data, dtype=np_dtype(dtype)), requires_grad)


def ones_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones with `t`'s shape and dtype."""
    return _leaf(np.ones_like(t._data, dtype=np_dtype(dtype)), requires_grad)


def full_like(t: Tensor, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere, with `t`'s shape and dtype."""
    return _leaf(np.full_like(t._data, fill_value, dtype=np_dtype(dtype)), requires_grad)


def eye(n: Any, m: Any = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """The identity matrix (n×n, or n×m)."""
    rows, cols = _size((n, m if m is not None else n))
    return _leaf(np.eye(rows, cols, dtype=np_dtype(dtype) or float64), requires_grad)


def _number(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from `start` (default 0) up to but excluding `end`, `step` apart (int64 for whole-number
    arguments, as in PyTorch)."""
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("arange: step must not be zero")
    ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, end, step))
    want = np_dtype(dtype) or (int64 if ints else float64)
    count = max(0, int(np.ceil((end - start) / step)))
    return _leaf((start + step * np.arange(count)).astype(want), requires_grad)


def linspace(start: Any, end: Any, steps: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`, both included."""
    n = _size((steps,))[0]
    return _leaf(np.linspace(_number(start), _number(end), n, dtype=np_dtype(dtype) or float64), requires_grad)


def manual_seed(seed: Any) -> None:
    """Seed the random generator of `rand`/`randn` (gradcalc's stream, not PyTorch's)."""
    global _rng
    with _rng_lock:
        _rng = np.random.default_rng(int(_number(seed)))


seed = manual_seed


def rand(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform random values in [0, 1)."""
    with _rng_lock:
        data = _generator().random(_size(size))
    return _leaf(np.asarray(data, dtype=np_dtype(dtype) or float64), requires_grad)


def randn(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal random values."""
    with _rng_lock:
        data = _generator().standard_normal(_size(size))
    return _leaf(np.asarray(data, dtype=np_dtype(dtype) or float64), requires_grad)


FUNCTIONS = {
    "tensor": tensor, "as_tensor": as_tensor, "zeros": zeros, "ones": ones, "empty": empty, "full": full,
    "zeros_like": zeros_like, "ones_like": ones_like, "full_like": full_like, "eye": eye, "arange": arange,
    "linspace": linspace, "manual_seed": manual_seed, "rand": rand, "randn": randn,
}
METHODS: dict = {}
