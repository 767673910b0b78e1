"""Embedding: `embedding` (PyTorch's `F.embedding`: rows of a weight matrix picked by integer indices),
EmbeddingBackward0 and, under create_graph, EmbeddingDenseBackwardBackward0; `embedding_renorm_` for `max_norm`.

The gradient of the weight adds each picked row's gradient into its row (rows at `padding_idx` get none; with
`scale_grad_by_freq` each is divided by how often its index occurs). Both directions are linear: the forward
rule of either is the operation itself on the tangent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..grad_mode import no_grad
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor
from .core import needs, record, result

# PyTorch keeps padding_idx as an int64 and shows -1 ("none") read back unsigned
_PADDING = SV.field("padding_idx", lambda p: p % 2**64)


def _rows(w: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return w[idx.reshape(-1)].reshape(idx.shape + w.shape[1:])


def _dense_backward(g: np.ndarray, idx: np.ndarray, num: int, padding_idx: int, scale: bool, lead: int = 0
                    ) -> np.ndarray:
    """embedding_dense_backward on arrays: each row of `g` added into its index's row (`lead` leading dims of
    rows of a batched Jacobian kept)."""
    flat = idx.reshape(-1)
    lead_shape = g.shape[:lead]
    rows = g.reshape(lead_shape + (flat.size, g.shape[-1]))
    keep = flat != padding_idx
    weights = None
    if scale:
        counts = np.bincount(flat, minlength=num)
        weights = 1.0 / counts[flat]
    if not keep.all() or weights is not None:
        factor = keep.astype(g.dtype) if weights is None else (keep * weights).astype(g.dtype)
        rows = rows * factor[:, None]
    out = np.zeros(lead_shape + (num, g.shape[-1]), dtype=g.dtype)
    if lead:
        for i in np.ndindex(*lead_shape):
            np.add.at(out[i], flat, rows[i])
    else:
        np.add.at(out, flat, rows)
    return out


def _embedding_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    t = tangents[0]
    return None if t is None else embedding_rows(t, node.saved_tensors[0])


@spec.node(
    formula={"weight": "embedding_backward(grad, indices, weight.sym_size(0), padding_idx, scale_grad_by_freq, "
             "sparse)"},
    saved={"indices": SV.tensor(0), "padding_idx": _PADDING, "scale_grad_by_freq": SV.field("scale"),
           "sparse": SV.const(False), "weight_sym_argsize_0": SV.field("num")},
    jvp=_embedding_jvp, tangent="embedding(weight_t, indices, padding_idx, scale_grad_by_freq, sparse)",
    batched=lambda self, g: (_dense_backward(g, self.unpack_saved(True)[0], self.num, self.padding_idx, self.scale,
                                             1),),
)
class EmbeddingBackward0(Node):
    """The weight's gradient: the rows of grad added into the rows they were picked from."""

    __slots__ = ("num", "padding_idx", "scale")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (idx,) = self.unpack_saved(raw)
        if raw:
            return (_dense_backward(g, np.asarray(idx), self.num, self.padding_idx, self.scale),)
        return (embedding_dense_backward(g, idx, self.num, self.padding_idx, self.scale),)


def _dense_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    t = tangents[0]
    idx = node.saved_tensors[0]
    return None if t is None else embedding_dense_backward(t, idx, node.num, node.padding_idx, node.scale)


@spec.node(
    formula={"grad_output": "embedding_dense_double_backward(grad, indices, padding_idx)"},
    saved={"indices": SV.tensor(0), "padding_idx": _PADDING},
    jvp=_dense_jvp, tangent="embedding_dense_backward(grad_output_t, indices, num_weights, padding_idx, "
    "scale_grad_by_freq)",
)
class EmbeddingDenseBackwardBackward0(Node):
    """The node of the weight's gradient under create_graph: its own gradient picks the rows back (PyTorch's
    embedding_dense_double_backward: the padding rows zeroed, the frequency scaling not applied again)."""

    __slots__ = ("num", "padding_idx", "scale")

    def apply(self, gg: Tensor) -> tuple:
        (idx,) = self.saved_tensors
        if not needs(self, 0):
            return (None,)
        picked = embedding_rows(gg, idx)
        if self.padding_idx >= 0:
            pad = (idx._data == self.padding_idx)[..., None]
            if pad.any():
                picked = picked * Tensor._make(np.asarray(~pad, dtype=gg._data.dtype), False, None)
        return (picked,)


def embedding_dense_backward(g: Tensor, idx: Tensor, num: int, padding_idx: int, scale: bool) -> Tensor:
    """The weight's gradient as a tensor, one node (EmbeddingDenseBackwardBackward0) when it records."""
    data = _dense_backward(g._data, idx._data, num, padding_idx, scale)
    node = record(EmbeddingDenseBackwardBackward0, g)  # one edge: the indices are not differentiable
    if node is not None:
        node.num, node.padding_idx, node.scale = num, padding_idx, scale
        node.save(idx)
    return result(data, node)


def embedding_rows(w: Tensor, idx: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False) -> Tensor:
    """torch.embedding(weight, indices, ...): the rows of `w` at `idx`, one node (EmbeddingBackward0)."""
    wd, ix = w._data, idx._data
    node = record(EmbeddingBackward0, w)  # one edge: the indices are not differentiable
    if node is not None:
        node.num, node.padding_idx, node.scale = wd.shape[0], padding_idx, scale_grad_by_freq
        node.save(idx)
    return result(_rows(wd, ix), node)


def _check(weight: Tensor, indices: Tensor) -> None:
    ix = indices._data
    if ix.dtype not in (np.int64, np.int32):
        kind = {"float32": "Float", "float64": "Double", "bool": "Bool"}.get(ix.dtype.name, ix.dtype.name)
        raise worded("Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, "
                     f"Int; but got torch.{kind}Tensor instead (while checking arguments for embedding)",
                     f"embedding: the indices must be whole numbers of dtype int64, not {ix.dtype.name}; convert them "
                     "with .long() (or make them with dtype=int64)")
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    rows = weight._data.shape[0]
    if ix.size and (ix.min() < 0 or ix.max() >= rows):
        bad = int(ix.min()) if ix.min() < 0 else int(ix.max())
        raise worded("index out of range in self", f"embedding: index {bad} is out of range for a table of {rows} "
                     f"rows (the indices run from 0 to {rows - 1})", IndexError)


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """Scale, in place, each row of `weight` that `indices` picks whose `norm_type`-norm exceeds `max_norm` down to
    max_norm / (norm + 1e-7) times itself (one in-place change: the version goes up by one)."""
    _check(weight, indices)
    rows = np.unique(indices._data.reshape(-1))
    w = weight._data
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1) if rows.size else np.empty(0)
    scales = np.ones(rows.size)
    over = norms > max_norm
    scales[over] = max_norm / (norms[over] + 1e-7)
    new = w.copy()
    new[rows] = (w[rows] * scales[:, None]).astype(w.dtype)
    with no_grad():
        weight.copy_(Tensor._make(new, False, None))
    return weight


def _padding(padding_idx: int | None, num: int) -> int:
    """PyTorch's F.embedding: a negative padding_idx counts from the end; none is -1."""
    if padding_idx is None:
        return -1
    if padding_idx > 0 and padding_idx >= num or padding_idx < 0 and padding_idx < -num:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num if padding_idx < 0 else padding_idx


def _embedding_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """vmap of embedding: batched indices pick from the one weight (the batch dim stays where it is); a batched
    weight is folded into the columns, (B, V, D) -> (V, B*D), for indices that are the same for every sample; both
    batched: each sample's indices moved to its own block of rows."""
    batching = spec.RULES
    bind = batching.bind
    names = ("weight", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")
    given = dict(zip(names, args[1:], strict=False))
    given.update(params)
    (idx, w), (di, dw) = args[:2], dims[:2]
    given.pop("weight", None)
    if dw is None:
        return bind("embedding", idx, w, **given), di
    w = batching.to_front(w, dw)
    b, v, d = batching.shape_of(w)
    if di is None:
        folded = bind("reshape", bind("movedim", w, 0, 1), (v, b * d))
        out = bind("embedding", idx, folded, **given)
        rank = len(batching.shape_of(out))
        return bind("reshape", out, (*batching.shape_of(out)[:-1], b, d)), rank - 1
    if given.get("padding_idx") is not None:
        raise NotImplementedError("vmap: embedding with both the indices and the weight batched and a padding_idx "
                                  "is not supported by gradcalc's batching rule")
    idx = batching.to_front(idx, di)
    rank = len(batching.shape_of(idx)) - 1
    offsets = Tensor._make((np.arange(b, dtype=np.int64) * v).reshape((b,) + (1,) * rank), False, None)
    return bind("embedding", bind("add", idx, offsets), bind("reshape", w, (b * v, d)), **given), 0


@spec.op("embedding", top_level=False, method=False, vmap=_embedding_rule,
         sample=spec.Sample(((5, 3),), lambda L, w: L.nn.functional.embedding(L.tensor([[1, 2, 1], [4, 0, 1]]), w)
                            + L.nn.functional.embedding(L.tensor([[1, 2, 1], [4, 0, 1]]), w, padding_idx=1) * 0.5
                            + L.nn.functional.embedding(L.tensor([[1, 2, 1], [4, 4, 1]]), w, scale_grad_by_freq=True)))
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """The rows of `weight` at the integer indices `input`: shape input.shape + (embedding_dim,). Rows at
    `padding_idx` get no gradient; with `max_norm`, each row picked is first scaled in place to at most that
    norm."""
    _check(weight, input)
    if sparse:
        raise NotImplementedError("embedding: sparse gradients (sparse=True) are not supported by gradcalc; "
                                  "leave sparse=False")
    pad = _padding(padding_idx, weight._data.shape[0])
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return embedding_rows(weight, input, pad, scale_grad_by_freq)
