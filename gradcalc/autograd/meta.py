"""Meta tensors: a shape and a dtype, no data (PyTorch's `device='meta'`).

gradcalc makes them as far as PyTorch's model-ensembling code needs them: `copy.deepcopy(model).to('meta')`
gives a module whose parameters are meta tensors, which `func.functional_call` then replaces with real ones for
each call. A meta tensor's array is a `MetaArray`: a zero-strided view of one zero (no memory), which refuses
every computation (NumPy's ufuncs and functions) and every read of its values, with PyTorch's messages where
PyTorch refuses too. (PyTorch computes shapes on meta tensors; gradcalc does not: a computation on a meta tensor
is an error here, never zeros.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

MIXED = "Tensor on device meta is not on the expected device cpu!"


class MetaArray(np.ndarray):
    """The array of a meta tensor: a shape and a dtype; every computation and read of values refuses."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_refusal(inputs))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func in _SHAPE_ONLY:  # what asks for the shape alone
            return super().__array_function__(func, types, args, kwargs)
        raise RuntimeError(_refusal(args))

    def item(self, *args: Any) -> Any:  # type: ignore[override]
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")

    def tolist(self) -> Any:  # type: ignore[override]
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


_SHAPE_ONLY = {np.shape, np.ndim, np.size, np.result_type}


def _refusal(operands: Any) -> str:
    arrays = [a for a in operands if isinstance(a, np.ndarray)]
    if any(type(a) is np.ndarray for a in arrays):  # a meta tensor with a real one: the first one's device wins
        return MIXED if type(arrays[0]) is np.ndarray else "Tensor on device cpu is not on the expected device meta!"
    return ("gradcalc does not compute on meta tensors (they have a shape and no data): replace them first, "
            "as func.functional_call does")


def meta_array(shape: tuple[int, ...], dtype: np.dtype) -> MetaArray:
    """A meta array of `shape` and `dtype` (it takes no memory)."""
    return np.broadcast_to(np.zeros((), dtype=dtype), shape).view(MetaArray)


def is_meta(data: Any) -> bool:
    """Whether a tensor's array is a meta array."""
    return type(data) is MetaArray
