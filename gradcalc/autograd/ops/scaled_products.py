"""`addmv`, `addr`, `baddbmm`, `addbmm`: a product scaled and added to a tensor (`beta * input + alpha *
product`), each with PyTorch's own node and saved names (AddmvBackward0, AddrBackward0, BaddbmmBackward0,
AddbmmBackward0) and derivatives.yaml's formulas. A family loaded at first use (ops/lazy.py); the other
products are in products.py."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from .binary import mul_scalar, plus
from .core import needs, record, result
from .linalg import bmm, mv, outer
from .products import _front_all, _tensor
from .sums import expand, sum_to
from .sums import sum as tsum


def _scale_add(B: Any, c: Any, prod: Any, beta: Any, alpha: Any) -> Any:
    """beta * c + alpha * prod on batches (c's sample dims broadcast against prod's)."""
    if alpha != 1:
        prod = B.bind("mul", prod, alpha)
    if beta == 0:
        return prod
    c = B.pad(c, B.ndim(prod) - 1)
    return B.bind("add", prod, c if beta == 1 else B.bind("mul", c, beta))


def _addmv_rule(args: tuple, dims: tuple, *, beta: Any = 1, alpha: Any = 1) -> tuple[Any, Any]:
    B, (c, m, v) = _front_all(args, dims, 3)
    prod = B.bind("squeeze", B.bind("matmul", m, B.bind("unsqueeze", v, -1)), -1)
    return _scale_add(B, c, prod, beta, alpha), 0


def _addr_rule(args: tuple, dims: tuple, *, beta: Any = 1, alpha: Any = 1) -> tuple[Any, Any]:
    B, (c, a, b) = _front_all(args, dims, 3)
    prod = B.bind("mul", B.bind("unsqueeze", a, 2), B.bind("unsqueeze", b, 1))
    return _scale_add(B, c, prod, beta, alpha), 0


def _baddbmm_rule(summed: bool) -> Any:
    def rule(args: tuple, dims: tuple, *, beta: Any = 1, alpha: Any = 1) -> tuple[Any, Any]:
        B, (c, b1, b2) = _front_all(args, dims, 3)
        prod = B.bind("matmul", b1, b2)
        if summed:
            prod = B.bind("sum", prod, 1)
        return _scale_add(B, c, prod, beta, alpha), 0

    return rule


# -- addmv, addr ----------------------------------------------------------------------------------------------
def _scaled(t: Any, s: Any) -> Any:
    """maybe_multiply: `t` itself when `s` is 1."""
    return t if t is None or s == 1 else mul_scalar(t, s)


def _addmv_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, m, v), (ti, tm, tv) = inputs, tangents
    prod = plus(None if tm is None else mv(tm, v), None if tv is None else mv(m, tv))
    prod = _scaled(prod, node.alpha)
    ti = None if ti is None or node.beta == 0 else _scaled(ti, node.beta)
    return plus(ti, prod)


def _expand_error(target: tuple[int, ...], shape: tuple[int, ...]) -> RuntimeError:
    n = len(target) - len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] != 1 and shape[i] != target[i + n]:
            return RuntimeError(f"The expanded size of the tensor ({target[i + n]}) must match the existing size "
                                f"({shape[i]}) at non-singleton dimension {i + n}.  Target sizes: {list(target)}.  "
                                f"Tensor sizes: {list(shape)}")
    return RuntimeError(f"the input of shape {list(shape)} does not broadcast to {list(target)}")


def _beta_plus(c: Tensor, prod: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    """beta * c + alpha * prod, broadcast to prod's shape (PyTorch's expand of `self` first)."""
    cd = c._data
    if len(cd.shape) > prod.ndim or np.broadcast_shapes(cd.shape, prod.shape) != prod.shape:
        raise _expand_error(prod.shape, cd.shape)
    out = prod * alpha if alpha != 1 else prod
    if beta == 0:  # PyTorch ignores `self` then (nan and inf in it included)
        return np.asarray(out + np.zeros_like(out))
    return np.asarray(out + (cd if beta == 1 else cd * beta))


def _checked_broadcast(c: Tensor, shape: tuple[int, ...]) -> None:
    try:
        ok = len(c._data.shape) <= len(shape) and np.broadcast_shapes(c._data.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise _expand_error(shape, c._data.shape)


@spec.node(
    formula={"self": "maybe_multiply(grad, beta.conj())", "mat": "maybe_multiply(grad.ger(vec.conj()), alpha.conj())",
             "vec": "maybe_multiply(mat.t().conj().mv(grad), alpha.conj())"},
    saved={"alpha": SV.field("alpha"), "beta": SV.field("beta"), "mat": SV.tensor(0), "vec": SV.tensor(1)},
    jvp=_addmv_jvp, tangent="maybe_multiply(self_t, beta) + maybe_multiply(mat_t.mv(vec_p), alpha) + "
    "maybe_multiply(mat_p.mv(vec_t), alpha)",
)
class AddmvBackward0(Node):
    __slots__ = ("alpha", "beta", "in_shape")

    def apply(self, g: Tensor) -> tuple:
        m, v = self.saved_tensors
        gi = sum_to(_scaled(g, self.beta), self.in_shape) if needs(self, 0) else None
        gm = _scaled(outer(g, v), self.alpha) if needs(self, 1) else None
        gv = _scaled(mv(S.t(m), g), self.alpha) if needs(self, 2) else None
        return (gi, gm, gv)


@spec.op("addmv", nodes=(AddmvBackward0,), vmap=_addmv_rule,
         sample=spec.Sample(((2,), (2, 3), (3,)), lambda L, c, m, v: L.addmv(c, m, v) + c.addmv(m, v, beta=0.5,
                                                                                               alpha=2.0)
                            + L.addmv(c[:1], m, v)))
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * (mat @ vec), with `input` broadcast to the product's shape (one node)."""
    _tensor(input, "addmv", "input", 1)
    _tensor(mat, "addmv", "mat", 2)
    _tensor(vec, "addmv", "vec", 3)
    m, v, c = mat._data, vec._data, input._data
    if m.ndim != 2 or v.ndim != 1 or c.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {c.ndim}, {m.ndim}, {v.ndim}")
    if m.shape[1] != v.shape[0] or (c.ndim == 1 and c.shape[0] not in (1, m.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({c.shape[0] if c.ndim else 1}), mat "
                           f"({m.shape[0]}x{m.shape[1]}), vec ({v.shape[0]})")
    data = _beta_plus(input, m @ v, beta, alpha)
    node = record(AddmvBackward0, input, mat, vec)
    if node is not None:
        node.alpha, node.beta, node.in_shape = alpha, beta, c.shape
        node.save(mat, vec)
    return result(data, node)


def _addr_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, a, b), (ti, ta, tb) = inputs, tangents
    prod = plus(None if ta is None else outer(ta, b), None if tb is None else outer(a, tb))
    prod = _scaled(prod, node.alpha)
    ti = None if ti is None or node.beta == 0 else _scaled(ti, node.beta)
    return plus(ti, prod)


@spec.node(
    formula={"self": "maybe_multiply(grad, beta.conj())", "vec1": "maybe_multiply(grad.mv(vec2.conj()), alpha.conj())",
             "vec2": "maybe_multiply(grad.t().mv(vec1.conj()), alpha.conj())"},
    saved={"alpha": SV.field("alpha"), "beta": SV.field("beta"), "vec1": SV.tensor(0), "vec2": SV.tensor(1)},
    jvp=_addr_jvp, tangent="maybe_multiply(self_t, beta) + maybe_multiply(vec1_t.outer(vec2_p), alpha) + "
    "maybe_multiply(vec1_p.outer(vec2_t), alpha)",
)
class AddrBackward0(Node):
    __slots__ = ("alpha", "beta", "in_shape")

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        gi = sum_to(_scaled(g, self.beta), self.in_shape) if needs(self, 0) else None
        ga = _scaled(mv(g, b), self.alpha) if needs(self, 1) else None
        gb = _scaled(mv(S.t(g), a), self.alpha) if needs(self, 2) else None
        return (gi, ga, gb)


@spec.op("addr", nodes=(AddrBackward0,), vmap=_addr_rule,
         sample=spec.Sample(((2, 3), (2,), (3,)), lambda L, c, a, b: L.addr(c, a, b) + c.addr(a, b, beta=0.5,
                                                                                             alpha=2.0)
                            + L.addr(c[0], a, b)))
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1, alpha: float = 1) -> Tensor:  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2), with `input` broadcast to the product's shape (one node)."""
    _tensor(input, "addr", "input", 1)
    _tensor(vec1, "addr", "vec1", 2)
    _tensor(vec2, "addr", "vec2", 3)
    a, b = vec1._data, vec2._data
    if a.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {a.ndim}-D")
    if b.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {b.ndim}-D")
    data = _beta_plus(input, np.multiply.outer(a, b), beta, alpha)
    node = record(AddrBackward0, input, vec1, vec2)
    if node is not None:
        node.alpha, node.beta, node.in_shape = alpha, beta, input._data.shape
        node.save(vec1, vec2)
    return result(data, node)


# -- baddbmm, addbmm ------------------------------------------------------------------------------------------
def _bmm_checks(b1: Tensor, b2: Tensor) -> None:
    d1, d2 = b1._data, b2._data
    if d1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if d2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")


def _baddbmm_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (_, a, b), (ti, ta, tb) = inputs, tangents
    prod = plus(None if ta is None else bmm(ta, b), None if tb is None else bmm(a, tb))
    if prod is not None and node.summed:
        prod = tsum(prod, 0)
    prod = _scaled(prod, node.alpha)
    ti = None if ti is None or node.beta == 0 else _scaled(ti, node.beta)
    return plus(ti, prod)


@spec.node(
    formula={"self": "maybe_multiply(grad, beta.conj())",
             "batch1": "maybe_multiply(grad.bmm(batch2.transpose(1, 2).conj()), alpha.conj())",
             "batch2": "maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad), alpha.conj())"},
    saved={"alpha": SV.field("alpha"), "batch1": SV.tensor(0), "batch2": SV.tensor(1), "beta": SV.field("beta")},
    jvp=_baddbmm_jvp, tangent="maybe_multiply(self_t, beta) + maybe_multiply(batch1_t.bmm(batch2_p), alpha) + "
    "maybe_multiply(batch1_p.bmm(batch2_t), alpha)",
)
class BaddbmmBackward0(Node):
    __slots__ = ("alpha", "beta", "in_shape", "summed")

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        gi = sum_to(_scaled(g, self.beta), self.in_shape) if needs(self, 0) else None
        if self.summed:  # addbmm: the gradient of every batch's product is the same
            g = expand(S.unsqueeze(g, 0), (a._data.shape[0], a._data.shape[1], b._data.shape[2]))
        ga = _scaled(bmm(g, S.transpose(b, 1, 2)), self.alpha) if needs(self, 1) else None
        gb = _scaled(bmm(S.transpose(a, 1, 2), g), self.alpha) if needs(self, 2) else None
        return (gi, ga, gb)


@spec.node(
    formula={"self": "maybe_multiply(grad, beta.conj())",
             "batch1": "maybe_multiply(grad.unsqueeze(0).expand_symint({ batch1.sym_size(0), batch1.sym_size(1), "
             "batch2.sym_size(2) }).bmm(batch2.transpose(1, 2).conj()), alpha.conj())",
             "batch2": "maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad.unsqueeze(0).expand_symint({ "
             "batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2) })), alpha.conj())"},
    saved={"alpha": SV.field("alpha"), "batch1": SV.tensor(0), "batch1_sym_argsize_0": SV.field("n_batch"),
           "batch1_sym_argsize_1": SV.field("rows"), "batch2": SV.tensor(1), "batch2_sym_argsize_2": SV.field("cols"),
           "beta": SV.field("beta")},
    jvp=_baddbmm_jvp, tangent="maybe_multiply(self_t, beta) + maybe_multiply(at::sum(batch1_t.bmm(batch2_p), 0), "
    "alpha) + maybe_multiply(at::sum(batch1_p.bmm(batch2_t), 0), alpha)",
)
class AddbmmBackward0(BaddbmmBackward0):
    __slots__ = ("n_batch", "rows", "cols")


def _baddbmm(cls: type[Node], input: Tensor, b1: Tensor, b2: Tensor, beta: Any, alpha: Any,  # noqa: A002
             summed: bool) -> Tensor:
    name = "addbmm" if summed else "baddbmm"
    _tensor(input, name, "input", 1)
    _tensor(b1, name, "batch1", 2)
    _tensor(b2, name, "batch2", 3)
    _bmm_checks(b1, b2)
    s1, s2 = b1._data.shape, b2._data.shape
    if summed:
        if s1[0] != s2[0]:
            raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} and {s2[0]}")
        if s1[2] != s2[1]:
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and {s2[1]}x{s2[2]})")
    elif s1[0] != s2[0] or s1[2] != s2[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] but "
                           f"got: [{s2[0]}, {s2[1]}].")
    prod = b1._data @ b2._data
    if summed:
        prod = prod.sum(0)
    data = _beta_plus(input, prod, beta, alpha)
    node = record(cls, input, b1, b2)
    if node is not None:
        node.alpha, node.beta, node.in_shape, node.summed = alpha, beta, input._data.shape, summed
        if summed:
            node.n_batch, node.rows, node.cols = s1[0], s1[1], s2[2]
        node.save(b1, b2)
    return result(data, node)


@spec.op("baddbmm", nodes=(BaddbmmBackward0,), vmap=_baddbmm_rule(False),
         sample=spec.Sample(((2, 2, 4), (2, 2, 3), (2, 3, 4)), lambda L, c, a, b: L.baddbmm(c, a, b)
                            + c.baddbmm(a, b, beta=0.5, alpha=2.0) + L.baddbmm(c[0, 0], a, b)))
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,  # noqa: A002
            alpha: float = 1) -> Tensor:
    """beta * input + alpha * (batch1 @ batch2), a product per batch, `input` broadcast (one node)."""
    return _baddbmm(BaddbmmBackward0, input, batch1, batch2, beta, alpha, False)


@spec.op("addbmm", nodes=(AddbmmBackward0,), vmap=_baddbmm_rule(True),
         sample=spec.Sample(((2, 4), (3, 2, 3), (3, 3, 4)), lambda L, c, a, b: L.addbmm(c, a, b)
                            + c.addbmm(a, b, beta=0.5, alpha=2.0) + L.addbmm(c[0], a, b)))
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,  # noqa: A002
           alpha: float = 1) -> Tensor:
    """beta * input + alpha * the sum over the batch of batch1 @ batch2, `input` broadcast (one node)."""
    return _baddbmm(AddbmmBackward0, input, batch1, batch2, beta, alpha, True)
