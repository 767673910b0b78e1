"""Attention as functions: `F.scaled_dot_product_attention` and `F.multi_head_attention_forward`.

`scaled_dot_product_attention` is ATen's math path (`_scaled_dot_product_attention_math`) written with the
engine's operations: q and kᵀ each scaled by √scale, `matmul`, the mask added (a boolean mask becomes 0 / -inf,
`is_causal` a lower-triangular one), a softmax that gives 0, not NaN, on a row with every position masked
(ATen's `_safe_softmax`), dropout, `matmul` with v. PyTorch's CPU picks a fused kernel where it can; the values
and gradients are the same up to rounding, the nodes are those of the composition.
`multi_head_attention_forward` follows PyTorch's Python line by line (its slow path: `nn.MultiheadAttention`'s
fast path is an inference-only kernel with the same values).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..autograd.ops.conv import pad
from ..autograd.ops.dropout import dropout
from ..autograd.ops.joins import cat
from ..autograd.ops.nn import linear
from ..autograd.ops.softmax import softmax
from ..autograd.tensor import Tensor

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _const(array: np.ndarray) -> Tensor:
    return Tensor._make(array, False, None)


# how ATen's messages name the dtypes (C++'s names)
_CPP = {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _cpp(t: Tensor) -> str:
    return _CPP.get(t._data.dtype.name, t._data.dtype.name)


def _bool_to_bias(mask: Tensor, dtype: Any) -> Tensor:
    """A boolean mask (True: attend) as the additive 0 / -inf mask (ATen's convert_boolean_attn_mask)."""
    return _const(np.where(mask._data, 0.0, -np.inf).astype(dtype))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query keyᵀ · scale + mask) value over the last two dims (scale 1/√E by default); a boolean
    `attn_mask` says where to attend, a float one is added; `is_causal` masks the future."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dim() < 2:
            raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, but got "
                               f"query.dim: {query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
        del name
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{_cpp(query)} key.dtype: {_cpp(key)} and value.dtype: {_cpp(value)} instead.")
    if not 0.0 <= dropout_p <= 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p:g}")
    dt = query._data.dtype
    mask: Tensor | None = None
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if attn_mask.is_floating_point():
            mask = attn_mask
        elif attn_mask._data.dtype == np.bool_:
            mask = _bool_to_bias(attn_mask, dt)
        elif attn_mask.dtype == query.dtype:
            mask = attn_mask
        else:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {_cpp(attn_mask)} and  query.dtype: {_cpp(query)} instead.")
    elif is_causal:
        L, S = query.size(-2), key.size(-2)
        mask = _const(np.where(np.tril(np.ones((L, S), dtype=bool)), 0.0, -np.inf).astype(dt))
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        groups = query.size(-3) // key.size(-3)
        key, value = key.repeat_interleave(groups, -3), value.repeat_interleave(groups, -3)
    negative = scale is not None and scale < 0.0
    factor = math.sqrt(abs(scale) if negative else scale if scale is not None else 1.0 / math.sqrt(query.size(-1)))
    q = query * (-factor if negative else factor)
    attn = q.matmul(key.transpose(-2, -1) * factor)
    full = None
    if mask is not None:
        shape = np.broadcast_shapes(attn._data.shape, mask._data.shape)
        if shape != attn._data.shape:  # ATen adds the mask in place
            raise RuntimeError(f"output with shape {list(attn.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        # a row with every position masked: ATen's _safe_softmax gives zeros there; the row's -inf are taken
        # out before the softmax so that its gradient is zero, not NaN
        rows = np.isneginf(np.broadcast_to(mask._data, attn._data.shape)).all(-1, keepdims=True)
        if rows.any():
            full = _const(np.broadcast_to(rows, attn._data.shape))
            mask = mask.expand(tuple(attn.shape)).masked_fill(full, 0.0)
        attn = attn + mask
    attn = softmax(attn, -1)
    if full is not None:
        attn = attn.masked_fill(full, 0.0)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn.matmul(value)


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str, target_type: Any,
                    check_other: bool = True) -> Tensor | None:
    if mask is None:
        return None
    floating = mask.is_floating_point()
    if mask._data.dtype != np.bool_ and not floating:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)
    if not floating:
        return _const(np.where(mask._data, -np.inf, 0.0).astype(target_type))
    return mask


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None) -> tuple:
    E = q.size(-1)
    if k is v and q is k:  # self-attention: one linear map, then split (PyTorch's layout)
        proj = linear(q, w, b)
        proj = proj.reshape(tuple(proj.shape[:-1]) + (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        return proj[0], proj[1], proj[2]
    if k is v:
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = linear(k, w_kv, b_kv)
        kv = kv.reshape(tuple(kv.shape[:-1]) + (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        return linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(  # noqa: C901 - PyTorch's function, step by step
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
        add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
        training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
        k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of (L, N, E) query, (S, N, E) key and value (or unbatched (L, E), (S, E)): the
    in-projections, attention per head, the out-projection; returns (output, weights averaged over heads or
    per head, or none without `need_weights`)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", query._data.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query._data.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (linear(query, q_proj_weight, b_q), linear(key, k_proj_weight, b_k),
                   linear(value, v_proj_weight, b_v))
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k)
    v = (v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v)
    if add_zero_attn:
        zeros = _const(np.zeros((bsz * num_heads, 1, head_dim), dtype=k._data.dtype))
        k, v = cat([k, zeros], 1), cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[2]))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = q_scaled.bmm(k.transpose(-2, -1))
        weights = softmax(scores if attn_mask is None else attn_mask + scores, -1)  # baddbmm(mask, q, kᵀ)
        if dropout_p > 0.0:
            weights = dropout(weights, dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.size(1))
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3 \
            else attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.size(1))
    return (out if batched else out.squeeze(1)), None
