"""`gradcalc.linalg`: PyTorch's `torch.linalg` for what gradcalc has: `inv`, `det`, `vector_norm`, `norm` (vector
norms, and the Frobenius norm of matrices), and `LinAlgError`.

The operations are the engine's (`inverse` and `det` are `torch.inverse` and `torch.det` too); this module gives
them PyTorch's names and signatures under `linalg`. It loads on first use (`gradcalc.linalg`), as `nn` does.
"""

from __future__ import annotations

from typing import Any

from .autograd.ops import decompositions as _D
from .autograd.ops import inverses as _I
from .autograd.ops import products as _P
from .autograd.ops import reductions as _R
from .autograd.tensor import Tensor

LinAlgError = _I.LinAlgError

__all__ = ["LinAlgError", "cholesky", "cross", "det", "inv", "matrix_power", "multi_dot", "norm", "slogdet", "solve",
           "vecdot", "vector_norm"]

cross = _P.linalg_cross
vecdot = _P.linalg_vecdot
multi_dot = _P.linalg_multi_dot
matrix_power = _P.matrix_power
solve = _D.solve
slogdet = _D.linalg_slogdet
cholesky = _D.cholesky



def inv(A: Tensor) -> Tensor:  # noqa: N803 - PyTorch's name
    """The inverse of a square matrix, or of each of a batch of them (LinalgInvExBackward0)."""
    return _I.inverse(A)


def det(A: Tensor) -> Tensor:  # noqa: N803
    """The determinant of a square matrix, or of each of a batch of them (LinalgDetBackward0)."""
    return _I.det(A)


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False,  # noqa: A002 - PyTorch's names
                *, dtype: Any = None) -> Tensor:
    """The vector `ord`-norm of all of `x`'s elements, or along `dim` (inf and -inf: the largest and the
    smallest |x|; 0: the count of nonzero elements)."""
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number, not {ord!r}")
    return _R.norm(x, ord, dim, keepdim, dtype)


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False,  # noqa: A002, N803
         *, dtype: Any = None) -> Tensor:
    """A vector norm, or the Frobenius norm of a matrix: with no `ord`, the 2-norm of all elements (of `dim`);
    `ord='fro'` over two dims is the same number. (The other matrix norms, 'nuc' and the spectral ones, gradcalc
    does not have.)"""
    if ord is None:
        return _R.norm(A, 2, dim, keepdim, dtype)
    ndim = A.dim()
    dims = (dim,) if isinstance(dim, int) else tuple(dim) if dim is not None else tuple(range(ndim))
    if isinstance(ord, str) or len(dims) == 2:
        if ord != "fro":
            raise NotImplementedError(f"linalg.norm: the matrix norm ord={ord!r} is not in gradcalc: it has "
                                      "vector norms and the Frobenius norm (ord='fro')")
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dims)}")
        return _R.norm(A, 2, dims, keepdim, dtype)
    if dim is None and ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {ndim}D.")
    return _R.norm(A, ord, dim, keepdim, dtype)
