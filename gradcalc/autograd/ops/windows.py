"""Sliding windows over the spatial dimensions of `(N, C, *spatial)` arrays, for convolution and pooling.

NumPy only (no tensors, no nodes): conv.py and pooling.py build their operations and gradients on these.

- `window_view`: every window of a (padded) array as a strided view `(N, C, *out, *kernel)`, no copy;
- `conv_forward`: a convolution as one matrix product over the unfolded windows (im2col), per group;
- `conv_input_grad`: its adjoint in the input (the transposed convolution): the product's transpose, then the
  columns folded back onto the input (col2im), one strided add per kernel offset;
- `conv_weight_grad`: its adjoint in the weight: the gradient times the unfolded windows, summed over the batch.

The columns are laid out `(groups, C/groups · K, N · L)` (K the kernel's size, L the output's): the products
are then a few large BLAS calls, whatever the batch size, and the input's windows are copied once. Every
array keeps its dtype: float32 stays float32.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided


def out_size(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    """The number of windows along one spatial dimension (PyTorch's output size, floor mode)."""
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def padded(x: np.ndarray, padding: tuple[int, ...], value: float = 0.0) -> np.ndarray:
    """`x` with `padding[i]` values `value` on both sides of spatial dimension i (itself when none)."""
    if not any(padding):
        return x
    widths = [(0, 0), (0, 0)] + [(p, p) for p in padding]
    return np.pad(x, widths, constant_values=value)


def window_view(xp: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], dilation: tuple[int, ...],
                out: tuple[int, ...]) -> np.ndarray:
    """The windows of `xp` (already padded), as a read-only view `(N, C, *out, *kernel)`."""
    lead, spatial = xp.strides[:2], xp.strides[2:]
    strides = lead + tuple(s * st for s, st in zip(spatial, stride, strict=True)) + tuple(
        s * d for s, d in zip(spatial, dilation, strict=True))
    return as_strided(xp, xp.shape[:2] + tuple(out) + tuple(kernel), strides, writeable=False)


def im2col(x: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
           dilation: tuple[int, ...], groups: int, out: tuple[int, ...] | None = None) -> tuple[np.ndarray, tuple]:
    """The unfolded windows of `x`, `(groups, C/groups · K, N · L)`, and the output's spatial shape (`out`: only
    the first windows, where a transposed convolution's output padding made the input longer)."""
    n, c = x.shape[:2]
    if out is None:
        out = tuple(out_size(s, k, st, p, d) for s, k, st, p, d in zip(x.shape[2:], kernel, stride, padding, dilation,
                                                                         strict=True))
    v = window_view(padded(x, padding), kernel, stride, dilation, out)
    nd = len(kernel)
    # (N, C, *out, *kernel) -> (C, *kernel, N, *out): one copy, rows by channel and offset, columns by position
    order = (1, *range(2 + nd, 2 + 2 * nd), 0, *range(2, 2 + nd))
    cols = np.transpose(v, order).reshape(groups, (c // groups) * math.prod(kernel), n * math.prod(out))
    return cols, out


def conv_forward(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], padding: tuple[int, ...],
                 dilation: tuple[int, ...], groups: int, out: tuple[int, ...] | None = None) -> np.ndarray:
    """The convolution (cross-correlation) of `x` `(N, C, *spatial)` with `w` `(O, C/groups, *kernel)` (`out`: the
    first windows only)."""
    n, o = x.shape[0], w.shape[0]
    cols, out = im2col(x, w.shape[2:], stride, padding, dilation, groups, out)
    wm = w.reshape(groups, o // groups, -1)
    y = wm[0] @ cols[0] if groups == 1 else np.matmul(wm, cols)  # (O/g, N·L) per group
    y = y.reshape(o, n, *out)
    return np.ascontiguousarray(np.swapaxes(y, 0, 1))


def conv_weight_grad(x: np.ndarray, g: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...],
                     padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """The gradient in the weight of `conv_forward(x, w, ...)` given the output's gradient `g`; `g` may carry
    leading dims (rows of a batched backward), which the result then carries too."""
    nd = len(kernel)
    batch = g.shape[: g.ndim - 2 - nd]
    cols, _ = im2col(x, kernel, stride, padding, dilation, groups, g.shape[g.ndim - nd:])
    o = g.shape[len(batch) + 1]
    gm = _grad_by_channel(g, groups, nd)  # (..., G, O/G, N·L)
    if groups == 1 and not batch:
        gw = gm[0] @ cols[0].T
    else:
        gw = np.matmul(gm, np.swapaxes(cols, -1, -2))
    return gw.reshape(*batch, o, x.shape[1] // groups, *kernel)


def _grad_by_channel(g: np.ndarray, groups: int, nd: int) -> np.ndarray:
    """A gradient `(..., N, O, *out)` as `(..., groups, O/groups, N · L)`, the layout the columns multiply."""
    k = g.ndim - 2 - nd
    n, o = g.shape[k], g.shape[k + 1]
    order = (*range(k), k + 1, k, *range(k + 2, k + 2 + nd))
    return np.transpose(g, order).reshape(*g.shape[:k], groups, o // groups, n * math.prod(g.shape[k + 2:]))


def conv_input_grad(g: np.ndarray, w: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...],
                    padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """The gradient in the input (of spatial shape `size`) of `conv_forward(x, w, ...)` given the output's
    gradient `g` `(N, O, *out)`: the transposed convolution of `g` with `w`."""
    nd = len(size)
    n, o = g.shape[:2]
    c = w.shape[1] * groups
    kernel, out = w.shape[2:], g.shape[2:]
    gm = _grad_by_channel(g, groups, nd)  # (G, O/G, N·L)
    wm = w.reshape(groups, o // groups, -1)
    gcols = wm[0].T @ gm[0] if groups == 1 else np.matmul(np.swapaxes(wm, 1, 2), gm)
    gcols = gcols.reshape(c, *kernel, n, *out)
    # fold the columns back: each kernel offset adds its slice of positions into the padded input
    full = tuple(s + 2 * p for s, p in zip(size, padding, strict=True))
    buf = np.zeros((c, n, *full), dtype=gcols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        where = tuple(slice(i * d, i * d + st * (m - 1) + 1, st)
                      for i, d, st, m in zip(offset, dilation, stride, out, strict=True))
        buf[(slice(None), slice(None), *where)] += gcols[(slice(None), *offset)]
    crop = tuple(slice(p, p + s) for p, s in zip(padding, size, strict=True))
    return np.ascontiguousarray(np.swapaxes(buf[(slice(None), slice(None), *crop)], 0, 1))
