"""Convolutions: `convolution` (PyTorch's one operation under every conv), `conv1d`, `conv2d`, `conv_transpose1d`,
`conv_transpose2d`, and the constant padding `constant_pad_nd` (nn.functional's `pad`) that `padding='same'`
needs for an even kernel.

Every convolution records PyTorch's one node, `ConvolutionBackward0` (inputs `input, weight, bias`; it saves the
input, the weight and the parameters under PyTorch's names). Its backward is PyTorch's `convolution_backward`:
in a plain backward on arrays (windows.py: one matrix product per gradient), under create_graph as one node of
three outputs, `ConvolutionBackwardBackward0`, whose own backward is PyTorch's `_convolution_double_backward`
written with `convolution` itself, so that a convolution differentiates to any order with PyTorch's graph. An
unbatched input (no batch dim) is unsqueezed and the result squeezed, as PyTorch does.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..heap import keep_freed_memory
from ..node import Node
from ..reasons import worded
from ..tensor import Tensor
from . import shape as S
from . import slicing as SL
from . import windows as W
from .binary import plus
from .core import needs, record, result
from .joins import cat
from .sums import expand
from .sums import sum as tsum

_ALL = slice(None)


# -- parameters ----------------------------------------------------------------------------------------------------
def _ints(value: Any, n: int, name: str, fn: str, what: str = "the convolution dimensions") -> tuple[int, ...]:
    """A parameter given as one int or a sequence of `n` (or one) ints, as an n-tuple (PyTorch's expand_param)."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but found element of type "
                            f"{type(v).__name__}")
    ints = tuple(int(v) for v in items)
    if len(ints) == 1:
        return ints * n
    if len(ints) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match {what}, "
                           f"but got {name}={list(ints)}")
    return ints


def _tensor(x: Any, fn: str, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")
    return x


def _sizes(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _check(x: Tensor, w: Tensor, b: Tensor | None, stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...], transposed: bool, output_padding: tuple[int, ...], groups: int) -> None:
    """PyTorch's checks of a convolution's arguments, with its messages."""
    xs, ws = x._data.shape, w._data.shape
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("non-positive dilation is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if len(ws) != len(xs):
        raise RuntimeError(f"Expected {len(ws) - 1}D (unbatched) or {len(ws)}D (batched) input to convolution with "
                           f"a weight of size {_sizes(ws)}, but got input of size: {_sizes(xs)}")
    if ws[0] < (1 if not transposed else 0) or ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{_sizes(ws)}] instead")
    channels = ws[0] if transposed else ws[1] * groups
    if xs[1] != channels:
        if transposed:
            raise RuntimeError(f"Given transposed=1, weight of size {_sizes(ws)}, expected input{_sizes(xs)} to have "
                               f"{channels} channels, but got {xs[1]} channels instead")
        raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(ws)}, expected input{_sizes(xs)} to have "
                           f"{channels} channels, but got {xs[1]} channels instead")
    if x._data.dtype != w._data.dtype:
        raise worded(f"expected scalar type {_TYPE.get(str(x._data.dtype), x._data.dtype)} but found "
                     f"{_TYPE.get(str(w._data.dtype), w._data.dtype)}",
                     f"convolution: the input is {x._data.dtype} and the weight {w._data.dtype}: convert one with "
                     ".double() or .float()")
    out_channels = ws[1] * groups if transposed else ws[0]
    if b is not None:
        if b._data.ndim != 1 or b._data.shape[0] != out_channels:
            raise RuntimeError(f"Given weight of size {_sizes(ws)}, expected bias to be 1-dimensional with "
                               f"{out_channels} elements, but got bias of size {_sizes(b._data.shape)} instead")
        if b._data.dtype != x._data.dtype:
            raise worded(f"Input type ({_C_TYPE.get(str(x._data.dtype), x._data.dtype)}) and bias type "
                         f"({_C_TYPE.get(str(b._data.dtype), b._data.dtype)}) should be the same",
                         f"convolution: the input is {x._data.dtype} and the bias {b._data.dtype}: convert one with "
                         ".double() or .float()")
    if transposed:
        for op, s, d in zip(output_padding, stride, dilation, strict=True):
            if op >= s and op >= d:
                raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                                   f"output_padding {list(output_padding)}, stride {list(stride)} and dilation "
                                   f"{list(dilation)}")
        return
    kernel = tuple((k - 1) * d + 1 for k, d in zip(ws[2:], dilation, strict=True))
    padded = tuple(n + 2 * p for n, p in zip(xs[2:], padding, strict=True))
    if any(k > n for k, n in zip(kernel, padded, strict=True)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input "
                           "size")


_TYPE = {"float64": "Double", "float32": "Float", "int64": "Long", "bool": "Bool"}
_C_TYPE = {"float64": "double", "float32": "float", "int64": "long int", "bool": "bool"}


def _transposed_size(size: tuple[int, ...], kernel: tuple[int, ...], stride: tuple[int, ...],
                     padding: tuple[int, ...], dilation: tuple[int, ...], output_padding: tuple[int, ...]) -> tuple:
    """The spatial shape of a transposed convolution's output."""
    return tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for n, k, s, p, d, op in zip(size, kernel, stride, padding, dilation, output_padding, strict=True))


# -- the arrays ----------------------------------------------------------------------------------------------------
class _Params:
    """A convolution's parameters, as every kernel call needs them."""

    __slots__ = ("stride", "padding", "dilation", "transposed", "output_padding", "groups")

    def __init__(self, stride: tuple, padding: tuple, dilation: tuple, transposed: bool, output_padding: tuple,
                 groups: int) -> None:
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.transposed, self.output_padding, self.groups = transposed, output_padding, groups


def _forward(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, p: Any) -> np.ndarray:
    if p.transposed:
        size = _transposed_size(x.shape[2:], w.shape[2:], p.stride, p.padding, p.dilation, p.output_padding)
        y = W.conv_input_grad(x, w, size, p.stride, p.padding, p.dilation, p.groups)
        if b is not None:
            y += b.reshape((-1,) + (1,) * (y.ndim - 2))
        return y
    return W.conv_forward(x, w, p.stride, p.padding, p.dilation, p.groups, bias=b)


def _input_grad(g: np.ndarray, x_shape: tuple, w: np.ndarray, p: Any) -> np.ndarray:
    if p.transposed:
        return W.conv_forward(g, w, p.stride, p.padding, p.dilation, p.groups, x_shape[2:])
    return W.conv_input_grad(g, w, x_shape[2:], p.stride, p.padding, p.dilation, p.groups)


def _weight_grad(g: np.ndarray, x: np.ndarray, w_shape: tuple, p: Any) -> np.ndarray:
    if p.transposed:  # the input plays the output gradient's part, and the gradient the input's
        if g.ndim > x.ndim:  # rows of a batched backward: one product each
            return np.stack([_weight_grad(row, x, w_shape, p) for row in g])
        return W.conv_weight_grad(g, x, w_shape[2:], p.stride, p.padding, p.dilation, p.groups)
    return W.conv_weight_grad(x, g, w_shape[2:], p.stride, p.padding, p.dilation, p.groups)


def _bias_grad(g: np.ndarray, lead: int = 0) -> np.ndarray:
    """The sum of the output's gradient over the batch and every position (per channel)."""
    return g.sum(axis=(lead, *range(lead + 2, g.ndim)))


# -- ConvolutionBackward0 ------------------------------------------------------------------------------------------
def _convolution_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """PyTorch's convolution_jvp: conv(input_t, weight_p, bias_t) + conv(input_p, weight_t)."""
    (x, w, _), (tx, tw, tb) = inputs, tangents
    args = (node.stride, node.padding, node.dilation, node.transposed, node.output_padding, node.groups)
    first = _convolve(tx, w, tb, *args) if tx is not None else None
    second = _convolve(x, tw, None, *args) if tw is not None else None
    total = plus(first, second)
    if tx is None and tb is not None:
        shape = (1, -1) + (1,) * (out._data.ndim - 2)
        total = plus(total, expand(S.view(tb, shape), out._data.shape))
    return total


def _convolution_batched(node: Node, g: np.ndarray) -> tuple:
    """The backward with one leading dim of rows: the input's gradient with the rows folded into the batch, the
    weight's as one product per group over the rows, the bias's a sum."""
    x, w = node.unpack_saved(True)
    rows = g.shape[0]
    gi = gw = gb = None
    if needs(node, 0):
        folded = g.reshape((rows * g.shape[1],) + g.shape[2:])
        gi = _input_grad(folded, x.shape, w, node)
        gi = gi.reshape((rows, x.shape[0]) + gi.shape[1:])
    if needs(node, 1):
        gw = _weight_grad(g, x, w.shape, node)
    if needs(node, 2):
        gb = _bias_grad(g, 1)
    return (gi, gw, gb)


@spec.node(
    formula={
        "input": "convolution_backward(grad, input, weight, bias->sym_sizes(), stride, padding, dilation, transposed, "
                 "output_padding, groups, grad_input_mask)[0]",
        "weight": "convolution_backward(grad, input, weight, bias->sym_sizes(), stride, padding, dilation, "
                  "transposed, output_padding, groups, grad_input_mask)[1]",
        "bias": "convolution_backward(grad, input, weight, bias->sym_sizes(), stride, padding, dilation, transposed, "
                "output_padding, groups, grad_input_mask)[2]",
    },
    saved={"input": SV.tensor(0), "weight": SV.tensor(1), "bias_sym_sizes_opt": SV.field("bias_sizes"),
           "stride": SV.field("stride"), "padding": SV.field("padding"), "dilation": SV.field("dilation"),
           "transposed": SV.field("transposed"), "output_padding": SV.field("output_padding"),
           "groups": SV.field("groups")},
    jvp=_convolution_jvp,
    tangent="convolution(input_t, weight_p, bias_t, ...) + convolution(input_p, weight_t, None, ...)",
    batched=_convolution_batched,
)
class ConvolutionBackward0(Node):
    """A convolution of `input` by `weight` (plus `bias`): its three gradients, as PyTorch's convolution_backward."""

    __slots__ = ("bias_sizes", "stride", "padding", "dilation", "transposed", "output_padding", "groups")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, w = self.unpack_saved(raw)
        mask = (needs(self, 0), needs(self, 1), needs(self, 2))
        if not raw:
            return convolution_backward(g, x, w, self.bias_sizes, self.stride, self.padding, self.dilation,
                                        self.transposed, self.output_padding, self.groups, mask)
        return _backward_arrays(g, x, w, self, mask)


def _backward_arrays(g: np.ndarray, x: np.ndarray, w: np.ndarray, p: Any, mask: tuple) -> tuple:
    """The three gradients on arrays (None where `mask` says no)."""
    return (_input_grad(g, x.shape, w, p) if mask[0] else None,
            _weight_grad(g, x, w.shape, p) if mask[1] else None,
            _bias_grad(g) if mask[2] else None)


# -- ConvolutionBackwardBackward0: convolution_backward as an operation -------------------------------------------
def _backward_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    """derivatives.yaml's result0/1/2 of convolution_backward: each output is linear in the gradient and in the
    other operand of the product it comes from."""
    (g, x, w), (tg, tx, tw) = inputs, tangents
    i = out._output_nr
    args = (node.bias_sizes, node.stride, node.padding, node.dilation, node.transposed, node.output_padding,
            node.groups)
    mask = tuple(k == i for k in range(3))
    if i == 2:
        return None if tg is None else tsum(tg, (0, *range(2, tg._data.ndim)))
    other = tw if i == 0 else tx
    first = None if other is None else convolution_backward(
        g, x if i == 0 else other, other if i == 0 else w, *args, mask)[i]
    second = None if tg is None else convolution_backward(tg, x, w, *args, mask)[i]
    return plus(first, second)


@spec.node(
    formula={
        "grad_output": "_convolution_double_backward(grads[0], grads[1], grads[2], grad_output, weight, input, "
                       "stride, padding, dilation, transposed, output_padding, groups, grad_input_mask)[0]",
        "input": "_convolution_double_backward(grads[0], grads[1], grads[2], grad_output, weight, input, stride, "
                 "padding, dilation, transposed, output_padding, groups, grad_input_mask)[1]",
        "weight": "_convolution_double_backward(grads[0], grads[1], grads[2], grad_output, weight, input, stride, "
                  "padding, dilation, transposed, output_padding, groups, grad_input_mask)[2]",
    },
    saved={"grad_output": SV.tensor(0), "weight": SV.tensor(2), "input": SV.tensor(1), "stride": SV.field("stride"),
           "padding": SV.field("padding"), "dilation": SV.field("dilation"), "transposed": SV.field("transposed"),
           "output_padding": SV.field("output_padding"), "groups": SV.field("groups")},
    jvp=_backward_jvp,
    tangent="convolution_backward(grad_output_p, input_p, weight_t, ...) + convolution_backward(grad_output_t, "
            "input_p, weight_p, ...) per output (result0, result1); sum of grad_output_t (result2)",
)
class ConvolutionBackwardBackward0(Node):
    """The gradients of a convolution made under create_graph: one node, three outputs (input's, weight's,
    bias's), whose backward is PyTorch's `_convolution_double_backward`."""

    __slots__ = ("bias_sizes", "stride", "padding", "dilation", "transposed", "output_padding", "groups")
    num_outputs = 3

    def apply(self, grads: Any) -> tuple:
        if type(grads) is not list:
            grads = [grads, None, None]
        gg_i, gg_w, gg_b = grads
        g, x, w = self.saved_tensors
        return _double_backward(gg_i, gg_w, gg_b, g, w, x, self, (needs(self, 0), needs(self, 1), needs(self, 2)))


def _narrow_group(t: Tensor, dim: int, groups: int, k: int) -> Tensor:
    """Group `k` of `groups` along `dim` (PyTorch's subvariable)."""
    n = t._data.shape[dim] // groups
    return SL.narrow(t, dim, n * k, n)


def _double_backward(gg_i: Any, gg_w: Any, gg_b: Any, g: Tensor, w: Tensor, x: Tensor, p: Any,
                     mask: tuple) -> tuple:
    """PyTorch's _convolution_double_backward: the gradients in (grad_output, input, weight) of the products of
    convolution_backward's three outputs with `gg_i`, `gg_w`, `gg_b`."""
    args = (p.stride, p.padding, p.dilation, p.transposed, p.output_padding, p.groups)
    gg_o = None
    if mask[0]:
        if x._data.size:
            if gg_i is not None:
                gg_o = _convolve(gg_i, w, None, *args)
            if gg_w is not None:
                gg_o = plus(gg_o, _convolve(x, gg_w, None, *args))
        if gg_b is not None:
            shape = [1] * g._data.ndim
            shape[1] = gg_b._data.shape[0]
            gg_o = plus(gg_o, expand(S.view(gg_b, tuple(shape)), g._data.shape))
    g_w = None
    if gg_i is not None and mask[2]:
        # gW = conv(ggI, gO) over the batch (groups one at a time), stride and dilation swapped
        g_t, gg_it = S.transpose(g, 0, 1), S.transpose(gg_i, 0, 1)
        wargs = (p.dilation, p.padding, p.stride, False, p.output_padding, 1)
        pairs = (g_t, gg_it) if p.transposed else (gg_it, g_t)
        if p.groups == 1:
            g_wt = _convolve(pairs[0], pairs[1], None, *wargs)
        else:
            g_wt = cat([_convolve(_narrow_group(pairs[0], 0, p.groups, k), _narrow_group(pairs[1], 0, p.groups, k),
                                    None, *wargs) for k in range(p.groups)], 1)
        g_w = S.transpose(g_wt, 0, 1)
        for d in range(2, g_w._data.ndim):  # only the part the weight has (the products may reach further)
            if g_w._data.shape[d] > w._data.shape[d]:
                g_w = SL.narrow(g_w, d, 0, w._data.shape[d])
    g_i = None
    if gg_w is not None and mask[1]:
        if p.transposed:
            g_i = _convolve(g, gg_w, None, p.stride, p.padding, p.dilation, False, p.output_padding, p.groups)
        else:
            # the transposed convolution of gO, with the output padding that gives back the input's size
            kernel = w._data.shape[2:]
            expected = _transposed_size(g._data.shape[2:], kernel, p.stride, p.padding, p.dilation,
                                        (0,) * len(kernel))
            extra = tuple(n - e for n, e in zip(x._data.shape[2:], expected, strict=True))
            g_i = _convolve(g, gg_w, None, p.stride, p.padding, p.dilation, True, extra, p.groups)
        for d in range(2, g_i._data.ndim):  # an output padding past the stride made the product longer
            if g_i._data.shape[d] > x._data.shape[d]:
                g_i = SL.narrow(g_i, d, 0, x._data.shape[d])
    return (gg_o, g_i, g_w)


def convolution_backward(grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Any,  # noqa: A002
                         stride: tuple, padding: tuple, dilation: tuple, transposed: bool, output_padding: tuple,
                         groups: int, output_mask: tuple) -> tuple:
    """PyTorch's convolution_backward: the gradients in (input, weight, bias) of a convolution, as the outputs of
    one node (`ConvolutionBackwardBackward0`) when it records; None where `output_mask` says no."""
    p = _Params(stride, padding, dilation, transposed, output_padding, groups)
    datas = _backward_arrays(grad_output._data, input._data, weight._data, p, output_mask)
    node = record(ConvolutionBackwardBackward0, grad_output, input, weight)
    if node is not None:
        node.bias_sizes, node.stride, node.padding, node.dilation = bias_sizes, stride, padding, dilation
        node.transposed, node.output_padding, node.groups = transposed, output_padding, groups
        node.save(grad_output, input, weight)
    outs = []
    for i, data in enumerate(datas):
        if data is None:
            outs.append(None)
            continue
        out = result(data, node)
        out._output_nr = i
        outs.append(out)
    return tuple(outs)


# -- batching rules ------------------------------------------------------------------------------------------------
def _conv_rule(name: str) -> spec.BatchRule:
    """The batching rule of a convolution `name` (functorch's): a batched input folds its batch into the
    convolution's; a batched weight becomes `batch` times as many groups, the input's channels repeated (or its
    batch moved into the channels); a batched bias is added after."""

    def rule(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
        B = spec.RULES  # vmap's batching.py, which hands itself down to the specs when it loads

        function = spec.OPS[name].function
        bound = inspect.signature(function).bind(*args, **params)
        bound.apply_defaults()
        given = dict(bound.arguments)
        x, w, b = given.pop("input"), given.pop("weight"), given.pop("bias")
        at = dict(zip(("input", "weight", "bias"), (dims + (None,) * 3)[:3], strict=True))
        dx, dw, db = at["input"], at["weight"], at["bias"]
        nd = B.ndim(w) - (dw is not None) - 2
        if dx is not None:
            x = B.to_front(x, dx)
        unbatched = B.ndim(x) - (dx is not None) == nd + 1  # a sample without the convolution's own batch dim
        if dw is None:
            bias = b if db is None else None
            if dx is not None and not unbatched:  # (B, N, C, ...): the two batches folded into one
                size, n = B.shape_of(x)[:2]
                out = B.bind(name, B.bind("reshape", x, (size * n, *B.shape_of(x)[2:])), w, bias, **given)
                out = B.bind("reshape", out, (size, n, *B.shape_of(out)[1:]))
            else:  # (B, C, ...) is a batch of the convolution's own; or the input is the same for every sample
                out = B.bind(name, x, w, bias, **given)
            rank = B.ndim(out) - (dx is not None)
            return _add_bias(B, out, b, db, rank, 0 if unbatched else 1), 0
        w = B.to_front(w, dw)
        size = B.shape_of(w)[0]
        if dx is None:
            x = B.bind("unsqueeze", x, 0) if unbatched else x
            n, c = B.shape_of(x)[:2]  # the channels repeated per weight of the batch
            x = B.bind("reshape", B.bind("expand", B.bind("unsqueeze", x, 1), (n, size, c, *B.shape_of(x)[2:])),
                       (n, size * c, *B.shape_of(x)[2:]))
        else:
            x = B.bind("unsqueeze", x, 1) if unbatched else x  # (B, N, C, ...)
            n, c = B.shape_of(x)[1:3]
            x = B.bind("reshape", B.bind("movedim", x, 0, 1), (n, size * c, *B.shape_of(x)[3:]))
        w = B.bind("reshape", w, (size * B.shape_of(w)[1], *B.shape_of(w)[2:]))
        bias = None
        if b is not None and db is None:
            bias = B.bind("reshape", B.bind("expand", B.bind("unsqueeze", b, 0), (size, B.shape_of(b)[0])), (-1,))
        given["groups"] = given["groups"] * size
        out = B.bind(name, x, w, bias, **given)  # (N, B·O, ...)
        shape = B.shape_of(out)
        out = B.bind("movedim", B.bind("reshape", out, (shape[0], size, shape[1] // size, *shape[2:])), 1, 0)
        if unbatched:
            out = B.bind("squeeze", out, 1)
        return _add_bias(B, out, b, db, B.ndim(out) - 1, 0 if unbatched else 1), 0

    return rule


def _add_bias(B: Any, out: Any, b: Any, db: Any, rank: int, channel_at: int) -> Any:
    """`out` (samples of `rank` dims, batched at 0 or the same for all) plus a bias batched at `db` (nothing when
    the bias is not batched: the convolution added it), its channels at `channel_at` of each sample."""
    if db is None:
        return out
    b = B.to_front(b, db)
    shape = [B.shape_of(b)[0]] + [1] * rank
    shape[1 + channel_at] = B.shape_of(b)[1]
    return B.bind("add", out, B.bind("reshape", b, tuple(shape)))


def _pad_rule(args: tuple, dims: tuple, *rest: Any, **params: Any) -> tuple[Any, Any]:
    """constant_pad_nd pads the last dims: the batch dim goes first, out of their way."""
    B = spec.RULES  # vmap's batching.py, which hands itself down to the specs when it loads

    (x, *more), (d, *_) = args, dims
    return B.bind("constant_pad_nd", B.to_front(x, d), *more, *rest, **params), 0


# -- convolution ---------------------------------------------------------------------------------------------------
@spec.op("convolution", method=False, nodes=(ConvolutionBackward0,), vmap=_conv_rule("convolution"),
         sample=spec.Sample(((2, 4, 5, 6), (6, 2, 3, 2), (6,)), lambda L, x, w, b: L.convolution(
             x, w, b, (2, 1), (1, 0), (1, 2), False, (0, 0), 2) + L.convolution(
             x, w, None, (1, 2), (0, 1), (2, 1), False, (0, 0), 2)[..., :2, :3].sum() + L.convolution(
             x[:, :, :3], w[:4], b[:2], (2, 2), (1, 1), (1, 1), True, (1, 0), 1)[:, :, :3, :3].sum()))
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
                dilation: Any, transposed: bool, output_padding: Any, groups: int) -> Tensor:
    """A convolution (or a transposed one) of a batched input, every parameter given: PyTorch's one operation."""
    return _convolve(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, None)


def _convolve(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
              dilation: Any, transposed: bool, output_padding: Any, groups: int, no_bias: Any = (0,)) -> Tensor:
    """`convolution`; `no_bias` is what the node shows as the bias's sizes when there is none (None when called
    as torch.convolution, PyTorch's optional left empty; (0,) from conv2d and the engine's own calls)."""
    x, w = _tensor(input, "convolution", "input"), _tensor(weight, "convolution", "weight")
    b = None if bias is None else _tensor(bias, "convolution", "bias")
    nd = w._data.ndim - 2
    if nd < 1:
        raise RuntimeError(f"convolution: weight should have at least three dimensions, but got weight of size "
                           f"{_sizes(w._data.shape)}")
    stride, padding, dilation = (_ints(v, nd, n, "convolution") for v, n in (
        (stride, "stride"), (padding, "padding"), (dilation, "dilation")))
    output_padding = _ints(output_padding, nd, "output_padding", "convolution")
    groups, transposed = int(groups), bool(transposed)
    _check(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    p = _Params(stride, padding, dilation, transposed, output_padding, groups)
    keep_freed_memory()  # (once: a network of convolutions frees and takes back tens of MB a step)
    data = _forward(x._data, w._data, None if b is None else b._data, p)
    node = record(ConvolutionBackward0, x, w, b)
    if node is not None:
        node.bias_sizes = no_bias if b is None else b._data.shape
        node.stride, node.padding, node.dilation, node.transposed = stride, padding, dilation, transposed
        node.output_padding, node.groups = output_padding, groups
        node.save(x, w)
    return result(data, node)


def _conv(fn: str, nd: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,  # noqa: A002
          dilation: Any, groups: int, transposed: bool = False, output_padding: Any = 0) -> Tensor:
    """conv1d/conv2d and their transposes: an unbatched input unsqueezed, `padding` 'valid' or 'same' resolved."""
    x = _tensor(input, fn, "input")
    _tensor(weight, fn, "weight")
    if x._data.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {_sizes(x._data.shape)}")
    batched = x._data.ndim == nd + 2
    if not batched:
        x = S.unsqueeze(x, 0)
    stride = _ints(stride, nd, "stride", fn)
    dilation = _ints(dilation, nd, "dilation", fn)
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
        x, padding = _padding_mode(x, weight, padding, stride, dilation)
    out = _convolve(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return out if batched else S.squeeze(out, 0)


_WARNED_SAME = [False]


def _padding_mode(x: Tensor, w: Tensor, mode: str, stride: tuple, dilation: tuple) -> tuple[Tensor, tuple]:
    """`padding='valid'` (none) or `'same'` (the output as large as the input): PyTorch's _convolution_mode, which
    pads an odd total on the right with `constant_pad_nd` first."""
    nd = len(stride)
    if mode == "valid":
        return x, (0,) * nd
    if mode != "same":
        raise RuntimeError(f"Invalid padding string: '{mode}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    kernel = w._data.shape[2:]
    left = [d * (k - 1) // 2 for k, d in zip(kernel, dilation, strict=True)]
    right = [d * (k - 1) - lf for k, d, lf in zip(kernel, dilation, left, strict=True)]
    if left == right:
        return x, tuple(left)
    if not _WARNED_SAME[0]:  # PyTorch's TORCH_WARN_ONCE
        _WARNED_SAME[0] = True
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                      "copy of the input be created", UserWarning, stacklevel=4)
    pads = [0] * (2 * nd)
    for i in range(nd):
        delta = right[i] - left[i]  # F.pad's list runs from the last dim to the first
        at = 2 * (nd - 1 - i)
        if delta > 0:
            pads[at + 1] = delta
        else:
            pads[at] = delta
            left[i] = right[i]
    return constant_pad_nd(x, pads, 0), tuple(left)


def _conv2d_sample(L: Any, x: Any, w: Any, b: Any) -> Any:
    """conv2d's sample: stride, padding, dilation, no bias, an unbatched input with an even kernel's 'same'."""
    return (L.nn.functional.conv2d(x, w, b, 2, 1) + L.conv2d(x, w, None, 1, (0, 1), 2)[..., ::2, ::2][..., :3, :3]
            .sum() + L.nn.functional.conv2d(x[0], w, b, padding="same")[:, :3, :3].sum())


@spec.op("conv2d", method=False, vmap=_conv_rule("conv2d"),
         sample=spec.Sample(((2, 3, 6, 5), (4, 3, 3, 2), (4,)), _conv2d_sample))
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int, ...] = 1,  # noqa: A002
           padding: int | tuple[int, ...] | str = 0, dilation: int | tuple[int, ...] = 1, groups: int = 1) -> Tensor:
    """The 2-d convolution (cross-correlation) of an input (N, C, H, W) or (C, H, W) by a weight (out, C/groups, kH,
    kW), plus a bias; padding is a number, a pair, 'valid' or 'same'."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@spec.op("conv1d", method=False, vmap=_conv_rule("conv1d"),
         sample=spec.Sample(((2, 4, 7), (6, 2, 3), (6,)), lambda L, x, w, b: L.nn.functional.conv1d(
             x, w, b, 2, 1, 1, 2) + L.conv1d(x[1], w, None, 1, "same", 2, 2)[:, ::2][:, :3].sum()))
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: int | tuple[int, ...] = 1,  # noqa: A002
           padding: int | tuple[int, ...] | str = 0, dilation: int | tuple[int, ...] = 1, groups: int = 1) -> Tensor:
    """The 1-d convolution (cross-correlation) of an input (N, C, L) or (C, L) by a weight (out, C/groups, k), plus
    a bias; padding is a number, 'valid' or 'same'."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@spec.op("conv_transpose2d", method=False, vmap=_conv_rule("conv_transpose2d"),
         sample=spec.Sample(((2, 4, 3, 2), (4, 3, 2, 3), (6,)), lambda L, x, w, b: L.nn.functional.conv_transpose2d(
             x, w, b, 2, 1, 1, 2)))
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                     output_padding: int | tuple[int, ...] = 0, groups: int = 1,
                     dilation: int | tuple[int, ...] = 1) -> Tensor:
    """The 2-d transposed convolution (the input's gradient of conv2d) of an input (N, C, H, W) by a weight (C,
    out/groups, kH, kW), plus a bias."""
    return _conv("conv_transpose2d", 2, input, weight, bias, stride, _ints(padding, 2, "padding", "conv_transpose2d"),
                 dilation, groups, True, _ints(output_padding, 2, "output_padding", "conv_transpose2d"))


@spec.op("conv_transpose1d", method=False, vmap=_conv_rule("conv_transpose1d"),
         sample=spec.Sample(((2, 2, 4), (2, 3, 3), (3,)), lambda L, x, w, b: L.conv_transpose1d(x, w, b, 2, 1, 1)))
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: int | tuple[int, ...] = 1, padding: int | tuple[int, ...] = 0,
                     output_padding: int | tuple[int, ...] = 0, groups: int = 1,
                     dilation: int | tuple[int, ...] = 1) -> Tensor:
    """The 1-d transposed convolution of an input (N, C, L) by a weight (C, out/groups, k), plus a bias."""
    return _conv("conv_transpose1d", 1, input, weight, bias, stride, _ints(padding, 1, "padding", "conv_transpose1d"),
                 dilation, groups, True, _ints(output_padding, 1, "output_padding", "conv_transpose1d"))


# -- constant padding ----------------------------------------------------------------------------------------------
@spec.node(
    formula={"self": "constant_pad_nd_backward(grad, pad)"},
    saved={"pad": SV.field("pad", tuple)},
    jvp=lambda node, inputs, out, tangents: constant_pad_nd(tangents[0], node.pad, 0),
    tangent="constant_pad_nd(self_t, pad, 0)",
    batched=lambda node, g: (_pad_array(g, [-p for p in node.pad], 0),),
)
class ConstantPadNdBackward0(Node):
    """Padding with a constant: the gradient is the padded gradient cropped back (a padding by minus `pad`)."""

    __slots__ = ("pad",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        back = [-p for p in self.pad]
        return (constant_pad_nd(g, back, 0) if type(g) is Tensor else _pad_array(g, back, 0),)


def _pad_array(a: np.ndarray, pad: Any, value: Any) -> np.ndarray:
    """`a` padded (or cropped, where a pad is negative) on its last dims: pad = (last's left, last's right, ...)."""
    n = len(pad) // 2
    crop = [_ALL] * a.ndim
    widths = [(0, 0)] * a.ndim
    for i in range(n):
        d = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        crop[d] = slice(-lo if lo < 0 else 0, a.shape[d] + hi if hi < 0 else a.shape[d])
        widths[d] = (max(lo, 0), max(hi, 0))
    a = a[tuple(crop)]
    if any(w != (0, 0) for w in widths):
        a = np.pad(a, widths, constant_values=value)
    return np.ascontiguousarray(a)


@spec.op("constant_pad_nd", method=False, nodes=(ConstantPadNdBackward0,), vmap=_pad_rule,
         sample=spec.Sample(((2, 3, 4),), lambda L, a: L.constant_pad_nd(a, (1, 2, 0, 1), 0.5)
                            + L.nn.functional.pad(a, (1, 2, 0, 1)) + L.nn.functional.pad(a, (-1, 1, 0, 0, 1, -1))
                            .sum()))
def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:  # noqa: A002
    """Pad the last dims with `value`: `pad` lists (left, right) counts from the last dim backwards; a negative
    count crops."""
    x = _tensor(input, "constant_pad_nd", "input")
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > x._data.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)} while the input has {x._data.ndim} dimensions.")
    for i in range(len(pad) // 2):
        d = x._data.ndim - 1 - i
        if x._data.shape[d] + pad[2 * i] + pad[2 * i + 1] < 0:
            raise RuntimeError(f"The input size {x._data.shape[d]}, plus negative padding {pad[2 * i]} and "
                               f"{pad[2 * i + 1]} resulted in a negative output size, which is invalid. Check "
                               f"dimension {d} of your input.")
    data = _pad_array(x._data, pad, value)
    node = record(ConstantPadNdBackward0, x)
    if node is not None:
        node.pad = tuple(pad)
    return result(data, node)


def _pad_rule_of_pad(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    """vmap of F.pad: it pads the last dims, so the batch dim first and the whole batch padded."""
    batching = spec.RULES
    x, d = args[0], dims[0]  # (the other arguments are numbers)
    return batching.bind("pad", batching.to_front(x, d), *args[1:], **params), 0


@spec.op("pad", method=False, top_level=False, nodes=(ConstantPadNdBackward0,), vmap=_pad_rule_of_pad,
         sample=spec.Sample(((2, 3),), lambda L, a: L.nn.functional.pad(a, (2, 1), value=-1.0)))
def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad the last dims of the input: `pad` lists (left, right) counts from the last dim backwards (mode
    'constant' only)."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not in gradcalc (only 'constant')")
    return constant_pad_nd(input, pad, 0 if value is None else value)
