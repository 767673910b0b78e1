"""Padding and resampling as functions: `F.pad` with every mode ('constant', 'reflect', 'replicate',
'circular'), `F.interpolate` (modes 'nearest', 'nearest-exact', 'linear', 'bilinear', 'trilinear', with
`align_corners`), `F.pixel_shuffle` and `F.pixel_unshuffle`.

A non-constant pad and a resampling are a gather of whole slices along each spatial dim (`index_select` with
the source index of every output position, computed as ATen's kernels compute it), and linear modes a weighted
sum of two gathers per dim, the last dim first: PyTorch's bilinear and trilinear kernels nest their weights in
that order, so the values are PyTorch's to the last bit but for the order of two-term sums. The graph is of
`IndexSelectBackward0` and the arithmetic's nodes, where PyTorch records one fused node
(`ReflectionPad2DBackward0`, `UpsampleBilinear2DBackward0`); gradients, double backward and vmap come from
those operations. The pixel shuffles are PyTorch's reshape-permute-reshape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..autograd.ops.conv import constant_pad_nd
from ..autograd.tensor import Tensor

__all__ = ["interpolate", "pad", "pixel_shuffle", "pixel_unshuffle"]


def _index(positions: np.ndarray) -> Tensor:
    return Tensor._make(positions.astype(np.int64), False, None)


def _source(j: np.ndarray, n: int, mode: str) -> np.ndarray:
    """The input position each padded position j (from -left to n + right) reads."""
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    return j % n  # circular


_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002 - PyTorch's names
        value: float | None = None) -> Tensor:
    """Pad the last dims of the input: `pad` lists (left, right) counts from the last dim backwards; mode
    'constant' fills with `value` (0), 'reflect' mirrors without the edge, 'replicate' repeats the edge,
    'circular' wraps around."""
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0.0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    pads = [int(p) for p in pad]
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pads)} and input of dimension {input.dim()}")
    k = len(pads) // 2
    if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pads)} is not supported for {input.dim()}D input tensor.\n"
                                  + _SUPPORTED)
    out = input
    for i in range(k):
        dim = input.dim() - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        n = input.size(dim)
        if mode == "reflect" and (left >= n or right >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({left}, {right}) at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (left > n or right > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and n == 0:
            raise RuntimeError(f"padding: input tensor must have non-empty dimension {dim}")
        if mode == "circular":  # ATen crops a negative side first, then wraps around what is left
            start, stop = max(-left, 0), n + min(right, 0)
            j = np.arange(-max(left, 0), stop - start + max(right, 0))
            positions = start + j % (stop - start)
        else:
            positions = _source(np.arange(-left, n + right), n, mode)
        out = out.index_select(dim, _index(positions))
    return out


# -- interpolate ----------------------------------------------------------------------------------------------
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}


def _as_list(v: Any, n: int) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v] * n


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002, C901
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an (N, C, d1, ..., dK) input to `size` or by `scale_factor`: 'nearest' (and
    'nearest-exact') copies the nearest source value, 'linear'/'bilinear'/'trilinear' interpolate (the corners'
    centres aligned with `align_corners=True`)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not in gradcalc")
    k = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)) and len(size) != k:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             "format.")
        out_size = [int(s) for s in _as_list(size, k)]
        scales: list[float | None] = [None] * k
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != k:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             "scale_factor in (s1, s2, ...,sK) format.")
        factors = [float(s) for s in _as_list(scale_factor, k)]
        out_size = [math.floor(float(input.size(i + 2) * f)) for i, f in enumerate(factors)]
        scales = [None] * k if recompute_scale_factor else list(factors)
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode in ("nearest", "nearest-exact"):
        if k not in (1, 2, 3):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
                                      f"for the modes: {_MODES} (got {mode})")
        return _nearest(input, out_size, scales, mode == "nearest-exact")
    if mode in _LINEAR:
        if k != _LINEAR[mode]:
            dims = {1: "3D", 2: "4D", 3: "5D"}[_LINEAR[mode]]
            if input.dim() in (3, 4, 5):
                raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {dims} input")
        return _linear(input, out_size, scales, bool(align_corners))
    if mode in ("bicubic", "area", "lanczos"):
        raise NotImplementedError(f"interpolate: mode '{mode}' is not in gradcalc (nearest, nearest-exact, linear, "
                                  "bilinear, trilinear)")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the "
                              f"modes: {_MODES} (got {mode})")


def _scale(n_in: int, n_out: int, align_corners: bool, scale: float | None) -> float:
    """ATen's area_pixel_compute_scale."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n_in / n_out


def _nearest(input: Tensor, out_size: list[int], scales: list, exact: bool) -> Tensor:  # noqa: A002
    out = input
    for i, n_out in enumerate(out_size):
        n_in = input.size(i + 2)
        s = _scale(n_in, n_out, False, scales[i])
        dst = np.arange(n_out, dtype=np.float32)  # ATen computes the nearest index in float
        src = np.floor((dst + 0.5) * np.float32(s)) if exact else np.floor(dst * np.float32(s))
        out = out.index_select(i + 2, _index(np.minimum(src.astype(np.int64), n_in - 1)))
    return out


def _linear(input: Tensor, out_size: list[int], scales: list, align_corners: bool) -> Tensor:  # noqa: A002
    out = input
    dt = input._data.dtype
    for i in reversed(range(len(out_size))):  # the last dim first: PyTorch's kernels nest the weights so
        n_in, n_out, dim = input.size(i + 2), out_size[i], i + 2
        s = _scale(n_in, n_out, align_corners, scales[i])
        dst = np.arange(n_out, dtype=np.float64)
        src = dst * s if align_corners else np.maximum(s * (dst + 0.5) - 0.5, 0.0)
        src = src.astype(dt)
        i0 = src.astype(np.int64)
        i1 = i0 + (i0 < n_in - 1)
        l1 = (src - i0.astype(dt)).astype(dt)
        l0 = (1 - l1).astype(dt)
        shape = (n_out,) + (1,) * (input.dim() - 1 - dim)
        w0, w1 = (Tensor._make(w.reshape(shape), False, None) for w in (l0, l1))
        out = out.index_select(dim, _index(i0)) * w0 + out.index_select(dim, _index(i1)) * w1
    return out


# -- pixel shuffles -------------------------------------------------------------------------------------------
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """Rearrange (*, C·r², H, W) into (*, C, H·r, W·r), r = upscale_factor."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    r = int(upscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """Rearrange (*, C, H·r, W·r) into (*, C·r², H, W), r = downscale_factor (pixel_shuffle's inverse)."""
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    r = int(downscale_factor)
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           f"input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           f"input.size(-1)={w} is not divisible by {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)
