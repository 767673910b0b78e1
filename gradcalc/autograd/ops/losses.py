"""Regression and binary losses: `mse_loss`, `l1_loss`, `binary_cross_entropy`,
`binary_cross_entropy_with_logits`, each with `reduction=` ('mean' | 'sum' | 'none') and `weight=` where
PyTorch has it (the classification losses are in classification.py; smooth_l1_loss and huber_loss in
smooth_losses.py, kl_div in divergence.py).

Each records what PyTorch records: its own node where PyTorch has one (MseLossBackward0, NllLossBackward0,
...), and where PyTorch composes a loss from other operations (l1_loss, the weighted forms, cross_entropy
with probabilities), the same composition. First-order formulas run on bare arrays in a plain backward;
under create_graph each records the node PyTorch records for it (MseLossBackwardBackward0, ...), whose
own formulas are written with differentiable operations.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import grad_mode, spec
from .. import saved as SV
from ..node import Node
from ..tensor import Tensor
from . import reductions as R
from .arithmetic import pow, rsub
from .binary import add_scalar, div_scalar, mul_scalar, plus
from .core import needs, record, result
from .elementwise import softplus
from .logarithms import log1p, sigmoid
from .rounding import abs
from .sums import expand, sum
from .unary import _sigmoid, log

_REDUCTIONS = ("none", "mean", "sum")
_EPS = 1e-12  # PyTorch's EPSILON in the binary cross entropy's gradients


def _tensor(x: Any, fn: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): {name} must be a tensor, not {type(x).__name__}; wrap it in tensor(...)")
    return x


def _const(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a), False, None)


def reduction_of(fn: str, reduction: str, size_average: Any = None, reduce: Any = None) -> str:
    """The reduction asked for, with PyTorch's legacy `size_average`/`reduce` flags mapped onto it."""
    if size_average is not None or reduce is not None:
        warnings.warn(
            f"{fn}(): size_average and reduce are deprecated; say reduction='mean', 'sum' or 'none' instead",
            UserWarning,
            stacklevel=3,
        )
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        return "none" if not reduce else "mean" if size_average else "sum"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}(): reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
    return reduction


# PyTorch keeps a loss's reduction as its enum: `grad_fn._saved_reduction` is 1 for 'mean'
_REDUCTION = SV.field("reduction", {"none": 0, "mean": 1, "sum": 2}.get)


def loss_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """The forward rule of a loss over elements: each element's derivatives, read off the backward formula
    applied to ones (PyTorch's `apply_loss_reduction(d/dself * self_t + d/dtarget * target_t, reduction)`)."""
    ones = Tensor._make(np.ones(out._data.shape, out._data.dtype), False, None)
    grads = grad_mode.forward_ad.partials(node, tangents, ones)
    total = None
    for g, t in zip(grads, tangents, strict=False):
        if g is not None and t is not None:
            total = plus(total, g * t)
    if total is None:
        return None
    return total if node.reduction == "none" else sum(total)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """PyTorch's apply_loss_reduction."""
    if reduction == "mean":
        return R.mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def _broadcast_pair(fn: str, x: Tensor, t: Tensor) -> tuple[Tensor, Tensor]:
    """PyTorch's broadcast_tensors of input and target, with its warning when their sizes differ."""
    xs, ts = x._data.shape, t._data.shape
    if xs == ts:
        return x, t
    warnings.warn(
        f"{fn}(): the target's shape {list(ts)} differs from the input's {list(xs)}, so they are broadcast "
        "together, which is likely not what was meant; give both the same shape",
        UserWarning,
        stacklevel=3,
    )
    try:
        shape = tuple(np.broadcast_shapes(xs, ts))
    except ValueError:
        raise RuntimeError(
            f"{fn}(): the input's shape {list(xs)} and the target's {list(ts)} do not broadcast"
        ) from None
    return (x if xs == shape else expand(x, shape)), (t if ts == shape else expand(t, shape))


def _weighted(fn: str, errors: Tensor, weight: Tensor, x: Tensor, reduction: str) -> Tensor:
    """The `weight=` form of mse_loss and l1_loss, composed as PyTorch composes it."""
    if weight._data.shape != x._data.shape:
        raise ValueError(
            f"{fn}(): weight must have the input's shape {list(x._data.shape)}, not {list(weight._data.shape)}"
        )
    weighted = errors * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return sum(weighted)
    return sum(weighted) / sum(weight)


# -- mse_loss --------------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "mse_loss_backward(grad, self, target, reduction)",
             "target": "mse_loss_backward(grad, target, self, reduction)"},
    saved={"reduction": _REDUCTION, "self": SV.tensor(0), "target": SV.tensor(1)},
    jvp=loss_jvp, tangent="apply_loss_reduction(mse_loss_backward(self_t, self_p, target_p, none) + "
    "mse_loss_backward(target_t, target_p, self_p, none), reduction)",
)
class MseLossBackward0(Node):
    __slots__ = ("reduction",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, t = self.unpack_saved(raw)
        if raw:
            norm = 2.0 / np.size(x) if self.reduction == "mean" else 2.0
            gx = (x - t) * (norm * g)
            return (gx if needs(self, 0) else None, -gx if needs(self, 1) else None)
        gx = mse_loss_backward(g, x, t, self.reduction) if needs(self, 0) else None
        gt = mse_loss_backward(g, t, x, self.reduction) if needs(self, 1) else None  # PyTorch's own form
        return (gx, gt)


def _mse_backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    # linear in grad; in self and target, 2 grad (1/n for 'mean') times their tangents' difference
    (g, x, t), (tg, tx, tt) = inputs, tangents
    first = None if tg is None else mse_loss_backward(tg, x, t, node.reduction)
    diff = plus(tx, None if tt is None else -tt)
    if diff is None:
        return first
    norm = 2.0 / x._data.size if node.reduction == "mean" else 2.0
    return plus(first, mul_scalar(diff * g, norm))


@spec.node(
    formula={"grad_output": "mse_loss_double_backward_grad_output(grad, grad_output, self, target, reduction)",
             "self": "mse_loss_double_backward(grad * grad_output, self, reduction)",
             "target": "-mse_loss_double_backward(grad * grad_output, target, reduction)"},
    saved={"grad_output": SV.tensor(0), "reduction": _REDUCTION, "self": SV.tensor(1), "target": SV.tensor(2)},
    jvp=_mse_backward_jvp, tangent="mse_loss_backward(grad_output_t, self_p, target_p, reduction) + "
    "2 * grad_output_p * (self_t - target_t) / (n if reduction is mean)",
)
class MseLossBackwardBackward0(Node):
    __slots__ = ("reduction",)

    def apply(self, gg: Tensor) -> tuple:
        g, x, t = self.saved_tensors
        reduction = self.reduction
        d_g = d_x = d_t = None
        if needs(self, 0):
            d_g = mse_loss_backward(gg, x, t, "none")
            if reduction != "none":
                d_g = sum(d_g)
                d_g = div_scalar(d_g, x._data.size) if reduction == "mean" else d_g
        if needs(self, 1) or needs(self, 2):
            second = mul_scalar(gg * g, 2.0)
            if reduction == "mean":
                second = div_scalar(second, x._data.size)
            d_x = second if needs(self, 1) else None
            d_t = -second if needs(self, 2) else None
        return (d_g, d_x, d_t)


def mse_loss_backward(g: Tensor, x: Tensor, t: Tensor, reduction: str) -> Tensor:
    """(x - t) * (norm * g), norm = 2 (over n for 'mean'): one node when it records."""
    norm = 2.0 / x._data.size if reduction == "mean" else 2.0
    data = (x._data - t._data) * (norm * g._data)
    node = record(MseLossBackwardBackward0, g, x, t)
    if node is not None:
        node.reduction = reduction
        node.save(g, x, t)
    return result(np.asarray(data), node)


@spec.op("mse_loss", vmap=spec.rule("mse_loss_rule"), nodes=(MseLossBackward0,), top_level=False, method=False,
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.nn.functional.mse_loss(a, b)
                            + L.nn.functional.mse_loss(a, b, reduction="sum")
                            + L.nn.functional.mse_loss(a, b, reduction="none")))
def mse_loss(
    input: Tensor,  # noqa: A002 - PyTorch's names
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum, or elementwise) squared error between `input` and `target`."""
    x, t = _tensor(input, "mse_loss", "input"), _tensor(target, "mse_loss", "target")
    reduction = reduction_of("mse_loss", reduction, size_average, reduce)
    x, t = _broadcast_pair("mse_loss", x, t)
    if weight is not None:
        return _weighted("mse_loss", pow(x - t, 2), _tensor(weight, "mse_loss", "weight"), x, reduction)
    diff = x._data - t._data
    sq = diff * diff
    data = sq if reduction == "none" else sq.mean() if reduction == "mean" else sq.sum()
    node = record(MseLossBackward0, x, t)
    if node is not None:
        node.reduction = reduction
        node.save(x, t)
    return result(np.asarray(data), node)


# -- l1_loss ---------------------------------------------------------------------------------------------------
@spec.op("l1_loss", vmap=spec.rule("l1_loss_rule"), top_level=False, method=False,
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.nn.functional.l1_loss(a, b)
                            + L.nn.functional.l1_loss(a, b, reduction="none")))
def l1_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum, or elementwise) absolute error between `input` and `target`."""
    x, t = _tensor(input, "l1_loss", "input"), _tensor(target, "l1_loss", "target")
    reduction = reduction_of("l1_loss", reduction, size_average, reduce)
    x, t = _broadcast_pair("l1_loss", x, t)
    errors = abs(x - t)
    if weight is not None:
        return _weighted("l1_loss", errors, _tensor(weight, "l1_loss", "weight"), x, reduction)
    return _reduce(errors, reduction)


# -- binary_cross_entropy ------------------------------------------------------------------------------------------
def _finish(grad: Any, w: Any, reduction: str, n: int) -> Any:
    """A gradient's weight and mean factors, on arrays or tensors."""
    if w is not None:
        grad = grad * w
    return div_scalar(grad, n) if reduction == "mean" else grad  # div_scalar divides bare arrays too


@spec.node(
    formula={"self": "binary_cross_entropy_backward(grad, self, target, weight, reduction)",
             "target": "binary_cross_entropy_target_backward(grad, self, target, weight, reduction)"},
    saved={"reduction": _REDUCTION, "self": SV.tensor(0), "target": SV.tensor(1), "weight": SV.tensor(2)},
    jvp=loss_jvp, tangent="apply_loss_reduction(binary_cross_entropy_backward(self_t, self_p, target_p, weight, "
    "none) + binary_cross_entropy_target_backward(target_t, self_p, target_p, weight, none), reduction)",
)
class BinaryCrossEntropyBackward0(Node):
    __slots__ = ("reduction",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, t, w = self.unpack_saved(raw)
        reduction = self.reduction
        gx = gt = None
        if raw:
            n = np.size(x)
            if needs(self, 0):
                gx = _finish(g * (x - t) / np.maximum((1.0 - x) * x, _EPS), w, reduction, n)
            if needs(self, 1):
                gt = _finish(-(np.log(x) - np.log1p(-x)) * g, w, reduction, n)
            return (gx, gt)
        n = x._data.size
        if needs(self, 0):
            gx = bce_backward(g, x, t, w, reduction)
        if needs(self, 1):
            gt = _finish(-(log(x) - log1p(-x)) * g, w, reduction, n)
        return (gx, gt)


@spec.node(
    formula={"grad_output": "binary_cross_entropy_double_backward_grad_output(grad, self, target, weight, reduction)",
             "self": "binary_cross_entropy_double_backward(grad_output, grad, self, target, weight, reduction)",
             "target": "binary_cross_entropy_double_backward_target(grad, grad_output, self, target, weight, "
             "reduction)"},
    saved={"grad_output": SV.tensor(0), "reduction": _REDUCTION, "self": SV.tensor(1), "target": SV.tensor(2),
           "weight": SV.tensor(3)},
    # a second-order node (reached by a create_graph gradient): its tangent is the transpose of its own three
    # differentiable formulas, which the double-vjp takes exactly
    jvp=spec.DOUBLE_VJP,
)
class BinaryCrossEntropyBackwardBackward0(Node):
    __slots__ = ("reduction",)

    def apply(self, gg: Tensor) -> tuple:
        g, x, t, w = self.saved_tensors
        reduction, n = self.reduction, x._data.size
        x_eps = add_scalar(x, _EPS)
        one_m_x_eps = add_scalar(rsub(x, 1.0), _EPS)
        d_g = d_x = d_t = None
        if needs(self, 0):
            d_g = _finish((x - t) / (x_eps * one_m_x_eps) * gg, w, "none", n)
            if reduction != "none":
                d_g = _finish(sum(d_g), None, reduction, n)
        if needs(self, 1):
            num = x * x - mul_scalar(x * t, 2.0) + t
            d_x = _finish(num / (x_eps**2.0 * one_m_x_eps**2.0) * (gg * g), w, reduction, n)
        if needs(self, 2):
            d_t = _finish(-(gg * g) / (x_eps * one_m_x_eps), w, reduction, n)
        return (d_g, d_x, d_t)


def bce_backward(g: Tensor, x: Tensor, t: Tensor, w: Tensor | None, reduction: str) -> Tensor:
    """binary_cross_entropy's gradient in its input, one node (BinaryCrossEntropyBackwardBackward0)."""
    xd = x._data
    data = g._data * (xd - t._data) / np.maximum((1.0 - xd) * xd, _EPS)
    if w is not None:
        data = data * w._data
    if reduction == "mean":
        data = data / xd.size
    node = record(BinaryCrossEntropyBackwardBackward0, g, x, t)
    if node is not None:
        node.reduction = reduction
        node.save(g, x, t, w)
    return result(np.asarray(data, dtype=xd.dtype), node)


def _no_grad_weight(fn: str, name: str, w: Tensor | None) -> None:
    if w is not None and w._requires_grad:
        raise RuntimeError(
            f"{fn}(): {name} cannot require grad (the loss has no derivative in it); pass {name}.detach()"
        )


@spec.op("binary_cross_entropy", nodes=(BinaryCrossEntropyBackward0,), top_level=False, method=False,
         vmap=spec.rule("binary_cross_entropy_rule"),
         sample=spec.Sample(((2, 3), (2, 3), (2, 3)), lambda L, a, b, w: L.nn.functional.binary_cross_entropy(a, b)
                            + L.nn.functional.binary_cross_entropy(a, b, weight=w.detach(), reduction="sum"),
                            spec.PROBABILITY))
def binary_cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
) -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)) for probabilities `input` in [0, 1] (each log at least -100)."""
    fn = "binary_cross_entropy"
    x, t = _tensor(input, fn, "input"), _tensor(target, fn, "target")
    reduction = reduction_of(fn, reduction, size_average, reduce)
    if x._data.shape != t._data.shape:
        raise ValueError(
            f"{fn}(): the target's shape {list(t._data.shape)} must be the input's {list(x._data.shape)}"
        )
    xd, td = x._data, t._data
    if not np.all((xd >= 0) & (xd <= 1)):
        raise RuntimeError(f"{fn}(): every element of input must be a probability in [0, 1]; apply sigmoid first, "
                           "or use binary_cross_entropy_with_logits")
    if not np.all((td >= 0) & (td <= 1)):
        raise RuntimeError(f"{fn}(): every element of target must be in [0, 1]")
    w = None
    if weight is not None:
        _no_grad_weight(fn, "weight", _tensor(weight, fn, "weight"))
        w = _const(np.broadcast_to(weight._data, np.broadcast_shapes(td.shape, weight._data.shape)))
    loss = (td - 1.0) * np.maximum(np.log1p(-xd), -100.0) - td * np.maximum(np.log(xd), -100.0)
    if w is not None:
        loss = loss * w._data
    data = loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
    node = record(BinaryCrossEntropyBackward0, x, t)
    if node is not None:
        node.reduction = reduction
        node.save(x, t, w)
    return result(np.asarray(data, dtype=xd.dtype), node)


# -- binary_cross_entropy_with_logits --------------------------------------------------------------------------------
def _log_sigmoid_np(x: np.ndarray) -> np.ndarray:
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@spec.node(
    formula={"self": "binary_cross_entropy_with_logits_backward(grad, self, target, weight, pos_weight, reduction)",
             "target": "binary_cross_entropy_with_logits_target_backward(grad, self, target, weight, pos_weight, "
             "reduction)"},
    saved={"pos_weight": SV.tensor(3), "reduction": _REDUCTION, "self": SV.tensor(0), "target": SV.tensor(1),
           "weight": SV.tensor(2)},
    jvp=loss_jvp, tangent="binary_cross_entropy_with_logits_jvp(self_t, self_p, target_t, target_p, weight, "
    "pos_weight, reduction)",
)
class BinaryCrossEntropyWithLogitsBackward0(Node):
    """PyTorch's composite gradients, recorded as elementary operations under create_graph."""

    __slots__ = ("reduction",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, t, w, pw = self.unpack_saved(raw)
        reduction = self.reduction
        n = np.size(x) if raw else x._data.size
        sig = _sigmoid if raw else sigmoid
        gx = gt = None
        if needs(self, 0):
            if pw is None:
                gi = sig(x) - t
            else:
                tp = pw * t
                gi = (add_scalar(tp, 1.0) - t) * sig(x) - tp
            gx = _finish(gi * g, w, reduction, n)
        if needs(self, 1):
            if pw is None:
                gt = -x * g
            else:
                log_sig = _log_sigmoid_np if raw else (lambda v: -softplus(-v))
                gt = (log_sig(-x) - log_sig(x) * pw) * g
            gt = _finish(gt, w, reduction, n)
        return (gx, gt)


@spec.op("binary_cross_entropy_with_logits", nodes=(BinaryCrossEntropyWithLogitsBackward0,), method=False,
         vmap=spec.rule("bce_with_logits_rule"),
         sample=spec.Sample(((4,), (4,), (4,)), lambda L, a, t, w: L.nn.functional.binary_cross_entropy_with_logits(
             a, (t + 1.0) / 2.0) + L.nn.functional.binary_cross_entropy_with_logits(
             a, (t + 1.0) / 2.0, pos_weight=w.detach().abs(), reduction="none").sum(), spec.UNIT))
def binary_cross_entropy_with_logits(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: Any = None,
    reduce: Any = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """binary_cross_entropy of sigmoid(input), computed stably from the logits `input`; `pos_weight`
    weighs the positive term per class."""
    fn = "binary_cross_entropy_with_logits"
    x, t = _tensor(input, fn, "input"), _tensor(target, fn, "target")
    reduction = reduction_of(fn, reduction, size_average, reduce)
    if x._data.shape != t._data.shape:
        raise ValueError(
            f"{fn}(): the target's shape {list(t._data.shape)} must be the input's {list(x._data.shape)}"
        )
    for name, v in (("weight", weight), ("pos_weight", pos_weight)):
        if v is not None:
            _no_grad_weight(fn, name, _tensor(v, fn, name))
    xd, td = x._data, t._data
    log_sig = _log_sigmoid_np(xd)
    if pos_weight is not None:
        log_sig = log_sig * ((pos_weight._data - 1) * td + 1)
    loss = (1 - td) * xd - log_sig
    if weight is not None:
        loss = loss * weight._data
    data = loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
    node = record(BinaryCrossEntropyWithLogitsBackward0, x, t)
    if node is not None:
        node.reduction = reduction
        node.save(x, t, weight, pos_weight)
    return result(np.asarray(data, dtype=xd.dtype), node)


# PyTorch has only binary_cross_entropy_with_logits of them in its top-level namespace (its spec says so); all
# are in gradcalc.nn.functional

