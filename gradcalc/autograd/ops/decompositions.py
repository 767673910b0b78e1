"""Solving and decomposing matrices, each of a batch over leading dims: `linalg.solve` (LinalgSolveExBackward0),
`linalg.slogdet`/`slogdet` (LinalgSlogdetBackward0) and `logdet`, `linalg.cholesky` (LinalgCholeskyExBackward0).
A family loaded at first use (ops/lazy.py).

The factorisations are LAPACK's through NumPy; the gradients are PyTorch's formulas (FunctionsManual.cpp's
linalg_solve_backward, slogdet_backward, cholesky_backward) written with the engine's operations, so that
create_graph differentiates them again.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node, SavedOutput
from ..tensor import Tensor
from . import shape as S
from .arithmetic import mul, neg, sub
from .binary import mul_scalar, plus
from .core import broadcast_message, needs, record, result
from .einsum import diagonal, diagonal_backward
from .elementwise import where
from .inverses import LinAlgError, _square, lu_factor
from .linalg import matmul
from .return_types import named_tuple
from .sums import expand, sum_to
from .sums import sum as tsum

_LINALG_SLOGDET = named_tuple("linalg_slogdet", ("sign", "logabsdet"))
_SLOGDET = named_tuple("slogdet", ("sign", "logabsdet"))


def _const(a: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(a), False, None)


def _diag_embed(v: Tensor) -> Tensor:
    """A batch of diagonal matrices with `v`'s last dim on their diagonals."""
    n = v._data.shape[-1]
    shape = v._data.shape + (n,)
    nd = len(shape)
    return diagonal_backward(v, shape, 0, nd - 2, nd - 1)


def _diag(a: Tensor) -> Tensor:
    nd = a._data.ndim
    return diagonal(a, 0, nd - 2, nd - 1)


# -- solve ----------------------------------------------------------------------------------------------------
def _vector_rhs(a: np.ndarray, b: np.ndarray) -> bool:
    """PyTorch's linalg_solve_is_vector_rhs: B is a vector (or a batch of them) rather than a matrix."""
    return b.ndim == 1 or (a.ndim - 1 == b.ndim and b.shape == a.shape[:-1])


def _solve_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """dX = A^-1 (dB - dA X) (left), dX = (dB - X dA) A^-1 (right); X recomputed from the inputs, so that
    reverse over forward differentiates it (PyTorch's result is differentiable there, its LU factors are not)."""
    (a, b), (ta, tb) = inputs, tangents
    vector = node.vector
    x = solve(a, b, left=node.left)
    xm = S.unsqueeze(x, -1) if vector else x
    rhs = None if tb is None else (S.unsqueeze(tb, -1) if vector else tb)
    if ta is not None:
        term = matmul(ta, xm) if node.left else matmul(xm, ta)
        rhs = neg(term) if rhs is None else sub(rhs, term)
    if rhs is None:
        return None
    # PyTorch's linalg_solve_jvp solves with the saved LU factors (not differentiable): A^-1 a constant there
    dx = solve(_const(a._data), rhs, left=node.left)
    return S.squeeze(dx, -1) if vector else dx


@spec.node(
    formula={"A": "linalg_solve_backward(grad, result, A, LU, pivots, left, grad_input_mask[1])",
             "B": "linalg_solve_backward(grad, result, A, LU, pivots, left, grad_input_mask[1])"},
    saved={"A": SV.tensor(0), "LU": SV.array("lu"), "left": SV.field("left"), "pivots": SV.array("pivots"),
           "result": SV.tensor(1)},
    jvp=_solve_jvp, tangent="linalg_solve_jvp(A_t, B_t, result, LU, pivots, left, A_p.is_contiguous() && "
    "!A_p.is_complex())",
)
class LinalgSolveExBackward0(Node):
    """gB = A^-H gX, gA = -gB X^H (left; X^H gB on the right), each summed back where batches broadcast."""

    __slots__ = ("lu", "pivots", "left", "vector", "shapes")

    def apply(self, g: Tensor) -> tuple:
        a, x = self.saved_tensors
        vector = self.vector
        gm = S.unsqueeze(g, -1) if vector else g
        xm = S.unsqueeze(x, -1) if vector else x
        gb = solve(S.mT(a), gm, left=self.left)
        ga = None
        if needs(self, 0):
            ga = neg(matmul(gb, S.mT(xm))) if self.left else neg(matmul(S.mT(xm), gb))
            ga = sum_to(ga, self.shapes[0])
        if not needs(self, 1):
            return (ga, None)
        return (ga, sum_to(S.squeeze(gb, -1) if vector else gb, self.shapes[1]))


def _solve_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """solve over a batch: both operands with the batch first; a vector right-hand side solved as a column."""
    B = spec.RULES
    (a, b), (da, db) = args[:2], dims[:2]
    size = B.batch_size(args, dims)
    a, b = B.materialize(a, da, size), B.materialize(b, db, size)
    shape_a, shape_b = tuple(B.shape_of(a)[1:]), tuple(B.shape_of(b)[1:])
    vector = params.get("left", True) and (len(shape_b) == 1 or shape_b == shape_a[:-1])
    if vector:
        return B.bind("squeeze", B.bind("linalg_solve", a, B.bind("unsqueeze", b, -1), *args[2:], **params), -1), 0
    return B.bind("linalg_solve", a, b, *args[2:], **params), 0


@spec.op("linalg_solve", method=False, top_level=False, nodes=(LinalgSolveExBackward0,), vmap=_solve_rule,
         sample=spec.Sample(((3, 3), (3,), (3, 2)), lambda L, a, b, c: L.linalg.solve(
             a + 3 * L.eye(3, dtype=a.dtype), b)
                            + L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), c).sum(1)
                            + L.linalg.solve(a + 3 * L.eye(3, dtype=a.dtype), c.t(), left=False).sum(0)))
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:  # noqa: N803 - PyTorch's names
    """The solution X of A X = B (X A = B with left=False), for a matrix or a batch of them; B a matrix or a
    vector (or batches of them, broadcast against A's)."""
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg_solve(): argument 'B' (position 2) must be Tensor, not {type(B).__name__}")
    a = _square("solve", A)
    b = B._data
    if b.dtype != a.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_torch_name(a.dtype)} and B of type {_torch_name(b.dtype)} instead")
    vector = left and _vector_rhs(a, b)
    bm = b[..., None] if vector else b
    n = a.shape[-1]
    if left and bm.shape[-2] != n or not left and bm.shape[-1] != n:
        rows, cols = bm.shape[-2:]
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                           f"{rows}x{cols})")
    # PyTorch factors A itself here (det and slogdet factor A^T)
    lu, pivots = lu_factor(a) if a.size else (a.copy(), np.zeros(a.shape[:-1], np.int32))
    if a.size and (np.diagonal(lu, axis1=-2, axis2=-1) == 0).any():
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.")
    try:
        if left:
            data = np.linalg.solve(a, bm) if a.size and bm.size else np.zeros(
                np.broadcast_shapes(a.shape[:-2], bm.shape[:-2]) + bm.shape[-2:], dtype=a.dtype)
        else:
            data = np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), np.swapaxes(bm, -1, -2)), -1, -2)
    except np.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
    except ValueError:
        raise RuntimeError(broadcast_message([a.shape[:-2], bm.shape[:-2]])) from None
    if vector:
        data = data[..., 0]
    node = record(LinalgSolveExBackward0, A, B)
    out = result(np.asarray(data, dtype=a.dtype), node)
    if node is not None:
        node.lu, node.pivots, node.left, node.vector = lu, pivots, left, vector
        node.shapes = (a.shape, b.shape)
        node.save(A, SavedOutput(out))
    return out


def _torch_name(dtype: np.dtype) -> str:
    return {"float64": "Double", "float32": "Float", "int64": "Long", "bool": "Bool"}.get(str(dtype), str(dtype))


# -- slogdet, logdet ------------------------------------------------------------------------------------------
def _slogdet_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """d logabsdet = trace(A^-1 dA); the sign's tangent is zero (real matrices)."""
    if out._output_nr == 0:
        return None
    (a,), (ta,) = inputs, tangents
    # PyTorch's slogdet_jvp solves with the saved LU factors, an output that is not differentiable: reverse over
    # forward sees A^-1 as a constant. So here (as det's rule)
    return tsum(_diag(solve(_const(a._data), ta)), -1)


@spec.node(
    formula={"A": "slogdet_backward(grad_sign, grad_logabsdet, A, sign, LU, pivots)"},
    saved={"A": SV.tensor(0), "LU": SV.array("lu"), "pivots": SV.array("pivots"), "sign": SV.tensor(1)},
    jvp=_slogdet_jvp, tangent="slogdet_jvp(LU, pivots, A_t, sign, A_p.is_contiguous() && !A_p.is_complex())",
)
class LinalgSlogdetBackward0(Node):
    """grad_logabsdet * A^-T, as A^-H solved against a diagonal of the gradients (the sign's gradient is 0)."""

    __slots__ = ("lu", "pivots")
    num_outputs = 2

    def apply(self, grads: Any) -> tuple:
        g = grads[1] if type(grads) is list else grads
        if g is None or not needs(self, 0):
            return (None,)
        a, _ = self.saved_tensors
        d = _diag_embed(expand(S.unsqueeze(g, -1), self.pivots.shape))
        return (solve(S.mT(a), d),)


def _slogdet(A: Tensor, name: str, kind: type) -> tuple:  # noqa: N803
    a = _square(name, A)
    lu, pivots = lu_factor(np.swapaxes(a, -1, -2))
    sign, logabs = np.linalg.slogdet(a) if a.size else (np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2],
                                                                                                    a.dtype))
    node = record(LinalgSlogdetBackward0, A)
    s = result(np.asarray(sign, dtype=a.dtype), node)
    l_ = result(np.asarray(logabs, dtype=a.dtype), node)
    if node is not None:
        l_._output_nr = 1
        node.lu, node.pivots = lu, pivots
        node.save(A, SavedOutput(s))
    return kind((s, l_))


def _pair_rule(name: str) -> Any:
    """The vmap rule of an operation of one matrix (leading dims a batch) with two results: the batch first."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        B = spec.RULES
        return B.bind(name, B.to_front(args[0], dims[0]), *args[1:], **params), (0, 0)

    return rule


@spec.op("linalg_slogdet", method=False, top_level=False, nodes=(LinalgSlogdetBackward0,),
         vmap=_pair_rule("linalg_slogdet"),
         sample=spec.Sample(((3, 3), (2, 2, 2)), lambda L, a, b: L.linalg.slogdet(a)[1]
                            + L.linalg.slogdet(b).logabsdet.sum() + L.slogdet(a).logabsdet + a.slogdet()[1]))
def linalg_slogdet(A: Tensor) -> tuple:  # noqa: N803
    """The sign and the log of the absolute value of the determinant (of each of a batch): (sign, logabsdet)."""
    return _slogdet(A, "slogdet", _LINALG_SLOGDET)


@spec.op("slogdet", nodes=(LinalgSlogdetBackward0,), vmap=_pair_rule("slogdet"),
         sample=spec.Sample(((3, 3),), lambda L, a: L.slogdet(a)[1]))
def slogdet(input: Tensor) -> tuple:  # noqa: A002
    """The sign and the log of the absolute value of the determinant: (sign, logabsdet)."""
    return _slogdet(input, "slogdet", _SLOGDET)


@spec.op("logdet", vmap=spec.rule("matrices", "logdet"),
         sample=spec.Sample(((3, 3), (2, 2, 2)), lambda L, a, b: L.logdet(a @ a.mT + L.eye(3, dtype=a.dtype))
                            + (b @ b.mT + L.eye(2, dtype=b.dtype)).logdet().sum()))
def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """The log of the determinant (nan where it is negative), PyTorch's where() over slogdet."""
    _square("logdet", input)
    sign, logabs = _slogdet(input, "logdet", _SLOGDET)
    return where(_const(sign._data == -1.0), float("nan"), logabs)


# -- cholesky -------------------------------------------------------------------------------------------------
def _phi(x: Tensor) -> Tensor:
    """The lower triangle of x with its diagonal halved (cholesky's Φ)."""
    n = x._data.shape[-1]
    mask = np.tril(np.ones((n, n), dtype=x._data.dtype)) - 0.5 * np.eye(n, dtype=x._data.dtype)
    return mul(x, _const(mask))


def _cholesky_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """dL = L Φ(L^-1 dA L^-H)."""
    lower = S.mT(out) if node.upper else out
    ta = tangents[0]
    linv = _inverse_lower(lower)
    dl = matmul(lower, _phi(matmul(matmul(linv, ta), S.mT(linv))))
    return S.mT(dl) if node.upper else dl


def _inverse_lower(lower: Tensor) -> Tensor:
    n = lower._data.shape[-1]
    eye = _const(np.broadcast_to(np.eye(n, dtype=lower._data.dtype), lower._data.shape).copy())
    return solve(lower, eye)


@spec.node(
    formula={"self": "cholesky_backward(grad, upper, L)"},
    saved={"L": SV.tensor(0), "upper": SV.field("upper")},
    jvp=_cholesky_jvp, tangent="cholesky_jvp(self_t, L, upper)",
)
class LinalgCholeskyExBackward0(Node):
    """Murray's formula: L^-H Φ(L^H gL) L^-1, symmetrised."""

    __slots__ = ("upper",)

    def apply(self, g: Tensor) -> tuple:
        (lower,) = self.saved_tensors
        if self.upper:
            lower, g = S.mT(lower), S.mT(g)
        linv = _inverse_lower(lower)
        phi = _phi(matmul(S.mT(lower), g))
        grad = matmul(matmul(S.mT(linv), phi), linv)
        return (mul_scalar(plus(grad, S.mT(grad)), 0.5),)


def _not_positive_definite(a: np.ndarray) -> LinAlgError:
    """PyTorch's error naming the first matrix (of a batch) and the order of its first leading minor that is not
    positive-definite."""
    flat = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(flat):
        for k in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                batch = f"(Batch element {i}): " if a.ndim > 2 else ""
                return LinAlgError(f"linalg.cholesky: {batch}The factorization could not be completed because the "
                                   f"input is not positive-definite (the leading minor of order {k} is not "
                                   "positive-definite).")
    return LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                       "positive-definite.")


@spec.op("linalg_cholesky", method=False, top_level=False, nodes=(LinalgCholeskyExBackward0,),
         vmap=spec.rule("matrices", "linalg_cholesky"),
         sample=spec.Sample(((3, 3),), lambda L, a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype))
                            + L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype), upper=True).mT))
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:  # noqa: N803
    """The Cholesky factor L (lower, L L^H = A; upper=True: U = L^H) of a symmetric positive-definite matrix (each
    of a batch); only the lower triangle of A is read."""
    a = _square("cholesky", A)
    lower_part = np.tril(a)
    sym = lower_part + np.swapaxes(np.tril(a, -1), -1, -2)
    try:
        data = np.linalg.cholesky(sym) if a.size else a.copy()
    except np.linalg.LinAlgError:
        raise _not_positive_definite(sym) from None
    if upper:
        data = np.swapaxes(data, -1, -2).copy()
    node = record(LinalgCholeskyExBackward0, A)
    out = result(np.asarray(data, dtype=a.dtype), node)
    if node is not None:
        node.upper = upper
        node.save(SavedOutput(out))
    return out
