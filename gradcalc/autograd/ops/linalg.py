"""Matrix products: `dot`, `mv`, `mm`, `bmm`, `outer`, and `matmul` (`@`) built from them as PyTorch does.

Each product is one NumPy `@` (one BLAS call for floating types), and so is each gradient: transposes are
views, never copies. In a plain backward the formulas run on bare arrays (`raw_ok`); under
`create_graph` they are recorded with the engine's own products, to differentiate again.

`matmul` follows PyTorch's dispatch case by case, so that the recorded graph and node names are the
same: 1-d@1-d is `dot`, 2-d@1-d `mv`, 2-d@2-d `mm`, 1-d@2-d an `mm` of the unsqueezed vector squeezed in
place (`SqueezeBackward4`); a batch against a matrix or vector is folded into one `mm`/`mv` when that
needs no copy (`UnsafeViewBackward0` on top); other batched cases expand both sides to a common batch
and call `bmm`. Gradients of broadcast batch dimensions are summed back by the expand's backward.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from .arithmetic import mul
from .basic import clone
from .binary import plus
from .core import broadcast_message, needs, record, result
from .sums import expand


def _same_dtype(a: Tensor, b: Tensor, what: str) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"{what}: both operands must have one dtype, here {a._data.dtype} and {b._data.dtype}; "
            "convert one with .double() or .float()"
        )


def _dims(a: Tensor, b: Tensor, what: str, da: int, db: int) -> None:
    if a._data.ndim != da or b._data.ndim != db:
        raise RuntimeError(
            f"{what} takes a {da}-d and a {db}-d tensor, not {a._data.ndim}-d and {b._data.ndim}-d"
        )


def _mismatch(what: str, a: Tensor, b: Tensor) -> RuntimeError:
    """PyTorch's message for a product whose inner dimensions differ (a matrix, and a matrix or a vector)."""
    sa, sb = a._data.shape, b._data.shape
    if what == "mv":
        return RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})")
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")


def _batch_mismatch(count: int, m1: int, got: tuple[int, int]) -> RuntimeError:
    """PyTorch's message for batches of matrices whose inner dimensions (or batch sizes) differ."""
    return RuntimeError(
        f"Expected size for first two dimensions of batch2 tensor to be: [{count}, {m1}] but got: "
        f"[{got[0]}, {got[1]}]."
    )


def _operands(a: Any, b: Any, what: str) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{what} takes two tensors, not {type(a).__name__} and {type(b).__name__}")


# -- dot -----------------------------------------------------------------------------------------------------
def _bilinear(op: Any) -> spec.JvpRule:
    """The forward rule of a product `op(a, b)`: op(ta, b) + op(a, tb)."""

    def jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        (a, b), (ta, tb) = inputs, tangents
        return plus(None if ta is None else op(ta, b), None if tb is None else op(a, tb))

    return jvp


def _dot_batched(self: Node, g: Any) -> tuple:
    a, b = self.unpack_saved(True)
    g = g[:, None]  # one number per row, times a vector
    return (g * b if needs(self, 0) else None, g * a if needs(self, 1) else None)


@spec.node(
    formula={"self": "grad * tensor", "tensor": "grad * self"},
    saved={"self": SV.tensor(0), "tensor": SV.tensor(1)},
    jvp=_bilinear(lambda a, b: dot(a, b)), tangent="at::dot(self_t, tensor_p) + at::dot(self_p, tensor_t)",
    batched=_dot_batched,
)
class DotBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        a, b = self.unpack_saved(type(g) is not Tensor)
        return (g * b if needs(self, 0) else None, g * a if needs(self, 1) else None)


@spec.op("dot", nodes=(DotBackward0,),
         vmap=spec.rule("dot_rule"), sample=spec.Sample(((3,), (3,)), lambda L, a, b: L.dot(a, b) + a.dot(a)))
def dot(a: Tensor, b: Tensor) -> Tensor:
    """The dot product of two vectors of one length."""
    _operands(a, b, "dot")
    _dims(a, b, "dot", 1, 1)
    _same_dtype(a, b, "dot")
    if a._data.shape != b._data.shape:
        n, m = a._data.shape[0], b._data.shape[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number of "
            f"elements, but got {n} and {m} elements respectively"
        )
    node = record(DotBackward0, a, b)
    if node is not None:
        node.save(a if b._requires_grad else None, b if a._requires_grad else None)
    return result(np.dot(a._data, b._data), node)


# -- mv ------------------------------------------------------------------------------------------------------
def _mv_batched(self: Node, g: Any) -> tuple:
    m, v = self.unpack_saved(True)
    gm = g[:, :, None] * v if needs(self, 0) else None  # an outer product per row
    gv = g @ m if needs(self, 1) else None  # m.T @ g, per row
    return (gm, gv)


@spec.node(
    formula={"self": "grad.ger(vec)", "vec": "self.t().mv(grad)"},
    saved={"self": SV.tensor(0), "vec": SV.tensor(1)},
    jvp=_bilinear(lambda a, b: mv(a, b)), tangent="mv(self_t, vec_p) + mv(self_p, vec_t)", batched=_mv_batched,
)
class MvBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        m, v = self.unpack_saved(raw)
        gm = gv = None
        if needs(self, 0):
            gm = np.multiply.outer(g, v) if raw else outer(g, v)
        if needs(self, 1):
            gv = m.T @ g if raw else mv(S.t(m), g)
        return (gm, gv)


@spec.op("mv", nodes=(MvBackward0,),
         vmap=spec.rule("mv_rule"), sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.mv(a, b) + a.mv(b)))
def mv(m: Tensor, v: Tensor) -> Tensor:
    """A matrix times a vector."""
    _operands(m, v, "mv")
    _dims(m, v, "mv", 2, 1)
    _same_dtype(m, v, "mv")
    if m._data.shape[1] != v._data.shape[0]:
        raise _mismatch("mv", m, v)
    node = record(MvBackward0, m, v)
    if node is not None:
        node.save(m if v._requires_grad else None, v if m._requires_grad else None)
    return result(m._data @ v._data, node)


# -- mm ------------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.mm(mat2.t())", "mat2": "self.t().mm(grad)"},
    saved={"mat2": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_bilinear(lambda a, b: mm(a, b)), tangent="at::mm(self_t, mat2_p) + at::mm(self_p, mat2_t)",
    batched=spec.BROADCASTS,  # `g @ b.T` and `a.T @ g` broadcast over a leading batch dim
)
class MmBackward0(Node):
    __slots__ = ("column_major",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        if raw:  # one BLAS call each; `.T` is a view that BLAS reads transposed
            return (g @ b.T if needs(self, 0) else None, a.T @ g if needs(self, 1) else None)
        # PyTorch gives an operand stored column by column its gradient in that layout too, as the
        # transpose of a product: the graph recorded here (its node names) follows
        ca, cb = self.column_major
        ga = gb = None
        if needs(self, 0):
            ga = S.t(mm(b, S.t(g))) if ca else mm(g, S.t(b))
        if needs(self, 1):
            gb = S.t(mm(S.t(g), a)) if cb else mm(S.t(a), g)
        return (ga, gb)


def _column_major(d: np.ndarray) -> bool:
    """PyTorch's test of a matrix stored column by column (strides counted in elements)."""
    return d.strides[0] == d.itemsize and d.strides[1] == d.shape[0] * d.itemsize


@spec.op("mm", vmap=spec.rule("mm_rule"), nodes=(MmBackward0,),
         sample=spec.Sample(((2, 3), (3, 4)), lambda L, a, b: L.mm(a, b) + a.mm(b) + L.mm(b.t(), a.t()).t()))
def mm(a: Tensor, b: Tensor) -> Tensor:
    """The product of two matrices."""
    _operands(a, b, "mm")
    ad, bd = a._data, b._data
    if ad.ndim != 2 or bd.ndim != 2:
        _dims(a, b, "mm", 2, 2)
    if ad.dtype != bd.dtype:
        _same_dtype(a, b, "mm")
    if ad.shape[1] != bd.shape[0]:
        raise _mismatch("mm", a, b)
    node = record(MmBackward0, a, b)
    if node is not None:
        # each gradient needs the other operand only: save just what will be used
        node.save(a if b._requires_grad else None, b if a._requires_grad else None)
        node.column_major = (_column_major(ad), _column_major(bd))
    return result(ad @ bd, node)


# -- bmm -----------------------------------------------------------------------------------------------------
def batch_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` for batches of matrices (B, m, k) @ (B, k, n), as NumPy computes it fastest where vmap makes
    them: a product over k = 1 (a batch of outer products: per-sample gradients of a weight) is a broadcast
    multiply, which NumPy runs several times faster than matmul's per-matrix loop; an operand the same for the
    whole batch (stride 0: a weight lifted to every sample) with the other's rows stacked is one matrix
    product. Elsewhere, matmul."""
    if a.shape[2] == 1:
        return a * b
    if b.strides[0] == 0 and a.ndim == 3 and b.ndim == 3:
        n_b, m, k = a.shape
        return (a.reshape(n_b * m, k) @ b[0]).reshape(n_b, m, b.shape[2])
    return a @ b


@spec.node(
    formula={"self": "grad.bmm(mat2.transpose(1, 2))", "mat2": "self.transpose(1, 2).bmm(grad)"},
    saved={"mat2": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_bilinear(lambda a, b: bmm(a, b)), tangent="self_t.bmm(mat2_p) + self_p.bmm(mat2_t)", batched=spec.BROADCASTS,
)
class BmmBackward0(Node):
    __slots__ = ()
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        a, b = self.unpack_saved(raw)
        if raw:
            return (
                batch_product(g, b.transpose(0, 2, 1)) if needs(self, 0) else None,
                batch_product(a.transpose(0, 2, 1), g) if needs(self, 1) else None,
            )
        return (
            bmm(g, S.transpose(b, 1, 2)) if needs(self, 0) else None,
            bmm(S.transpose(a, 1, 2), g) if needs(self, 1) else None,
        )


@spec.op("bmm", nodes=(BmmBackward0,),
         vmap=spec.rule("bmm_rule"), sample=spec.Sample(((2, 3, 4), (2, 4, 2)), lambda L, a, b: L.bmm(a, b)))
def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Matrix products of two batches of matrices of the same batch size."""
    _operands(a, b, "bmm")
    _dims(a, b, "bmm", 3, 3)
    _same_dtype(a, b, "bmm")
    sa, sb = a._data.shape, b._data.shape
    if sa[0] != sb[0] or sa[2] != sb[1]:
        raise _batch_mismatch(sa[0], sa[2], (sb[0], sb[1]))
    node = record(BmmBackward0, a, b)
    if node is not None:
        node.save(a if b._requires_grad else None, b if a._requires_grad else None)
    return result(batch_product(a._data, b._data), node)


# -- outer ---------------------------------------------------------------------------------------------------
@spec.op("outer", aliases=("ger",),
         vmap=spec.rule("outer_rule"), sample=spec.Sample(((3,), (2,)), lambda L, a, b: L.outer(a, b) + L.ger(a, b)))
def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of two vectors: PyTorch computes it as a column times a row (MulBackward0)."""
    _operands(a, b, "outer")
    _dims(a, b, "outer", 1, 1)
    return mul(S.reshape(a, (a._data.shape[0], 1)), b)


# -- matmul --------------------------------------------------------------------------------------------------
@spec.op("matmul", vmap=spec.rule("matmul_rule"),
         sample=spec.Sample(((2, 3, 4), (4,)), lambda L, a, b: L.matmul(a, b) + (a @ a.transpose(1, 2)).sum(0)[0]
                            + (b @ a[0].t()).sum() + (a[1] @ b)[0]))
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """The matrix product with NumPy's (and PyTorch's) rules for vectors and batches."""
    if type(a) is Tensor and type(b) is Tensor and a._data.ndim == 2 and b._data.ndim == 2:
        return mm(a, b)  # the common case first
    _operands(a, b, "matmul")
    da, db = a._data.ndim, b._data.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"matmul needs tensors of at least 1 dimension, not {da}-d and {db}-d")
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        return S._squeeze_(mm(S.unsqueeze(a, 0), b), 0)
    if da == 2 and db == 2:
        return mm(a, b)
    if _should_fold(a, b):
        return _folded(a, b)
    return _batched(a, b)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """Whether the larger operand's batch can be folded into the rows of one `mm`/`mv` (PyTorch's test)."""
    a_larger = a._data.ndim >= b._data.ndim
    t1 = a._data if a_larger else np.swapaxes(b._data, -1, -2)
    small = b if a_larger else a
    if not (t1.ndim >= 3 and small._data.ndim <= 2):
        return False
    if small._requires_grad:
        return True  # folding keeps the small operand's gradient one product, not a batch summed
    if a._data.ndim == 2:
        return False
    if t1.size == 0:
        return True
    strides = [s // t1.itemsize for s in t1.strides]
    return all(strides[i] == strides[i + 1] * t1.shape[i + 1] for i in range(t1.ndim - 2))


def _folded(a: Tensor, b: Tensor) -> Tensor:
    transpose = b._data.ndim > a._data.ndim
    t1 = S.mT(b) if transpose else a
    t2 = (S.t(a) if a._data.ndim == 2 else a) if transpose else b
    sizes = t1._data.shape
    out_shape = sizes[:-1]
    folded = S.reshape(t1, (math.prod(out_shape), sizes[-1]))
    if t2._data.ndim == 2:
        out = S.unsafe_view(mm(folded, t2), out_shape + (t2._data.shape[1],))
        if not transpose:
            return out
        out = S.mT(out)
        if out._data.flags.c_contiguous:
            return out
        return clone(out)  # PyTorch's `.contiguous()` of the transposed result
    return S.unsafe_view(mv(folded, t2), out_shape)


def _batched(a: Tensor, b: Tensor) -> Tensor:
    da, db = a._data.ndim, b._data.ndim
    sa, sb = a._data.shape, b._data.shape
    n = sa[-2] if da > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if db > 1 else sb[0]
    p = sb[-1] if db > 1 else 1
    batch_a, batch_b = sa[: max(da - 2, 0)], sb[: max(db - 2, 0)]
    if da == 3 and db == 3 and batch_a[0] != batch_b[0]:
        # a batch of one against a larger batch: drop it and fold, as PyTorch does for gradients' sake
        if batch_a[0] == 1 and a._requires_grad:
            return matmul(S.squeeze(a, 0), b)
        if batch_b[0] == 1 and b._requires_grad:
            return matmul(a, S.squeeze(b, 0))
    try:
        batch = tuple(np.broadcast_shapes(batch_a, batch_b))
    except ValueError:
        raise RuntimeError(broadcast_message([batch_a, batch_b])) from None
    count = math.prod(batch)
    if m1 != m2:
        raise _batch_mismatch(count, m1, (count, m2))
    a3 = S.reshape(expand(a, batch + (n, m1)), (count, n, m1))
    if db == 1:
        b3 = S.unsqueeze(S.reshape(expand(b, batch + (m2,)), (count, m2)), 2)
    else:
        b3 = S.reshape(expand(b, batch + (m2, p)), (count, m2, p))
    out = bmm(a3, b3)
    if db == 1:
        out = S.squeeze(out, -1)
    return S.unsafe_view(out, batch + ((n,) if da > 1 else ()) + ((p,) if db > 1 else ()))


def _matmul_operator(a: Tensor, b: Any) -> Any:
    """`a @ b`: NotImplemented for a non-tensor, so that Python raises its TypeError. `a` and `b` are plain
    here (a batched tensor has its own operators, which Python asks first), so matmul as written."""
    if not isinstance(b, Tensor):
        return NotImplemented
    return _matmul(a, b)


def _rmatmul_operator(a: Tensor, b: Any) -> Any:
    """`b @ a` when `b` is not a gradcalc tensor."""
    if not isinstance(b, Tensor):
        return NotImplemented
    return _matmul(b, a)


_matmul = spec.raw_of(matmul)


# the operators; the named functions and methods are the specs'
METHODS = {"__matmul__": _matmul_operator, "__rmatmul__": _rmatmul_operator}
