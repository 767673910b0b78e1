"""The piecewise losses `smooth_l1_loss` (`beta`) and `huber_loss` (`delta`): squared below the threshold,
absolute (Huber's scaled by delta) above it, each with `reduction=`.

Each records PyTorch's node (SmoothL1LossBackward0, HuberLossBackward0) and, under create_graph, its gradient's
node (SmoothL1LossBackwardBackward0, HuberLossBackwardBackward0), whose formulas are derivatives.yaml's. The two
differ only in their kernels (`_Kind`). `smooth_l1_loss` with beta = 0 is l1_loss, as PyTorch composes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from .binary import plus
from .core import needs, record, result
from .losses import _REDUCTION, _broadcast_pair, _reduce, _tensor, l1_loss, loss_jvp, reduction_of
from .sums import sum


class _Kind:
    """One loss's kernels on arrays: the loss of the differences, and d loss / d input with the threshold `k`."""

    def __init__(self, name: str, loss: Any, slope: Any, curve: Any) -> None:
        self.name, self.loss, self.slope, self.curve = name, loss, slope, curve

    def derivative(self, x: Any, t: Any, k: float) -> np.ndarray:
        """d loss / d x elementwise (before the reduction's 1/n and the incoming gradient)."""
        d = np.asarray(x - t)
        return np.where(d <= -k, -self.slope(k), np.where(d >= k, self.slope(k), d * self.curve(k)))


SMOOTH_L1 = _Kind("smooth_l1_loss", lambda z, k: np.where(z < k, 0.5 * z * z / k, z - 0.5 * k),
                  lambda k: 1.0, lambda k: 1.0 / k)
HUBER = _Kind("huber_loss", lambda z, k: np.where(z < k, 0.5 * z * z, k * (z - 0.5 * k)),
              lambda k: k, lambda k: 1.0)


def _norm(reduction: str, x: Any) -> float:
    return 1.0 / np.size(x) if reduction == "mean" else 1.0


def _backward_np(kind: _Kind, g: Any, x: Any, t: Any, reduction: str, k: float) -> np.ndarray:
    """`<kind>_loss_backward(grad, self, target, reduction, k)` on arrays."""
    return kind.derivative(x, t, k) * (_norm(reduction, x) * g)


def _loss_batched(self: Node, g: np.ndarray) -> tuple:
    x, t = self.unpack_saved(True)
    if self.reduction != "none":  # one value a row: broadcast over the sample's elements
        g = g.reshape(g.shape + (1,) * np.ndim(x))
    gx = _backward_np(self.kind, g, x, t, self.reduction, self.k)
    return (gx if needs(self, 0) else None, -gx if needs(self, 1) else None)


class _LossNode(Node):
    __slots__ = ("reduction", "k")
    raw_ok = True
    kind: _Kind

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, t = self.unpack_saved(raw)
        if raw:
            gx = _backward_np(self.kind, g, x, t, self.reduction, self.k)
            return (gx if needs(self, 0) else None, -gx if needs(self, 1) else None)
        gx = loss_backward(self.kind, g, x, t, self.reduction, self.k) if needs(self, 0) else None
        gt = loss_backward(self.kind, g, t, x, self.reduction, self.k) if needs(self, 1) else None  # PyTorch's form
        return (gx, gt)


spec.base(_LossNode)


def _double_np(kind: _Kind, x: Any, t: Any, k: float, reduction: str, dtype: Any) -> np.ndarray:
    """d² loss / dx² elementwise (PyTorch's `<kind>_loss_double_backward` of ones), with the mean's 1/n."""
    if k == 0:
        return np.zeros(np.shape(x), dtype=dtype)
    second = (np.abs(np.asarray(x - t)) < k).astype(dtype) * kind.curve(k)
    return second / np.size(x) if reduction == "mean" else second


def _backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """`double_backward(self_t * grad_output) - double_backward(target_t * grad_output) + backward(grad_output_t)`."""
    (g, x, t), (tg, tx, tt) = inputs, tangents
    first = None if tg is None else loss_backward(node.kind, tg, x, t, node.reduction, node.k)
    diff = plus(tx, None if tt is None else -tt)
    if diff is None:
        return first
    second = Tensor._make(_double_np(node.kind, x._data, t._data, node.k, node.reduction, x._data.dtype), False, None)
    return plus(first, diff * g * second)


class _LossBackwardNode(Node):
    __slots__ = ("reduction", "k")
    kind: _Kind

    def apply(self, gg: Tensor) -> tuple:
        g, x, t = self.saved_tensors
        kind, reduction, k = self.kind, self.reduction, self.k
        d_g = d_x = d_t = None
        if needs(self, 0):  # <kind>_loss_double_backward_grad_output
            if reduction == "none":
                d_g = loss_backward(kind, gg, x, t, reduction, k)
            else:
                ones = Tensor._make(np.ones(g._data.shape, dtype=g._data.dtype), False, None)
                d_g = sum(loss_backward(kind, ones, x, t, reduction, k) * gg)
        if needs(self, 1) or needs(self, 2):  # <kind>_loss_double_backward(grad * grad_output, ...)
            second = Tensor._make(_double_np(kind, x._data, t._data, k, reduction, x._data.dtype), False, None)
            product = gg * g * second
            d_x = product if needs(self, 1) else None
            d_t = -product if needs(self, 2) else None
        return (d_g, d_x, d_t)


spec.base(_LossBackwardNode)


@spec.node(
    formula={"self": "smooth_l1_loss_backward(grad, self, target, reduction, beta)",
             "target": "smooth_l1_loss_backward(grad, target, self, reduction, beta)"},
    saved={"beta": SV.field("k"), "reduction": _REDUCTION, "self": SV.tensor(0), "target": SV.tensor(1)},
    jvp=loss_jvp, tangent="apply_loss_reduction(smooth_l1_loss_backward(self_t, self_p, target_p, none, beta) + "
    "smooth_l1_loss_backward(target_t, target_p, self_p, none, beta), reduction)", batched=_loss_batched,
)
class SmoothL1LossBackward0(_LossNode):
    __slots__ = ()
    kind = SMOOTH_L1


@spec.node(
    formula={"grad_output": "smooth_l1_loss_double_backward_grad_output(grad, grad_output, self, target, reduction, "
             "beta)", "self": "smooth_l1_loss_double_backward(grad * grad_output, self, target, reduction, beta)",
             "target": "-smooth_l1_loss_double_backward(grad * grad_output, self, target, reduction, beta)"},
    saved={"beta": SV.field("k"), "grad_output": SV.tensor(0), "reduction": _REDUCTION, "self": SV.tensor(1),
           "target": SV.tensor(2)},
    jvp=_backward_jvp, tangent="smooth_l1_loss_double_backward(self_t * grad_output_p, self_p, target_p, reduction, "
    "beta) - smooth_l1_loss_double_backward(target_t * grad_output_p, ...) + smooth_l1_loss_backward(grad_output_t, "
    "self_p, target_p, reduction, beta)",
)
class SmoothL1LossBackwardBackward0(_LossBackwardNode):
    __slots__ = ()
    kind = SMOOTH_L1


@spec.node(
    formula={"self": "huber_loss_backward(grad, self, target, reduction, delta)",
             "target": "huber_loss_backward(grad, target, self, reduction, delta)"},
    saved={"delta": SV.field("k"), "reduction": _REDUCTION, "self": SV.tensor(0), "target": SV.tensor(1)},
    jvp=loss_jvp, tangent="apply_loss_reduction(huber_loss_backward(self_t, self_p, target_p, none, delta) + "
    "huber_loss_backward(target_t, target_p, self_p, none, delta), reduction)", batched=_loss_batched,
)
class HuberLossBackward0(_LossNode):
    __slots__ = ()
    kind = HUBER


@spec.node(
    formula={"grad_output": "huber_loss_double_backward_grad_output(grad, grad_output, self, target, reduction, "
             "delta)", "self": "huber_loss_double_backward(grad * grad_output, self, target, reduction, delta)",
             "target": "-huber_loss_double_backward(grad * grad_output, self, target, reduction, delta)"},
    saved={"delta": SV.field("k"), "grad_output": SV.tensor(0), "reduction": _REDUCTION, "self": SV.tensor(1),
           "target": SV.tensor(2)},
    jvp=_backward_jvp, tangent="huber_loss_double_backward(self_t * grad_output_p, self_p, target_p, reduction, "
    "delta) - huber_loss_double_backward(target_t * grad_output_p, ...) + huber_loss_backward(grad_output_t, "
    "self_p, target_p, reduction, delta)",
)
class HuberLossBackwardBackward0(_LossBackwardNode):
    __slots__ = ()
    kind = HUBER


_NODES = {SMOOTH_L1: (SmoothL1LossBackward0, SmoothL1LossBackwardBackward0),
          HUBER: (HuberLossBackward0, HuberLossBackwardBackward0)}


def loss_backward(kind: _Kind, g: Tensor, x: Tensor, t: Tensor, reduction: str, k: float) -> Tensor:
    """`<kind>_loss_backward(grad, self, target, reduction, k)`: one node when it records."""
    data = _backward_np(kind, g._data, x._data, t._data, reduction, k)
    node = record(_NODES[kind][1], g, x, t)
    if node is not None:
        node.reduction, node.k = reduction, k
        node.save(g, x, t)
    return result(np.asarray(data, dtype=x._data.dtype), node)


def _loss(kind: _Kind, x: Tensor, t: Tensor, reduction: str, k: float) -> Tensor:
    xd, td = x._data, t._data
    if xd.dtype.kind != "f":
        raise RuntimeError(f'"{kind.name}" not implemented for integer tensors: convert them with .double()')
    loss = kind.loss(np.abs(xd - td), k)
    data = loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()
    node = record(_NODES[kind][0], x, t)
    if node is not None:
        node.reduction, node.k = reduction, k
        node.save(x, t)
    return result(np.asarray(data, dtype=xd.dtype), node)


def loss_rule(name: str, names: tuple[str, ...]) -> spec.BatchRule:
    """vmap of a loss `name(input, target, ...)` whose other parameters are `names`: the loss of each element over
    the whole batch ('none'), then each sample's own reduction ('batchmean': its sum over its first dim's size)."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        batching = spec.RULES
        bind = batching.bind
        given = dict(zip(names, args[2:], strict=False))
        given.update(params)
        for legacy in ("size_average", "reduce"):
            if given.pop(legacy, None) is not None:
                raise NotImplementedError(f"vmap: {name} with {legacy}= (deprecated): say reduction= instead")
        reduction = given.pop("reduction", "mean")
        (x, t), (dx, dt) = args[:2], dims[:2]
        rank = max(batching.ndim(x) - (dx is not None), batching.ndim(t) - (dt is not None))
        x = x if dx is None else batching.pad(batching.to_front(x, dx), rank)
        t = t if dt is None else batching.pad(batching.to_front(t, dt), rank)
        out = bind(name, x, t, reduction="none", **given)
        if reduction == "none" or not rank:
            return out, 0
        sample = tuple(range(1, rank + 1))
        if reduction == "mean":
            return bind("mean", out, sample), 0
        total = bind("sum", out, sample)
        if reduction == "batchmean":
            return bind("div", total, batching.shape_of(out)[1]), 0
        return total, 0

    return rule


@spec.op("smooth_l1_loss", nodes=(SmoothL1LossBackward0,), top_level=False, method=False,
         vmap=loss_rule("smooth_l1_loss", ("size_average", "reduce", "reduction", "beta")),
         sample=spec.Sample(((2, 3), (2, 3)), lambda L, a, b: L.nn.functional.smooth_l1_loss(a, b)
                            + L.nn.functional.smooth_l1_loss(a, b, reduction="sum", beta=0.5)
                            + L.nn.functional.smooth_l1_loss(a, b, reduction="none", beta=2.0)))
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 (x - t)² / beta where |x - t| < beta, else |x - t| - 0.5 beta; mean, sum or elementwise."""
    x, t = _tensor(input, "smooth_l1_loss", "input"), _tensor(target, "smooth_l1_loss", "target")
    reduction = reduction_of("smooth_l1_loss", reduction, size_average, reduce)
    x, t = _broadcast_pair("smooth_l1_loss", x, t)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return l1_loss(x, t, reduction=reduction)
    return _loss(SMOOTH_L1, x, t, reduction, beta)


@spec.op("huber_loss", nodes=(HuberLossBackward0,), top_level=False, method=False,
         vmap=loss_rule("huber_loss", ("reduction", "delta", "weight")),
         sample=spec.Sample(((2, 3), (2, 3), (2, 3)), lambda L, a, b, w: L.nn.functional.huber_loss(a, b)
                            + L.nn.functional.huber_loss(a, b, reduction="sum", delta=0.5)
                            + L.nn.functional.huber_loss(a, b, reduction="none", delta=2.0)
                            + L.nn.functional.huber_loss(a, b, delta=0.7, weight=w.detach().abs())))
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Tensor | None = None) -> Tensor:
    """0.5 (x - t)² where |x - t| < delta, else delta (|x - t| - 0.5 delta); mean, sum or elementwise, each
    element weighted by `weight` when given."""
    x, t = _tensor(input, "huber_loss", "input"), _tensor(target, "huber_loss", "target")
    x, t = _broadcast_pair("huber_loss", x, t)
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return _loss(HUBER, x, t, reduction_of("huber_loss", reduction), delta)
    if weight._data.shape != input._data.shape:
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return _reduce(_loss(HUBER, x, t, "none", delta) * weight, reduction)

