"""Batch normalization: `batch_norm` (PyTorch's `F.batch_norm`), NativeBatchNormBackward0 and its create_graph
node NativeBatchNormBackwardBackward0.

An (N, C, ...) input is normalized per channel C, over the batch and the spatial dims. In training mode by the
batch's statistics (the biased variance), updating `running_mean` and `running_var` in place when given (the
unbiased variance, `momentum` the weight of the new value; PyTorch's kernel writes them without bumping their
versions, and so does this); in evaluation mode by the running statistics. The node saves what PyTorch's saves:
the input, the running statistics, the weight, and the batch's mean and 1/sqrt(var + eps) (`result1`,
`result2`; empty tensors in evaluation mode). The mathematics is normalization.py's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..grad_mode import no_grad
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor
from . import shape as S
from .core import needs, record, result
from .normalization import (
    Layout,
    _outputs,
    affine_jvp,
    centered_jvp,
    check_dtypes,
    double_backward,
    first_backward,
)


def _layout(shape: tuple[int, ...]) -> Layout:
    """Statistics per channel (dim 1), over the batch and spatial dims; parameters of shape (C,)."""
    c = shape[1]
    axes = (0, *range(2, len(shape)))
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    return Layout(axes, n, axes, (1, c) + (1,) * (len(shape) - 2), (c,))


def _per_channel(v: Any, ndim: int) -> Any:
    """A (C,) vector viewed to broadcast against an (N, C, ...) input (arrays or tensors)."""
    shape = (1, -1) + (1,) * (ndim - 2)
    return v.reshape(shape) if type(v) is np.ndarray else S.reshape(v, shape)


def _stats(node: Node, x: Any, rm: Any, rv: Any, mean: Any, invstd: Any) -> tuple[Any, Any]:
    """The mean and 1/sqrt(var + eps) a backward uses, viewed per channel: the batch's in training, the running
    statistics' in evaluation mode (arrays or tensors alike)."""
    ndim = len(x.shape) if type(x) is np.ndarray else x._data.ndim
    if node.training:
        return _per_channel(mean, ndim), _per_channel(invstd, ndim)
    if type(rv) is np.ndarray:
        return _per_channel(rm, ndim), _per_channel(1.0 / np.sqrt(rv + node.eps), ndim)
    invstd_r = Tensor._make(np.asarray(1.0 / np.sqrt(rv._data + node.eps)), False, None)
    return _per_channel(rm, ndim), _per_channel(invstd_r, ndim)


def _batch_norm_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """PyTorch's batch_norm_jvp."""
    x, w = inputs[0], inputs[1]
    t_x, t_w, t_b = tangents
    _, rm, rv, _, mean, invstd = node.saved_tensors
    mean_v, rstd_v = _stats(node, x, rm, rv, mean, invstd)
    lay = _layout(x._data.shape)
    out_t = None
    if t_x is not None:
        out_t = centered_jvp(t_x, x, mean_v, rstd_v, lay) if node.training else t_x * rstd_v
    return affine_jvp(out_t, x, mean_v, rstd_v, w, t_w, t_b, lay)


def _bn_batched(self: Node, g: np.ndarray) -> tuple:
    x, rm, rv, w, mean, invstd = self.unpack_saved(True)
    x = np.asarray(x)
    mean_v, rstd_v = _stats(self, x, rm, rv, mean, invstd)
    need = (needs(self, 0), needs(self, 1), needs(self, 2))
    return first_backward(g, x, mean_v, rstd_v, w, _layout(x.shape), self.training, need, 1)


@spec.node(
    formula={"input": "native_batch_norm_backward(grad, input, weight, running_mean, running_var, result1, result2, "
             "training, eps, grad_input_mask)[0]", "weight": "native_batch_norm_backward(...)[1]",
             "bias": "native_batch_norm_backward(...)[2]"},
    saved={"eps": SV.field("eps"), "input": SV.tensor(0), "result1": SV.tensor(4), "result2": SV.tensor(5),
           "running_mean": SV.tensor(1), "running_var": SV.tensor(2), "training": SV.field("training"),
           "weight": SV.tensor(3)},
    jvp=_batch_norm_jvp, tangent="batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean, "
    "running_var, result1, result2, training, eps)", batched=_bn_batched,
)
class NativeBatchNormBackward0(Node):
    """PyTorch's native_batch_norm_backward: the input's, weight's and bias's gradients from one formula."""

    __slots__ = ("eps", "training")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, rm, rv, w, mean, invstd = self.unpack_saved(raw)
        need = (needs(self, 0), needs(self, 1), needs(self, 2))
        if raw:
            x = np.asarray(x)
            mean_v, rstd_v = _stats(self, x, rm, rv, mean, invstd)
            return first_backward(g, x, mean_v, rstd_v, w, _layout(x.shape), self.training, need)
        return native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, self.training, self.eps, need)


@spec.node(
    formula={"grad_out": "batchnorm_double_backward(...)[2]", "input": "batchnorm_double_backward(input, weight, "
             "grads[0], grads[1], grads[2], grad_out, running_mean, running_var, train, eps, save_mean, save_invstd, "
             "grad_input_mask)[0]", "weight": "batchnorm_double_backward(...)[1]",
             "save_mean": "not_implemented", "save_invstd": "not_implemented"},
    saved={"eps": SV.field("eps"), "grad_out": SV.tensor(0), "input": SV.tensor(1), "running_mean": SV.tensor(2),
           "running_var": SV.tensor(3), "save_invstd": SV.tensor(4), "save_mean": SV.tensor(5),
           "train": SV.field("training"), "weight": SV.tensor(6)},
    # a second-order node: its tangent is the transpose of its own differentiable formulas (the double-vjp)
    jvp=spec.DOUBLE_VJP,
)
class NativeBatchNormBackwardBackward0(Node):
    """The node of batch_norm's three gradients under create_graph (edges: grad_out, input, weight, save_mean,
    save_invstd)."""

    __slots__ = ("eps", "training")
    num_outputs = 3

    def apply(self, grads: Any) -> tuple:
        g_o, x, rm, rv, invstd, mean, w = self.saved_tensors
        grads = grads if type(grads) is list else [grads]
        mean_v, rstd_v = _stats(self, x, rm, rv, mean, invstd)
        need = (needs(self, 0), needs(self, 1), needs(self, 2))
        d_go, d_x, d_w = double_backward(g_o, x, w, grads, mean_v, rstd_v, _layout(x._data.shape), self.training,
                                         need)
        return (d_go, d_x, d_w, None, None)


def native_batch_norm_backward(g: Tensor, x: Tensor, w: Tensor | None, rm: Tensor | None, rv: Tensor | None,
                               mean: Tensor, invstd: Tensor, training: bool, eps: float,
                               need: tuple[bool, bool, bool]) -> tuple:
    """(gI, gW, gB), one node (NativeBatchNormBackwardBackward0) when it records."""
    holder = _Stats(training, eps)
    mean_v, rstd_v = _stats(holder, x._data, None if rm is None else rm._data, None if rv is None else rv._data,
                            mean._data, invstd._data)
    datas = first_backward(g._data, x._data, mean_v, rstd_v, None if w is None else w._data, _layout(x._data.shape),
                           training, need)
    node = record(NativeBatchNormBackwardBackward0, g, x, w, mean, invstd)
    if node is not None:
        node.eps, node.training = eps, training
        node.save(g, x, rm, rv, invstd, mean, w)
    return _outputs(datas, node)


class _Stats:
    """What `_stats` reads of a node, for a computation that has none."""

    __slots__ = ("training", "eps")

    def __init__(self, training: bool, eps: float) -> None:
        self.training, self.eps = training, eps


# -- the function -----------------------------------------------------------------------------------------------
def _check_sizes(x: np.ndarray, training: bool, **given: Tensor | None) -> None:
    """ATen's checks, in its order: each vector has C elements; evaluation mode needs the running statistics."""
    c = x.shape[1] if x.ndim > 1 else 0
    for name in ("running_mean", "running_var", "weight", "bias"):
        v = given[name]
        if v is not None:
            if v._data.size != c:
                raise RuntimeError(f"{name} should contain {c} elements not {v._data.size}")
        elif not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")


def _same_for_all(x: Any, d: int) -> bool:
    """Whether the batch of `x` along `d` is one value repeated (stride 0: an expanded tensor)."""
    data = getattr(x, "_data", None) if type(x) is Tensor else None
    return data is not None and data.strides[d] == 0


def _update_only(bind: Any, sample: Any, given: dict) -> None:
    """The running statistics' update of batch_norm in training mode, from one sample (its output unused)."""
    with no_grad():
        bind("batch_norm", sample.detach(), given["running_mean"], given["running_var"], None, None, True,
             given.get("momentum", 0.1), given.get("eps", 1e-5))


def _batch_norm_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """vmap of batch_norm, functorch's: the batch folded into the channels, (B, N, C, ...) -> (N, B*C, ...), so
    that each sample has its own statistics; running statistics updated in place must be batched too (PyTorch's
    error otherwise); unbatched weights, biases and statistics are repeated for each sample."""
    batching = spec.RULES
    bind = batching.bind
    names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    given = dict(zip(names, args[1:], strict=False))
    given.update(params)
    pdims = dict(zip(names, dims[1:], strict=False))
    x, d = args[0], dims[0]
    training = given.get("training", False)
    stats_batched = pdims.get("running_mean") is not None or pdims.get("running_var") is not None
    if d is None and not stats_batched:  # only weight or bias batched: normalized once, then each sample's affine
        out = bind("batch_norm", x, given.get("running_mean"), given.get("running_var"), None, None, training,
                   given.get("momentum", 0.1), given.get("eps", 1e-5))
        rank = len(batching.shape_of(x))
        for name, op in (("weight", "mul"), ("bias", "add")):
            v = given.get(name)
            if v is not None:
                pd = pdims.get(name)
                v = v if pd is None else batching.to_front(v, pd)  # (C,) or (B, C) -> (C, 1...) or (B, 1, C, 1...)
                v = bind("reshape", v, ((batching.shape_of(v)[0], 1, -1) if pd is not None else (-1,))
                         + (1,) * (rank - 2))
                out = bind(op, out, v)
        return out, 0
    if d is None:  # batched statistics: the input, the same for every sample, repeated
        name = next(n for n in names[:4] if pdims.get(n) is not None)
        size = batching.shape_of(given[name])[pdims[name]]
        x, d = bind("expand", bind("unsqueeze", x, 0), (size, *batching.shape_of(x))), 0
    if training and given.get("running_mean") is not None and not stats_batched and _same_for_all(x, d):
        # an input the same for every sample (a tensor func.grad lifted to the batch, which PyTorch's grad keeps
        # unbatched): the running statistics updated once from one sample, then the batch normalized by its own
        sample = bind("select", x, d, 0)
        _update_only(bind, sample, given)
        given["running_mean"] = given["running_var"] = None
    elif training and given.get("running_mean") is not None and not stats_batched:
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, which will be updated "
            "in place, were not batched.\nIf you are using a module and do not need eval mode, please set "
            "`track_running_stats` to be False.If you are using a prebuilt module and do not need eval mode, please "
            "see the functorch website for resources on how to patch your module to work with vmap"
        )
    x = batching.to_front(x, d)
    shape = batching.shape_of(x)
    b, n, c, rest = shape[0], shape[1], shape[2], shape[3:]
    folded = bind("reshape", bind("movedim", x, 0, 1), (n, b * c, *rest))
    flat: dict[str, Any] = {}
    for name in ("running_mean", "running_var", "weight", "bias"):
        v = given.get(name)
        if v is None:
            flat[name] = None
            continue
        pd = pdims.get(name)
        v = bind("expand", v, (b, c)) if pd is None else batching.to_front(v, pd)
        flat[name] = bind("reshape", v, (b * c,))  # a view of a contiguous batch: the update writes through
    out = bind("batch_norm", folded, flat["running_mean"], flat["running_var"], flat["weight"], flat["bias"],
               training, given.get("momentum", 0.1), given.get("eps", 1e-5))
    return bind("reshape", out, (n, b, c, *rest)), 1


@spec.op("batch_norm", top_level=False, method=False, vmap=_batch_norm_rule,
         sample=spec.Sample(((4, 3, 2), (3,), (3,), (3,)), lambda L, x, w, b, v: L.nn.functional.batch_norm(
             x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b, training=True)
             + L.nn.functional.batch_norm(x, v.detach() * 0.1, v.detach().abs() + 0.5, w, b, training=False)
             + L.nn.functional.batch_norm(x, None, None, training=True, eps=0.01) * 0.5))
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel (dim 1) over the batch and spatial dims, then `* weight + bias` per channel: by the
    batch's mean and biased variance in training mode (updating the running statistics in place), by
    `running_mean` and `running_var` in evaluation mode."""
    x = input._data
    if training:
        size = x.shape
        count = size[0] if size else 1
        for s in size[2:]:
            count *= s
        if count == 1:
            raise worded(f"Expected more than 1 value per channel when training, got input size torch.Size("
                         f"{list(size)})", f"batch_norm in training mode needs more than 1 value per channel, and an "
                         f"input of shape {tuple(size)} has one: give a larger batch, or use evaluation mode (.eval())",
                         ValueError)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    _check_sizes(x, training, running_mean=running_mean, running_var=running_var, weight=weight, bias=bias)
    check_dtypes("batch_norm", x, weight, bias, running_mean, running_var)
    if x.size == 0:  # ATen returns a clone (weight[0], bias[0] applied), never a view of the input
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        return out + bias[0] if bias is not None else out
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    axes = (0, *range(2, x.ndim))
    wide = x if x.dtype == np.float64 else x.astype(np.float64)  # statistics in double, as PyTorch's CPU kernel
    if training:
        mean = wide.mean(axis=axes)
        var_sum = np.sum(np.square(wide - mean.reshape(shape)), axis=axes)
        n = x.size // x.shape[1]
        invstd = 1.0 / np.sqrt(var_sum / n + eps)
        use_mean, use_invstd = mean, invstd
        if running_mean is not None:  # in place, the version untouched: PyTorch's kernel writes them so
            rm = running_mean._data
            rm[...] = momentum * mean + (1 - momentum) * rm
        if running_var is not None:
            rv = running_var._data
            rv[...] = momentum * (var_sum / (n - 1)) + (1 - momentum) * rv
        save_mean, save_invstd = mean.astype(x.dtype), invstd.astype(x.dtype)
    else:
        use_mean = running_mean._data.astype(np.float64)  # type: ignore[union-attr]
        use_invstd = 1.0 / np.sqrt(running_var._data.astype(np.float64) + eps)  # type: ignore[union-attr]
        save_mean = save_invstd = np.empty(0, dtype=x.dtype)
    alpha = use_invstd if weight is None else use_invstd * weight._data
    beta = -use_mean * alpha if bias is None else bias._data - use_mean * alpha
    out = wide * alpha.reshape(shape) + beta.reshape(shape)
    node = record(NativeBatchNormBackward0, input, weight, bias)
    if node is not None:
        node.eps, node.training = eps, training
        node.save(input, running_mean, running_var, weight, _const(save_mean), _const(save_invstd))
    return result(np.asarray(out, dtype=x.dtype), node)


def _const(a: np.ndarray) -> Tensor:
    return Tensor._make(a, False, None)
