"""Gathering and scattering along a dimension by an index tensor: `gather`, `scatter`, `scatter_add`,
`index_select`, `take`, and the public `masked_fill` (its nodes are elementwise.py's, which formulas use).

Each backward formula is another of these operations, as in PyTorch's derivatives.yaml: gather's gradient is a
scatter_add into zeros, scatter_add's is a gather, scatter's a scatter of zeros and a gather, index_select's an
index_add into zeros. So a gradient recorded under create_graph is made of the same nodes as PyTorch's and can
be differentiated again. An index is copied when the operation runs: a later in-place change of the index
tensor cannot move a saved gradient.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor
from . import arithmetic as A
from . import elementwise as E
from . import indexing as I
from . import inplace as IP
from . import shape as S
from .core import broadcast_message, needs, record, result
from .reorder import index_add

_INT64 = np.dtype("int64")
# PyTorch's C++ names of dtypes, as its messages print them
_C_TYPE = {"float64": "double", "float32": "float", "int64": "long int", "int32": "int", "int16": "short int",
           "int8": "signed char", "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half"}


def _unsigned(dim: int) -> int:
    """A dim as PyTorch shows it saved: its int64 read back unsigned (-1 is 2**64 - 1)."""
    return int(dim) % 2**64


def _index_tensor(node: Node) -> Tensor:
    return Tensor._make(node.index, False, None)


def _int_index(index: Any, message: str) -> np.ndarray:
    """The index's values as an int64 array (a copy); an index of another dtype is PyTorch's RuntimeError."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{message.split('(')[0]}(): argument 'index' must be Tensor, not {type(index).__name__}")
    arr = index._data
    if arr.dtype.kind not in "iu":
        what = message.split("(")[0]
        raise worded(message, f"{what}: the index must hold integers (int64), not {arr.dtype}: make it with "
                     ".long() or dtype=int64")
    return np.array(arr, dtype=_INT64)


def _check_range(idx: np.ndarray, axis: int, size: int) -> None:
    """PyTorch's error for the first index outside [0, size) (gather and scatter take no negative index)."""
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.reshape(-1)[np.flatnonzero((idx.reshape(-1) < 0) | (idx.reshape(-1) >= size))[0]]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {axis} with size {size}")


def _places(idx: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """The advanced index that sends each position p of `idx` to p with its coordinate `axis` set to idx[p]."""
    grids = list(np.indices(idx.shape, sparse=True))
    grids[axis] = idx
    return tuple(grids)


def _prepare(name: str, x: Tensor, dim: int, index: Any, src: np.ndarray | None = None) -> tuple:
    """Check gather's or scatter's arguments as PyTorch does; give (axis, index array (at least 1-d when the
    input is), the input's shape at least 1-d)."""
    idx = _int_index(index, f"{name}(): Expected dtype int32/int64 for index")
    shape = x._data.shape or (1,)
    axis = S.dim_index(dim, x._data.ndim)
    if max(idx.ndim, 1) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ishape = idx.shape or (1,)
    if src is not None and src.ndim and len(src.shape) != len(shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    sshape = (src.shape or (1,)) if src is not None else None
    too_big = any(i > s for k, (i, s) in enumerate(zip(ishape, shape, strict=True)) if k != axis)
    if sshape is not None:
        too_big = too_big or any(i > s for i, s in zip(ishape, sshape, strict=True))
    if too_big:
        if sshape is None:
            k = next(k for k, (i, s) in enumerate(zip(ishape, shape, strict=True)) if k != axis and i > s)
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(ishape)} to be no larger "
                               f"than self {list(shape)} apart from dimension {axis}")
        raise RuntimeError(f"Expected index {list(ishape)} to be no larger than self {list(shape)} apart from "
                           f"dimension {axis} and to be no larger size than src {list(sshape)}")
    _check_range(idx, axis, shape[axis])
    return axis, idx, shape


def _gather_array(d: np.ndarray, axis: int, idx: np.ndarray) -> np.ndarray:
    data = d.reshape(d.shape or (1,))
    out = data[_places(idx.reshape(idx.shape or (1,)), axis)]
    return out.reshape(idx.shape)


# -- gather and scatter_add: each the other's gradient -------------------------------------------------------
@spec.node(
    formula={"self": "gather_backward(grad, self, dim, index, sparse_grad)"},
    saved={"dim": SV.field("given", _unsigned), "index": SV.Spec(_index_tensor, True), "self": SV.tensor(0),
           "sparse_grad": SV.const(False)},
    jvp=lambda node, inputs, out, tangents: gather(tangents[0], node.dim, _index_tensor(node)),
    tangent="gather(self_t, dim, index)",
)
class GatherBackward0(Node):
    """Each gathered value's gradient is added back at the place it was read from (a scatter_add)."""

    __slots__ = ("in_shape", "dim", "given", "index")

    def apply(self, g: Tensor) -> tuple:
        zeros = Tensor._make(np.zeros(self.in_shape, g._data.dtype), False, None)
        return (scatter_add(zeros, self.dim, _index_tensor(self), g),)


@spec.op("gather", vmap=spec.rule("gather_rule"), nodes=(GatherBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.gather(a, 1, L.tensor([[0, 3, 0], [2, 2, 1]]))
                            + a.gather(0, L.tensor([[2, 0, 1]])).sum()))
def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """The values of `input` along `dim` at the positions `index` holds: out[i][j] = input[i][index[i][j]] for
    dim 1; `index` has the input's number of dimensions and the result its shape."""
    axis, idx, _ = _prepare("gather", input, dim, index)
    out = _gather_array(input._data, axis, idx)
    node = record(GatherBackward0, input)
    if node is not None:
        node.in_shape, node.dim, node.given, node.index = input._data.shape, axis, int(dim), idx
        node.save(input)
    return result(out, node)


def _scatter_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    tx, ts = tangents
    if tx is None and ts is None:
        return None
    index = _index_tensor(node)
    if tx is None:
        tx = Tensor._make(np.zeros(out._data.shape, out._data.dtype), False, None)
    if ts is None:
        return scatter(tx, node.dim, index, 0.0) if node.replaces else tx
    return (scatter if node.replaces else scatter_add)(tx, node.dim, index, ts)


@spec.node(
    formula={"self": "grad", "src": "grad.gather(dim, index)"},
    saved={"dim": SV.field("given", _unsigned), "index": SV.Spec(_index_tensor, True)},
    jvp=_scatter_jvp, tangent="self_t.scatter_add(dim, index, src_t)",
)
class ScatterAddBackward0(Node):
    """`self` gets the whole gradient, `src` the gradient at the places it was added to (a gather)."""

    __slots__ = ("dim", "given", "index", "src_shape")
    replaces = False

    def apply(self, g: Tensor) -> tuple:
        return (g if needs(self, 0) else None,
                _src_gradient(self, gather(g, self.dim, _index_tensor(self))) if needs(self, 1) else None)


def _src_gradient(node: Node, picked: Tensor) -> Tensor:
    """src's gradient: the gradient gathered at the places written, zeros where src (larger than the index)
    was not read (PyTorch's backward fails there on the shapes)."""
    if picked._data.shape == node.src_shape:
        return picked
    return I.index_put_zeros(picked, tuple(slice(0, n) for n in picked._data.shape), node.src_shape)


def _src_array(name: str, x: Tensor, src: Any) -> np.ndarray:
    if not isinstance(src, Tensor):
        raise TypeError(f"{name}(): argument 'src' must be Tensor, not {type(src).__name__}")
    if src._data.dtype != x._data.dtype:
        raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    return src._data


def _scattered(x: Tensor, axis: int, idx: np.ndarray, values: Any, add: bool) -> np.ndarray:
    out = x._data.copy()
    view = out.reshape(out.shape or (1,))
    places = _places(idx.reshape(idx.shape or (1,)), axis)
    if isinstance(values, np.ndarray):
        src = values.reshape(values.shape or (1,))
        values = src[tuple(slice(0, n) for n in (idx.shape or (1,)))]
    if add:
        np.add.at(view, places, values)
    else:
        view[places] = values
    return out


@spec.op("scatter_add", inplace=True, vmap=spec.rule("scatter_rule", "scatter_add"), nodes=(ScatterAddBackward0,),
         sample=spec.Sample(((3, 4), (2, 3)), lambda L, a, s: L.scatter_add(a, 1, L.tensor([[0, 3, 0], [2, 2, 1]]), s)
                            + (a * 1.0).scatter_add_(0, L.tensor([[2, 0, 2]]), s[:1])))
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """`input` with the values of `src` added at the positions `index` holds along `dim` (repeats add up):
    out[i][index[i][j]] += src[i][j] for dim 1."""
    srcd = _src_array("scatter", input, src)  # (PyTorch names scatter in scatter_add's message too)
    axis, idx, _ = _prepare("scatter", input, dim, index, srcd)
    out = _scattered(input, axis, idx, srcd, add=True)
    node = record(ScatterAddBackward0, input, src)
    if node is not None:
        node.dim, node.given, node.index, node.src_shape = axis, int(dim), idx, srcd.shape
    return result(out, node)


@spec.node(
    formula={"self": "grad.scatter(dim, index, 0)", "src": "grad.gather(dim, index)"},
    saved={"dim": SV.field("given", _unsigned), "index": SV.Spec(_index_tensor, True)},
    jvp=_scatter_jvp, tangent="self_t.scatter(dim, index, src_t)",
)
class ScatterBackward0(Node):
    """Written places take `src`'s gradient (a gather); `self` keeps the gradient of the places left alone."""

    __slots__ = ("dim", "given", "index", "src_shape")
    replaces = True

    def apply(self, g: Tensor) -> tuple:
        index = _index_tensor(self)
        return (scatter(g, self.dim, index, 0.0) if needs(self, 0) else None,
                _src_gradient(self, gather(g, self.dim, index)) if needs(self, 1) else None)


@spec.node(
    formula={"self": "grad.scatter(dim, index, 0)"},
    saved={"dim": SV.field("given", _unsigned), "index": SV.Spec(_index_tensor, True)},
    jvp=lambda node, inputs, out, tangents: scatter(tangents[0], node.dim, _index_tensor(node), 0.0),
    tangent="self_t.scatter(dim, index, 0)",
)
class ScatterBackward1(Node):
    """A number written at the places `index` holds: those places get no gradient."""

    __slots__ = ("dim", "given", "index")

    def apply(self, g: Tensor) -> tuple:
        return (scatter(g, self.dim, _index_tensor(self), 0.0),)


@spec.op("scatter", inplace=True, vmap=spec.rule("scatter_rule", "scatter"),
         nodes=(ScatterBackward0, ScatterBackward1),
         sample=spec.Sample(((3, 4), (2, 3)), lambda L, a, s: L.scatter(a, 1, L.tensor([[0, 3, 1], [2, 0, 1]]), s)
                            + a.scatter(0, L.tensor([[2, 0, 1]]), 1.5)
                            + (a * 1.0).scatter_(1, L.tensor([[1]]), s[:1, :1])))
def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,  # noqa: A002
            reduce: str | None = None) -> Tensor:
    """`input` with the values of `src` (a tensor) or `value` (a number) written at the positions `index`
    holds along `dim`: out[i][index[i][j]] = src[i][j] for dim 1 (where an index repeats, one of the writes
    is kept); `reduce` 'add' or 'multiply' combines them with what is there instead (no derivative)."""
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' (or 'value')")
    if src is not None and value is not None:
        raise TypeError("scatter() takes either src or value, not both")
    if reduce is not None:
        return _scatter_reduced(input, dim, index, value if src is None else src, reduce)
    if src is None or not isinstance(src, Tensor) or src._data.ndim == 0:
        number = value if src is None else src  # a 0-d tensor is read as the number it holds, as PyTorch does
        number = number._data[()] if isinstance(number, Tensor) else number
        if not isinstance(number, (int, float, bool, np.number, np.bool_)):
            raise TypeError(f"scatter(): argument 'value' must be a number, not {type(number).__name__}")
        axis, idx, _ = _prepare("scatter", input, dim, index)
        out = _scattered(input, axis, idx, number, add=False)
        node = record(ScatterBackward1, input)
    else:
        srcd = _src_array("scatter", input, src)
        axis, idx, _ = _prepare("scatter", input, dim, index, srcd)
        out = _scattered(input, axis, idx, srcd, add=False)
        node = record(ScatterBackward0, input, src)
        if node is not None:
            node.src_shape = srcd.shape
    if node is not None:
        node.dim, node.given, node.index = axis, int(dim), idx
    return result(out, node)


_REDUCED = {"add": np.add, "multiply": np.multiply}
_DEPRECATED_REDUCE = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def _scatter_reduced(x: Tensor, dim: int, index: Tensor, src: Any, reduce: str) -> Tensor:
    """scatter with reduce= 'add' or 'multiply': PyTorch records it as NotImplemented (no derivative)."""
    if reduce not in _REDUCED:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor) and src._data.ndim:
        warnings.warn(_DEPRECATED_REDUCE, UserWarning, stacklevel=3)
        srcd = _src_array("scatter", x, src)
        axis, idx, _ = _prepare("scatter", x, dim, index, srcd)
        values: Any = srcd.reshape(srcd.shape or (1,))[tuple(slice(0, n) for n in (idx.shape or (1,)))]
        node = record(A.NotImplemented_, x, src)
    else:
        number = src._data[()] if isinstance(src, Tensor) else src
        axis, idx, _ = _prepare("scatter", x, dim, index)
        values = number
        node = record(A.NotImplemented_, x)
    out = x._data.copy()
    view = out.reshape(out.shape or (1,))
    _REDUCED[reduce].at(view, _places(idx.reshape(idx.shape or (1,)), axis), np.asarray(values).astype(out.dtype))
    if node is not None:
        node.op = "scatter"
    return result(out, node)


# -- index_select --------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "index_select_backward_symint(grad, self.sym_sizes(), dim, index)"},
    saved={"dim": SV.field("given", _unsigned), "index": SV.Spec(_index_tensor, True),
           "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: index_select(tangents[0], node.dim, _index_tensor(node)),
    tangent="self_t.index_select(dim, index)",
)
class IndexSelectBackward0(Node):
    """The selected rows' gradients added back where they came from (an index_add into zeros)."""

    __slots__ = ("in_shape", "dim", "given", "index")

    def apply(self, g: Tensor) -> tuple:
        zeros = Tensor._make(np.zeros(self.in_shape, g._data.dtype), False, None)
        return (index_add(zeros, self.dim, _index_tensor(self), g),)


@spec.op("index_select", vmap=spec.rule("index_select_rule"), nodes=(IndexSelectBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.index_select(a, 0, L.tensor([2, 0, 2]))
                            + a.index_select(-1, L.tensor([3, 1, 1, 0])).exp()))
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """The slices of `input` along `dim` at the positions of `index` (a vector of integers), in its order
    (repeats allowed)."""
    idx = _int_index(index, "index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    idx = idx.reshape(-1)
    d = input._data
    axis = S.dim_index(dim, d.ndim)
    size = d.shape[axis] if d.ndim else 1
    if not d.ndim and idx.size != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        raise IndexError("index out of range in self")
    out = np.take(d, idx, axis=axis) if d.ndim else d.reshape(1)[idx].reshape(())
    node = record(IndexSelectBackward0, input)
    if node is not None:
        node.in_shape, node.dim, node.given, node.index = d.shape, axis, int(dim), idx
    return result(out, node)


# -- take ----------------------------------------------------------------------------------------------------
def _take_places(node: Node) -> tuple[np.ndarray, ...]:
    return np.unravel_index(node.index % max(int(np.prod(node.in_shape)), 1), node.in_shape)


@spec.node(
    formula={"self": "take_backward(grad, self, index)"},
    saved={"index": SV.Spec(_index_tensor, True), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: take(tangents[0], _index_tensor(node)),
    tangent="self_t.take(index)",
)
class TakeBackward0(Node):
    """Each taken element's gradient added back at its place in the flattened input."""

    __slots__ = ("in_shape", "index")

    def apply(self, g: Tensor) -> tuple:
        if not self.in_shape:  # every index names the one element
            return (g.sum(),)
        return (I.index_put_zeros(g, _take_places(self), self.in_shape),)


@spec.op("take", vmap=spec.rule("take_rule"), nodes=(TakeBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.take(a, L.tensor([[0, 11], [5, -1]])) + a.take(L.tensor(3))))
def take(input: Tensor, index: Tensor) -> Tensor:  # noqa: A002
    """The elements of `input`, read as if flattened, at the positions `index` holds (negative ones count from
    the end); the result has the index's shape."""
    idx = _int_index(index, "take(): Expected a long tensor for index, but got " + (
        str(index._data.dtype) if isinstance(index, Tensor) else ""))
    d = input._data
    n = d.size
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx.reshape(-1)[np.flatnonzero((idx.reshape(-1) < -n) | (idx.reshape(-1) >= n))[0]]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} elements.")
    out = d.reshape(-1)[idx]
    node = record(TakeBackward0, input)
    if node is not None:
        node.in_shape, node.index = d.shape, idx
        node.save(input)
    return result(np.asarray(out), node)


# -- masked_fill ---------------------------------------------------------------------------------------------
def _mask_array(mask: Any) -> np.ndarray:
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked_fill(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_C_TYPE.get(m.dtype.name, m.dtype.name)}")
    return m


def _masked_fill_(self: Tensor, mask: Tensor, value: Any) -> Tensor:
    """In-place masked_fill: writes the result into this tensor. The value, one number, is read once (as
    PyTorch's masked_fill_ reads it), so it may be an element of this very tensor (`x.masked_fill_(m, x[0])`)."""
    return IP.apply_inplace(self, lambda t: masked_fill(t, mask, value), "masked_fill_", mask, value,
                            cast_check=True, overlap=False)


@spec.op("masked_fill", inplace=_masked_fill_, vmap=spec.rule("masked_fill_rule"),
         nodes=(E.MaskedFillBackward0, E.MaskedFillBackward1),
         sample=spec.Sample(((3, 4), ()), lambda L, a, v: L.masked_fill(a, a > 0.5, 2.0)
                            + a.masked_fill(L.tensor([True, False, False, True]), v)
                            + (a * v).masked_fill_(a < 0, v * 2)))
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """`input` with `value` (a number or a 0-d tensor) where `mask` (a boolean tensor that broadcasts with
    it) holds."""
    m = _mask_array(mask)
    d = input._data
    shape = d.shape
    if m.shape != d.shape:
        message = broadcast_message([m.shape, d.shape])  # PyTorch's order: the mask is tensor a
        if message is not None:
            raise RuntimeError(message)
        shape = np.broadcast_shapes(d.shape, m.shape)
    in_shape = d.shape if shape != d.shape else None
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        node = record(E.MaskedFillBackward1, input, value)
        fill = value._data
    else:
        if not isinstance(value, (int, float, bool, np.number, np.bool_)):
            raise TypeError(f"masked_fill(): argument 'value' must be a number or a 0-d tensor, not "
                            f"{type(value).__name__}")
        node = record(E.MaskedFillBackward0, input)
        fill = value
    if d.dtype.kind in "iub":  # a float value truncated into an integer tensor, as PyTorch casts it
        fill = np.asarray(fill).astype(d.dtype)
    out = np.where(m, fill, d).astype(d.dtype, copy=False)
    if node is not None:
        node.in_shape = in_shape
        node.save(Tensor._make(np.array(m), False, None))
    return result(out, node)
