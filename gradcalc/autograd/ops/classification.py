"""Classification losses: `nll_loss` and `cross_entropy` (class indices or class probabilities as
targets, `weight=`, `ignore_index=`, `label_smoothing=`, `reduction=`).

nll_loss records PyTorch's NllLossBackward0 (NllLoss2DBackward0 for inputs of shape (N, C, H, W); other
shapes are folded to that, as PyTorch's nll_loss_nd does); its gradient under create_graph is one
NllLossBackwardBackward0 node. cross_entropy is log_softmax then nll_loss, or PyTorch's composition of
elementary operations for probability targets and label smoothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from .binary import div_scalar, mul_scalar
from .core import needs, record, result
from .elementwise import masked_fill
from .losses import _REDUCTION, _const, _no_grad_weight, _tensor, reduction_of
from .softmax import log_softmax
from .sums import sum
from .unary import _zeros_like


# -- nll_loss --------------------------------------------------------------------------------------------------
def _nll_layout(x: np.ndarray, target: np.ndarray, fn: str) -> tuple[np.ndarray, int]:
    """Check the shapes (input (C,), (N, C) or (N, C, d1, ...), target without the class dim); the class axis."""
    if x.ndim == 0:
        raise ValueError(f"{fn}(): input must have a class dimension: shape (C,), (N, C) or (N, C, d1, ...)")
    axis = 0 if x.ndim == 1 else 1
    want = x.shape[:axis] + x.shape[axis + 1 :]
    if target.shape != want:
        raise ValueError(
            f"{fn}(): target must have shape {list(want)} (the input's shape {list(x.shape)} without the class "
            f"dimension), not {list(target.shape)}"
        )
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): target must hold class indices (an integer tensor), not {target.dtype}")
    return target, axis


def _picked(target: np.ndarray, weight: np.ndarray | None, ignore_index: int, classes: int, fn: str) -> tuple:
    """The mask of counted targets, the safe class indices, and each target's weight (0 where ignored)."""
    keep = target != ignore_index
    bad = keep & ((target < 0) | (target >= classes))
    if bad.any():
        raise IndexError(f"{fn}(): target {int(target[bad][0])} is out of bounds for {classes} classes")
    idx = np.where(keep, target, 0)
    w = np.ones(target.shape) if weight is None else weight[idx]
    return keep, idx, np.where(keep, w, 0.0)


def _nll_grad_np(g: Any, shape: tuple, dtype: np.dtype, axis: int, idx: np.ndarray, wt: np.ndarray,
                 reduction: str, total: Any) -> np.ndarray:
    """The gradient of nll_loss in its input: -w[t] g at each target's class, zero elsewhere."""
    scale = wt * (g if reduction == "none" else (g / total if reduction == "mean" else g))
    out = np.zeros(shape, dtype=dtype)
    np.put_along_axis(out, np.expand_dims(idx, axis), np.expand_dims(-scale, axis).astype(dtype), axis)
    return out


def _optional_array(attr: str) -> SV.Spec:
    """An array the node keeps in `attr`, or None (a loss without `weight=`)."""
    return SV.Spec(lambda node: None if getattr(node, attr) is None else _const(getattr(node, attr)), True)


# PyTorch shows ignore_index as its C++ int64 read back unsigned: -100 is 18446744073709551516
_NLL = {"ignore_index": SV.field("ignore_index", lambda i: i % 2**64), "reduction": _REDUCTION,
        "self": SV.tensor(0), "target": SV.array("target"), "total_weight": SV.array("total"),
        "weight": _optional_array("weight")}


def _nll_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # linear in the input: the loss of the tangent (derivatives.yaml's `nll_loss_forward(self_t, target, ...)`)
    return _nll(tangents[0], node.target, node.weight, node.ignore_index, node.reduction, node.axis, type(node))


@spec.node(
    formula={"self": "nll_loss_backward(grad, self, target, weight, reduction, ignore_index, total_weight)"},
    saved=_NLL, jvp=_nll_jvp, tangent="nll_loss_forward(self_t, target, weight, reduction, ignore_index)[0]",
)
class NllLossBackward0(Node):
    __slots__ = ("reduction", "axis", "idx", "wt", "total", "ignore_index", "target", "weight")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            xd = np.asarray(x)
            return (_nll_grad_np(g, xd.shape, xd.dtype, self.axis, self.idx, self.wt, self.reduction, self.total),)
        return (nll_loss_backward(g, x, self),)


_NLL_DOUBLE = {
    "ignore_index": SV.Spec(lambda node: node.forward.ignore_index % 2**64, False),
    "reduction": SV.Spec(lambda node: _REDUCTION.read(node.forward), False),
    "target": SV.Spec(lambda node: _const(node.forward.target), True),
    "weight": SV.Spec(lambda node: None if node.forward.weight is None else _const(node.forward.weight), True),
}


@spec.node(
    formula={"grad_output": "nll_loss(grad, target, weight, reduction, ignore_index)", "self": "zeros_like(grad)"},
    saved=_NLL_DOUBLE,
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else nll_loss_backward(
        tangents[0], inputs[1], node.forward),
    tangent="nll_loss_backward(grad_output_t, self, target, weight, reduction, ignore_index, total_weight)",
)
class NllLossBackwardBackward0(Node):
    __slots__ = ("forward",)

    def apply(self, gg: Tensor) -> tuple:
        (x,) = self.saved_tensors
        f = self.forward
        d_g = None
        if needs(self, 0):
            w = None if f.weight is None else _const(f.weight)
            d_g = nll_loss(gg, _const(f.target), w, ignore_index=f.ignore_index, reduction=f.reduction)
        d_x = _zeros_like(gg) if needs(self, 1) else None
        return (d_g, d_x)


@spec.node(
    formula={"grad_output": "nll_loss2d(grad, target, weight, reduction, ignore_index)", "self": "zeros_like(grad)"},
    saved=_NLL_DOUBLE,
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else nll_loss_backward(
        tangents[0], inputs[1], node.forward),
    tangent="nll_loss2d_backward(grad_output_t, self, target, weight, reduction, ignore_index, total_weight)",
)
class NllLoss2DBackwardBackward0(NllLossBackwardBackward0):
    __slots__ = ()


@spec.node(
    formula={"self": "nll_loss2d_backward(grad, self, target, weight, reduction, ignore_index, total_weight)"},
    saved=_NLL, jvp=_nll_jvp, tangent="nll_loss2d_forward(self_t, target, weight, reduction, ignore_index)[0]",
)
class NllLoss2DBackward0(NllLossBackward0):
    """nll_loss of an input of shape (N, C, H, W), as PyTorch names it."""

    __slots__ = ()


_DOUBLE: dict[type, type] = {NllLossBackward0: NllLossBackwardBackward0, NllLoss2DBackward0: NllLoss2DBackwardBackward0}


def nll_loss_backward(g: Tensor, x: Tensor, forward: NllLossBackward0) -> Tensor:
    """nll_loss's gradient in its input, one node (NllLossBackwardBackward0) when it records."""
    f = forward
    data = _nll_grad_np(g._data, x._data.shape, x._data.dtype, f.axis, f.idx, f.wt, f.reduction, f.total)
    node = record(_DOUBLE[type(f)], g, x)
    if node is not None:
        node.forward = f
        node.save(x)
    return result(data, node)


@spec.op("nll_loss", nodes=(NllLossBackward0, NllLoss2DBackward0), top_level=False, method=False,
         vmap=spec.rule("nll_loss_rule"),
         sample=spec.Sample(((3, 4), (2, 3, 2, 2)), lambda L, a, b: L.nn.functional.nll_loss(a, L.tensor([0, 3, 1]))
                            + L.nn.functional.nll_loss(b, L.tensor([[[0, 1], [2, 2]], [[1, 0], [0, 2]]]),
                                                       reduction="sum")))
def nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood -input[n, target[n]] (times weight[target[n]]) for log-probabilities
    `input` and class indices `target`; targets equal to `ignore_index` count for nothing."""
    fn = "nll_loss"
    x, t = _tensor(input, fn, "input"), _tensor(target, fn, "target")
    reduction = reduction_of(fn, reduction, size_average, reduce)
    xd = x._data
    td, axis = _nll_layout(xd, t._data, fn)
    classes = xd.shape[axis]
    wd = None
    if weight is not None:
        _no_grad_weight(fn, "weight", _tensor(weight, fn, "weight"))
        wd = weight._data
        if wd.shape != (classes,):
            raise RuntimeError(f"{fn}(): weight must hold one value per class ({classes}), not shape {list(wd.shape)}")
    if xd.ndim <= 2 or xd.ndim == 4:
        return _nll(x, td, wd, ignore_index, reduction, axis, NllLoss2DBackward0 if xd.ndim == 4 else NllLossBackward0)
    # other shapes as PyTorch's nll_loss_nd: folded to (N, C, 1, rest), the 2-d loss, then viewed back
    n = xd.shape[0]
    out = _nll(S.reshape(x, (n, classes, 1, -1)), td.reshape(n, 1, -1), wd, ignore_index, reduction, 1,
               NllLoss2DBackward0)
    return S.view(out, (n, *xd.shape[2:])) if reduction == "none" else out


def _nll(x: Tensor, td: np.ndarray, wd: np.ndarray | None, ignore_index: int, reduction: str, axis: int,
         cls: type[NllLossBackward0]) -> Tensor:
    xd = x._data
    _, idx, wt = _picked(td, wd, ignore_index, xd.shape[axis], "nll_loss")
    picked = np.squeeze(np.take_along_axis(xd, np.expand_dims(idx, axis), axis), axis)
    losses = -(picked * wt).astype(xd.dtype)
    total = np.asarray(wt.sum(), dtype=xd.dtype)
    if reduction == "none":
        data = losses
    elif reduction == "sum":
        data = losses.sum()
    else:
        data = losses.sum() / total
    node = record(cls, x)
    if node is not None:
        node.reduction, node.axis, node.idx, node.wt, node.total = reduction, axis, idx, wt, total
        node.ignore_index, node.target, node.weight = ignore_index, td, wd
        node.save(x)
    return result(np.asarray(data, dtype=xd.dtype), node)


# -- cross_entropy ---------------------------------------------------------------------------------------------
def _class_weight(weight: Tensor, ndim: int, axis: int) -> Tensor:
    """The class weights viewed to broadcast along the class dimension."""
    shape = [1] * ndim
    shape[axis] = weight._data.shape[0]
    return S.view(weight, tuple(shape)) if ndim > 1 else weight


@spec.op("cross_entropy", vmap=spec.rule("cross_entropy_rule"), top_level=False, method=False,
         sample=spec.Sample(((3, 4), (3, 4)), lambda L, a, p: L.nn.functional.cross_entropy(a, L.tensor([0, 3, 1]))
                            + L.nn.functional.cross_entropy(a, p.softmax(1)) + L.nn.functional.cross_entropy(
                                a, L.tensor([1, 1, 2]), label_smoothing=0.1)))
def cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    ignore_index: int = -100,
    reduce: Any = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross entropy of logits `input` against class indices, or against class probabilities (a
    `target` of the input's shape): log_softmax over the class dimension, then the negative log likelihood;
    `label_smoothing` mixes the targets with the uniform distribution by that amount."""
    fn = "cross_entropy"
    x, t = _tensor(input, fn, "input"), _tensor(target, fn, "target")
    reduction = reduction_of(fn, reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}(): label_smoothing must be between 0 and 1, not {label_smoothing}")
    if x._data.ndim == 0:
        raise ValueError(f"{fn}(): input must have a class dimension: shape (C,), (N, C) or (N, C, d1, ...)")
    if weight is not None:
        _tensor(weight, fn, "weight")
    axis = 0 if x._data.ndim == 1 else 1
    classes = x._data.shape[axis]
    logp = log_softmax(x, axis)
    if t._data.dtype.kind != "f":
        loss = nll_loss(logp, t, weight, ignore_index=ignore_index, reduction=reduction)
        if label_smoothing == 0.0:
            return loss
        return _smoothed(loss, logp, t, weight, ignore_index, reduction, label_smoothing, axis)
    if t._data.shape != x._data.shape:
        raise ValueError(
            f"{fn}(): a target of probabilities must have the input's shape {list(x._data.shape)}, "
            f"not {list(t._data.shape)}"
        )
    if label_smoothing > 0.0:
        t = t * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * t
    if weight is not None:
        terms = terms * _class_weight(weight, x._data.ndim, axis)
    if reduction == "none":
        return -sum(terms, axis)
    total = -sum(terms)
    if reduction == "sum":
        return total
    return div_scalar(total, x._data.size // classes)


def _smoothed(loss: Tensor, logp: Tensor, t: Tensor, weight: Tensor | None, ignore_index: int, reduction: str,
              label_smoothing: float, axis: int) -> Tensor:
    """PyTorch's cross_entropy_loss_label_smoothing: (1 - ls) nll + ls / C * the loss against the uniform
    distribution (counted, like nll, over the targets not ignored)."""
    ndim = logp._data.ndim
    ignored = t._data == ignore_index
    smooth = -sum(logp * _class_weight(weight, ndim, axis) if weight is not None else logp, axis)
    smooth = masked_fill(smooth, ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            kept = t._data[~ignored]
            ret = sum(smooth) / _const(weight._data[kept].sum())
        else:
            ret = sum(smooth) / _const(np.asarray((~ignored).sum()))
    elif reduction == "sum":
        ret = sum(smooth)
    else:
        ret = smooth
    return mul_scalar(loss, 1 - label_smoothing) + mul_scalar(ret, label_smoothing / logp._data.shape[axis])

