"""Pooling: `max_pool2d` (and its indices), `avg_pool2d`, their 1-d forms, and `adaptive_avg_pool1d/2d`.

The nodes are PyTorch's: `MaxPool2DWithIndicesBackward0` (it saves the input and the indices, `result1`) and
`AvgPool2DBackward0`, each with its create_graph node (`...BackwardBackward0`, inputs grad_output and self: the
gradient is linear in grad_output and the formula gives self zeros, as PyTorch's does); the 1-d forms are the 2-d
ones between an unsqueeze and a squeeze, as PyTorch records them. A maximum is taken in PyTorch's order: the
window scanned row by row, a later value taken only when strictly larger (or NaN), so ties send the gradient to
the first maximal element of each window; windows that overlap add up there.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from .. import saved as SV
from .. import spec
from ..node import Node
from ..tensor import Tensor
from . import shape as S
from . import windows as W
from .core import needs, record, result
from .indexing import index
from .reductions import mean

_ALL = slice(None)


# -- parameters ----------------------------------------------------------------------------------------------------
def _given(value: Any, name: str, fn: str) -> tuple[int, ...]:
    """A parameter as PyTorch's node keeps it: an int as a pair, a sequence as given (one or two ints)."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if not 0 <= len(items) <= 2 or any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in items):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints of length 1 or 2, not {value!r}")
    return tuple(int(v) for v in items)


def _pair(given: tuple[int, ...], default: tuple[int, ...]) -> tuple[int, int]:
    """A kept parameter resolved to (height, width): one int for both, none for the default."""
    if not given:
        return default  # type: ignore[return-value]
    return (given[0], given[0]) if len(given) == 1 else (given[0], given[1])


def _out_size(size: int, k: int, p: int, s: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling_output_shape: floor or ceil, the last window starting inside the input or its left pad."""
    n = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (n - 1) * s >= size + p:
        n -= 1
    return n


class _Pool:
    """A pooling's parameters, resolved and checked (PyTorch's pool2d_shape_check), and the shapes they give."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "ceil_mode", "in_shape", "out")

    def __init__(self, fn: str, x: Tensor, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                 ceil_mode: bool) -> None:
        shape = x._data.shape
        if len(shape) not in (3, 4) or any(n == 0 for n in shape[-3:]):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        k = _pair(kernel, (0, 0))
        s, p, d = _pair(stride, k), _pair(padding, (0, 0)), _pair(dilation, (1, 1))
        if k[0] <= 0 or k[1] <= 0:
            raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[1]}")
        if s[0] <= 0 or s[1] <= 0:
            raise RuntimeError("stride should not be zero")
        if d[0] <= 0 or d[1] <= 0:
            raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[1]}")
        for kk, pp, dd in zip(k, p, d, strict=True):
            if pp < 0 or pp > ((kk - 1) * dd + 1) // 2:
                raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                                   f"kernel_size={kk} and dilation={dd}")
        h, w = shape[-2:]
        out = (_out_size(h, k[0], p[0], s[0], d[0], ceil_mode), _out_size(w, k[1], p[1], s[1], d[1], ceil_mode))
        if out[0] < 1 or out[1] < 1:
            raise RuntimeError(f"Given input size: ({shape[-3]}x{h}x{w}). Calculated output size: ({shape[-3]}x"
                               f"{out[0]}x{out[1]}). Output size is too small")
        self.kernel, self.stride, self.padding, self.dilation = k, s, p, d
        self.ceil_mode, self.in_shape, self.out = bool(ceil_mode), shape, out

    def view(self, x: np.ndarray, fill: Any) -> np.ndarray:
        """The windows of `x` (N, C, H, W), padded with `fill` (and on the right as far as ceil mode reaches)."""
        k, s, p, d = self.kernel, self.stride, self.padding, self.dilation
        reach = [(o - 1) * st + dd * (kk - 1) + 1 for o, st, dd, kk in zip(self.out, s, d, k, strict=True)]
        extra = [max(r - (n + 2 * pp), 0) for r, n, pp in zip(reach, x.shape[-2:], p, strict=True)]
        if any(p) or any(extra):
            x = np.pad(x, [(0, 0), (0, 0), (p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])], constant_values=fill)
        return W.window_view(x, k, s, d, self.out)

    def positions(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """For kernel offset (i, j): the input row of each output row, and the input column of each column."""
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        return (np.arange(self.out[0]) * sh + i * dh - ph, np.arange(self.out[1]) * sw + j * dw - pw)


def _planes(a: np.ndarray) -> np.ndarray:
    """A (C, H, W) array as (1, C, H, W); a batched one as it is."""
    return a[None] if a.ndim == 3 else a


# -- max_pool2d ----------------------------------------------------------------------------------------------------
def _max_arrays(x: np.ndarray, pool: _Pool) -> tuple[np.ndarray, np.ndarray]:
    """The maxima and their flat indices in each (H, W) plane, in PyTorch's scan order (see the module docstring)."""
    floating = x.dtype.kind == "f"
    clipped = any(pool.padding) or pool.ceil_mode
    best = idx = None
    if not clipped:
        best, idx = _max_fast(_planes(x), pool)
        # np.maximum keeps a NaN, so a window with one has a NaN maximum: the scan then finds its index as
        # PyTorch does (a test of the maxima, four times smaller than the input for the usual 2 x 2 windows)
        if floating and np.isnan(best).any():
            best = None
    if best is None or idx is None:
        best, idx = _max_scan(_planes(x), pool, floating)
    if x.ndim == 3:
        best, idx = best[0], idx[0]
    return best, idx


def _max_fast(x: np.ndarray, pool: _Pool) -> tuple[np.ndarray, np.ndarray]:
    """`_max_scan` where every window lies inside the input and nothing is NaN: the maxima by `np.maximum`, and
    only the number of the winning kernel offset kept per window (one byte), made an index at the end."""
    v = pool.view(x, 0)
    kh, kw = pool.kernel
    best = v[..., 0, 0].copy()
    code = np.zeros(best.shape, dtype=np.uint8 if kh * kw < 256 else np.int64)
    take = np.empty(best.shape, dtype=bool)
    for k in range(1, kh * kw):
        cand = v[..., k // kw, k % kw]
        np.greater(cand, best, out=take)  # strictly: a tie keeps the earlier offset, as PyTorch's scan
        # the last offset that won: offsets grow, so it is the largest k that won (no branch per element)
        np.maximum(code, take.view(np.uint8) * code.dtype.type(k), out=code)
        np.maximum(best, cand, out=best)
    (sh, sw), (dh, dw) = pool.stride, pool.dilation
    w = x.shape[-1]
    rows, cols = np.arange(pool.out[0]) * sh, np.arange(pool.out[1]) * sw
    offsets = np.array([(k // kw) * dh * w + (k % kw) * dw for k in range(kh * kw)], dtype=np.int64)
    idx = np.take(offsets, code)
    idx += rows[:, None] * w + cols[None, :]  # (in place: the indices are MBs of int64)
    return best, idx


def _max_scan(x: np.ndarray, pool: _Pool, floating: bool) -> tuple[np.ndarray, np.ndarray]:
    """The maxima and their indices by PyTorch's scan: a later value taken when strictly larger or NaN, the first
    element of each window inside the input taken whatever it is (windows may reach into the padding)."""
    h, w = x.shape[-2:]
    fill = -np.inf if floating else np.iinfo(x.dtype).min
    v = pool.view(x, fill)
    best = np.full(v.shape[:4], fill, dtype=x.dtype)
    idx = np.full(v.shape[:4], -1, dtype=np.int64)
    for i, j in itertools.product(range(pool.kernel[0]), range(pool.kernel[1])):
        rows, cols = pool.positions(i, j)
        cand = v[..., i, j]
        take = cand > best
        if floating:
            take |= np.isnan(cand)
        inside = ((rows >= 0) & (rows < h))[:, None] & ((cols >= 0) & (cols < w))[None, :]
        take = (take | (idx == -1)) & inside
        np.copyto(best, cand, where=take)
        np.copyto(idx, rows[:, None] * w + cols[None, :], where=take)
    return best, idx


def _scatter(g: np.ndarray, idx: np.ndarray, in_shape: tuple[int, ...], overlap: bool) -> np.ndarray:
    """The gradient of a max pooling: each output's gradient added at its input's place; `g` may carry a leading
    dim of rows (a batched backward), which the indices do not."""
    lead = g.shape[: g.ndim - idx.ndim]
    planes = math.prod(idx.shape[:-2])
    size = in_shape[-2] * in_shape[-1]
    flat = (idx.reshape(planes, -1) + (np.arange(planes) * size)[:, None]).ravel()
    out = np.zeros((math.prod(lead), planes * size), dtype=g.dtype)
    gm = g.reshape(len(out), -1)
    if not lead and not overlap:  # (one flat assignment: a quarter faster than through a leading dim)
        out[0][flat] = gm[0]
    elif overlap:
        for row, grow in zip(out, gm, strict=True):
            np.add.at(row, flat, grow)
    else:
        out[:, flat] = gm
    return out.reshape(lead + tuple(in_shape))


def _gather(t: Tensor, idx: np.ndarray) -> Tensor:
    """t's elements at the pooling's indices, each (H, W) plane indexed by its own (PyTorch's
    `t.flatten(-2).gather(-1, indices.flatten(-2)).view_as(indices)`), recorded with the engine's indexing."""
    shape = t._data.shape
    planes = math.prod(shape[:-2])
    flat = S.reshape(t, (planes, shape[-2] * shape[-1]))
    rows = np.arange(planes)[:, None]
    return S.reshape(index(flat, (rows, idx.reshape(planes, -1))), idx.shape)


def _overlaps(p: Any) -> bool:
    return any(s < (k - 1) * d + 1 for s, k, d in zip(p.stride, p.kernel, p.dilation, strict=True))


def _max_pool_jvp(node: Node, inputs: tuple, out: Tensor, tangents: tuple) -> Any:
    return _gather(tangents[0], node.indices)


def _max_pool_batched(node: Node, g: np.ndarray) -> tuple:
    x, _ = node.unpack_saved(True)
    return (_scatter(g, node.indices, x.shape, _overlaps(node)),)


_POOL_SAVED = {"kernel_size": SV.field("kernel_size"), "stride": SV.field("stride_given"),
               "padding": SV.field("padding_given"), "dilation": SV.field("dilation_given"),
               "ceil_mode": SV.field("ceil_mode")}


@spec.node(
    formula={"self": "max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode, "
                     "result1)"},
    saved={"self": SV.tensor(0), **_POOL_SAVED, "result1": SV.tensor(1)},
    jvp=_max_pool_jvp, tangent="gather(self_t.flatten(-2), -1, result1.flatten(-2)).view_as(result1)",
    batched=_max_pool_batched,
)
class MaxPool2DWithIndicesBackward0(Node):
    """Max pooling: the gradient goes to the maximum of each window (see the module docstring)."""

    __slots__ = ("kernel_size", "stride_given", "padding_given", "dilation_given", "ceil_mode", "stride", "kernel",
                 "dilation", "indices")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        x, indices = self.unpack_saved(raw)
        if raw:
            return (_scatter(g, self.indices, x.shape, _overlaps(self)),)
        return (max_pool2d_with_indices_backward(g, x, self, indices),)


@spec.node(
    formula={"grad_output": "max_pool_double_backward(grad, indices, 2)", "self": "zeros_like(self)"},
    saved={"indices": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else max_pool2d_with_indices_backward(
        tangents[0], inputs[1], node.params, node.indices_tensor),
    tangent="max_pool2d_with_indices_backward(grad_output_t, self_p, ..., indices)",
)
class MaxPool2DWithIndicesBackwardBackward0(Node):
    """The gradient of a max pooling under create_graph: linear in the incoming gradient (a gather back)."""

    __slots__ = ("params", "indices_tensor", "in_shape")

    def apply(self, gg: Tensor) -> tuple:
        (indices,) = self.saved_tensors
        g_out = _gather(gg, indices._data) if needs(self, 0) else None
        return (g_out, _zeros(self.in_shape, gg) if needs(self, 1) else None)


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    """PyTorch's `zeros_like(self)`: the gradient of an input the formula does not depend on."""
    return Tensor._make(np.zeros(shape, dtype=like._data.dtype), False, None)


def max_pool2d_with_indices_backward(grad_output: Tensor, input: Tensor, params: Any,  # noqa: A002
                                     indices: Tensor) -> Tensor:
    """The gradient of a max pooling as an operation (one node, MaxPool2DWithIndicesBackwardBackward0)."""
    data = _scatter(grad_output._data, indices._data, input._data.shape, _overlaps(params))
    node = record(MaxPool2DWithIndicesBackwardBackward0, grad_output, input)
    if node is not None:
        node.params, node.indices_tensor, node.in_shape = params, indices, input._data.shape
        node.save(indices)
    return result(data, node)


def _pool_rule(name: str, indices: bool = False) -> spec.BatchRule:
    """The batching rule of a pooling: its batch folded into the pooling's own (a 3-d sample is a batch as it is)."""

    def rule(args: tuple, dims: tuple, *rest: Any, **params: Any) -> tuple[Any, Any]:
        B = spec.RULES  # vmap's batching.py, which hands itself down to the specs when it loads

        (x, *more), (d, *_) = args, dims
        x = B.to_front(x, d)
        shape = B.shape_of(x)
        per_sample = len(shape) - 1
        flat = x if per_sample < _SAMPLE_RANK[name] else B.bind("reshape", x, (shape[0] * shape[1], *shape[2:]))
        out = B.bind(name, flat, *more, *rest, **params)

        def back(o: Any) -> Any:
            return o if per_sample < _SAMPLE_RANK[name] else B.bind("reshape", o, (shape[0], shape[1],
                                                                                  *B.shape_of(o)[1:]))

        if isinstance(out, tuple):
            return tuple(back(o) for o in out), (0,) * len(out)
        return back(out), 0

    return rule


_SAMPLE_RANK = {"max_pool2d": 4, "avg_pool2d": 4, "max_pool1d": 3, "avg_pool1d": 3, "adaptive_avg_pool2d": 4,
                "adaptive_avg_pool1d": 3}


def _max_pool2d_sample(L: Any, x: Any, z: Any, u: Any) -> Any:
    """max_pool2d's sample: overlapping windows, padding, dilation, ceil mode, an unbatched input, the indices (each
    on an input of its own, so that no input's gradients are added up in an order the walk chooses)."""
    y, i = L.nn.functional.max_pool2d(z, (3, 2), (2, 1), 1, (1, 2), True, True)
    return (L.nn.functional.max_pool2d(x, 2) + y[..., :3, :3] + L.max_pool2d(u, 3, 1, 1)[:, :3, :3]
            + i[..., :3, :3] * 0.0)


@spec.op("max_pool2d", method=False, nodes=(MaxPool2DWithIndicesBackward0,), vmap=_pool_rule("max_pool2d"),
         sample=spec.Sample(((2, 3, 6, 7), (2, 3, 6, 7), (3, 6, 7)), _max_pool2d_sample, spec.DISTINCT))
def max_pool2d(input: Tensor, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,  # noqa: A002
               padding: int | tuple[int, ...] = 0, dilation: int | tuple[int, ...] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum of each kernel_size window of an input (N, C, H, W) or (C, H, W), windows `stride` apart
    (kernel_size by default); with return_indices, also where each maximum is in its (H, W) plane."""
    x = _tensor(input, "max_pool2d")
    kept = (_given(kernel_size, "kernel_size", "max_pool2d"),
            () if stride is None else _given(stride, "stride", "max_pool2d"),
            _given(padding, "padding", "max_pool2d"), _given(dilation, "dilation", "max_pool2d"))
    pool = _Pool("max_pool2d", x, *kept, ceil_mode)
    values, idx = _max_arrays(x._data, pool)
    indices = Tensor._make(idx, False, None)
    node = record(MaxPool2DWithIndicesBackward0, x)
    if node is not None:
        node.kernel_size, node.stride_given, node.padding_given, node.dilation_given = kept
        node.ceil_mode, node.stride, node.kernel, node.dilation = pool.ceil_mode, pool.stride, pool.kernel, \
            pool.dilation
        node.indices = idx
        node.save(x, indices)
    out = result(values, node)
    return (out, indices) if return_indices else out


def _tensor(x: Any, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be Tensor, not {type(x).__name__}")
    return x


def _one(value: Any, name: str, fn: str) -> int:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(items) != 1 or isinstance(items[0], bool) or not isinstance(items[0], (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' must be an int or a tuple of one int, not {value!r}")
    return int(items[0])


def _as_2d(x: Tensor, fn: str) -> Tensor:
    """A 1-d pooling's input (N, C, L) or (C, L) with a row dim of 1 before L, as PyTorch's unsqueeze(-2)."""
    if x._data.ndim not in (2, 3):
        raise RuntimeError(f"{fn}() Expected 2D or 3D input tensor, but got {list(x._data.shape)}")
    return S.unsqueeze(x, -2)


@spec.op("max_pool1d", method=False, vmap=_pool_rule("max_pool1d"),
         sample=spec.Sample(((2, 3, 7), (2, 3, 7), (3, 7)), lambda L, x, z, u: L.nn.functional.max_pool1d(x, 2)
                            + L.max_pool1d(z, 3, 1, 1, 2, True)[..., :3]
                            + L.nn.functional.max_pool1d(u, 2, return_indices=True)[0], spec.DISTINCT))
def max_pool1d(input: Tensor, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,  # noqa: A002
               padding: int | tuple[int, ...] = 0, dilation: int | tuple[int, ...] = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum of each kernel_size window along the last dim of an input (N, C, L) or (C, L)."""
    x = _as_2d(_tensor(input, "max_pool1d"), "max_pool1d")
    k = _one(kernel_size, "kernel_size", "max_pool1d")
    s = k if stride is None or stride == () else _one(stride, "stride", "max_pool1d")
    out = max_pool2d(x, (1, k), (1, s), (0, _one(padding, "padding", "max_pool1d")),
                     (1, _one(dilation, "dilation", "max_pool1d")), ceil_mode, return_indices)
    if return_indices:
        return S.squeeze(out[0], -2), S.squeeze(out[1], -2)
    return S.squeeze(out, -2)


# -- avg_pool2d ----------------------------------------------------------------------------------------------------
def _divisor(pool: _Pool, count_include_pad: bool, divisor_override: Any) -> Any:
    """What each window's sum is divided by (PyTorch's CPU kernel): the override, else the window's size within
    the padded input, or its size within the input itself."""
    if divisor_override is not None:
        return divisor_override
    sizes = []
    for o, k, s, p, n in zip(pool.out, pool.kernel, pool.stride, pool.padding, pool.in_shape[-2:], strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            sizes.append(end - start)
        else:
            sizes.append(np.minimum(end, n) - np.maximum(start, 0))
    return (sizes[0][:, None] * sizes[1][None, :]).astype(np.float64)


def _avg_arrays(x: np.ndarray, pool: _Pool, count_include_pad: bool, divisor_override: Any) -> np.ndarray:
    v = pool.view(_planes(x), 0)
    total = None
    for i, j in itertools.product(range(pool.kernel[0]), range(pool.kernel[1])):
        total = v[..., i, j].copy() if total is None else np.add(total, v[..., i, j], out=total)
    out = _divide(total, _divisor(pool, count_include_pad, divisor_override))
    return out[0] if x.ndim == 3 else out


def _divide(a: np.ndarray, divisor: Any) -> np.ndarray:
    """`a` divided in its own dtype (an integer pooling rounds toward zero, as PyTorch's)."""
    if a.dtype.kind == "f":
        return (a / np.asarray(divisor, dtype=a.dtype)).astype(a.dtype, copy=False)
    return np.trunc(a / divisor).astype(a.dtype)


def _avg_backward_arrays(g: np.ndarray, in_shape: tuple[int, ...], pool: _Pool, count_include_pad: bool,
                         divisor_override: Any) -> np.ndarray:
    """Each window's share of the gradient added back over the window; `g` may carry leading rows."""
    lead = g.shape[: g.ndim - len(pool.in_shape)]
    share = _divide(g.reshape((-1, pool.in_shape[-3]) + pool.out), _divisor(pool, count_include_pad, divisor_override))
    (kh, kw), (sh, sw), (ph, pw) = pool.kernel, pool.stride, pool.padding
    h, w = pool.in_shape[-2:]
    oh, ow = pool.out
    buf = np.zeros(share.shape[:2] + (max(h + 2 * ph, (oh - 1) * sh + kh), max(w + 2 * pw, (ow - 1) * sw + kw)),
                   dtype=g.dtype)
    for i, j in itertools.product(range(kh), range(kw)):
        buf[..., i: i + sh * (oh - 1) + 1: sh, j: j + sw * (ow - 1) + 1: sw] += share
    return np.ascontiguousarray(buf[..., ph: ph + h, pw: pw + w]).reshape(lead + tuple(in_shape))


_AVG_SAVED = {"kernel_size": SV.field("kernel_size"), "stride": SV.field("stride_given"),
              "padding": SV.field("padding_given"), "ceil_mode": SV.field("ceil_mode"),
              "count_include_pad": SV.field("count_include_pad"), "divisor_override": SV.field("divisor_override")}


@spec.node(
    formula={"self": "avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                     "divisor_override)"},
    saved={"self": SV.tensor(0), **_AVG_SAVED},
    jvp=lambda node, inputs, out, tangents: _avg_again(tangents[0], node),
    tangent="avg_pool2d(self_t, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)",
    batched=lambda node, g: (_avg_backward_arrays(g, node.pool.in_shape, node.pool, node.count_include_pad,
                                                  node.divisor_override),),
)
class AvgPool2DBackward0(Node):
    """Average pooling: each window's gradient shared out over the window."""

    __slots__ = ("kernel_size", "stride_given", "padding_given", "ceil_mode", "count_include_pad",
                 "divisor_override", "pool")
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (_avg_backward_arrays(g, x.shape, self.pool, self.count_include_pad, self.divisor_override),)
        return (avg_pool2d_backward(g, x, self),)


def _avg_again(t: Tensor, params: Any) -> Tensor:
    """avg_pool2d with the parameters a node kept (its forward rule, and its double backward)."""
    return avg_pool2d(t, params.kernel_size, params.stride_given or None, params.padding_given, params.ceil_mode,
                      params.count_include_pad, params.divisor_override)


@spec.node(
    formula={"grad_output": "avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad, "
                            "divisor_override)", "self": "zeros_like(self)"},
    saved=_AVG_SAVED,
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else avg_pool2d_backward(
        tangents[0], inputs[1], node),
    tangent="avg_pool2d_backward(grad_output_t, self_p, kernel_size, stride, padding, ceil_mode, count_include_pad, "
            "divisor_override)",
)
class AvgPool2DBackwardBackward0(Node):
    """The gradient of an average pooling under create_graph: linear in the incoming gradient."""

    __slots__ = ("kernel_size", "stride_given", "padding_given", "ceil_mode", "count_include_pad",
                 "divisor_override", "pool")

    def apply(self, gg: Tensor) -> tuple:
        g_out = _avg_again(gg, self) if needs(self, 0) else None
        return (g_out, _zeros(self.pool.in_shape, gg) if needs(self, 1) else None)


def _copy_params(node: Node, params: Any) -> None:
    for name in ("kernel_size", "stride_given", "padding_given", "ceil_mode", "count_include_pad",
                 "divisor_override", "pool"):
        setattr(node, name, getattr(params, name))


def avg_pool2d_backward(grad_output: Tensor, input: Tensor, params: Any) -> Tensor:  # noqa: A002
    """The gradient of an average pooling as an operation (one node, AvgPool2DBackwardBackward0)."""
    data = _avg_backward_arrays(grad_output._data, input._data.shape, params.pool, params.count_include_pad,
                                params.divisor_override)
    node = record(AvgPool2DBackwardBackward0, grad_output, input)
    if node is not None:
        _copy_params(node, params)
    return result(data, node)


def _avg_pool2d_sample(L: Any, x: Any) -> Any:
    """avg_pool2d's sample: padding with and without counting it, ceil mode, a divisor, an unbatched input."""
    f = L.nn.functional.avg_pool2d
    return (f(x, 2) + f(x, 3, 2, 1, True, False)[..., :3, :3] + f(x, (3, 2), (2, 3), (1, 0), True, True)[..., :3, :3]
            .sum() + f(x[0], 2, 1, 1, divisor_override=3)[:, :3, :3])


@spec.op("avg_pool2d", method=False, top_level=False, nodes=(AvgPool2DBackward0,), vmap=_pool_rule("avg_pool2d"),
         sample=spec.Sample(((2, 3, 6, 7),), _avg_pool2d_sample))
def avg_pool2d(input: Tensor, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,  # noqa: A002
               padding: int | tuple[int, ...] = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each kernel_size window of an input (N, C, H, W) or (C, H, W), windows `stride` apart
    (kernel_size by default); count_include_pad counts the zero padding in each mean."""
    x = _tensor(input, "avg_pool2d")
    kernel = _given(kernel_size, "kernel_size", "avg_pool2d")
    stride_given = () if stride is None else _given(stride, "stride", "avg_pool2d")
    padding_given = _given(padding, "padding", "avg_pool2d")
    if divisor_override is not None and int(divisor_override) == 0:
        raise RuntimeError("divisor must be not zero")
    pool = _Pool("avg_pool2d", x, kernel, stride_given, padding_given, (1,), ceil_mode)
    data = _avg_arrays(x._data, pool, count_include_pad, divisor_override)
    node = record(AvgPool2DBackward0, x)
    if node is not None:
        node.kernel_size, node.stride_given, node.padding_given, node.ceil_mode = kernel, stride_given, \
            padding_given, pool.ceil_mode
        node.count_include_pad, node.divisor_override, node.pool = bool(count_include_pad), divisor_override, pool
        node.save(x)
    return result(data, node)


@spec.op("avg_pool1d", method=False, vmap=_pool_rule("avg_pool1d"),
         sample=spec.Sample(((2, 3, 7),), lambda L, x: L.nn.functional.avg_pool1d(x, 2) + L.avg_pool1d(
             x, 3, 2, 1, True, False)[..., :3] + L.avg_pool1d(x[0], 2)))
def avg_pool1d(input: Tensor, kernel_size: int | tuple[int, ...], stride: int | tuple[int, ...] | None = None,  # noqa: A002
               padding: int | tuple[int, ...] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """The mean of each kernel_size window along the last dim of an input (N, C, L) or (C, L)."""
    x = _as_2d(_tensor(input, "avg_pool1d"), "avg_pool1d")
    k = _one(kernel_size, "kernel_size", "avg_pool1d")
    s = k if stride is None or stride == () else _one(stride, "stride", "avg_pool1d")
    out = avg_pool2d(x, (1, k), (1, s), (0, _one(padding, "padding", "avg_pool1d")), ceil_mode, count_include_pad)
    return S.squeeze(out, -2)


# -- adaptive_avg_pool2d -------------------------------------------------------------------------------------------
def _averaging(n: int, m: int, dtype: Any) -> np.ndarray:
    """The (m, n) matrix that averages PyTorch's adaptive windows: window i is [floor(i n / m), ceil((i+1) n / m))."""
    a = np.zeros((m, n), dtype=np.float64)
    for i in range(m):
        start, end = (i * n) // m, -((-(i + 1) * n) // m)
        a[i, start:end] = 1.0 / (end - start)
    return a.astype(dtype)


def _adaptive_arrays(x: np.ndarray, out: tuple[int, int]) -> np.ndarray:
    ah, aw = _averaging(x.shape[-2], out[0], x.dtype), _averaging(x.shape[-1], out[1], x.dtype)
    return np.ascontiguousarray(np.matmul(np.matmul(ah, x), aw.T))


def _adaptive_backward_arrays(g: np.ndarray, in_shape: tuple[int, ...]) -> np.ndarray:
    ah = _averaging(in_shape[-2], g.shape[-2], g.dtype)
    aw = _averaging(in_shape[-1], g.shape[-1], g.dtype)
    return np.ascontiguousarray(np.matmul(np.matmul(ah.T, g), aw))


@spec.node(
    formula={"self": "_adaptive_avg_pool2d_backward(grad, self)"},
    saved={"self": SV.tensor(0)},
    jvp=lambda node, inputs, out, tangents: _adaptive(tangents[0], out._data.shape[-2:]),
    tangent="_adaptive_avg_pool2d(self_t, output_size)",
    batched=lambda node, g: (_adaptive_backward_arrays(g, node.in_shape),),
)
class AdaptiveAvgPool2DBackward0(Node):
    """Adaptive average pooling: each window's gradient shared out over the window."""

    __slots__ = ("in_shape",)
    raw_ok = True

    def apply(self, g: Any) -> tuple:
        raw = type(g) is not Tensor
        (x,) = self.unpack_saved(raw)
        if raw:
            return (_adaptive_backward_arrays(g, x.shape),)
        return (adaptive_avg_pool2d_backward(g, x),)


@spec.node(
    formula={"grad_output": "_adaptive_avg_pool2d(grad, {grad_output.sym_size(-2), grad_output.sym_size(-1)})",
             "self": "zeros_like(self)"},
    saved={"grad_output_sym_argsize_minus_1": SV.field("out_size", lambda s: s[1]),
           "grad_output_sym_argsize_minus_2": SV.field("out_size", lambda s: s[0])},
    jvp=lambda node, inputs, out, tangents: None if tangents[0] is None else adaptive_avg_pool2d_backward(
        tangents[0], inputs[1]),
    tangent="_adaptive_avg_pool2d_backward(grad_output_t, self_p)",
)
class AdaptiveAvgPool2DBackwardBackward0(Node):
    """The gradient of an adaptive average pooling under create_graph: linear in the incoming gradient."""

    __slots__ = ("out_size", "in_shape")

    def apply(self, gg: Tensor) -> tuple:
        g_out = _adaptive(gg, self.out_size) if needs(self, 0) else None
        return (g_out, _zeros(self.in_shape, gg) if needs(self, 1) else None)


def adaptive_avg_pool2d_backward(grad_output: Tensor, input: Tensor) -> Tensor:  # noqa: A002
    """The gradient of an adaptive average pooling as an operation (AdaptiveAvgPool2DBackwardBackward0)."""
    data = _adaptive_backward_arrays(grad_output._data, input._data.shape)
    node = record(AdaptiveAvgPool2DBackwardBackward0, grad_output, input)
    if node is not None:
        node.out_size, node.in_shape = grad_output._data.shape[-2:], input._data.shape
    return result(data, node)


def _adaptive(x: Tensor, out: tuple[int, ...]) -> Tensor:
    """PyTorch's _adaptive_avg_pool2d: one node, AdaptiveAvgPool2DBackward0."""
    node = record(AdaptiveAvgPool2DBackward0, x)
    if node is not None:
        node.in_shape = x._data.shape
        node.save(x)
    return result(_adaptive_arrays(x._data, tuple(out)), node)  # type: ignore[arg-type]


@spec.op("adaptive_avg_pool2d", method=False, top_level=False, nodes=(AdaptiveAvgPool2DBackward0,),
         vmap=_pool_rule("adaptive_avg_pool2d"),
         sample=spec.Sample(((2, 3, 7, 5),), lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (3, 2))
                            + L.nn.functional.adaptive_avg_pool2d(x, 1) + L.nn.functional.adaptive_avg_pool2d(
                                x[0], (None, 4))[:, :3, :2]))
def adaptive_avg_pool2d(input: Tensor, output_size: int | tuple[int | None, ...]) -> Tensor:  # noqa: A002
    """The mean over each of output_size windows that tile an input (N, C, H, W) or (C, H, W) as evenly as
    they can (None keeps that dim's size)."""
    x = _tensor(input, "adaptive_avg_pool2d")
    shape = x._data.shape
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[-2:]):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(shape)}")
    sizes = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    out = tuple(shape[-2 + i] if n is None else int(n) for i, n in enumerate(sizes))
    if any(n < 0 for n in out):
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
                           f"received {{{out[0]}, {out[1]}}}")
    if out == (1, 1):
        return mean(x, (-1, -2), keepdim=True)  # PyTorch's shortcut for a global average
    return _adaptive(x, out)


@spec.op("adaptive_avg_pool1d", method=False, vmap=_pool_rule("adaptive_avg_pool1d"),
         sample=spec.Sample(((2, 3, 7),), lambda L, x: L.adaptive_avg_pool1d(x, 3) + L.nn.functional
                            .adaptive_avg_pool1d(x[0], 4)[:, :3] + L.adaptive_avg_pool1d(x, 1)))
def adaptive_avg_pool1d(input: Tensor, output_size: int | tuple[int, ...]) -> Tensor:  # noqa: A002
    """The mean over each of output_size windows that tile the last dim of an input (N, C, L) or (C, L)."""
    x = _as_2d(_tensor(input, "adaptive_avg_pool1d"), "adaptive_avg_pool1d")
    return S.squeeze(adaptive_avg_pool2d(x, (1, _one(output_size, "output_size", "adaptive_avg_pool1d"))), -2)
