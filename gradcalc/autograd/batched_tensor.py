"""Batched tensors: what the operations of a function mapped by vmap run on, as functorch's BatchedTensor.

A `BatchedTensor` stands for one sample of a batch: its shape, dtype and every operation on it are the
sample's, while it holds the whole batch, `value` (a plain tensor, or a batched tensor of an outer vmap),
with the batch along dimension `bdim` of `value`, at vmap level `level`. Levels nest: a function mapped by
two vmaps sees tensors batched at the inner level whose values are batched at the outer one, and an operation
meets the innermost level among its arguments first (batching.py's `dispatch`), whose rule's own operations
then meet the outer level, as functorch's interpreters and JAX's tracers peel their levels.

Autograd is below vmap, as in PyTorch: the graph is recorded on the plain tensors the rules compute with, so a
result that depends on a tensor from outside carries the batched operation's node (`MulBackward0`), and
inside the mapped function a batched tensor shows `requires_grad=False`, `grad_fn=None`, as PyTorch's does.
The engine never sees a batched tensor: one has no `_data` (reading it is an error that says so), and the
operations reach its batching rule through the dispatch point (spec.dispatching) before they read anything.

The levels open in a thread are `grad_mode.state.vmap`, a tuple of `Level`s (outermost first): random
operations read them for their `randomness=`, and a batched tensor of a level that is no longer open is an
error to compute with.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from . import spec
from .devices import CPU
from .grad_mode import BACKWARD_IN_TRANSFORM, state
from .reasons import worded
from .tensor import DType, Size, Tensor

__all__ = ["BatchedTensor", "Level", "batched", "is_batched", "levels", "pop_level", "push_level", "shape_of"]

_ids = itertools.count(1)
_count_lock = threading.Lock()


class Level:
    """One vmap call running: its level (larger inside), batch size and `randomness=`."""

    __slots__ = ("id", "size", "randomness", "depth")

    def __init__(self, id: int, size: int, randomness: str) -> None:  # noqa: A002 - the level's number
        self.id, self.size, self.randomness = id, size, randomness
        self.depth = id  # how many transforms are open with it, itself included: PyTorch's `lvl` (push_level)

    def __repr__(self) -> str:
        return f"<vmap level {self.id}: batch of {self.size}, randomness={self.randomness!r}>"


def levels() -> tuple[Level, ...]:
    """The vmap levels open in this thread, outermost first."""
    return state.vmap or ()


def push_level(size: int, randomness: str) -> Level:
    """Open a vmap level of batch size `size` in this thread (`pop_level` closes it)."""
    level = Level(next(_ids), size, randomness)
    state.vmap = (*levels(), level)
    state.transforms += 1
    level.depth = state.transforms
    with _count_lock:
        spec.VMAP[0] += 1
    return level


def pop_level(level: Level) -> None:
    """Close `level` (the innermost one open in this thread)."""
    open_now = levels()
    state.vmap = tuple(lv for lv in open_now if lv is not level) or None
    state.transforms -= 1
    with _count_lock:
        spec.VMAP[0] -= 1


def find_level(id: int) -> Level:  # noqa: A002
    """The open level `id` of this thread; an error for a batched tensor that outlived its vmap."""
    for level in reversed(levels()):
        if level.id == id:
            return level
    raise RuntimeError(
        "vmap: a batched tensor was used after the vmap call that made it returned (it escaped the mapped "
        "function, e.g. kept in a variable outside it); return it from the function instead")


_new = object.__new__


class BatchedTensor(Tensor):
    """One sample's view of a batch (see the module docstring). Made by vmap and by batching rules only."""

    __slots__ = ("_value", "_bdim", "_level", "_shape", "_dtype")

    @property  # type: ignore[override]
    def _data(self) -> Any:
        return SampleData(self._shape, self._dtype)

    # -- what a sample is ----------------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._shape)
        n = len(self._shape)
        if not -max(n, 1) <= dim < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {dim})")
        return self._shape[dim] if n else 1

    @property
    def dtype(self) -> DType:
        return DType.of(self._dtype)

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    def numel(self) -> int:
        n = 1
        for d in self._shape:
            n *= d
        return n

    nelement = numel

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def is_floating_point(self) -> bool:
        return self._dtype.kind == "f"

    def element_size(self) -> int:
        return int(self._dtype.itemsize)

    @property
    def device(self) -> Any:
        return CPU

    is_cpu = True
    is_cuda = False
    is_meta = False

    def is_inference(self) -> bool:
        return False

    # -- autograd is below vmap: a batched tensor shows none, as PyTorch's --------------------------------
    @property
    def requires_grad(self) -> bool:
        return False

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        raise RuntimeError("vmap: setting requires_grad on a tensor inside a function mapped by vmap is not "
                           "supported; differentiate with gradcalc.func.grad or vjp inside the mapped function")

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> None:
        return None

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise worded(BACKWARD_IN_TRANSFORM, BACKWARD_OURS)

    def retain_grad(self) -> None:
        raise RuntimeError("vmap: retain_grad() on a tensor inside a function mapped by vmap is not supported")

    def register_hook(self, hook: Any) -> Any:
        raise RuntimeError("vmap: register_hook() on a tensor inside a function mapped by vmap is not supported")

    @property
    def data(self) -> Any:
        raise worded("accessing `data` under vmap transform is not allowed", NO_READING)

    @property
    def _version(self) -> int:
        return self._value._version

    # -- values that depend on the sample: PyTorch's errors ---------------------------------------------------
    def item(self) -> Any:
        raise worded(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on "
            "a Tensor, please try to rewrite what you're doing with other operations. If error is occurring "
            "somewhere inside PyTorch internals, please file a bug report.",
            "a value of a tensor mapped by vmap was read as a number (.item(), or a conversion to a number): vmap "
            "runs the function once on all the samples together; compute with tensor operations instead")

    def __float__(self) -> float:
        return self.item()

    def __int__(self) -> int:
        return self.item()

    def __index__(self) -> int:
        return self.item()

    def __bool__(self) -> bool:
        raise worded(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
            "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .",
            "a tensor mapped by vmap decides an if, a while, an `and` or an `or`: vmap runs the function once on "
            "all the samples together, so it has no one truth value; use where(condition, a, b) instead")

    def tolist(self) -> Any:
        raise worded("Cannot access data pointer of Tensor that doesn't have storage", NO_READING)

    def numpy(self, *, force: bool = False) -> Any:
        raise worded("Cannot access data pointer of Tensor that doesn't have storage", NO_READING)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise worded("Cannot access data pointer of Tensor that doesn't have storage", NO_READING)

    def __iter__(self):  # type: ignore[no-untyped-def]
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __repr__(self) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        lvl = next((lv.depth for lv in levels() if lv.id == self._level), self._level)
        return f"BatchedTensor(lvl={lvl}, bdim={self._bdim}, value=\n    {inner}\n)"

    __str__ = __repr__

    def __format__(self, spec_: str) -> str:
        return repr(self)

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError("vmap: a batched tensor cannot be pickled or deep-copied")




BACKWARD_OURS = ("backward inside a function transform (func.grad, func.vmap, ...) is not allowed: the transform "
                 "differentiates; use func.grad or func.vjp, or call backward outside the transform")
NO_READING = ("the values of a tensor mapped by vmap can't be read inside the mapped function; return the tensor "
              "and read it after vmap")
NO_VALUES = (
    "vmap: an operation without batching support was given a batched tensor (a tensor inside a function mapped "
    "by vmap) and read its values; if it is gradcalc's own, that is a bug: please report it")


class SampleData:
    """What a batched tensor's `_data` is: one sample's shape and dtype, for code that reads only those (as it
    reads an array's); reading values from it is an error (an operation that has no batching support reached it
    without passing vmap's dispatch)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape, self.dtype = shape, dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(NO_VALUES)

    def _values(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(NO_VALUES)

    __array__ = __array_ufunc__ = __array_function__ = __getitem__ = __setitem__ = __iter__ = __len__ = _values
    __bool__ = __float__ = __int__ = __index__ = __neg__ = __abs__ = _values
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _values
    __pow__ = __rpow__ = __matmul__ = __rmatmul__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _values
    __hash__ = None  # type: ignore[assignment]


def batched(value: Tensor, bdim: int, level: int) -> BatchedTensor:
    """`value` (plain, or batched at an outer level) as batched at `level` along its dimension `bdim`."""
    t = _new(BatchedTensor)
    t._value, t._bdim, t._level = value, bdim, level
    if type(value) is BatchedTensor:
        shape, t._dtype = value._shape, value._dtype
    else:
        shape, t._dtype = value._data.shape, value._data.dtype
    t._shape = shape[:bdim] + shape[bdim + 1:]
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._output_nr = 0
    t._vc = None
    t._accumulator = None
    t._retains_grad = False
    t._inference = False
    return t


def is_batched(x: Any) -> bool:
    """Whether `x` is a batched tensor (of any level)."""
    return type(x) is BatchedTensor


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of `x` at the level being computed: a batched tensor's sample's, a tensor's, a number's ()."""
    if type(x) is BatchedTensor:
        return x._shape
    if isinstance(x, Tensor):
        return x._data.shape
    return np.shape(x) if isinstance(x, np.ndarray) else ()
