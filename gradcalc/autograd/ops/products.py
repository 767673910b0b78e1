"""The products real programs call besides `mm`/`matmul`: `cross` (`linalg.cross`), `kron`, `tensordot`, `inner`,
`dist`, `cdist`, `vdot`, `linalg.vecdot`, `linalg.multi_dot`, `matrix_power` (`linalg.matrix_power`); the scaled
products (addmv, addr, baddbmm, addbmm) are in scaled_products.py. A family loaded at first use (ops/lazy.py).

Where PyTorch records a node of its own (LinalgCrossBackward0, DistBackward0, CdistBackward0, VdotBackward0) so
does this module, with derivatives.yaml's
formula and saved names; where PyTorch's function is a composite of others (kron, tensordot, inner, vecdot,
multi_dot, matrix_power: aten/src/ATen/native/LinearAlgebra.cpp) it is written with the same operations in the
same order, so that the graph, its node names and every derivative are PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import shape as S
from .arithmetic import mul, neg, sub
from .basic import clone
from .binary import mul_scalar, plus
from .core import broadcast_message, needs, record, result
from .inplace import copy_
from .inverses import _square, inverse
from .linalg import dot, matmul, mm
from .reductions import norm, norm_backward
from .sums import sum as tsum
from .sums import sum_to


def _tensor(x: Any, fn: str, name: str, position: int) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {type(x).__name__}")
    return x


def _rule(name: str, tensors: int = 2, dim_params: tuple[str, ...] = ()) -> Any:
    """The vmap rule of an operation that takes leading dims as a batch (and broadcasts them): every batched
    operand's batch dim first, the others given leading dims of size 1 so that they broadcast, and the sample's
    dims named by `dim_params` (or the positional argument after the tensors) counted past the batch dim."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        B = spec.RULES  # vmap's batching.py, handed down when it loads
        k = min(tensors, len(args))
        size = B.batch_size(args, dims)
        rank = max(B.ndim(a) - (d is not None) for a, d in zip(args[:k], dims[:k], strict=True))
        moved = [B.pad(B.materialize(a, d, size), rank) for a, d in zip(args[:k], dims[:k], strict=True)]
        rest = list(args[k:])
        for i, pname in enumerate(dim_params):
            if pname in params and params[pname] is not None and params[pname] < 0:
                continue  # counted from the end: the same dim of the batch
            if pname in params and params[pname] is not None:
                params[pname] = params[pname] + 1
            elif i < len(rest) and rest[i] is not None and rest[i] >= 0:
                rest[i] = rest[i] + 1
        return B.bind(name, *moved, *rest, **params), 0

    return rule


# -- vmap rules of the products (the batch dim first, written with the batched operations) --------------------
def _front_all(args: tuple, dims: tuple, k: int) -> tuple[Any, list[Any]]:
    B = spec.RULES
    size = B.batch_size(args, dims)
    return B, [B.materialize(a, d, size) for a, d in zip(args[:k], dims[:k], strict=True)]


def _kron_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    B, (a, b) = _front_all(args, dims, 2)
    n = max(B.ndim(a), B.ndim(b)) - 1
    a, b = B.pad(a, n), B.pad(b, n)
    sa, sb = B.shape_of(a), B.shape_of(b)
    a_shape = (sa[0],) + tuple(x for i in range(n) for x in (sa[i + 1], 1))
    b_shape = (sb[0],) + tuple(x for i in range(n) for x in (1, sb[i + 1]))
    prod = B.bind("mul", B.bind("reshape", a, a_shape), B.bind("reshape", b, b_shape))
    return B.bind("reshape", prod, (sa[0],) + tuple(sa[i + 1] * sb[i + 1] for i in range(n))), 0


def _letters(n: int, start: int = 0) -> str:
    return "".join(chr(ord("a") + start + i) for i in range(n))


def _tensordot_rule(args: tuple, in_dims: tuple, **params: Any) -> tuple[Any, Any]:
    """tensordot of a batch: an einsum with the batch dim shared. (`in_dims`: the batch dims, tensordot's own
    `dims=` comes in `params`)"""
    rest = args[2:]
    given = rest[0] if rest else params.get("dims", 2)
    if isinstance(given, Tensor):
        given = given.tolist()
    B, (a, b) = _front_all(args, in_dims, 2)
    na, nb = B.ndim(a) - 1, B.ndim(b) - 1
    if isinstance(given, int):
        da, db = list(range(na - given, na)), list(range(given))
    else:
        first, second = given
        da = [first] if isinstance(first, int) else list(first)
        db = [second] if isinstance(second, int) else list(second)
        da, db = [d % na for d in da], [d % nb for d in db]
    la, lb = list(_letters(na)), list(_letters(nb, na))
    for x, y in zip(da, db, strict=True):
        lb[y] = la[x]
    out = [c for i, c in enumerate(la) if i not in da] + [c for i, c in enumerate(lb) if i not in db]
    return B.bind("einsum", f"z{''.join(la)},z{''.join(lb)}->z{''.join(out)}", a, b), 0


def _inner_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    B, (a, b) = _front_all(args, dims, 2)
    if B.ndim(a) == 1 or B.ndim(b) == 1:  # a 0-d sample: a product
        return spec.RULES.pointwise("mul")((a, b), (0, 0))
    return _tensordot_rule((a, b, ([-1], [-1])), (0, 0))


def _dist_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    B, (a, b) = _front_all(args, dims, 2)
    p = args[2] if len(args) > 2 else params.get("p", 2)
    rank = max(B.ndim(a), B.ndim(b)) - 1
    d = B.bind("sub", B.pad(a, rank), B.pad(b, rank))
    return B.bind("norm", d, p, tuple(range(1, rank + 1)) or None), 0


def _vdot_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    B, (a, b) = _front_all(args, dims, 2)
    return B.bind("sum", B.bind("mul", a, b), 1), 0


def _multi_dot_rule(args: tuple, dims: tuple) -> tuple[Any, Any]:
    B = spec.RULES
    (items,), (ds,) = args, dims
    size = B.batch_size(args, dims)
    xs = [B.materialize(x, d, size) for x, d in zip(items, ds, strict=True)]
    first, last = B.ndim(xs[0]) == 2, B.ndim(xs[-1]) == 2
    if first:
        xs[0] = B.bind("unsqueeze", xs[0], 1)
    if last:
        xs[-1] = B.bind("unsqueeze", xs[-1], -1)
    out = xs[0]
    for x in xs[1:]:
        out = B.bind("matmul", out, x)
    if last:
        out = B.bind("squeeze", out, -1)
    if first:
        out = B.bind("squeeze", out, 1)
    return out, 0


# -- cross ----------------------------------------------------------------------------------------------------
def _cross_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a, b), (ta, tb) = inputs, tangents
    d = node.dim
    return plus(None if ta is None else linalg_cross(ta, b, dim=d), None if tb is None else linalg_cross(a, tb, dim=d))


@spec.node(
    formula={"self": "at::linalg_cross(other.conj(), grad, dim)", "other": "at::linalg_cross(grad, self.conj(), dim)"},
    saved={"dim": SV.field("dim"), "other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=_cross_jvp, tangent="at::linalg_cross(self_t, other_p, dim) + at::linalg_cross(self_p, other_t, dim)",
)
class LinalgCrossBackward0(Node):
    """The cross product's gradients are cross products with the other operand (summed back where broadcast)."""

    __slots__ = ("dim", "shapes")

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        ga = sum_to(linalg_cross(b, g, dim=self.dim), self.shapes[0]) if needs(self, 0) else None
        gb = sum_to(linalg_cross(g, a, dim=self.dim), self.shapes[1]) if needs(self, 1) else None
        return (ga, gb)


@spec.op("linalg_cross", method=False, top_level=False, nodes=(LinalgCrossBackward0,),
         vmap=_rule("linalg_cross", 2, ("dim",)),
         sample=spec.Sample(((4, 3), (3,)), lambda L, a, b: L.linalg.cross(a, b.expand(4, 3))
                            + L.cross(a, a.flip(0), dim=1) + a.cross(b.expand(4, 3), dim=-1)))
def linalg_cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002 - PyTorch's names
    """The cross product of 3-vectors along `dim` (leading dims broadcast)."""
    _tensor(input, "linalg_cross", "input", 1)
    _tensor(other, "linalg_cross", "other", 2)
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = S.dim_index(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    try:
        out_shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise RuntimeError(broadcast_message([a.shape, b.shape])) from None
    data = np.cross(np.broadcast_to(a, out_shape), np.broadcast_to(b, out_shape), axis=d) if a.size or b.size \
        else np.zeros(out_shape, dtype=np.result_type(a, b))
    node = record(LinalgCrossBackward0, input, other)
    if node is not None:
        node.dim, node.shapes = dim, (a.shape, b.shape)
        node.save(input, other)
    return result(np.asarray(data), node)


@spec.op("cross", nodes=(LinalgCrossBackward0,), vmap=_rule("cross", 2, ("dim",)),
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.cross(a, b, dim=1) + a.cross(b, 1)))
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The cross product of 3-vectors along `dim` (no `dim`: the first dim of size 3, with PyTorch's warning)."""
    _tensor(input, "cross", "input", 1)
    _tensor(other, "cross", "other", 2)
    if dim is None:
        warnings.warn("cross without dim is deprecated (PyTorch's warning): pass dim explicitly, or use "
                      "linalg.cross; the default dim will change to agree with linalg.cross's", UserWarning,
                      stacklevel=2)
        try:
            shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        except ValueError:
            shape = input._data.shape
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


# -- kron -----------------------------------------------------------------------------------------------------
@spec.op("kron", vmap=_kron_rule,
         sample=spec.Sample(((2, 2), (3, 2)), lambda L, a, b: L.kron(a, b) + a.kron(b.flip(0))))
def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product: every element of `input` times all of `other` (PyTorch's reshapes and one mul)."""
    _tensor(input, "kron", "input", 1)
    _tensor(other, "kron", "other", 2)
    sa, sb = input._data.shape, other._data.shape
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    a_shape = tuple(x for i in range(n) for x in (pa[i], 1))
    b_shape = tuple(x for i in range(n) for x in (1, pb[i]))
    return S.unsafe_view(mul(S.unsafe_view(input, a_shape), S.unsafe_view(other, b_shape)),
                         tuple(pa[i] * pb[i] for i in range(n)))


# -- tensordot, inner ------------------------------------------------------------------------------------------
def _tensordot(a: Tensor, b: Tensor, dims_a: list[int], dims_b: list[int]) -> Tensor:
    """PyTorch's tensordot: contracted dims of size 1 on one side summed first (they broadcast), both operands
    permuted (free dims, then contracted ones) and reshaped to matrices for one `mm` (or to vectors for one `dot`
    when neither has a free dim), the product reshaped to the free dims."""
    na, nb = a._data.ndim, b._data.ndim
    da = [S.dim_index(d, na) for d in dims_a]
    db = [S.dim_index(d, nb) for d in dims_b]
    t1, t2, csize = a, b, 1
    for x, y, gx, gy in zip(da, db, dims_a, dims_b, strict=True):
        s1, s2 = a._data.shape[x], b._data.shape[y]
        if s2 == 1:  # a broadcast dimension is summed right away
            t1 = tsum(t1, x, True)
        elif s1 == 1:
            t2 = tsum(t2, y, True)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {gx} and "
                               f"second has size {s2} in dim {gy}")
        else:
            csize *= s1
    keep_a = [i for i in range(na) if i not in da]
    keep_b = [i for i in range(nb) if i not in db]
    size_a = math.prod(t1._data.shape[i] for i in keep_a)
    size_b = math.prod(t2._data.shape[i] for i in keep_b)
    out_shape = tuple(t1._data.shape[i] for i in keep_a) + tuple(t2._data.shape[i] for i in keep_b)
    p1, p2 = S.permute(t1, keep_a + da), S.permute(t2, db + keep_b)
    if not keep_a and not keep_b:  # no free dims: a dot product of two vectors
        v1 = p1 if p1._data.shape == (csize,) else S.reshape(p1, (csize,))
        v2 = p2 if p2._data.shape == (csize,) else S.reshape(p2, (csize,))
        return S.reshape(dot(v1, v2), out_shape)
    return S.reshape(mm(S.reshape(p1, (size_a, csize)), S.reshape(p2, (csize, size_b))), out_shape)


@spec.op("tensordot", method=False, vmap=_tensordot_rule,
         sample=spec.Sample(((2, 3, 4), (3, 4, 2)), lambda L, a, b: L.tensordot(a, b, 2)
                            + L.tensordot(a, b, dims=([1, 2], [0, 1])) + L.tensordot(a, b.permute(1, 0, 2),
                                                                                      dims=([2, 1], [0, 1]))))
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """The sum of products over `dims`: the last `dims` of `a` with the first of `b`, or the dims of two lists."""
    _tensor(a, "tensordot", "a", 1)
    _tensor(b, "tensordot", "b", 2)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > a._data.ndim or n > b._data.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        dims_a, dims_b = list(range(-n, 0)), list(range(n))
    else:
        first, second = dims
        dims_a = [first] if isinstance(first, int) else list(first)
        dims_b = [second] if isinstance(second, int) else list(second)
        if len(dims_a) != len(dims_b):
            raise RuntimeError("both dimension lists should have same length")
    return _tensordot(a, b, dims_a, dims_b)


@spec.op("inner", vmap=_inner_rule,
         sample=spec.Sample(((2, 3), (4, 3)), lambda L, a, b: L.inner(a, b) + a.inner(b[:2]).sum()
                            + L.inner(a[0], b[1])))
def inner(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The sum of products over the last dim of both (a number times a tensor when one is 0-d)."""
    _tensor(input, "inner", "input", 1)
    _tensor(other, "inner", "other", 2)
    sa, sb = input._data.shape, other._data.shape
    if not sa or not sb:
        return mul(input, other)
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes {list(sa)} "
                           f"and {list(sb)}")
    return _tensordot(input, other, [-1], [-1])


# -- dist -----------------------------------------------------------------------------------------------------
def _dist_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """The p-norm's derivative at self - other (a linear functional, norm_backward's with a gradient of 1)
    applied to self_t - other_t."""
    (a, b), (ta, tb) = inputs, tangents
    t = ta if tb is None else (neg(tb) if ta is None else sub(ta, tb))
    if t is None:
        return None
    d = sub(a, b)
    grad = norm_backward(Tensor._make(np.ones((), dtype=out._data.dtype), False, None), d, node.p, out)
    return None if grad is None else tsum(mul(grad, t))


@spec.node(
    formula={"self": "norm_backward(grad, self - other, p, result)",
             "other": "-norm_backward(grad, self - other, p, result)"},
    saved={"other": SV.tensor(1), "p": SV.field("p"), "result": SV.tensor(2), "self": SV.tensor(0)},
    jvp=_dist_jvp, tangent="norm_jvp(self_p - other_p, self_t - other_t, p, result, {}, false)",
)
class DistBackward0(Node):
    """The p-norm's gradient at self - other, for self and (negated) for other, summed back where broadcast."""

    __slots__ = ("p", "shapes")

    def apply(self, g: Tensor) -> tuple:
        a, b, r = self.saved_tensors
        grad = norm_backward(g, sub(a, b), self.p, r)
        if grad is None:  # p = 0: a count, whose gradient is zero
            grad = mul_scalar(sub(a, b), 0.0)
        ga = sum_to(grad, self.shapes[0]) if needs(self, 0) else None
        gb = sum_to(neg(grad), self.shapes[1]) if needs(self, 1) else None
        return (ga, gb)


@spec.op("dist", nodes=(DistBackward0,), vmap=_dist_rule,
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.dist(a, b) + a.dist(b, 3) + L.dist(a, b, 1)))
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-norm of input - other (broadcast together)."""
    _tensor(input, "dist", "input", 1)
    _tensor(other, "dist", "other", 2)
    sa, sb = input._data.shape, other._data.shape
    try:
        np.broadcast_shapes(sa, sb)
    except ValueError:
        raise RuntimeError(broadcast_message([sa, sb])) from None
    diff = Tensor._make(np.asarray(input._data - other._data), False, None)
    value = norm(diff, p)._data
    node = record(DistBackward0, input, other)
    out = result(value, node)
    if node is not None:
        node.p, node.shapes = float(p), (sa, sb)
        node.save(input, other, SavedOutput(out))
    return out


# -- cdist ----------------------------------------------------------------------------------------------------
def _cdist_grad(g: np.ndarray, x1: np.ndarray, x2: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    """PyTorch's _cdist_backward for x1: sum over x2's rows of g times the gradient of ||x1_i - x2_j||_p."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    d = dist[..., None]
    gd = g[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 0:
            each = np.zeros_like(diff)
        elif p == 1:
            each = np.sign(diff) * gd
        elif p == 2:
            each = np.where(d == 0, 0.0, diff * gd / d)
        elif math.isinf(p):
            each = np.sign(diff) * (np.abs(diff) == d) * gd
        elif p < 1:
            each = np.where((diff == 0) | (d == 0), 0.0, np.sign(diff) * np.abs(diff) ** (p - 1) * gd / d ** (p - 1))
        elif p < 2:
            each = np.where(d == 0, 0.0, np.sign(diff) * np.abs(diff) ** (p - 1) * gd / d ** (p - 1))
        else:
            each = np.where(d == 0, 0.0, diff * np.abs(diff) ** (p - 2) * gd / d ** (p - 1))
    return np.asarray(each.sum(axis=-2), dtype=x1.dtype)


@spec.node(
    formula={"grad": "not_implemented(\"_cdist_backward\")", "x1": "not_implemented(\"_cdist_backward\")",
             "x2": "not_implemented(\"_cdist_backward\")", "cdist": "not_implemented(\"_cdist_backward\")"},
    no_jvp="_cdist_backward has no derivative in PyTorch: its tangent is an error, as its gradient is",
)
class CdistBackwardBackward0(Node):
    """What a create_graph gradient of cdist records: PyTorch has no derivative of _cdist_backward."""

    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        raise RuntimeError("the derivative for '_cdist_backward' is not implemented.")


def _cdist_gradient(g: Tensor, x1: Tensor, x2: Tensor, p: float, dist: Tensor, out: np.ndarray) -> Tensor:
    node = record(CdistBackwardBackward0, g, x1, x2, dist)
    return result(out, node)


@spec.node(
    formula={"x1": "_cdist_backward(grad.contiguous(), x1, x2, p, result)",
             "x2": "_cdist_backward(grad.mT().contiguous(), x2, x1, p, result.mT().contiguous())"},
    saved={"p": SV.field("p"), "result": SV.tensor(2), "x1": SV.tensor(0), "x2": SV.tensor(1)},
    no_jvp="_cdist_forward has no forward rule in PyTorch (not implemented): its tangent is an error",
)
class CdistBackward0(Node):
    """The gradients of the distances: per pair, the p-norm's gradient at x1_i - x2_j (summed over the other)."""

    __slots__ = ("p", "shapes")

    def apply(self, g: Tensor) -> tuple:
        x1, x2, r = self.saved_tensors
        gd, a, b, rd = g._data, x1._data, x2._data, r._data
        batch = rd.shape[:-2]
        a = np.broadcast_to(a, batch + a.shape[-2:])
        b = np.broadcast_to(b, batch + b.shape[-2:])
        g1 = g2 = None
        if needs(self, 0):
            g1 = sum_to(_cdist_gradient(g, x1, x2, self.p, r, _cdist_grad(gd, a, b, self.p, rd)), self.shapes[0])
        if needs(self, 1):
            # grad.mT().contiguous() and result.mT().contiguous(): the nodes PyTorch records for them
            gt, rt = clone(S.transpose(g, -1, -2)), clone(S.transpose(r, -1, -2))
            g2 = _cdist_gradient(gt, x2, x1, self.p, rt, _cdist_grad(gt._data, b, a, self.p, rt._data))
            g2 = sum_to(g2, self.shapes[1])
        return (g1, g2)


@spec.op("cdist", method=False, nodes=(CdistBackward0,), vmap=_rule("cdist", 2),
         sample=spec.Sample(((2, 4, 3), (5, 3)), lambda L, a, b: L.cdist(a, b) + L.cdist(a, b, p=1)
                            + L.cdist(a, b, 3.0) + L.cdist(a, b, float("inf"))))
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The p-norm distance between each row of `x1` and each row of `x2` (leading dims a broadcast batch)."""
    _tensor(x1, "cdist", "x1", 1)
    _tensor(x2, "cdist", "x2", 2)
    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_kind(a.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in (None, "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise RuntimeError(broadcast_message([a.shape[:-2], b.shape[:-2]])) from None
    diff = np.broadcast_to(a, batch + a.shape[-2:])[..., :, None, :] - \
        np.broadcast_to(b, batch + b.shape[-2:])[..., None, :, :]
    p = float(p)
    if p == 0:
        data = np.sum(diff != 0, axis=-1).astype(a.dtype)
    elif p == 2:
        data = np.sqrt(np.sum(diff * diff, axis=-1))
    elif math.isinf(p):
        data = np.max(np.abs(diff), axis=-1, initial=0.0)
    else:
        data = np.sum(np.abs(diff) ** p, axis=-1) ** (1.0 / p)
    node = record(CdistBackward0, x1, x2)
    out = result(np.asarray(data, dtype=a.dtype), node)
    if node is not None:
        node.p, node.shapes = p, (a.shape, b.shape)
        node.save(x1, x2, SavedOutput(out))
    return out


def _kind(dtype: np.dtype) -> str:
    return {"i": "Long" if dtype.itemsize == 8 else "Int", "b": "Bool", "u": "Byte"}.get(dtype.kind, str(dtype))


# -- vdot, vecdot ---------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "grad.conj() * other", "other": "grad * self"},
    saved={"other": SV.tensor(1), "self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: plus(
        None if tangents[0] is None else vdot(tangents[0], inputs[1]),
        None if tangents[1] is None else vdot(inputs[0], tangents[1])),
    tangent="at::vdot(self_t, other_p) + at::vdot(self_p, other_t)",
)
class VdotBackward0(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        a, b = self.saved_tensors
        return (mul(g, b) if needs(self, 0) else None, mul(g, a) if needs(self, 1) else None)


@spec.op("vdot", nodes=(VdotBackward0,), vmap=_vdot_rule,
         sample=spec.Sample(((3,), (3,)), lambda L, a, b: L.vdot(a, b) + a.vdot(a)))
def vdot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The dot product of two vectors (the first conjugated: for real ones, `dot`)."""
    _tensor(input, "vdot", "input", 1)
    _tensor(other, "vdot", "other", 2)
    a, b = input._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_torch_kind(a.dtype)} and "
                           f"{_torch_kind(b.dtype)}")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively")
    node = record(VdotBackward0, input, other)
    if node is not None:
        node.save(input, other)
    return result(np.asarray(np.vdot(a, b)), node)


def _torch_kind(dtype: np.dtype) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long", "int32": "Int", "bool": "Bool",
            "float16": "Half"}.get(str(dtype), str(dtype))


@spec.op("linalg_vecdot", method=False, top_level=False, vmap=_rule("linalg_vecdot", 2, ("dim",)),
         sample=spec.Sample(((2, 3), (3,)), lambda L, a, b: L.linalg.vecdot(a, b) + L.linalg.vecdot(a, a, dim=0).sum()))
def linalg_vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along `dim` (leading dims broadcast): (x.conj() * y).sum(dim)."""
    _tensor(x, "linalg_vecdot", "x", 1)
    _tensor(y, "linalg_vecdot", "y", 2)
    return tsum(mul(x, y), dim)


# -- multi_dot ------------------------------------------------------------------------------------------------
def _order(shapes: list[int]) -> list[list[int]]:
    """The cheapest order of the chain's products (the textbook dynamic programme, as PyTorch's
    matrix_chain_order): s[i][j] is where the chain i..j splits."""
    n = len(shapes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf  # type: ignore[call-overload]
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + shapes[i] * shapes[k + 1] * shapes[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(tensors: list[Tensor], split: list[list[int]], i: int, j: int) -> Tensor:
    if i == j:
        return tensors[i]
    k = split[i][j]
    return mm(_chain(tensors, split, i, k), _chain(tensors, split, k + 1, j))


@spec.op("linalg_multi_dot", method=False, top_level=False, vmap=_multi_dot_rule,
         sample=spec.Sample(((2, 3), (3, 4), (4, 2)), lambda L, a, b, c: L.linalg.multi_dot([a, b, c])
                            + L.linalg.multi_dot([a[0], b, c])[None] + L.linalg.multi_dot([a, b]).sum()))
def linalg_multi_dot(tensors: Any) -> Tensor:
    """The product of a chain of matrices in the cheapest order (the first and last may be vectors)."""
    items = list(tensors)
    n = len(items)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = items[0]._data.ndim, items[-1]._data.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if items[i]._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {items[i]._data.ndim}D")
    dtype = items[0]._data.dtype
    for i, t in enumerate(items[1:], 1):
        if t._data.dtype != dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_torch_kind(dtype)} and tensor {i} {_torch_kind(t._data.dtype)}")
    if first == 1:
        items[0] = S.unsqueeze(items[0], 0)
    if last == 1:
        items[-1] = S.unsqueeze(items[-1], -1)
    for i in range(n - 1):
        sa, sb = items[i]._data.shape, items[i + 1]._data.shape
        if sa[1] != sb[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(sa)} and {list(sb)} cannot "
                               "be multiplied")
    if n == 2:
        out = mm(items[0], items[1])
    elif n == 3:  # PyTorch's two orders of three, by their cost
        a, b = items[0]._data.shape, items[2]._data.shape
        cost_1 = (a[0] * b[0]) * (a[1] + b[1])
        cost_2 = (a[1] * b[1]) * (a[0] + b[0])
        out = mm(mm(items[0], items[1]), items[2]) if cost_1 < cost_2 else mm(items[0], mm(items[1], items[2]))
    else:
        shapes = [items[0]._data.shape[0]] + [t._data.shape[1] for t in items]
        out = _chain(items, _order(shapes), 0, n - 1)
    shape = out._data.shape
    final = tuple(s for s, keep in ((shape[0], first == 2), (shape[1], last == 2)) if keep)
    return S.view(out, final)


# -- matrix_power ---------------------------------------------------------------------------------------------
@spec.op("matrix_power", vmap=spec.rule("matrices", "matrix_power"),
         sample=spec.Sample(((3, 3), (2, 2, 2)), lambda L, a, b: L.matrix_power(a, 3) + a.matrix_power(2)
                            + L.linalg.matrix_power(a, 5) + L.matrix_power(a, 1) + L.matrix_power(b, 2).sum()
                            + L.matrix_power(a, -2) + L.matrix_power(a, 0)))
def matrix_power(input: Tensor, n: int) -> Tensor:  # noqa: A002
    """The matrix (each of a batch) to the integer power `n` (negative: of its inverse), by repeated squaring."""
    _tensor(input, "matrix_power", "input", 1)
    d = input._data
    if d.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 dimensions.")
    if d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are {d.shape[-2]} "
                           f"by {d.shape[-1]} matrices")
    n = int(n)
    a = input
    if n == 0:
        eye = Tensor._make(np.broadcast_to(np.eye(d.shape[-1], dtype=d.dtype), d.shape), False, None)
        return copy_(clone(a), eye)
    if n < 0:
        _square("inv", a)
        a = inverse(a)
        n = -n
    if n == 1:
        return clone(a) if a is input else a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    # binary exponentiation: the result is the product of a's squarings where n has a 1 bit
    z: Tensor | None = None
    out: Tensor | None = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        if n & 1:
            out = z if out is None else matmul(out, z)
        n >>= 1
    assert out is not None
    return out

