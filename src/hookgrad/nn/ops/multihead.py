"""multi_head_attention_forward: the computation behind nn.MultiheadAttention, composed from tensor
ops in torch's order (packed in-projection, heads folded into the batch, bmm or fused attention,
out-projection) so values, gradients and graphs follow torch's."""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._warnings import warn
from ...ops.join import cat
from ...tensor import Tensor
from .attention import scaled_dot_product_attention
from .dropout import dropout
from .linear import Baddbmm, linear


def canonical_mask(mask: Optional[Tensor], name: str, dtype: np.dtype) -> Optional[Tensor]:
    """A bool mask (True = masked out) as a float mask of 0 and -inf; float masks pass."""
    if mask is None:
        return None
    kind = mask._data.dtype.kind
    if kind not in "bf" and not mask.is_floating_point():  # bfloat16's NumPy kind is "V"
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if kind == "b":
        return Tensor._make(np.where(mask._data, -np.inf, 0).astype(dtype))
    return mask


def _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """torch's shape checks; returns whether the input is batched."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be "
                             f"{query.ndim}-D but found {key.ndim}-D and {value.ndim}-D tensors "
                             "respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{query.ndim - 1}-D but found {key_padding_mask.ndim}-D tensor "
                             "instead")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                             f" but found {attn_mask.ndim}-D tensor instead")
    return batched


def _packed_projection(query, key, value, weight, bias):
    """q, k, v projections with one packed weight; self-attention does one linear, as torch."""

    embed = query.shape[-1]
    if key is value and query is key:
        projected = linear(query, weight, bias)
        projected = (projected.unflatten(-1, (3, embed)).unsqueeze(0).transpose(0, -2)
                     .squeeze(-2).contiguous())
        return projected[0], projected[1], projected[2]
    if key is value:
        weight_q, weight_kv = weight.split([embed, 2 * embed])
        bias_q, bias_kv = (None, None) if bias is None else bias.split([embed, 2 * embed])
        projected = linear(key, weight_kv, bias_kv)
        projected = (projected.unflatten(-1, (2, embed)).unsqueeze(0).transpose(0, -2)
                     .squeeze(-2).contiguous())
        return linear(query, weight_q, bias_q), projected[0], projected[1]
    weights = weight.chunk(3)
    biases = (None,) * 3 if bias is None else bias.chunk(3)
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _pad_column(mask: Optional[Tensor]) -> Optional[Tensor]:
    """One more key position (bias_k / zero attention) that nobody masks."""
    if mask is None:
        return None
    zeros = Tensor._make(np.zeros(mask.shape[:-1] + (1,), mask._data.dtype))
    return cat([mask, zeros], -1)


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor],
        bias_k: Optional[Tensor], bias_v: Optional[Tensor], add_zero_attn: bool,
        dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Optional[Tensor],
        training: bool = True, key_padding_mask: Optional[Tensor] = None,
        need_weights: bool = True, attn_mask: Optional[Tensor] = None,
        use_separate_proj_weight: bool = False, q_proj_weight: Optional[Tensor] = None,
        k_proj_weight: Optional[Tensor] = None, v_proj_weight: Optional[Tensor] = None,
        static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None,
        average_attn_weights: bool = True, is_causal: bool = False):
    """Sequence-first (L, N, E) multi-head attention; returns (output, weights or None)."""

    batched = _check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    target_len, batch, embed = query.shape
    source_len = key.shape[0]
    dtype = query._data.dtype
    if (key_padding_mask is not None and attn_mask is not None
            and key_padding_mask._data.dtype != attn_mask._data.dtype):
        warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use "
             "same type for both instead.")
    key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the fused kernel applies the causal mask itself
    else:
        attn_mask = canonical_mask(attn_mask, "attn_mask", dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed}")
    head_dim = embed // num_heads
    if head_dim * num_heads != embed:
        raise AssertionError(f"embed_dim {embed} not divisible by num_heads {num_heads}")

    if not use_separate_proj_weight:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        q, k, v = _packed_projection(query, key, value, in_proj_weight, in_proj_bias)
    else:
        biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = (linear(x, w, b) for x, w, b in zip(
            (query, key, value), (q_proj_weight, k_proj_weight, v_proj_weight), biases))

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (target_len, source_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(target_len, source_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (batch * num_heads, target_len, source_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(batch * num_heads, target_len, source_len)}.")
    if bias_k is not None and bias_v is not None:
        k = cat([k, bias_k.expand(1, batch, embed)])
        v = cat([v, bias_v.expand(1, batch, embed)])
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)

    q = q.view(target_len, batch * num_heads, head_dim).transpose(0, 1)
    k = (k.view(k.shape[0], batch * num_heads, head_dim).transpose(0, 1)
         if static_k is None else static_k)
    v = (v.view(v.shape[0], batch * num_heads, head_dim).transpose(0, 1)
         if static_v is None else static_v)
    if add_zero_attn:
        zeros = Tensor._make(np.zeros((batch * num_heads, 1, head_dim), dtype))
        k, v = cat([k, zeros], 1), cat([v, zeros], 1)
        attn_mask, key_padding_mask = _pad_column(attn_mask), _pad_column(key_padding_mask)
    source_len = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(batch, source_len)}, "
                                 f"but got {key_padding_mask.shape}")
        key_padding_mask = (key_padding_mask.view(batch, 1, 1, source_len)
                            .expand(-1, num_heads, -1, -1)
                            .reshape(batch * num_heads, 1, source_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            scores = Baddbmm.apply(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            scores = q_scaled.bmm(k.transpose(-2, -1))
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        output = weights.bmm(v).transpose(0, 1).reshape(target_len * batch, embed)
        output = linear(output, out_proj_weight, out_proj_bias)
        output = output.view(target_len, batch, output.shape[1])
        weights = weights.view(batch, num_heads, target_len, source_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            output, weights = output.squeeze(1), weights.squeeze(0)
        return output, weights

    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.ndim == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(batch, num_heads, -1, source_len)
    q = q.view(batch, num_heads, target_len, head_dim)
    k = k.view(batch, num_heads, source_len, head_dim)
    v = v.view(batch, num_heads, source_len, head_dim)
    output = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    output = output.permute(2, 0, 1, 3).reshape(batch * target_len, embed)
    output = linear(output, out_proj_weight, out_proj_bias)
    output = output.view(target_len, batch, output.shape[1])
    if not batched:
        output = output.squeeze(1)
    return output, None
