"""How the language's values become the engine's arguments, and how big a result may be.

The language's values are not quite Python's: a number literal passed to a built-in is a Python number until
the built-in says what it wants. Each parameter of a built-in has a kind (derived in builtins.py from the
engine's signature), and the kind says what its argument becomes:

- `T`  a tensor: a number or a list literal becomes a float64 tensor (`sin(2)`, `sum([1, 2])`);
- `L`  a tensor or a list/tuple of tensors (`cat([a, b])`, `grad(y, [a, b])`), each converted as `T`;
- `I`  an int or ints (dimensions, sizes): a whole float64 tensor or float becomes an int, a list or a
       1-d tensor a tuple of ints (`zeros([2, 3])`, `reshape(x, x.shape)`, `x[n]` with `n = 1`);
- `N`  a number: a 0-d tensor becomes a Python number (`clamp(x, max=inf)`, `full([2], pi)`);
- `D`  tensor data: list literals as Python lists of floats, whole numbers as floats (numbers are float64);
- `A`  anything: passed on, a list literal as a tensor;
- `F`  a function (a `def`, a `function`, or a built-in).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeAlias

from gradcalc import DType, Size, Tensor
from gradcalc.autograd import Node

from ..errors import ArgumentError
from .engine import engine
from .surfaces import surface_of


class RawList(list):
    """A list literal of numbers passed as an argument, before it is known what the callee wants:
    a tensor (most parameters), ints (sizes) or Python data (`tensor([1, 2], dtype=float32)`)."""

    __slots__ = ()


# ---------------------------------------------------------------------------------------------------
# Argument conversions


# numbers as floats, nested as the list literal that held them
Floats: TypeAlias = "float | list[Floats]"


def _floats(data: object) -> Floats:
    if isinstance(data, list):
        return [_floats(d) for d in data]
    return float(data)


def as_tensor(value: object) -> object:
    """`T`: numbers and list literals become float64 tensors; tensors and anything else pass."""
    kind = type(value)
    if kind is int or kind is float:
        return engine().tensor(float(value))
    if kind is RawList:
        return engine().tensor(_floats(value))
    return value


def as_tensors(value: object) -> object:
    """`L`: a tensor, or a list or tuple of them (a tuple stays a tuple: `hessian(f, (a, b))`)."""
    if isinstance(value, tuple):
        return tuple(as_tensor(v) for v in value)
    if isinstance(value, list) and type(value) is not RawList:
        return [as_tensor(v) for v in value]
    return as_tensor(value)


def whole(value: object, what: str = "a dimension or size") -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():
            raise ArgumentError(f"{what} must be a whole number, not {value!r}")
        return int(value)
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ArgumentError(f"{what} must be a number, not a tensor of shape {tuple(value.shape)}")
        return whole(value.item(), what)
    raise ArgumentError(f"{what} must be a whole number, not {describe(value)}")


def as_ints(value: object) -> str | tuple[int, ...] | int | None:
    """`I`: an int, or a tuple of ints for a list, tuple or 1-d tensor (a string, a padding's "same", as it is)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(whole(v) for v in value)
    if isinstance(value, Tensor) and value.ndim == 1:
        return tuple(whole(v) for v in value.tolist())
    if value is None:
        return None
    return whole(value)


def as_number(value: object) -> object:
    """`N`: a 0-d tensor becomes a Python number (a list literal a tensor)."""
    if type(value) is RawList:
        return as_tensor(value)
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        return value.item()
    return value


def as_data(value: object) -> object:
    """`D`: a list literal as Python floats; a whole Python number as a float (numbers are float64)."""
    if type(value) is RawList:
        return _floats(value)
    if type(value) is int:
        return float(value)
    return value


def as_any(value: object) -> object:
    """`A`: a list literal becomes a tensor; the rest passes unchanged."""
    if type(value) is RawList:
        return as_tensor(value)
    return value


def as_function(value: object) -> Callable[..., object]:
    if not callable(value) or isinstance(value, Tensor):
        raise ArgumentError(f"expected a function, not {describe(value)}")
    return value


CONVERT: dict[str, Callable[[object], object]] = {
    "T": as_tensor,
    "L": as_tensors,
    "I": as_ints,
    "N": as_number,
    "D": as_data,
    "A": as_any,
    "F": as_function,
}


def describe(value: object) -> str:
    """A value's kind in the language's words, for messages."""
    if isinstance(value, Tensor):
        dtype = value.dtype.name
        kind = "a " if dtype == "float64" else f"{'an' if dtype[0] in 'aeiou' else 'a'} {dtype} "
        return f"{kind}tensor of shape {tuple(value.shape)}"
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Size):
        return f"a shape {tuple(value)}"
    if isinstance(value, tuple):
        return f"a torch.return_types.{type(value).__name__}" if getattr(type(value), "__match_args__", None) else (
            "a tuple")
    if isinstance(value, RawList):
        return "a list of numbers"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Node):
        return f"a graph node <{value.name()}>"
    if isinstance(value, DType):
        return f"the dtype {value.name}"
    if isinstance(value, range):
        return "a range"
    if isinstance(value, slice):
        return "a slice"
    described = getattr(type(value), "described_as", None)  # the language's own values (built-ins, hooks...)
    if described is not None:
        return described if isinstance(described, str) else str(value.described_as)
    if isinstance(value, dict):
        return "a dict"
    surface = surface_of(value)
    if surface is not None:  # a module or an optimizer: "a Linear module", "an Adam optimizer"
        return surface.describe(value)
    if callable(value):
        name = getattr(value, "name", None)
        return f"the function {name}" if isinstance(name, str) else "a function"
    return "a value of another kind"


# ---------------------------------------------------------------------------------------------------
# Sizes, checked before anything is allocated


def _prod(dims: Iterable[object]) -> int:
    n = 1
    for d in dims:
        n *= max(int(d), 0)
    return n


def size_of_dims(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    dims = args[0] if len(args) == 1 and isinstance(args[0], tuple) else args
    return _prod(dims)


def size_of_full(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    size = args[0] if args else kwargs.get("size", ())
    return _prod(size if isinstance(size, tuple) else (size,))


def size_of_eye(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    n = args[0] if args else kwargs.get("n", 0)
    m = args[1] if len(args) > 1 else kwargs.get("m", n)
    return _prod((n, n if m is None else m))


def size_of_arange(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    nums = [float(a) for a in args]
    if len(nums) == 1:
        start, end, step = 0.0, nums[0], float(kwargs.get("step", 1))
    else:
        start, end = nums[0], nums[1]
        step = nums[2] if len(nums) > 2 else float(kwargs.get("step", 1))
    if step == 0 or not all(math.isfinite(v) for v in (start, end, step)):
        return 0  # the engine explains what is wrong
    return max(math.ceil((end - start) / step), 0)


def size_of_linspace(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    steps = args[2] if len(args) > 2 else kwargs.get("steps", 0)
    return int(steps) if isinstance(steps, (int, float)) else 0


def size_of_product(args: tuple[object, ...], kwargs: dict[str, object]) -> int:
    n = 1
    for a in args[:2]:
        if isinstance(a, Tensor):
            n *= a.numel()
    return n
