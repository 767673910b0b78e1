"""Quantiles: `quantile` and `nanquantile`, with PyTorch's five interpolations.

Loaded at first use (ops/lazy.py). As in PyTorch, a composition of recorded operations, so that the gradient and
its own derivatives come from theirs: the values sorted along the dim (SortBackward0), the two neighbours of each
rank gathered (GatherBackward0) and interpolated (LerpBackward1 for linear and midpoint), the q dim moved first
and the reduced dim squeezed (SqueezeBackward4). The rank of q in a slice of n values is q (n - 1); a slice with
a nan gives nan (quantile), or its nans are left out (nanquantile: n counts the others; nan when none is left).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from .core import record, result
from .pointwise import lerp
from .reorder import sort
from .scatter import gather

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


@spec.node(
    formula={"self": "unsqueeze_to(grad, dim, self.sym_sizes())"},
    saved={"dim": SV.const(2**64 - 1), "self_sym_sizes": SV.field("in_shape", tuple)},
    jvp=lambda node, inputs, out, tangents: S.squeeze(tangents[0], -1), tangent="self_t.squeeze(dim)",
    batched=lambda node, g: (np.expand_dims(g, -1),),
)
class SqueezeBackward4(Node):
    """The last step of a quantile: its trailing dim of size 1 squeezed away (PyTorch squeezes in place,
    squeeze_(-1), whose node this is)."""

    __slots__ = ("in_shape",)

    def apply(self, g: Tensor) -> tuple:
        return (S.unsqueeze(g, -1),)


def _squeeze_last(t: Tensor) -> Tensor:
    node = record(SqueezeBackward4, t)
    if node is not None:
        node.in_shape = t._data.shape
    return result(t._data[..., 0], node)


def _q_values(name: str, x: Tensor, q: Any) -> tuple[np.ndarray, bool]:
    """q as a 1-D array in the input's dtype, and whether it was a number or a 0-d tensor (a scalar q)."""
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != x._data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        values, scalar = q._data.reshape(-1), q._data.ndim == 0
    elif isinstance(q, (bool, int, float, np.number)):
        values, scalar = np.asarray([q], dtype=x._data.dtype), True
    else:
        raise TypeError(f"{name}(): argument 'q' must be a float or a tensor, not {type(q).__name__}")
    for v in values.tolist():
        if not 0 <= v <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {v}" if scalar else
                               f"{name}() q values must be in the range [0, 1]")
    return values, scalar


def _quantile(op: str, x: Any, q: Any, dim: Any, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    name = "quantile"  # (PyTorch's messages name quantile for nanquantile too)
    if x._data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    qs, scalar = _q_values(name, x, q)
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if not x._data.size:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    ndim, shape = x._data.ndim, x._data.shape
    # PyTorch's steps: the values to reduce as the last dim (flattened; or the reduced dim swapped with a new
    # last one), sorted, and viewed as the output's shape (keepdim's 1s included) with the sorted values last
    if dim is None:
        moved = S.reshape(x, -1)
        kept = (1,) * ndim if keepdim else ()
    else:
        axis = S.dim_index(dim, ndim)
        moved = x if ndim and axis == ndim - 1 else S.transpose(S.unsqueeze(x, -1), axis, -1)
        kept = tuple(1 if i == axis else n for i, n in enumerate(shape)) if keepdim else \
            tuple(n for i, n in enumerate(shape) if i != axis)
    s = S.view(sort(moved, -1).values, *kept, moved._data.shape[-1])
    sd = s._data
    n = sd.shape[-1]
    dtype = sd.dtype
    nan = np.isnan(sd)
    if ignore_nan:
        valid = (~nan).sum(-1, keepdims=True)
        ranks = qs * (valid - 1).astype(dtype)
        ranks = np.where(valid == 0, dtype.type(n - 1), ranks)  # every value nan: the last, a nan
    else:
        ranks = np.broadcast_to(qs * dtype.type(n - 1), (*sd.shape[:-1], len(qs)))
        ranks = np.where(nan.any(-1, keepdims=True), dtype.type(n - 1), ranks)  # a nan in the slice: nan
    ranks = np.asarray(ranks, dtype=dtype)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": np.floor, "higher": np.ceil, "nearest": np.round}[interpolation](ranks)
        out = gather(s, -1, Tensor._make(pick.astype(np.int64), False, None))
    else:
        below = np.floor(ranks)
        lo = gather(s, -1, Tensor._make(below.astype(np.int64), False, None))
        hi = gather(s, -1, Tensor._make(np.ceil(ranks).astype(np.int64), False, None))
        weights = np.full(ranks.shape, 0.5, dtype) if interpolation == "midpoint" else ranks - below
        out = lerp(lo, hi, Tensor._make(np.asarray(weights, dtype), False, None))
    # out: (the output's dims..., q); a 1-D q's dim swapped with a new first one (unsqueeze, transpose), and
    # the trailing dim of size 1 squeezed (PyTorch does these in place)
    if not scalar:
        out = S.transpose(S.unsqueeze(out, 0), 0, -1)
    return _squeeze_last(out)


def _quantile_rule(name: str) -> Any:
    """vmap: along the sample's dim, the batch first (after the q dim of a 1-D q); without a dim, each sample
    flattened."""

    def rule(args: tuple, dims: tuple, dim: Any = None, keepdim: bool = False, **params: Any) -> tuple[Any, Any]:
        B = spec.RULES  # batching.py, loaded by the vmap that calls this
        (x, q, *rest), d = args, dims[0]
        dim = rest[0] if rest else dim
        keepdim = rest[1] if len(rest) > 1 else keepdim
        x, rank = B.front(x, d)
        q_dims = 1 if isinstance(q, Tensor) and q._data.ndim == 1 else 0
        if dim is None:
            size = B.shape_of(x)[0]
            out = B.bind(name, B.bind("reshape", x, (size, -1)), q, 1, False, **params)
            if keepdim:
                out = B.bind("reshape", out, (*B.shape_of(out)[:q_dims + 1], *(1,) * rank))
            return out, q_dims
        if rank == 0:
            out = B.bind(name, B.bind("unsqueeze", x, 1), q, 1, False, **params)
            return out, q_dims
        return B.bind(name, x, q, B.sample_dim(dim, rank), keepdim, **params), q_dims

    return rule


@spec.op("quantile", vmap=_quantile_rule("quantile"),
         sample=spec.Sample(((3, 5),), lambda L, a: L.quantile(a, 0.3) + L.quantile(a, 0.6, dim=1).sum()
                            + a.quantile(L.tensor([0.25, 0.8], dtype=a.dtype), 0, True).sum(), spec.DISTINCT))
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles of `input` (q a number or a 1-D tensor in [0, 1]), of all elements or along `dim`;
    `interpolation` between the two nearest values: linear, lower, higher, midpoint or nearest."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@spec.op("nanquantile", vmap=_quantile_rule("nanquantile"),
         sample=spec.Sample(((3, 5),), lambda L, a: L.nanquantile(a, 0.3) + a.nanquantile(0.5, dim=0).sum(),
                            spec.DISTINCT))
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear") -> Tensor:
    """quantile with the nans left out (a slice of nans only gives nan)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
