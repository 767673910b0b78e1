"""The determinant and the inverse of square matrices (and of batches of them, over leading dims): `det`
(`linalg.det`, LinalgDetBackward0) and `inverse` (`linalg.inv`, LinalgInvExBackward0).

Both start from an LU factorisation with partial pivoting, as LAPACK's getrf (and PyTorch) makes it: the
determinant is the product of U's diagonal with the sign of the row swaps, and a zero on that diagonal is
PyTorch's "singular" error of `inv`, naming the element. The LU factors and pivots are what PyTorch's det node
saves (`_saved_LU`, `_saved_pivots`). The gradients are written with the engine's operations, so that
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
from .arithmetic import mul, neg
from .core import needs, record, result
from .einsum import diagonal
from .linalg import matmul


class LinAlgError(RuntimeError):
    """PyTorch's `torch.linalg.LinAlgError`: a matrix the operation cannot handle (a singular one for `inv`)."""


def _square(name: str, x: Any) -> np.ndarray:
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg.{name}(): argument 'A' (position 1) must be Tensor, not {type(x).__name__}")
    d = x._data
    if d.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are {d.shape[-2]} by "
                           f"{d.shape[-1]} matrices")
    if d.dtype.kind != "f":
        kind = {"i": "Long" if d.dtype.itemsize == 8 else "Int", "b": "Bool", "u": "Byte"}[d.dtype.kind]
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. Got {kind}")
    return d


def lu_factor(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK getrf's factorisation of each matrix of `a` (..., n, n): L (unit diagonal, below) and U (on and
    above) in one array, and the pivots (1-based: row i was swapped with row pivots[i] - 1). Vectorised over the
    batch; one step per column."""
    lu = np.array(a, dtype=a.dtype, copy=True)
    n = a.shape[-1]
    batch = a.shape[:-2]
    pivots = np.empty(batch + (n,), dtype=np.int32)
    index = np.indices(batch) if batch else ()
    for k in range(n):
        p = k + np.argmax(np.abs(lu[..., k:, k]), axis=-1)  # the largest in the column (the first of ties)
        pivots[..., k] = p + 1
        rows_k = lu[..., k, :].copy()
        rows_p = lu[(*index, p)].copy() if batch else lu[p].copy()
        lu[..., k, :] = rows_p
        if batch:
            lu[(*index, p)] = rows_k
        else:
            lu[p] = rows_k
        pivot = lu[..., k, k]
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = np.where(pivot[..., None] != 0, lu[..., k + 1:, k] / pivot[..., None], 0.0)
        lu[..., k + 1:, k] = factors
        lu[..., k + 1:, k + 1:] -= factors[..., :, None] * lu[..., k, None, k + 1:]
    return lu, pivots


def _det_from_lu(lu: np.ndarray, pivots: np.ndarray) -> np.ndarray:
    n = lu.shape[-1]
    swaps = np.sum(pivots != np.arange(1, n + 1, dtype=np.int32), axis=-1)
    diag = np.diagonal(lu, axis1=-2, axis2=-1)
    return np.asarray(np.prod(diag, axis=-1) * np.where(swaps % 2, -1.0, 1.0)).astype(lu.dtype, copy=False)


# -- det ------------------------------------------------------------------------------------------------------
def _det_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (a,), (ta,) = inputs, tangents
    # d det = det * trace(A^-1 dA). PyTorch's linalg_det_jvp solves with the saved LU factors, an output that is
    # not differentiable: differentiated again (reverse over forward), A^-1 is a constant there. So here.
    prod = matmul(Tensor._make(np.linalg.inv(a._data), False, None), ta)
    return out * diagonal(prod, 0, -2, -1).sum(-1)


@spec.node(
    formula={"A": "linalg_det_backward(grad, result, A, LU, pivots)"},
    saved={"A": SV.tensor(0), "LU": SV.array("lu"), "pivots": SV.array("pivots"), "result": SV.tensor(1)},
    jvp=_det_jvp, tangent="linalg_det_jvp(A_t, result, LU, pivots, A_p.is_contiguous() && !A_p.is_complex())",
)
class LinalgDetBackward0(Node):
    """grad * det(A) * A^-T: the adjugate, transposed. Where det(A) is 0 that product is 0, as PyTorch's."""

    __slots__ = ("lu", "pivots")

    def apply(self, g: Tensor) -> tuple:
        a, d = self.saved_tensors
        if not needs(self, 0):
            return (None,)
        scale = S.unsqueeze(S.unsqueeze(mul(g, d), -1), -1)
        singular = d._data == 0
        if np.any(singular):  # no inverse there: the gradient is 0 (scale is), times a stand-in's (a constant)
            eye = np.eye(a._data.shape[-1], dtype=a._data.dtype)
            a = Tensor._make(np.where(singular[..., None, None], eye, a._data), False, None)
        return (mul(scale, S.mT(inverse(a))),)


@spec.op("det", vmap=spec.rule("matrices", "det"), nodes=(LinalgDetBackward0,),
         sample=spec.Sample(((3, 3), (2, 2, 2)), lambda L, a, b: L.det(a) + a.det() * 0.5 + L.linalg.det(b).sum()))
def det(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The determinant of a square matrix, or of each of a batch of them (leading dims)."""
    d = _square("det", A)
    # PyTorch's LAPACK reads a row-major matrix as its transpose (column-major): the factors it saves are those
    # of A^T, whose determinant is A's
    lu, pivots = lu_factor(np.swapaxes(d, -1, -2))
    node = record(LinalgDetBackward0, A)
    out = result(_det_from_lu(lu, pivots), node)
    if node is not None:
        node.lu, node.pivots = lu, pivots
        node.save(A, SavedOutput(out))
    return out


# -- inverse --------------------------------------------------------------------------------------------------
def _inv_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    return neg(matmul(matmul(out, tangents[0]), out))


@spec.node(
    formula={"A": "-at::matmul(inverse.mH(), at::matmul(grad, inverse.mH()))"},
    saved={"inverse": SV.tensor(0)},
    jvp=_inv_jvp, tangent="-at::matmul(at::matmul(inverse, A_t), inverse)",
)
class LinalgInvExBackward0(Node):
    __slots__ = ()

    def apply(self, g: Tensor) -> tuple:
        (inv,) = self.saved_tensors
        t = S.mT(inv)
        return (neg(matmul(t, matmul(g, t))) if needs(self, 0) else None,)


def singular_error(lu: np.ndarray, name: str) -> LinAlgError | None:
    """PyTorch's error for the first matrix whose U has a zero on its diagonal (None when none has)."""
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    if not zero.any():
        return None
    where = np.argwhere(zero)[0]
    batch = "" if lu.ndim == 2 else f"(Batch element {int(np.ravel_multi_index(where[:-1], lu.shape[:-2]))}): "
    return LinAlgError(f"{name}: {batch}The diagonal element {int(where[-1]) + 1} is zero, the inversion could "
                       "not be completed because the input matrix is singular.")


@spec.op("inverse", vmap=spec.rule("matrices", "inverse"), nodes=(LinalgInvExBackward0,),
         sample=spec.Sample(((3, 3), (2, 2, 2)), lambda L, a, b: L.inverse(a) + a.inverse().t()
                            + L.linalg.inv(b).sum()))
def inverse(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of a square matrix, or of each of a batch of them (leading dims); a singular one is
    PyTorch's error."""
    d = _square("inv", A)
    if d.size:
        lu, _ = lu_factor(d)
        error = singular_error(lu, "linalg.inv")
        if error is not None:
            raise error
    try:
        data = np.linalg.inv(d) if d.size else d.copy()
    except np.linalg.LinAlgError:  # LAPACK's own factorisation met an exact zero where ours did not
        raise LinAlgError(f"linalg.inv: The diagonal element {d.shape[-1]} is zero, the inversion could not be "
                          "completed because the input matrix is singular.") from None
    node = record(LinalgInvExBackward0, A)
    out = result(np.asarray(data, dtype=d.dtype), node)
    if node is not None:
        node.save(SavedOutput(out))
    return out
