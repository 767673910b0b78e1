"""PyTorch's other spellings of operations gradcalc has: dtype conversions by name (`long()`, `int()`,
`bool()`, `type(...)`, `type_as`), `nelement`, `ndimension`, `element_size`, `is_floating_point`, `square`, the
`new_*` constructors (a new tensor with this one's dtype), and the keyword aliases PyTorch's argument parser
accepts everywhere: `axis=` for `dim=`, `keepdims=` for `keepdim=` (`with_aliases`, applied by ops/__init__.py
to the functions and methods that take `dim`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import spec
from ..tensor import DType, Tensor
from . import basic, creation

_TYPE_NAMES = {
    "float64": "DoubleTensor", "float32": "FloatTensor", "int64": "LongTensor", "int32": "IntTensor",
    "bool": "BoolTensor", "uint8": "ByteTensor",
}
_NAMED_TYPES = {f"torch.{v}": k for k, v in _TYPE_NAMES.items()}


def _dtype_of(x: Any) -> Any:
    """A dtype, a legacy type (`DoubleTensor`) or its name (`'torch.DoubleTensor'`) as a dtype."""
    if isinstance(x, str) and x in _NAMED_TYPES:
        return _NAMED_TYPES[x]
    legacy = getattr(x, "dtype", None)
    if isinstance(x, type) and isinstance(legacy, DType):
        return legacy
    return x


def type_(x: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """With no argument, the type's name (`'torch.FloatTensor'`); else `x` converted to `dtype` (a dtype, a
    legacy type such as `DoubleTensor`, or its name)."""
    if dtype is None:
        return "torch." + _TYPE_NAMES.get(x._data.dtype.name, x._data.dtype.name)
    return basic.to_dtype(x, _dtype_of(dtype))


def type_as(x: Tensor, other: Tensor) -> Tensor:
    """`x` converted to `other`'s dtype."""
    return basic.to_dtype(x, other._data.dtype)


def square(x: Tensor) -> Tensor:
    """x ** 2 (PyTorch computes it as that power: PowBackward0)."""
    return x**2


def _half(x: Tensor) -> Tensor:
    raise NotImplementedError("half(): gradcalc computes in float32 and float64 only, not float16; use .float()")


def numel(x: Tensor) -> int:
    """The number of elements."""
    return int(x._data.size)


def _new(x: Tensor, data: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(data, False, None)
    if requires_grad:
        t.requires_grad = True
    return t


def new_tensor(x: Tensor, data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf holding a copy of `data`, in this tensor's dtype unless `dtype` says otherwise."""
    if isinstance(data, Tensor):
        data = data._data
    want = creation.np_dtype(dtype) or x._data.dtype
    return _new(x, np.array(creation._unwrap(data, []) if isinstance(data, (list, tuple)) else data, dtype=want),
                requires_grad)


def _filled(x: Tensor, size: tuple, value: Any, dtype: Any, requires_grad: bool, name: str) -> Tensor:
    want = creation.np_dtype(dtype) or x._data.dtype
    return _new(x, np.full(creation._size(size, name), value, dtype=want), requires_grad)


def new_zeros(x: Tensor, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros of the given size, in this tensor's dtype."""
    return _filled(x, size, 0, dtype, requires_grad, "new_zeros")


def new_ones(x: Tensor, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones of the given size, in this tensor's dtype."""
    return _filled(x, size, 1, dtype, requires_grad, "new_ones")


def new_empty(x: Tensor, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size in this tensor's dtype (uninitialised in PyTorch, zeros here)."""
    return _filled(x, size, 0, dtype, requires_grad, "new_empty")


def new_full(x: Tensor, size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere, of the given size, in this tensor's dtype."""
    return _filled(x, (size,), fill_value, dtype, requires_grad, "new_full")


# -- keyword aliases ------------------------------------------------------------------------------------

ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# PyTorch's norm is written in Python and takes no alias
NO_ALIASES = frozenset({"norm"})


def _parameter_names(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names `fn` takes by keyword: read from its code object (`inspect.signature` for all ops at import
    would cost start-up a few milliseconds), else from its signature."""
    # a function made dispatching for vmap (spec.dispatching) takes what it wraps takes (a plain loop rather than
    # inspect.unwrap, whose bookkeeping costs start-up as much as the rest of this, for every operation)
    inner = getattr(fn, "__wrapped__", None)
    while inner is not None:
        fn, inner = inner, getattr(inner, "__wrapped__", None)
    code = getattr(fn, "__code__", None)
    if code is not None and not hasattr(fn, "__wrapped__"):
        return code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def takes_aliases(name: str, fn: Callable[..., Any]) -> bool:
    """Whether `fn` (installed as `name`) takes `dim` or `keepdim`, so that PyTorch accepts the aliases."""
    if name in NO_ALIASES:
        return False
    params = _parameter_names(fn)
    return "dim" in params or "keepdim" in params


def with_aliases(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` that also takes `axis=` for `dim=` and `keepdims=` for `keepdim=`, as PyTorch's functions do.
    Its signature (for `inspect`, and the language's `:help`) stays `fn`'s."""
    params = _parameter_names(fn)

    def spell(kwargs: dict) -> None:
        for alias, name in ALIASES.items():
            if alias in kwargs and alias not in params:
                if name in kwargs:
                    raise TypeError(f"{fn.__name__}() got multiple values for argument '{name}' (given as "
                                    f"'{name}' and '{alias}')")
                kwargs[name] = kwargs.pop(alias)

    op, raw = getattr(fn, "dispatch_op", None), spec.raw_of(fn)
    if op is not None and raw is not fn:  # a function spec.dispatching made: one wrapper does both (one frame)
        vmap_open = spec.VMAP

        @functools.wraps(fn)
        def dispatched(*args: Any, **kwargs: Any) -> Any:
            if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
                spell(kwargs)
            if vmap_open[0]:
                return spec.DISPATCH(op, args, kwargs)
            return raw(*args, **kwargs)

        dispatched.dispatch_op = op  # type: ignore[attr-defined]
        return dispatched

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs and ("axis" in kwargs or "keepdims" in kwargs):
            spell(kwargs)
        return fn(*args, **kwargs)

    return call


def wrapper_codes() -> set[Any]:
    """The code objects of the wrappers `with_aliases` makes (frames a warning's stacklevel skips)."""
    plain = with_aliases(lambda dim=None: dim)
    both = with_aliases(spec.dispatching(spec.Dispatched("", lambda dim=None: dim), lambda dim=None: dim))
    return {plain.__code__, both.__code__}


def _is_floating_point(x: Tensor) -> bool:
    return x._data.dtype.kind == "f"


METHODS = {
    "long": lambda x: basic.to_dtype(x, np.dtype(np.int64)),
    "int": lambda x: basic.to_dtype(x, np.dtype(np.int32)),
    "bool": lambda x: basic.to_dtype(x, np.dtype(np.bool_)),
    "half": _half,
    "type": type_,
    "type_as": type_as,
    "square": square,
    "nelement": numel,
    "ndimension": lambda x: x._data.ndim,
    "element_size": lambda x: int(x._data.itemsize),
    "is_floating_point": _is_floating_point,
    "new_tensor": new_tensor,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "new_full": new_full,
}
FUNCTIONS = {"square": square, "numel": numel, "is_floating_point": _is_floating_point}
