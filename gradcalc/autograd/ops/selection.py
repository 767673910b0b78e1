"""Selecting and writing elements by a mask or by index tensors: `masked_select`, `take_along_dim`,
`index_put` (`index_put_`) and `put` (`put_`), with PyTorch's graphs.

A deferred family (ops/lazy.py): loaded at the first use of one of its names. Each gradient is one of these
operations or of scatter.py's, as derivatives.yaml writes it (index_put's a write of zeros and an advanced index,
put's a put of zeros and a take), so that a gradient recorded under create_graph can be differentiated again.
take_along_dim is PyTorch's composite: an expand and a gather (GatherBackward0), recorded as PyTorch records it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import indexing as I
from . import inplace as IP
from . import shape as S
from .core import broadcast_message, needs, record, result
from .scatter import gather, take
from .sums import expand, sum_to

_INT64 = np.dtype("int64")
# PyTorch's ScalarType names, as its messages print them
SCALAR_TYPE = {"float64": "Double", "float32": "Float", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def scalar_type(dtype: np.dtype) -> str:
    """A dtype as PyTorch's messages name it (`Double`, `Long`)."""
    return SCALAR_TYPE.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _const(data: np.ndarray) -> Tensor:
    return Tensor._make(data, False, None)


def _need_tensor(name: str, arg: str, value: Any, position: int) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


# -- masked_select -------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "masked_select_backward(grad, self, mask)"},
    saved={"mask": SV.array("mask_given"), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: masked_select(tangents[0], _const(node.mask_given)),
    tangent="self_t.masked_select(mask)",
)
class MaskedSelectBackward0(Node):
    """The selected elements' gradients put back where the (broadcast) mask holds, zeros elsewhere, summed
    over the input's broadcasting."""

    __slots__ = ("in_shape", "mask", "mask_given")

    def apply(self, g: Tensor) -> tuple:
        return (sum_to(I.index_put_zeros(g, (self.mask,), self.mask.shape), self.in_shape),)


@spec.op("masked_select", vmap=spec.rule("masked_select_rule"), nodes=(MaskedSelectBackward0,),
         sample=spec.Sample(((3, 4),), lambda L, a: L.masked_select(a, a > 0.2)
                            + a.masked_select(L.tensor([True, False, False, True])).sum()))
def masked_select(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The elements of `input` where `mask` (a boolean tensor that broadcasts with it) holds, as a 1-d tensor
    in row-major order."""
    _need_tensor("masked_select", "mask", mask, 1)
    m = mask._data
    if m.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    d = input._data
    message = broadcast_message([m.shape, d.shape])  # PyTorch's order: the mask is tensor a
    if message is not None:
        raise RuntimeError(message)
    shape = np.broadcast_shapes(d.shape, m.shape)
    full = np.broadcast_to(m, shape)
    out = np.broadcast_to(d, shape)[full]
    node = record(MaskedSelectBackward0, input)
    if node is not None:
        node.in_shape, node.mask, node.mask_given = d.shape, np.array(full), np.array(m)
        node.save(input)
    return result(out, node)


# -- take_along_dim ------------------------------------------------------------------------------------------
@spec.op("take_along_dim", vmap=spec.rule("take_along_dim_rule"),
         sample=spec.Sample(((3, 4),), lambda L, a: L.take_along_dim(a, L.tensor([[0, 3], [2, 2], [1, 0]]), dim=1)
                            + a.take_along_dim(L.tensor([[2], [0], [1]]), 0).sum()
                            + L.take_along_dim(a.exp(), L.tensor([11, 0])).sum()))
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The values of `input` at the positions `indices` holds along `dim` (the two broadcast against each other
    in the other dims), as `gather` does; without `dim`, of the flattened input at the flattened indices."""
    _need_tensor("take_along_dim", "indices", indices, 1)
    kind = indices._data.dtype.kind
    if dim is None:
        if kind not in "iu":
            raise RuntimeError("gather(): Expected dtype int32/int64 for index")
        return gather(S.reshape(input, -1), 0, S.reshape(indices, -1))
    d, ix = input._data, indices._data
    axis = S.dim_index(dim, d.ndim)
    if kind not in "iu" or ix.dtype != _INT64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {scalar_type(ix.dtype)}")
    if d.ndim != ix.ndim:
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {d.ndim} dimensions for input, and {ix.ndim} dimensions for indices")
    if not d.ndim:
        return gather(input, 0, indices)
    # the other dims broadcast (PyTorch's _take_along_dim_helper): each operand expanded to the common sizes
    others = [k for k in range(d.ndim) if k != axis]
    message = broadcast_message([tuple(d.shape[k] for k in others), tuple(ix.shape[k] for k in others)])
    if message is not None:
        raise RuntimeError(message)
    common = np.broadcast_shapes(tuple(d.shape[k] for k in others), tuple(ix.shape[k] for k in others))
    sizes_in, sizes_ix = list(d.shape), list(ix.shape)
    for k, n in zip(others, common, strict=True):
        sizes_in[k] = sizes_ix[k] = n
    wrapped = indices
    if ix.size and ix.min() < 0:  # PyTorch reads a negative index from the end here
        wrapped = _const(np.where(ix < 0, ix + d.shape[axis], ix))
    return gather(expand(input, tuple(sizes_in)), axis, expand(wrapped, tuple(sizes_ix)))


# -- index_put -----------------------------------------------------------------------------------------------
def advanced_index(shape: tuple[int, ...], indices: Any, name: str = "index_put") -> tuple:
    """`indices` (a tuple or list of integer or boolean tensors) as a NumPy advanced index of a tensor of
    `shape`, checked as PyTorch checks it."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    out: list[Any] = []
    dim = 0
    for k, item in enumerate(indices):
        if not isinstance(item, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(item).__name__}")
        arr = item._data
        if arr.dtype.kind == "b" or arr.dtype == np.uint8:
            arr = arr.astype(bool)
            for k, n in enumerate(arr.shape):
                if dim + k < len(shape) and shape[dim + k] != n:
                    raise IndexError(f"The shape of the mask {list(arr.shape)} at index {k} does not match the "
                                     f"shape of the indexed tensor {list(shape)} at index {dim + k}")
            out.append(np.array(arr))
            dim += arr.ndim
        elif arr.dtype.kind in "iu":
            if dim < len(shape) and arr.size:
                size = shape[dim]
                bad = (arr < -size) | (arr >= size)
                if bad.any():
                    raise IndexError(f"index {int(arr[bad].reshape(-1)[0])} is out of bounds for dimension {dim} "
                                     f"with size {size}")
            out.append(np.array(arr, dtype=_INT64))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)} (got {dim})")
    arrays = [a for a in out if isinstance(a, np.ndarray) and a.dtype != np.bool_]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(a.shape)) for a in arrays)) from None
    return tuple(out)


def _index_tensors(node: Node) -> tuple:
    """The indices as PyTorch saves them: a tensor per entry."""
    return tuple(_const(np.asarray(i)) for i in node.indices)


def _strip_leading_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return shape[k:]


def _index_put_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    tx, tv = tangents
    if tx is None:
        tx = _const(np.zeros(out._data.shape, out._data.dtype))
    if tv is None:
        if node.accumulate:
            return tx
        tv = _const(np.zeros(node.value_shape, out._data.dtype))
    return index_put(tx, _index_tensors(node), tv, node.accumulate)


@spec.node(
    formula={"self": "accumulate ? grad : grad.index_put(indices, zeros_like(values), false)",
             "values": "grad.index(indices)"},
    saved={"accumulate": SV.field("accumulate"), "indices": SV.Spec(_index_tensors, False)},
    jvp=_index_put_jvp, tangent="self_t.index_put(indices, values_t, accumulate)",
)
class IndexPutBackward0(Node):
    """`self` gets the gradient (with the written places zeroed unless the values were added), `values` the
    gradient at the places written (summed over its broadcasting)."""

    __slots__ = ("indices", "accumulate", "value_shape", "value_dtype")

    def apply(self, g: Tensor) -> tuple:
        ga = gv = None
        if needs(self, 0):
            if self.accumulate:
                ga = g
            else:
                ga = index_put(g, _index_tensors(self), _const(np.zeros(self.value_shape, g._data.dtype)), False)
        if needs(self, 1):
            gv = I.index(g, self.indices)
            stripped = _strip_leading_ones(self.value_shape)
            gv = sum_to(gv, stripped)
            if stripped != self.value_shape:
                gv = S.reshape(gv, self.value_shape)
        return (ga, gv)


def _write_at(name: str, input: Tensor, idx: Any, values: Tensor, accumulate: bool) -> np.ndarray:  # noqa: A002
    out = input._data.copy()
    target = np.empty(out.shape, dtype=np.bool_)[idx].shape
    v = values._data
    stripped = _strip_leading_ones(v.shape)
    try:
        vb = np.broadcast_to(v.reshape(stripped), target)
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be broadcast to indexing "
                           f"result of shape {list(target)}") from None
    vb = vb.astype(out.dtype, copy=False)
    if accumulate:
        np.add.at(out, idx, vb)
    else:
        out[idx] = vb
    return out


def _index_put_(self: Tensor, indices: tuple[Tensor, ...] | list[Tensor], values: Tensor,
                accumulate: bool = False) -> Tensor:
    """In-place index_put: writes the result into this tensor."""
    return IP.apply_inplace(self, lambda t: index_put(t, indices, values, accumulate), "index_put_", values)


@spec.op("index_put", inplace=_index_put_, vmap=spec.rule("index_put_rule"), nodes=(IndexPutBackward0,),
         sample=spec.Sample(((3, 4), (2, 4), (2,)), lambda L, a, v, w: L.index_put(a, (L.tensor([2, 0]),), v)
                            + a.index_put((L.tensor([1, 1]), L.tensor([0, 0])), w, accumulate=True)
                            + (a * w[0]).index_put_([L.tensor([[1], [0]]), L.tensor([3, 3])], w, accumulate=True)))
def index_put(input: Tensor, indices: tuple[Tensor, ...] | list[Tensor], values: Tensor,  # noqa: A002
              accumulate: bool = False) -> Tensor:
    """`input` with `values` (broadcast) written at the elements `indices` (a tuple of integer or boolean
    tensors, one per leading dim) name, as `x[indices] = values`; with `accumulate`, added there (repeated places
    add up)."""
    _need_tensor("index_put", "values", values, 2)
    idx = advanced_index(input._data.shape, indices)
    out = _write_at("index_put", input, idx, values, bool(accumulate))
    node = record(IndexPutBackward0, input, values)
    if node is not None:
        node.indices, node.accumulate = idx, bool(accumulate)
        node.value_shape, node.value_dtype = values._data.shape, values._data.dtype
    return result(out, node)


# -- put -----------------------------------------------------------------------------------------------------
def _put_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    tx, ts = tangents
    if tx is None:
        tx = _const(np.zeros(out._data.shape, out._data.dtype))
    if ts is None:
        if node.accumulate:
            return tx
        ts = _const(np.zeros(node.source_shape, out._data.dtype))
    return put(tx, _const(node.index), ts, node.accumulate)


@spec.node(
    formula={"self": "accumulate ? grad : grad.put(index, zeros_like(source), false)",
             "source": "grad.take(index).reshape_as(source)"},
    saved={"accumulate": SV.field("accumulate"), "index": SV.array("index"), "source": SV.tensor(0)},
    jvp=_put_jvp, tangent="self_t.put(index, source_t, accumulate)",
)
class PutBackward0(Node):
    """`self` gets the gradient (the written places zeroed unless added to), `source` the gradient taken at the
    places written."""

    __slots__ = ("index", "accumulate", "source_shape")

    def apply(self, g: Tensor) -> tuple:
        ga = gs = None
        index = _const(self.index)
        if needs(self, 0):
            ga = g if self.accumulate else put(g, index, _const(np.zeros(self.source_shape, g._data.dtype)), False)
        if needs(self, 1):
            gs = S.reshape(take(g, index), self.source_shape)
        return (ga, gs)


def _put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place put: writes the result into this tensor."""
    return IP.apply_inplace(self, lambda t: put(t, index, source, accumulate), "put_", source)


@spec.op("put", inplace=_put_, vmap=spec.rule("put_rule"), nodes=(PutBackward0,),
         sample=spec.Sample(((3, 4), (3,)), lambda L, a, s: L.put(a, L.tensor([0, 11, 5]), s)
                            + a.put(L.tensor([[1, 1, -1]]), s.reshape(1, 3), accumulate=True)
                            + (a * s[0]).put_(L.tensor([4, 4, 2]), s, accumulate=True)))
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """`input`, read as if flattened, with the elements of `source` written at the positions `index` holds
    (negative ones count from the end); with `accumulate`, added there (repeats add up)."""
    _need_tensor("put", "index", index, 1)
    _need_tensor("put", "source", source, 2)
    ix, src = index._data, source._data
    if ix.dtype != _INT64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {scalar_type(ix.dtype)}")
    if ix.size != src.size:
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {src.size}, index.numel() = {ix.size}")
    n = input._data.size
    flat_ix = ix.reshape(-1)
    bad = (flat_ix < -n) | (flat_ix >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(flat_ix[bad][0])} on a tensor of {n} elements.")
    places = np.where(flat_ix < 0, flat_ix + n, flat_ix)
    out = input._data.copy()
    flat = out.reshape(-1)
    values = src.reshape(-1).astype(out.dtype, copy=False)
    if accumulate:
        np.add.at(flat, places, values)
    else:
        flat[places] = values
    node = record(PutBackward0, input, source)
    if node is not None:
        node.index, node.accumulate, node.source_shape = np.array(ix), bool(accumulate), src.shape
        node.save(source if source._requires_grad else None)  # PyTorch keeps it only for its gradient
    return result(out, node)
