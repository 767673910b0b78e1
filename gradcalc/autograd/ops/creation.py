"""Constructors: `tensor`, `zeros`, `ones`, `full`, `eye`, `arange`, `linspace`, `*_like`; the default dtype
(`get_default_dtype`, `set_default_dtype`); PyTorch's legacy constructors (`Tensor(2, 3)`, `FloatTensor([1, 2])`).

Every constructor takes `dtype=` and `requires_grad=`; results are leaves. Floating values take the default
dtype (defaults.py: float32 in Python, as PyTorch's; float64 in the language's sessions); `tensor` of Python
ints or bools keeps int64/bool, and of an array or tensor its dtype, as PyTorch does. The random factories are
in random.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..defaults import default_float, set_process_default
from ..devices import check_device
from ..tensor import DType, Size, Tensor, float32, float64, int64


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


def _size(size: tuple, name: str = "zeros") -> tuple[int, ...]:
    """The sizes given as varargs (`zeros(2, 3)`) or as one sequence (`zeros((2, 3))`, `zeros(x.shape)`),
    as ints; PyTorch's errors for a fractional or a negative one."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for n in size:
        if isinstance(n, Tensor):
            n = n.item()
        if isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating)) or (
                isinstance(n, (float, np.floating)) and not float(n).is_integer()):
            kind = type(n).__name__
            if len(size) == 1:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not {kind}")
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {len(out) + 1} with "
                            f'error "type must be tuple of ints,but got {kind}"')
        out.append(int(n))
    for n in out:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {out}")
    return tuple(out)


def get_default_dtype() -> DType:
    """The default floating dtype: what Python floats and the float factories make (float32 when gradcalc is
    imported, as in PyTorch; float64 in the language's sessions)."""
    return DType.of(default_float())


def set_default_dtype(d: Any) -> None:
    """Make `d` (`float32` or `float64`) the default floating dtype of the process, as
    `torch.set_default_dtype`: Python floats, `tensor([1.5])`, `zeros`, `rand`, ... and integral inputs
    promoted to floating take it. Tensors already made keep their dtype."""
    if not isinstance(d, DType):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if d.np not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    set_process_default(d.np)


def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (a number, nested lists, an array or a tensor). Python
    floats take the default dtype; arrays and tensors keep theirs."""
    if isinstance(data, Tensor):
        warnings.warn(
            "tensor(t) of a tensor copies it; use t.clone().detach() to say so explicitly",
            UserWarning,
            stacklevel=2,
        )
        data = data._data
    typed = isinstance(data, np.ndarray | np.generic)  # its floating dtype is kept
    if isinstance(data, (list, tuple)):
        found: list[bool] = []
        data = _unwrap(data, found)
        typed = bool(found)
    want = np_dtype(dtype)
    arr = np.array(data, dtype=want, order="C")
    if want is None:
        if arr.dtype.kind == "f":
            if not (typed and arr.dtype in (float64, float32)):
                arr = arr.astype(default_float(), copy=False)
        elif arr.dtype.kind in "iu":
            if not typed:  # Python ints; an array keeps its integer dtype
                arr = arr.astype(int64, copy=False)
        elif arr.dtype.kind not in "b":
            raise TypeError(f"cannot make a tensor from {type(data).__name__} values")
    return _leaf(arr, requires_grad)


def _unwrap(data: Any, found: list[bool]) -> Any:
    """Lists may hold 0-d/1-d tensors (`tensor([a, b])`): take their values (noting, in `found`, that an
    element had a dtype of its own)."""
    if isinstance(data, Tensor):
        found.append(True)
        return data._data
    if isinstance(data, np.ndarray | np.generic):
        found.append(True)
        return data
    if isinstance(data, (list, tuple)):
        return [_unwrap(d, found) for d in data]
    return data


def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """`data` as a tensor, without copying a tensor that already has the dtype."""
    if isinstance(data, Tensor) and (dtype is None or np_dtype(dtype) == data._data.dtype):
        return data
    return tensor(data, dtype=dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing the array's memory and dtype (changes to one show in the other)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype.kind not in "biuf":
        raise TypeError(f"can't convert np.ndarray of type numpy.{ndarray.dtype.name}. The only supported types "
                        "are: float64, float32, int64, int32, uint8, and bool.")
    return Tensor._make(ndarray, False, None)


def empty_like(t: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor with `t`'s shape and dtype (uninitialised in PyTorch, zeros here)."""
    return _leaf(np.zeros_like(t._data, dtype=np_dtype(dtype)), requires_grad)


def logspace(start: Any, end: Any, steps: Any, base: float = 10.0, dtype: Any = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` values from base**start to base**end, evenly spaced in the exponent."""
    n = _size((steps,), "logspace")[0]
    want = np_dtype(dtype) or default_float()
    return _leaf(np.logspace(_number(start), _number(end), n, base=base).astype(want, copy=False), requires_grad)


def _filled(size: tuple, value: Any, dtype: Any, requires_grad: bool, name: str) -> Tensor:
    return _leaf(np.full(_size(size, name), value, dtype=np_dtype(dtype) or default_float()), requires_grad)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of the given size."""
    return _filled(size, 0, dtype, requires_grad, "zeros")


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones of the given size."""
    return _filled(size, 1, dtype, requires_grad, "ones")


def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size (gradcalc fills it with zeros)."""
    return _filled(size, 0, dtype, requires_grad, "empty")


def full(size: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of the given size filled with `fill_value`."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None and isinstance(fill_value, bool):
        dtype = "bool"
    elif dtype is None and isinstance(fill_value, int):
        dtype = "int64"
    return _filled((size,), fill_value, dtype, requires_grad, "full")


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
    rows, cols = _size((n, m if m is not None else n), "eye")
    return _leaf(np.eye(rows, cols, dtype=np_dtype(dtype) or default_float()), requires_grad)


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
    want = np_dtype(dtype) or (int64 if ints else default_float())
    count = max(0, int(np.ceil((end - start) / step)))
    return _leaf((start + step * np.arange(count)).astype(want), requires_grad)


def linspace(start: Any, end: Any, steps: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`, both included."""
    n = _size((steps,), "linspace")[0]
    want = np_dtype(dtype) or default_float()
    return _leaf(np.linspace(_number(start), _number(end), n).astype(want, copy=False), requires_grad)


# -- PyTorch's legacy constructors -------------------------------------------------------------------


def legacy_new(dtype: np.dtype | None, name: str, args: tuple, kwargs: dict) -> Tensor:
    """What `Tensor(...)` (dtype None: the default dtype) or `FloatTensor(...)`/`DoubleTensor(...)`/
    `LongTensor(...)` (`name`) make, with PyTorch's meaning: sizes (`Tensor(40)`, `Tensor(2, 3)`,
    `Tensor(x.shape)`) make a tensor of that shape (uninitialised in PyTorch, zeros here); a sequence
    (`Tensor([1, 2])`) is data, converted to the dtype; no argument, an empty tensor; a tensor, itself."""
    check_device(kwargs.pop("device", None))
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got an unexpected keyword "
                        f"argument {next(iter(kwargs))!r}: {name}(*sizes) or {name}(data) takes no other")
    want = dtype if dtype is not None else default_float()
    if not args:
        return Tensor._make(np.zeros(0, dtype=want), False, None)
    if len(args) == 1 and isinstance(args[0], Tensor):
        t = args[0]
        if dtype is not None and t._data.dtype != dtype:
            raise TypeError(f"expected {name} of dtype {dtype.name}, but got a tensor of dtype "
                            f"{t._data.dtype.name}: convert it with .to({dtype.name})")
        return t
    sizes = args[0] if len(args) == 1 and isinstance(args[0], Size) else args
    if all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in sizes):
        return Tensor._make(np.zeros(_size(tuple(sizes), name), dtype=want), False, None)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (list, tuple, np.ndarray)):
            found: list[bool] = []
            try:
                arr = np.array(_unwrap(data, found), dtype=want)
            except ValueError as exc:
                raise ValueError(f"{name}(data): the data must be a rectangular nested list of numbers "
                                 f"({exc})") from None
            return Tensor._make(arr, False, None)
        if isinstance(data, str):
            raise TypeError("new(): invalid data type 'str'")
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of: "
                    f"{name}(*sizes: int) or {name}(data: sequence)")


class _LegacyType(type):
    """The metaclass of `FloatTensor` and its kin: calling one constructs (`legacy_new`), and
    `isinstance(t, FloatTensor)` holds for the tensors of its dtype, as in PyTorch."""

    dtype: DType

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[override]
        return legacy_new(cls.dtype.np, cls.__name__, args, kwargs)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj._data.dtype == cls.dtype.np

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"



Tensor._legacy_new = staticmethod(legacy_new)  # Tensor(...) calls it (tensor.py)

def _legacy_class(name: str, dtype: np.dtype) -> type:
    doc = (f"PyTorch's legacy constructor of {dtype.name} tensors: `{name}(2, 3)` is a tensor of that shape "
           f"(zeros), `{name}([1, 2])` one holding that data.")
    return _LegacyType(name, (), {"dtype": DType.of(dtype), "__doc__": doc, "__module__": "gradcalc"})


FloatTensor = _legacy_class("FloatTensor", float32)
DoubleTensor = _legacy_class("DoubleTensor", float64)
LongTensor = _legacy_class("LongTensor", int64)
BoolTensor = _legacy_class("BoolTensor", np.dtype(bool))


FUNCTIONS = {
    "tensor": tensor, "as_tensor": as_tensor, "zeros": zeros, "ones": ones, "empty": empty, "full": full,
    "zeros_like": zeros_like, "ones_like": ones_like, "full_like": full_like, "eye": eye, "arange": arange,
    "linspace": linspace, "logspace": logspace, "empty_like": empty_like,
}
# gradcalc.<name> in Python only: the language's default dtype is float64 for good, and it has `tensor`
PYTHON_ONLY = {
    "get_default_dtype": get_default_dtype, "set_default_dtype": set_default_dtype, "from_numpy": from_numpy,
    "FloatTensor": FloatTensor, "DoubleTensor": DoubleTensor, "LongTensor": LongTensor, "BoolTensor": BoolTensor,
}
METHODS: dict = {}
