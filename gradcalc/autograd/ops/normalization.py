"""Layer normalization (`layer_norm`: NativeLayerNormBackward0 and its create_graph node), and the mathematics
that batch normalization (batch_norm.py) shares with it.

Both normalize `x` over groups of `n` elements (a row of the normalized dims; a channel across the batch):
`xhat = (x - mean) * rstd`, `rstd = 1 / sqrt(var + eps)` with the biased variance, then `xhat * weight + bias`.
A `Layout` says where the groups and the affine parameters lie on the input. The first backward is
PyTorch's CPU kernel on arrays (`first_backward`); under create_graph it records ONE node with three outputs
(NativeLayerNormBackwardBackward0, NativeBatchNormBackwardBackward0), whose own backward (`double_backward`) is
written with the engine's differentiable operations, as PyTorch's `layer_norm_double_backward` and
`batchnorm_double_backward` are, so that a third derivative records in turn.

With `P(v) = rstd * (v - S(v)/n - xhat * S(v * xhat)/n)` (S: the sum over a group), the first backward is
`gI = P(gO * weight)`, `gW = Σ gO * xhat`, `gB = Σ gO` (Σ over the other axes), and the double backward, for
cotangents ggI, ggW, ggB of the three: `d gO = weight * P(ggI) + ggW * xhat + ggB`, `d weight = Σ gO * P(ggI)`,
`d x = P(ggW * gO) - rstd²/n * xhat * T - rstd/n * (S(h xhat) P(ggI) + S(ggI xhat) P(h))`, `h = gO * weight`,
`T = S(ggI h) - S(ggI) S(h)/n - S(ggI xhat) S(h xhat)/n`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Size, Tensor
from . import shape as S
from .binary import mul_scalar, plus
from .core import needs, record, result
from .reductions import mean as _mean
from .sums import sum as _sum


class Layout:
    """Where a normalization's groups and affine parameters lie on an input of `ndim` dims: `stat_axes` are
    reduced for the statistics (a group has `n` elements), `param_axes` summed for the parameters' gradients;
    `param_view` is the shape a parameter (of shape `param_shape`) is viewed as to broadcast against the
    input."""

    __slots__ = ("stat_axes", "n", "param_axes", "param_view", "param_shape")

    def __init__(self, stat_axes: tuple[int, ...], n: int, param_axes: tuple[int, ...], param_view: tuple[int, ...],
                 param_shape: tuple[int, ...]) -> None:
        self.stat_axes, self.n, self.param_axes = stat_axes, n, param_axes
        self.param_view, self.param_shape = param_view, param_shape


# -- the first backward, on arrays ---------------------------------------------------------------------------
def first_backward(g: np.ndarray, x: np.ndarray, mean: Any, rstd: Any, w: Any, lay: Layout, train: bool,
                   need: tuple[bool, bool, bool], lead: int = 0) -> tuple[Any, Any, Any]:
    """(gI, gW, gB) on arrays, PyTorch's CPU kernels; `mean`, `rstd` broadcast against `x`. With `lead` = 1, `g`
    carries a leading dim of rows (the batched backward of a Jacobian): every result keeps it."""
    stat = tuple(a + lead for a in lay.stat_axes)
    params = tuple(a + lead for a in lay.param_axes)
    wv = None if w is None else np.reshape(w, lay.param_view)
    xmu = x - mean
    gi = gw = gb = None
    if train:
        gw_full = None
        if need[0]:
            gh = g if wv is None else g * wv
            n = lay.n
            # PyTorch's form: (gh - mean(gh) - (x - mean) * dot * rstd² / n) * rstd
            dot = np.sum(gh * xmu, axis=stat, keepdims=True)
            gi = (gh - np.sum(gh, axis=stat, keepdims=True) / n - xmu * (dot * (rstd * rstd) / n)) * rstd
        if need[1]:
            gw_full = np.sum(g * (xmu * rstd), axis=params)
            gw = gw_full.reshape(g.shape[:lead] + lay.param_shape)
    else:  # evaluation: constants mean and rstd (the running statistics)
        if need[0]:
            gi = g * (rstd if wv is None else rstd * wv)
        if need[1]:
            gw = np.sum(g * (xmu * rstd), axis=params).reshape(g.shape[:lead] + lay.param_shape)
    if need[2]:
        gb = np.sum(g, axis=params).reshape(g.shape[:lead] + lay.param_shape)
    return gi, gw, gb


# -- the double backward, with differentiable operations ------------------------------------------------------
def _sum_stat(t: Tensor, lay: Layout) -> Tensor:
    return _sum(t, lay.stat_axes, keepdim=True)


def _param_sum(t: Tensor, lay: Layout) -> Tensor:
    return S.reshape(_sum(t, lay.param_axes), lay.param_shape) if lay.param_axes else S.reshape(t, lay.param_shape)


def _view(p: Tensor | None, lay: Layout) -> Tensor | None:
    return None if p is None else S.reshape(p, lay.param_view)


def double_backward(g_o: Tensor, x: Tensor, w: Tensor | None, grads: list, mean: Tensor, rstd: Tensor, lay: Layout,
                    train: bool, need: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """(d gO, d x, d weight) for cotangents `grads` = [ggI, ggW, ggB] of the first backward's outputs (see the
    module docstring); `mean`, `rstd` broadcast against `x`."""
    gg_i, gg_w, gg_b = (list(grads) + [None, None, None])[:3]
    n = lay.n
    wv, gg_wv, gg_bv = _view(w, lay), _view(gg_w, lay), _view(gg_b, lay)
    xmu = x - mean
    xhat = xmu * rstd
    d_go = d_x = d_w = None

    def proj(v: Tensor) -> Tensor:  # P(v)
        mean_v = mul_scalar(_sum_stat(v, lay), 1.0 / n)
        return rstd * (v - mean_v - xhat * mul_scalar(_sum_stat(v * xhat, lay), 1.0 / n))

    if not train:  # evaluation: the first backward is linear in gO, and in x only through gW
        if need[0]:
            d_go = plus(plus(None if gg_i is None else gg_i * (rstd if wv is None else rstd * wv),
                             None if gg_wv is None else gg_wv * xhat), gg_bv)
        if need[2] and gg_i is not None:
            d_w = _param_sum(gg_i * g_o * rstd, lay)
        if need[1] and gg_wv is not None:
            d_x = gg_wv * g_o * rstd
        return d_go, d_x, d_w
    p_gg = None if gg_i is None else proj(gg_i)
    if need[0]:
        d_go = plus(plus(None if p_gg is None else (p_gg if wv is None else wv * p_gg),
                         None if gg_wv is None else gg_wv * xhat), gg_bv)
    if need[2] and p_gg is not None:
        d_w = _param_sum(g_o * p_gg, lay)
    if need[1]:
        if gg_i is not None:
            h = g_o if wv is None else g_o * wv
            s_hx, s_ux = _sum_stat(h * xhat, lay), _sum_stat(gg_i * xhat, lay)
            t = _sum_stat(gg_i * h, lay) - mul_scalar(_sum_stat(gg_i, lay) * _sum_stat(h, lay), 1.0 / n) \
                - mul_scalar(s_ux * s_hx, 1.0 / n)
            d_x = -(mul_scalar(rstd * rstd * xhat * t, 1.0 / n)) \
                - mul_scalar(rstd * (s_hx * p_gg + s_ux * proj(h)), 1.0 / n)
        if gg_wv is not None:
            d_x = plus(d_x, proj(gg_wv * g_o))
    return d_go, d_x, d_w


def affine_jvp(out_t: Any, x: Tensor, mean: Tensor, rstd: Tensor, w: Tensor | None, t_w: Any, t_b: Any,
               lay: Layout) -> Any:
    """The weight's and bias's part of a normalization's tangent: `out_t * weight + t_w * xhat + t_b`."""
    wv = _view(w, lay)
    if out_t is not None and wv is not None:
        out_t = out_t * wv
    if t_w is not None:
        out_t = plus(out_t, _view(t_w, lay) * ((x - mean) * rstd))
    if t_b is not None:
        out_t = plus(out_t, _view(t_b, lay))
    return out_t


def centered_jvp(t_x: Tensor, x: Tensor, mean: Tensor, rstd: Tensor, lay: Layout) -> Tensor:
    """The tangent of xhat (statistics of the batch): `(t - mean(t)) rstd - (x - mean) rstd³ mean((t - mean(t))
    (x - mean))`, PyTorch's batch_norm_jvp and layer_norm_jvp."""
    tc = t_x - _mean(t_x, lay.stat_axes, keepdim=True)
    xmu = x - mean
    rstd_t = -(rstd * rstd * rstd) * _mean(tc * xmu, lay.stat_axes, keepdim=True)
    return tc * rstd + xmu * rstd_t


def _const(a: Any) -> Tensor:
    return Tensor._make(np.asarray(a), False, None)


def check_dtypes(name: str, x: np.ndarray, *params: Tensor | None) -> None:
    """PyTorch's CPU checks: a floating input, and parameters of the input's dtype."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for \'{_TYPES.get(x.dtype.name, x.dtype.name)}\'')
    for p in params:
        if p is not None and p._data.dtype != x.dtype:
            if x.dtype == np.float32:
                raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


_TYPES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


# -- layer_norm ---------------------------------------------------------------------------------------------
def _layout(shape: tuple[int, ...], normalized: tuple[int, ...], lead: int = 0) -> Layout:
    axis = len(shape) - len(normalized)
    n = int(np.prod(normalized, dtype=np.int64))
    return Layout(tuple(range(axis, len(shape))), n, tuple(range(axis)), normalized, normalized)


def _layer_norm_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    x, w = inputs[0], inputs[1]
    t_x, t_w, t_b = tangents
    mean, rstd = _const(node.mean), _const(node.rstd)
    lay = _layout(x._data.shape, node.normalized_shape)
    out_t = None if t_x is None else centered_jvp(t_x, x, mean, rstd, lay)
    return affine_jvp(out_t, x, mean, rstd, w, t_w, t_b, lay)


def _ln_batched(self: Node, g: np.ndarray) -> tuple:
    b, x, w, mean, rstd = self.unpack_saved(True)
    need = (needs(self, 0), needs(self, 1), needs(self, 2))
    return first_backward(g, np.asarray(x), mean, rstd, w, _layout(np.shape(x), self.normalized_shape), True, need, 1)


@spec.node(
    formula={"input": "native_layer_norm_backward(grad, input, normalized_shape, result1, result2, weight, bias, "
             "grad_input_mask)", "weight": "native_layer_norm_backward(...)[1]",
             "bias": "native_layer_norm_backward(...)[2]"},
    saved={"bias": SV.tensor(0), "input": SV.tensor(1), "normalized_shape": SV.field("normalized_shape"),
           "result1": SV.tensor(3), "result2": SV.tensor(4), "weight": SV.tensor(2)},
    jvp=_layer_norm_jvp, tangent="layer_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, result1, "
    "result2, normalized_shape)", batched=_ln_batched,
)
class NativeLayerNormBackward0(Node):
    """PyTorch's native_layer_norm_backward: the input's, weight's and bias's gradients from one formula."""

    __slots__ = ("normalized_shape", "mean", "rstd")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        b, x, w, mean, rstd = self.unpack_saved(raw)
        need = (needs(self, 0), needs(self, 1), needs(self, 2))
        if raw:
            return first_backward(g, np.asarray(x), mean, rstd, w, _layout(np.shape(x), self.normalized_shape),
                                  True, need)
        return layer_norm_backward(g, x, self.normalized_shape, mean, rstd, w, b, need)


@spec.node(
    formula={"grad_out": "layer_norm_double_backward(...)[0]", "input": "layer_norm_double_backward(input, weight, "
             "grads[0], grads[1], grads[2], grad_out, mean, rstd, normalized_shape, grad_input_mask)",
             "mean": "not_implemented", "rstd": "not_implemented", "weight": "layer_norm_double_backward(...)[2]",
             "bias": "Tensor()"},
    saved={"grad_out": SV.tensor(0), "input": SV.tensor(1), "mean": SV.tensor(2),
           "normalized_shape": SV.field("normalized_shape"), "rstd": SV.tensor(3), "weight": SV.tensor(4)},
    # a second-order node: its tangent is the transpose of its own differentiable formulas (the double-vjp)
    jvp=spec.DOUBLE_VJP,
)
class NativeLayerNormBackwardBackward0(Node):
    """The node of layer_norm's three gradients under create_graph (edges: grad_out, input, mean, rstd, weight,
    bias)."""

    __slots__ = ("normalized_shape",)
    num_outputs = 3

    def apply(self, grads: Any) -> tuple:
        g_o, x, mean, rstd, w = self.saved_tensors
        grads = grads if type(grads) is list else [grads]
        lay = _layout(x._data.shape, self.normalized_shape)
        need = (needs(self, 0), needs(self, 1), needs(self, 4))
        d_go, d_x, d_w = double_backward(g_o, x, w, grads, mean, rstd, lay, True, need)
        return (d_go, d_x, None, None, d_w, None)


def layer_norm_backward(g: Tensor, x: Tensor, normalized: tuple[int, ...], mean: Tensor, rstd: Tensor,
                        w: Tensor | None, b: Tensor | None, need: tuple[bool, bool, bool]) -> tuple:
    """native_layer_norm_backward: (gI, gW, gB), one node (NativeLayerNormBackwardBackward0) when it records."""
    lay = _layout(x._data.shape, normalized)
    datas = first_backward(g._data, x._data, mean._data, rstd._data, None if w is None else w._data, lay, True, need)
    node = record(NativeLayerNormBackwardBackward0, g, x, mean, rstd, w, b)
    if node is not None:
        node.normalized_shape = normalized
        node.save(g, x, mean, rstd, w)
    return _outputs(datas, node)


def _outputs(datas: tuple, node: Node | None) -> tuple:
    """The tensors of a multi-output gradient node (None where a gradient is not wanted)."""
    outs = []
    for i, d in enumerate(datas):
        if d is None:
            outs.append(None)
            continue
        t = result(np.asarray(d), node)
        t._output_nr = i
        outs.append(t)
    return tuple(outs)


def _normalized(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, bool) or not isinstance(normalized_shape, (tuple, list, Size)):
        if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
            raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    return tuple(int(n) for n in normalized_shape)


def _shown(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _layer_norm_rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """vmap of layer_norm: the batch dim first (among the dims not normalized); a batched weight or bias applied
    after, padded to the input's rank."""
    batching = spec.RULES
    bind = batching.bind
    names = ("normalized_shape", "weight", "bias", "eps")
    given = dict(zip(names, args[1:], strict=False))
    given.update(params)
    x = batching.to_front(args[0], dims[0])
    pdims = dict(zip(names, dims[1:], strict=False))
    w, b = given.get("weight"), given.get("bias")
    if w is None and b is None or (pdims.get("weight") is None and pdims.get("bias") is None):
        return bind("layer_norm", x, **given), 0
    rank = len(batching.shape_of(x)) - (dims[0] is not None)  # a sample's (the batch comes from the weights)
    out = bind("layer_norm", x, given["normalized_shape"], eps=given.get("eps", 1e-5))
    for name, op in (("weight", "mul"), ("bias", "add")):
        p = given.get(name)
        if p is not None:
            d = pdims.get(name)
            out = bind(op, out, p if d is None else batching.pad(batching.to_front(p, d), rank))
    return out, 0


@spec.op("layer_norm", method=False, vmap=_layer_norm_rule,
         sample=spec.Sample(((2, 3, 4), (4,), (4,)), lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w, b)
                            + L.nn.functional.layer_norm(x, (3, 4)) * 0.5
                            + L.nn.functional.layer_norm(x, [4], w, eps=0.1)))
def layer_norm(input: Tensor, normalized_shape: Iterable[int], weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last dims `normalized_shape` (each to mean 0 and variance 1, the biased variance + eps),
    then `* weight + bias` elementwise."""
    normalized = _normalized(normalized_shape)
    x = input._data
    if not normalized:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {_shown(normalized)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p._data.shape != normalized:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{_shown(p._data.shape)} and normalized_shape = {_shown(normalized)}")
    k = len(normalized)
    if x.ndim < k or x.shape[x.ndim - k:] != normalized:
        raise RuntimeError(f"Given normalized_shape={_shown(normalized)}, expected input with shape "
                           f"[*, {', '.join(str(n) for n in normalized)}], but got input of size{_shown(x.shape)}")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for '{_TYPES.get(x.dtype.name)}'")
    check_dtypes("LayerNormKernelImpl", x, weight, bias)
    axes = tuple(range(x.ndim - k, x.ndim))
    wide = x.astype(np.float64) if x.dtype != np.float64 else x  # statistics in double, as PyTorch's CPU kernel
    mean = wide.mean(axis=axes, keepdims=True)
    var = np.mean(np.square(wide - mean), axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    out = (wide - mean) * rstd
    if weight is not None:
        out = out * weight._data
    if bias is not None:
        out = out + bias._data
    mean, rstd = mean.astype(x.dtype), rstd.astype(x.dtype)
    node = record(NativeLayerNormBackward0, input, weight, bias)
    if node is not None:
        node.normalized_shape, node.mean, node.rstd = normalized, mean, rstd
        node.save(bias, input, weight, _const(mean), _const(rstd))
    return result(np.asarray(out, dtype=x.dtype), node)

