"""Indexing: `x[index]` and `x[index] = value`, with PyTorch's meaning and PyTorch's graphs.

PyTorch reads an index left to right. Integers, slices and `None` are views taken one after another
(`select`, `slice`, `unsqueeze`: SelectBackward0, SliceBackward0, UnsqueezeBackward0 chained), and
`...` stands for the dimensions no other item names. Integer tensors, lists and boolean masks are
"advanced" indices, applied last, all together, to the view (one IndexBackward0; the result is a copy).
This differs from NumPy where an integer sits among advanced indices: `x[0, :, [1, 2]]` has shape (4, 2)
for x of shape (3, 4, 5) in PyTorch, (2, 4) in NumPy. So an index is first turned into a `_Plan`: the
views to take (for the graph), the same views as one NumPy basic index (for the arithmetic), and the
advanced part as a NumPy index of the view, which NumPy and PyTorch read alike.

`x[index] = value` is an in-place operation (`inplace.apply_inplace`: version bump, the leaf error, the
graph rewritten). Its node is PyTorch's `CopySlices` when a view was taken, `IndexPutBackward0` when the
index is advanced only; writing the whole tensor is `fill_` (a number or a 0-d tensor) or `copy_`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import grad_mode, spec
from .. import saved as SV
from ..grad_mode import state
from ..node import Node
from ..tensor import Tensor
from . import inplace as I
from . import shape as S
from . import slicing as SL
from .core import needs, record, result
from .sums import sum_to

_INT64 = np.dtype("int64")


class _Plan:
    """Where an index points: `steps` are the views PyTorch takes, in order (kind, dim, argument);
    `basic` the same views as one NumPy index of the original array (None when there are none);
    `adv` the advanced index of that view, as NumPy reads it (None when there is none)."""

    __slots__ = ("steps", "basic", "adv")

    def __init__(self, steps: list[tuple], basic: tuple | None, adv: tuple | None) -> None:
        self.steps, self.basic, self.adv = steps, basic, adv

    def locate(self, data: np.ndarray) -> np.ndarray:
        """The view of `data` the basic part points at."""
        return data if self.basic is None else data[self.basic]

    def take(self, data: np.ndarray) -> np.ndarray:
        """The indexed elements of `data` (a view without an advanced part, a copy with one)."""
        view = self.locate(data)
        return view if self.adv is None else view[self.adv]

    def put(self, data: np.ndarray, value: Any) -> None:
        """Write `value` (broadcast) at the indexed elements of `data`, in place."""
        view = self.locate(data)
        try:
            if self.adv is None:
                view[...] = value
            else:
                view[self.adv] = value
        except ValueError:
            target = view.shape if self.adv is None else view[self.adv].shape
            raise RuntimeError(
                f"cannot assign a value of shape {list(np.shape(value))} to the indexed elements, of shape "
                f"{list(target)}: the value must broadcast to them"
            ) from None


# -- reading an index ---------------------------------------------------------------------------------------
def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _sequence_as_tuple(index: list) -> bool:
    """PyTorch (after NumPy) reads a short list holding slices, `None`, `...`, lists or tensors as a tuple."""
    if len(index) >= 32:
        return False
    return any(isinstance(i, (Tensor, list, tuple, slice)) or i is None or i is Ellipsis for i in index)


def _array(item: Any) -> np.ndarray:
    """An advanced index as a NumPy int64 or bool array; anything else is an IndexError, as in PyTorch."""
    # a tensor's array is copied: a later in-place change of the index must not move a saved gradient
    arr = np.array(item._data) if isinstance(item, Tensor) else np.asarray(item)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(_INT64, copy=False)
    if arr.size == 0 and not isinstance(item, Tensor):
        return arr.astype(_INT64)  # `x[[]]`: an empty list indexes nothing
    raise IndexError(f"tensors used as indices must hold integers or booleans, not {arr.dtype}")


def _items(index: Any) -> tuple[tuple, bool]:
    """The index as a tuple of items, and whether it was a single item (not a tuple)."""
    if isinstance(index, tuple):
        return index, False
    if isinstance(index, list) and _sequence_as_tuple(index):
        warnings.warn(
            "indexing with a list that holds slices, lists, tensors, None or ... reads it as a tuple of "
            "indices, which is deprecated: write x[tuple(seq)] for that, or x[tensor(seq)] to index with it",
            UserWarning,
            stacklevel=4,  # the user's line: past _items, _plan and getitem/setitem
        )
        return tuple(index), False
    return (index,), True


def _plan(shape: tuple[int, ...], index: Any, reading: bool) -> _Plan:
    """Follow PyTorch's reading of `index` on a tensor of `shape`. `reading`: for `x[index]`, where a
    lone `x[:]` is still a slice (for `x[:] = v` and inside a tuple, a slice of everything is skipped)."""
    items, single = _items(index)
    # how many dimensions the items consume, to know how many `...` stands for
    kinds = []
    specified = 0
    for item in items:
        if item is None or item is Ellipsis or isinstance(item, (bool, np.bool_)):
            kind = item if item is None or item is Ellipsis else "bool"
        elif _is_int(item):
            kind = "int"
        elif isinstance(item, slice):
            kind = "slice"
        elif isinstance(item, Tensor) and item._data.ndim == 0 and item._data.dtype.kind in "iu":
            kind, item = "int", int(item._data)
        elif isinstance(item, Tensor) and item._data.ndim == 0 and item._data.dtype.kind == "b":
            kind, item = "bool", bool(item._data)
        elif isinstance(item, (Tensor, list, tuple, np.ndarray)):
            kind, item = "array", _array(item)
        elif isinstance(item, range):  # PyTorch reads a range as the list of its integers
            kind, item = "array", np.arange(item.start, item.stop, item.step, dtype=np.int64)
        elif isinstance(item, str):  # PyTorch tries to read a string as a sequence of indices
            raise TypeError("a string cannot be an index")
        else:
            raise IndexError(
                "an index can be an integer, a slice, None, ..., a list, or an integer or boolean tensor; "
                f"not a {type(item).__name__}"
            )
        kinds.append((kind, item))
        if kind in ("int", "slice"):
            specified += 1
        elif kind == "array":
            specified += item.ndim if item.dtype.kind == "b" else 1
    ndim = len(shape)
    if specified > ndim:
        raise IndexError(f"too many indices: the tensor has {ndim} dimensions, the index names {specified}")

    sizes = list(shape)  # the shape of the view taken so far
    steps: list[tuple] = []
    basic: list[Any] = []
    adv: list[Any] = []  # the advanced index of the view: slices, and arrays at their dimensions
    dim = 0
    consumed = 0  # dimensions of the original tensor the basic index has covered
    for kind, item in kinds:
        if kind is None:
            steps.append(("unsqueeze", dim))
            basic.append(None)
            sizes.insert(dim, 1)
            dim += 1
        elif kind is Ellipsis:  # PyTorch lets a second `...` stand for as many dimensions again
            skip = ndim - specified
            basic.extend([slice(None)] * min(skip, ndim - consumed))
            consumed += skip
            dim += skip
        elif kind == "int":
            if dim >= len(sizes):
                raise IndexError(f"index {item} is past the last dimension of the tensor")
            size = sizes[dim]
            i = int(item)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of range for dimension {dim} of size {size}")
            steps.append(("select", dim, i % size))
            basic.append(i % size)
            consumed += 1
            del sizes[dim]
        elif kind == "slice":
            if item.step is not None and int(item.step) <= 0:
                raise ValueError("slices with a step of 0 or less are not supported; use flip for reversal")
            if dim >= len(sizes):
                raise IndexError("a slice is past the last dimension of the tensor")
            size = sizes[dim]
            start, stop, step = item.indices(size)
            stop = max(stop, start)
            consumed += 1
            raw_start = 0 if item.start is None else int(item.start)
            if raw_start == 0 and stop == size and step == 1 and not (reading and single):
                basic.append(slice(None))  # everything: PyTorch takes no view
            else:
                steps.append(("slice", dim, (start, stop, step)))
                basic.append(slice(start, stop, step))
                sizes[dim] = len(range(start, stop, step))
            dim += 1
        elif kind == "bool":  # True adds a dimension of size 1, False one of size 0
            steps.append(("unsqueeze", dim))
            basic.append(None)
            sizes.insert(dim, 1)
            adv.extend([slice(None)] * (dim - _consumed(adv)))
            adv.append(np.zeros(1 if item else 0, dtype=_INT64))
            dim += 1
        else:
            used = item.ndim if item.dtype.kind == "b" else 1
            adv.extend([slice(None)] * (dim - _consumed(adv)))
            adv.append(item)
            basic.extend([slice(None)] * used)
            consumed += used
            dim += used
    return _Plan(
        steps,
        tuple(basic) + (Ellipsis,) if steps else None,  # the `...` keeps a 0-d result a view, not a scalar
        tuple(adv) if adv else None,
    )


def _consumed(adv: list) -> int:
    """How many dimensions of the view the advanced index built so far covers."""
    return sum(a.ndim if isinstance(a, np.ndarray) and a.dtype.kind == "b" else 1 for a in adv)


def _take_views(x: Tensor, plan: _Plan) -> Tensor:
    """The basic part of `plan`, as the chain of views PyTorch records."""
    for step in plan.steps:
        kind, dim, *arg = step
        if kind == "select":
            x = SL.select(x, dim, arg[0])
        elif kind == "slice":
            x = SL.slice_dim(x, dim, *arg[0])
        else:
            x = S.unsqueeze(x, dim)
    return x


def _gather(x: Tensor, plan: _Plan) -> Tensor:
    """The elements `plan` points at, recorded (views, then one IndexBackward0)."""
    x = _take_views(x, plan)
    return index(x, plan.adv) if plan.adv is not None else x


# -- x[index] ------------------------------------------------------------------------------------------------
@spec.op("__getitem__", vmap=spec.rule("getitem_rule"), top_level=False,
         sample=spec.Sample(((4, 3),), lambda L, a: a[1:, 0] + a[[0, 2, 0], 1] + a[a[:, 2] > 0].sum()
                            + a[..., None][0, 1, 0] + a[...][2]))
def getitem(x: Tensor, idx: Any) -> Tensor:
    """`x[idx]`: a view for integers, slices, None and `...`; a copy when an advanced index is involved."""
    if _is_int(idx):  # the most common case, straight to its view
        return SL.select(x, 0, idx) if x._data.ndim else _zero_dim_index()
    plan = _plan(x._data.shape, idx, reading=True)
    # nothing to record (and no tangent to carry): one NumPy index
    if not (x._requires_grad and state.grad_enabled) and not (
            grad_mode.forward_seen and grad_mode.forward_ad.carries(x)):
        data = plan.take(x._data)
        if plan.adv is not None:
            return Tensor._make(data, False, None)
        return S._view(data if plan.steps else data.view(), x, None)
    if not plan.steps and plan.adv is None:
        return SL.alias(x)  # `x[...]`, `x[()]`: a new view of everything
    return _gather(x, plan)


def _zero_dim_index() -> Tensor:
    raise IndexError("a 0-d tensor cannot be indexed with an integer: use x.item(), or x[...] / x[None]")


def _indices(node: Node) -> tuple:
    """The advanced index as PyTorch's `indices`: a tensor per indexed dimension (None for a slice)."""
    return tuple(None if isinstance(i, slice) else Tensor._make(np.asarray(i), False, None) for i in node.indices)


@spec.node(
    formula={"self": "index_backward(grad.new_zeros(self.sizes()), indices, grad)"},
    saved={"indices": SV.Spec(_indices, False), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: index(tangents[0], node.indices), tangent="self_t[indices]",
)
class IndexBackward0(Node):
    """Advanced indexing: the gradient added back at the indexed places (repeats add up)."""

    __slots__ = ("in_shape", "indices")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        if type(g) is Tensor:
            return (index_put_zeros(g, self.indices, self.in_shape),)
        return (_scatter_add(g, self.indices, self.in_shape),)


def _scatter_add(g: np.ndarray, indices: tuple, shape: tuple[int, ...]) -> np.ndarray:
    out = np.zeros(shape, dtype=g.dtype)
    if all(not isinstance(i, np.ndarray) or i.dtype.kind == "b" for i in indices):
        out[indices] = g  # masks and slices never repeat a place: plain assignment
    else:
        np.add.at(out, indices, g)
    return out


def index(x: Tensor, indices: tuple) -> Tensor:
    """`x[indices]` for a NumPy advanced index (a copy), recorded as IndexBackward0."""
    data = x._data[indices]
    node = record(IndexBackward0, x)
    if node is not None:
        node.in_shape, node.indices = x._data.shape, indices
    return result(data, node)


@spec.node(
    formula={"values": "grad.index(indices)"},
    saved={"accumulate": SV.const(True), "indices": SV.Spec(_indices, False)},
    jvp=lambda node, inputs, out, tangents: index_put_zeros(tangents[1], node.indices, out._data.shape),
    tangent="zeros.index_put_(indices, values_t, accumulate=true)",
)
class IndexPutImplBackward0(Node):
    """The adjoint of advanced indexing (its double backward): indexing again."""

    __slots__ = ("indices",)

    def apply(self, g: Tensor) -> tuple:  # edges as PyTorch's _index_put_impl_: the zeros (none), the values
        return (None, index(g, self.indices))


def index_put_zeros(g: Tensor, indices: tuple, shape: tuple[int, ...]) -> Tensor:
    """Zeros of `shape` with `g` added at `indices` (PyTorch's `_index_put_impl_` with accumulate)."""
    node = record(IndexPutImplBackward0, None, g)
    if node is not None:
        node.indices = indices
    return result(_scatter_add(g._data, indices, shape), node)


# -- x[index] = value ----------------------------------------------------------------------------------------
def _write_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """The old tensor's tangent with the value's written at the same places (zeros where there is none)."""
    tt, tv = tangents
    if tt is None:
        tt = Tensor._make(np.zeros(out._data.shape, out._data.dtype), False, None)
    return write(tt, node.plan, 0.0 if tv is None else tv, type(node))


@spec.base
class _Write(Node):
    """Backward of writing `value` at `plan`'s places: the old tensor gets the gradient with those places
    zeroed (what was there is gone), `value` the gradient of those places, summed over its broadcasting."""

    __slots__ = ("plan", "value_shape", "stripped_shape")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        ga = gv = None
        if needs(self, 0):
            if raw:
                ga = g.copy()
                self.plan.put(ga, 0)
            else:
                ga = write(g, self.plan, 0.0, type(self))
        if needs(self, 1):
            gv = sum_to(self.plan.take(g) if raw else _gather(g, self.plan), self.stripped_shape)
            if self.stripped_shape != self.value_shape:
                gv = gv.reshape(self.value_shape) if raw else S.reshape(gv, self.value_shape)
        return (ga, gv)


@spec.node(formula={"self": "grad with the written places zeroed", "src": "grad[written].sum_to(src.sizes())"},
           jvp=_write_jvp, tangent="self_t with src_t written at the places")
class CopySlices(_Write):
    """Writing through a view (an index with integers, slices or None)."""

    __slots__ = ()


@spec.node(
    formula={"self": "grad.index_put(indices, zeros_like(values), accumulate)",
             "values": "grad.index(indices).sum_to(values.sizes())"},
    saved={"accumulate": SV.const(False), "indices": SV.Spec(
        lambda n: tuple(None if isinstance(i, slice) else Tensor._make(np.asarray(i), False, None)
                        for i in n.plan.adv), False)},
    jvp=_write_jvp, tangent="self_t.index_put(indices, values_t, accumulate)",
)
class IndexPutBackward0(_Write):
    """Writing at an advanced index only (lists, integer tensors, masks)."""

    __slots__ = ()


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch drops a value's leading dimensions of size 1 before broadcasting it into the target."""
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return shape[k:]


def write(t: Tensor, plan: _Plan, value: Any, cls: type[_Write]) -> Tensor:
    """`t` with `value` written at `plan`'s places, out of place (the in-place write's `compute`)."""
    data = t._data.copy()
    is_tensor = isinstance(value, Tensor)
    v = value._data if is_tensor else value
    stripped = _strip_leading_ones(v.shape) if is_tensor else ()
    if is_tensor and stripped != v.shape:
        v = v.reshape(stripped)
    plan.put(data, v)
    node = record(cls, t, value)
    if node is not None:
        node.plan = plan
        node.value_shape = value._data.shape if is_tensor else ()
        node.stripped_shape = stripped
    return result(data, node)


def _check_value(value: Any) -> None:
    if isinstance(value, (Tensor, bool, int, float, np.number, np.bool_)):
        return
    raise TypeError(f"can only assign a number or a tensor to indexed elements, not a {type(value).__name__}")


def setitem(self: Tensor, idx: Any, value: Any) -> None:
    """`x[idx] = value` (a number, or a tensor broadcast to the indexed elements), in place."""
    _check_value(value)
    plan = _plan(self._data.shape, idx, reading=False)
    if not plan.steps and plan.adv is None:  # the whole tensor: PyTorch's fill_ or copy_
        if isinstance(value, Tensor) and value._data.ndim:
            I.copy_(self, value)
        else:
            fill = value if isinstance(value, Tensor) else Tensor._make(np.asarray(value), False, None)
            I.fill_(self, fill)  # a number too is a 0-d tensor here: PyTorch records FillBackward3
        return
    if plan.adv is not None and isinstance(value, Tensor) and value._data.dtype != self._data.dtype:
        raise RuntimeError(
            f"writing at a list, tensor or mask index needs a value of the tensor's dtype "
            f"({self._data.dtype}), not {value._data.dtype}: convert it first, e.g. with .to(x.dtype)"
        )
    # the elements written are a view, which may share memory with the value's, not partly; at integer
    # indices (PyTorch's index_put_), no memory at all; under a mask, a single value is read once (masked_fill_)
    if plan.adv is None:
        I.check_overlap(plan.locate(self._data), value, "setitem")
    elif not (isinstance(value, Tensor) and not value._data.ndim
              and all(isinstance(a, np.ndarray) and a.dtype.kind == "b" for a in plan.adv)):
        I.check_overlap(plan.locate(self._data), value, "setitem", full=True)
    cls = CopySlices if plan.steps else IndexPutBackward0
    I.apply_inplace(self, lambda t: write(t, plan, value, cls), "setitem", value, overlap=False)


METHODS = {"__setitem__": setitem}
