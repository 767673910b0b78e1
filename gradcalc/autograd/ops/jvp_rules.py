"""Forward-mode rules given directly for nodes of the shape, reduction, indexing and selection modules.

- Linear operations (views, reshapes, selections, joins, sums): the tangent of the result is the same
  operation applied to the tangent.
- softmax, log_softmax, logsumexp, where, clamp: PyTorch's forward formulas (derivatives.yaml `result:`).
These are what the double-vjp fallback of forward_ad.py would compute, given directly: a few operations on
the tangent instead of a backward formula and a second backward. Each is attached to its node class as
`jvp(inputs, out, tangents)`, beside `apply`; a node not listed here (or in its own module) gets the fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..node import Node
from ..tensor import Tensor
from . import basic as B
from . import elementwise as E
from . import indexing as I
from . import reductions as R
from . import shape as S

Rule = Callable[[Any, Tensor, Any], Any]  # (node, out, tangent of the one input) -> tangent of out


def _one_input(rule: Rule) -> Callable[..., Any]:
    def jvp(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        return rule(self, out, tangents[0])

    return jvp


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor._make(np.zeros(shape, dtype=like._data.dtype), False, None)


def _joined(join: Callable[[list[Tensor], int], Tensor]) -> Callable[..., Any]:
    """cat's and stack's rule: the tangents joined the same way (zeros for an input without one)."""

    def jvp(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
        like = next(t for t in tangents if t is not None)
        parts = [t if t is not None else _zeros(x._data.shape, like) for x, t in zip(inputs, tangents, strict=True)]
        return join(parts, self.dim)

    return jvp


def _piece(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """split's and unbind's rule: the same piece of the tangent (this output is piece `out._output_nr`)."""
    t, i = tangents[0], out._output_nr
    if isinstance(self, S.UnbindBackward0):
        return S.select(t, self.dim, i)
    start = int(sum(self.sizes[:i]))
    return S.slice_dim(t, self.dim, start, start + self.sizes[i])


RULES: dict[type[Node], Callable[..., Any]] = {
    S.ViewBackward0: _one_input(lambda n, out, t: S.reshape(t, out._data.shape)),
    S.UnsafeViewBackward0: _one_input(lambda n, out, t: S.reshape(t, out._data.shape)),
    S.UnsqueezeBackward0: _one_input(lambda n, out, t: S.unsqueeze(t, n.dim)),
    S.ExpandBackward0: _one_input(lambda n, out, t: S.expand(t, out._data.shape)),
    S.TransposeBackward0: _one_input(lambda n, out, t: S.transpose(t, *n.dims)),
    S.TBackward0: _one_input(lambda n, out, t: S.t(t)),
    S.PermuteBackward0: _one_input(lambda n, out, t: S.permute(t, n.dims)),
    S.SelectBackward0: _one_input(lambda n, out, t: S.select(t, n.dim, n.index)),
    S.SliceBackward0: _one_input(lambda n, out, t: S.slice_dim(t, n.dim, *n.bounds)),
    S.AliasBackward0: _one_input(lambda n, out, t: S.alias(t)),
    S.CatBackward0: _joined(S.cat),
    S.StackBackward0: _joined(S.stack),
    S.SplitBackward0: _piece,
    S.SplitWithSizesBackward0: _piece,
    S.UnbindBackward0: _piece,
    I.IndexBackward0: _one_input(lambda n, out, t: I.index(t, n.indices)),
    R.SumBackward0: _one_input(lambda n, out, t: R.sum(t)),
    R.SumBackward1: _one_input(lambda n, out, t: R.sum(t, n.dims, n.keepdim)),
    R.MeanBackward0: _one_input(lambda n, out, t: R.mean(t)),
    R.MeanBackward1: _one_input(lambda n, out, t: R.mean(t, n.dims, n.keepdim)),
    B.CloneBackward0: _one_input(lambda n, out, t: B.clone(t)),
    B.ToCopyBackward0: _one_input(lambda n, out, t: B.to_dtype(t, out._data.dtype)),
}
def _softmax(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    return R.softmax_backward_data(tangents[0], out, self.dim)  # its Jacobian is symmetric


def _log_softmax(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    t = tangents[0]
    return t - R._sum_keep(t * E.exp(out), self.dim)


def _logsumexp(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (x,), t = inputs, tangents[0]
    weights = E.exp(x - R._keep(out, x._data.shape, self.dims, self.keepdim))  # softmax along the dims
    return R.sum(t * weights, self.dims, self.keepdim) if x._data.ndim else t * weights


def _where(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    (c,) = self.unpack_saved(True)
    like = next(t for t in tangents if t is not None)
    ta, tb = (t if t is not None else E._zeros_like(like) for t in tangents)
    return E.where(E._const(c), ta, tb)


def _clamp(self: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    return E._select(E._inside(inputs[0], self.lo, self.hi), tangents[0])


RULES.update({
    S.SelectBackwardBackward0: _one_input(lambda n, out, t: S.select_backward(t, out._data.shape, n.dim, n.index)),
    S.SliceBackwardBackward0: _one_input(lambda n, out, t: S.slice_backward(t, out._data.shape, n.dim, n.bounds)),
    I.IndexPutImplBackward0: _one_input(lambda n, out, t: I.index_put_zeros(t, n.indices, out._data.shape)),
    E.MaskedFillBackward0: _one_input(lambda n, out, t: E.masked_fill(t, n.unpack_saved(True)[0], 0.0)),
    R.SoftmaxBackward0: _softmax,
    R.LogSoftmaxBackward0: _log_softmax,
    R.LogsumexpBackward0: _logsumexp,
    E.WhereBackward0: _where,
    E.ClampBackward1: _clamp,
    E.ClampMinBackward0: _clamp,
    E.ClampMaxBackward0: _clamp,
})
for _squeeze in (S.SqueezeBackward0, S.SqueezeBackward1, S.SqueezeBackward2, S.SqueezeBackward4):
    RULES[_squeeze] = _one_input(lambda n, out, t: S.reshape(t, out._data.shape))

for _cls, _rule in RULES.items():
    _cls.jvp = _rule  # type: ignore[attr-defined]
