"""Sliding windows over the spatial dimensions of `(N, C, *spatial)` arrays, for convolution and pooling.

NumPy only (no tensors, no nodes): conv.py and pooling.py build their operations and gradients on these.

- `window_view`: every window of a (padded) array as a strided view `(N, C, *out, *kernel)`, no copy;
- `conv_forward`: a convolution as one matrix product over the unfolded windows (im2col), per group;
- `conv_input_grad`: its adjoint in the input (the transposed convolution): the product's transpose, then the
  columns folded back onto the input (col2im), one strided add per kernel offset;
- `conv_weight_grad`: its adjoint in the weight: the gradient times the unfolded windows, summed over the batch.

The columns of a few images at a time are laid out `(n, groups, C/groups · K, L)` (K the kernel's size, L the
output's), made while the previous piece's are in the cache: one BLAS product per image and group, written
where the output (or read where the gradient) lies, and the input's windows copied once. Every array keeps its
dtype: float32 stays float32.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

_ALL = slice(None)


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


# Images per piece of the work: the columns of one piece (and its product) stay in the cache between being
# made and being used, rather than making the whole batch's, then reading them back from memory.
CHUNK_BYTES = 2**20


def _chunk(n: int, per_image: int) -> int:
    return max(1, min(n, CHUNK_BYTES // max(per_image, 1)))


def _out(x_shape: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple) -> tuple[int, ...]:
    return tuple(out_size(s, k, st, p, d) for s, k, st, p, d in zip(x_shape[2:], kernel, stride, padding, dilation,
                                                                     strict=True))


class _Pieces:
    """The images of a batch, a few at a time, each piece's columns `(n, groups, C/groups · K, L)` (each image's
    matrix by itself, so that a product's rows land in the image's output as they are) made in one buffer reused
    from piece to piece (`ones`: each group's rows followed by a row of ones, which multiplies a bias column of
    the weight: the product then adds the bias, rather than a pass over the output after it)."""

    def __init__(self, x: np.ndarray, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, groups: int,
                 out: tuple, ones: bool = False) -> None:
        self.x, self.kernel, self.stride, self.padding, self.dilation = x, kernel, stride, padding, dilation
        self.out, self.length = out, math.prod(out)
        self.rows = (x.shape[1] // groups) * math.prod(kernel)
        self.groups, self.ones = groups, int(ones)
        self.step = _chunk(x.shape[0], groups * (self.rows + self.ones) * self.length * x.itemsize)

    def __iter__(self):  # type: ignore[no-untyped-def]
        """(first image, last image + 1, their columns)."""
        x, n, c = self.x, self.x.shape[0], self.x.shape[1]
        nd, g, rows = len(self.kernel), self.groups, self.rows + self.ones
        buf = np.empty(self.step * g * rows * self.length, dtype=x.dtype)
        # (n, C, *out, *kernel) -> (n, C, *kernel, *out): rows by channel and offset, columns by position; without
        # padding, one view of the whole batch's windows, sliced for each piece (a view per piece costs more
        # than copying a small piece's columns)
        order = (0, 1, 2, *range(3 + nd, 3 + 2 * nd), *range(3, 3 + nd))
        whole = None
        if not any(self.padding):
            whole = window_view(x, self.kernel, self.stride, self.dilation, self.out)
            whole = np.transpose(whole.reshape(n, g, c // g, *whole.shape[2:]), order)
        target, made = None, -1
        for s in range(0, n, self.step):
            e = min(n, s + self.step)
            if e - s != made:  # (a shorter last piece: a shorter view of the buffer)
                made = e - s
                cols = buf[: made * g * rows * self.length].reshape(made, g, rows, self.length)
                if self.ones:
                    cols[:, :, self.rows] = 1
                target = cols[:, :, : self.rows].reshape(made, g, c // g, *self.kernel, *self.out)
            if whole is not None:
                np.copyto(target, whole[s:e])
            else:
                v = window_view(padded(x[s:e], self.padding), self.kernel, self.stride, self.dilation, self.out)
                np.copyto(target, np.transpose(v.reshape(e - s, g, c // g, *v.shape[2:]), order))
            yield s, e, cols


def conv_forward(x: np.ndarray, w: np.ndarray, stride: tuple[int, ...], padding: tuple[int, ...],
                 dilation: tuple[int, ...], groups: int, out: tuple[int, ...] | None = None,
                 bias: np.ndarray | None = None) -> np.ndarray:
    """The convolution (cross-correlation) of `x` `(N, C, *spatial)` with `w` `(O, C/groups, *kernel)`, plus
    `bias` `(O,)` if given, a few images at a time (`out`: the first windows only)."""
    n, o = x.shape[0], w.shape[0]
    if out is None:
        out = _out(x.shape, w.shape[2:], stride, padding, dilation)
    pieces = _Pieces(x, w.shape[2:], stride, padding, dilation, groups, out, bias is not None)
    wm = w.reshape(groups, o // groups, pieces.rows)
    if bias is not None:  # the bias column, which the columns' row of ones multiplies
        wm = np.concatenate([wm, bias.reshape(groups, o // groups, 1).astype(wm.dtype, copy=False)], axis=2)
    y = np.empty((n, o, *out), dtype=np.result_type(x, w))
    for s, e, cols in pieces:  # each image's product (O/G, L) per group is its output, in its place
        np.matmul(wm, cols, out=y[s:e].reshape(e - s, groups, o // groups, pieces.length))
    return y


def conv_weight_grad(x: np.ndarray, g: np.ndarray, kernel: tuple[int, ...], stride: tuple[int, ...],
                     padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """The gradient in the weight of `conv_forward(x, w, ...)` given the output's gradient `g`, summed over the
    images a few at a time; `g` may carry leading dims (rows of a batched backward), which the result then carries
    too. Each image's gradient `(O/G, L)` per group multiplies its columns as it lies in `g`: no copy of `g`."""
    nd = len(kernel)
    k = g.ndim - 2 - nd
    batch = g.shape[:k]
    o = g.shape[k + 1]
    pieces = _Pieces(x, kernel, stride, padding, dilation, groups, g.shape[g.ndim - nd:])
    gw = None
    for s, e, cols in pieces:
        block = g[(_ALL,) * k + (slice(s, e),)].reshape(*batch, e - s, groups, o // groups, pieces.length)
        part = np.matmul(block, np.swapaxes(cols, -1, -2))  # (..., n, G, O/G, C/G·K)
        part = part[..., 0, :, :, :] if e - s == 1 else part.sum(axis=-4)
        gw = part if gw is None else np.add(gw, part, out=gw)
    return gw.reshape(*batch, o, x.shape[1] // groups, *kernel)  # type: ignore[union-attr]


def grad_by_channel(g: np.ndarray, groups: int, nd: int) -> np.ndarray:
    """A gradient `(..., N, O, *out)` (`nd` spatial dims) as `(..., groups, O/groups, N · L)`, the layout the
    columns multiply."""
    k = g.ndim - 2 - nd
    n, o = g.shape[k], g.shape[k + 1]
    order = (*range(k), k + 1, k, *range(k + 2, k + 2 + nd))
    return np.transpose(g, order).reshape(*g.shape[:k], groups, o // groups, n * math.prod(g.shape[k + 2:]))


def conv_input_grad(g: np.ndarray, w: np.ndarray, size: tuple[int, ...], stride: tuple[int, ...],
                    padding: tuple[int, ...], dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """The gradient in the input (of spatial shape `size`) of `conv_forward(x, w, ...)` given the output's
    gradient `g` `(N, O, *out)`: the transposed convolution of `g` with `w`, a few images at a time."""
    nd = len(size)
    n, o = g.shape[:2]
    c = w.shape[1] * groups
    kernel, out = w.shape[2:], g.shape[2:]
    length, k = math.prod(out), math.prod(kernel)
    if all(st == 1 for st in stride) and np.isfinite(w).all():
        return _input_grad_unit_stride(g, w, size, padding, dilation, groups)
    gm = grad_by_channel(g, groups, nd)  # (G, O/G, N·L)
    wt = np.swapaxes(w.reshape(groups, o // groups, -1), 1, 2)  # (G, C/G·K, O/G)
    full = tuple(s + 2 * p for s, p in zip(size, padding, strict=True))
    crop = tuple(slice(p, p + s) for p, s in zip(padding, size, strict=True))
    gx = np.empty((n, c, *size), dtype=np.result_type(g, w))
    step = _chunk(n, c * k * length * g.itemsize)
    for s in range(0, n, step):
        e = min(n, s + step)
        block = gm[..., s * length: e * length]
        gcols = wt[0] @ block[0] if groups == 1 else np.matmul(wt, block)
        gcols = gcols.reshape(c, *kernel, e - s, *out)
        # fold the columns back: each kernel offset adds its slice of positions into the padded input
        buf = np.zeros((c, e - s, *full), dtype=gcols.dtype)
        for offset in itertools.product(*(range(kk) for kk in kernel)):
            where = tuple(slice(i * d, i * d + st * (m - 1) + 1, st)
                          for i, d, st, m in zip(offset, dilation, stride, out, strict=True))
            buf[(slice(None), slice(None), *where)] += gcols[(slice(None), *offset)]
        np.copyto(gx[s:e], np.swapaxes(buf[(slice(None), slice(None), *crop)], 0, 1))
    return gx


def _input_grad_unit_stride(g: np.ndarray, w: np.ndarray, size: tuple[int, ...], padding: tuple[int, ...],
                            dilation: tuple[int, ...], groups: int) -> np.ndarray:
    """`conv_input_grad` for a stride of 1, where the fold needs no strided adds. The gradient is placed in the
    corner of a zero grid of the padded input's size, so that each kernel offset's columns are the padded input's
    grid shifted by a fixed amount; the product's rows are ordered by kernel offset first, so that one offset's
    columns for every channel of a group are one contiguous run, added to the (flat) padded input a shift away:
    one long add per offset and group. (A valid position never shifts past its own channel's grid; the positions
    outside the output's corner are zeros times the weight, which only a finite weight keeps zero: the caller
    checks. They may spill into the next channel, adding zeros.)"""
    nd = len(size)
    n, o = g.shape[:2]
    c = w.shape[1] * groups
    cg, og = c // groups, o // groups
    kernel, out = w.shape[2:], g.shape[2:]
    full = tuple(s + 2 * p for s, p in zip(size, padding, strict=True))
    pf, k = math.prod(full), math.prod(kernel)
    trail = [math.prod(full[i + 1:]) for i in range(nd)]  # the flat padded input's stride of each spatial dim
    shifts = [sum(i * d * t for i, d, t in zip(offset, dilation, trail, strict=True))
              for offset in itertools.product(*(range(kk) for kk in kernel))]
    # (G, K · C/G, O/G): rows by kernel offset, then channel
    wt = np.ascontiguousarray(np.transpose(w.reshape(groups, og, cg, k), (0, 3, 2, 1)).reshape(groups, k * cg, og))
    dtype = np.result_type(g, w)
    step = _chunk(n, c * k * pf * g.itemsize)
    gw = np.zeros((step, o, *full), dtype=g.dtype)
    inside = (_ALL, _ALL, *(slice(0, m) for m in out))
    direct = not any(padding)
    gx = np.empty((n, c, *size), dtype=dtype)
    crop = (_ALL, _ALL, *(slice(p, p + m) for p, m in zip(padding, size, strict=True)))
    run = cg * pf  # one group's channels, flat
    products = np.empty((step, groups, k * cg, pf), dtype=dtype)
    for s in range(0, n, step):
        e = min(n, s + step)
        piece = gw[: e - s]
        piece[inside] = g[s:e]
        gcols = np.matmul(wt, piece.reshape(e - s, groups, og, pf), out=products[: e - s])  # (n, G, K·C/G, pf)
        gcols = gcols.reshape(e - s, groups, k, run)
        buf = gx[s:e] if direct else np.empty((e - s, c, *full), dtype=dtype)
        flat = buf.reshape(e - s, groups, run)
        # the first offset's shift is 0: its columns cover the whole grid, so they start it (no zeros to add to)
        np.copyto(flat, gcols[:, :, 0])
        for j in range(1, k):
            shift = shifts[j]
            flat[:, :, shift:] += gcols[:, :, j, : run - shift]  # (the tail cut off: the last channel's zeros)
        if not direct:
            gx[s:e] = buf[crop]
    return gx
