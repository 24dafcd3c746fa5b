"""Scaled dot-product attention: torch's fused CPU kernel as one Function, and its math fallback.

torch (CPU) runs 4-D inputs with equal head dims and no dropout through a fused kernel that saves
(attn_mask, key, query, value, logsumexp, output); everything else runs a composite of matmul,
softmax and dropout. ``scaled_dot_product_attention`` picks the same path so graphs match.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ...autograd import grad_mode
from ...tensor import Tensor
from .dropout import dropout
from ...ops._base import Op


def _causal(length: int, source: int) -> np.ndarray:
    """(L, S) boolean mask of the allowed positions: row i sees columns 0..i (top-left aligned)."""
    return np.tril(np.ones((length, source), dtype=bool))


def _scores(query: np.ndarray, key: np.ndarray, mask, is_causal: bool, scale: float):
    """q k^T scale (+ mask), a fresh array of the full broadcast shape."""
    scores = np.matmul(query, np.swapaxes(key, -1, -2))
    scores *= query.dtype.type(scale)
    if mask is not None:
        if np.broadcast_shapes(scores.shape, mask.shape) == scores.shape:
            scores += mask
        else:
            scores = scores + mask
    if is_causal:
        scores = np.where(_causal(query.shape[-2], key.shape[-2]), scores, -np.inf)
    return scores


class ScaledDotProductAttention(Op):
    """out = softmax(q k^T scale + mask) v; a fully masked row gives 0 (torch's fused kernel)"""

    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"
    saved_names = ("attn_mask", "key", "query", "value", "logsumexp", "output")

    @staticmethod
    def forward(ctx, query, key, value, attn_mask, is_causal, scale):
        ctx.is_causal, ctx.scale = is_causal, scale
        scores = _scores(query, key, attn_mask, is_causal, scale)
        top = scores.max(axis=-1, keepdims=True)
        masked_row = np.isneginf(top)
        any_masked = bool(masked_row.any())
        if any_masked:
            top = np.where(masked_row, 0, top)
        exps = np.subtract(scores, top, out=scores)  # scores is a fresh array: work in it
        np.exp(exps, out=exps)
        total = exps.sum(axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            if any_masked:
                probs = np.where(masked_row, 0, exps / total)
            else:
                probs = np.divide(exps, total, out=exps)
            # +inf for a fully masked row, so that exp(score - logsumexp) is 0 there in backward
            logsumexp = np.log(total)
            logsumexp += top
            if any_masked:
                logsumexp = np.where(masked_row, np.inf, logsumexp)
            logsumexp = logsumexp[..., 0]
        output = np.empty_like(query)  # laid out like the query, as torch's kernel does
        np.matmul(probs.astype(query.dtype, copy=False), value, out=output)
        logsumexp = logsumexp.astype(query.dtype, copy=False)
        ctx.save_for_backward(attn_mask, key, query, value, logsumexp, output)
        return output

    @staticmethod
    def backward(ctx, grad):
        attn_mask, key, query, value, logsumexp, output = ctx.saved_tensors
        if not grad_mode.is_grad_enabled() and _plain(grad, query, key, value):
            return _backward_arrays(ctx, grad._data, attn_mask, key._data, query._data,
                                    value._data, logsumexp._data, output._data)
        scale = ctx.scale
        scores = query.matmul(key.transpose(-2, -1)) * scale
        if attn_mask is not None:
            scores = scores + attn_mask
        if ctx.is_causal:
            allowed = _causal(query.shape[-2], key.shape[-2])
            scores = scores.masked_fill(~allowed, float("-inf"))
        if grad_mode.is_grad_enabled():
            # a graph of the gradient: the statistics depend on q and k, so recompute them
            probs = safe_softmax(scores)
            output = probs.matmul(value)
        else:
            probs = (scores - logsumexp.unsqueeze(-1)).exp()
        grad_query = grad_key = grad_value = None
        if ctx.needs_input_grad[2]:
            grad_value = probs.transpose(-2, -1).matmul(grad)
        if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
            grad_probs = grad.matmul(value.transpose(-2, -1))
            delta = (grad * output).sum(-1, keepdim=True)
            grad_scores = probs * (grad_probs - delta) * scale
            if ctx.needs_input_grad[0]:
                grad_query = grad_scores.matmul(key)
            if ctx.needs_input_grad[1]:
                grad_key = grad_scores.transpose(-2, -1).matmul(query)
        return grad_query, grad_key, grad_value


def _plain(grad: Tensor, query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Float32 or float64 throughout: the array formulas' arithmetic is then torch's."""
    dtype = query._data.dtype
    return (dtype in (np.float32, np.float64) and grad._data.dtype == dtype
            and key._data.dtype == dtype and value._data.dtype == dtype)


def _backward_arrays(ctx, grad, attn_mask, key, query, value, logsumexp, output):
    """The first-order gradients on arrays (no graph of them is wanted), each product written
    once and every elementwise step done in place in it: the formulas of ``backward``."""
    scale = query.dtype.type(ctx.scale)
    probs = _scores(query, key, None if attn_mask is None else attn_mask._data, ctx.is_causal,
                    ctx.scale)
    probs -= logsumexp[..., None]
    np.exp(probs, out=probs)
    needs = ctx.needs_input_grad
    grad_query = grad_key = grad_value = None
    if needs[2]:
        grad_value = Tensor._make(np.matmul(np.swapaxes(probs, -1, -2), grad))
    if needs[0] or needs[1]:
        grad_scores = np.matmul(grad, np.swapaxes(value, -1, -2))
        grad_scores -= np.einsum("...i,...i->...", grad, output)[..., None]
        grad_scores *= probs
        grad_scores *= scale
        if needs[0]:
            grad_query = Tensor._make(np.matmul(grad_scores, key))
        if needs[1]:
            grad_key = Tensor._make(np.matmul(np.swapaxes(grad_scores, -1, -2), query))
    return grad_query, grad_key, grad_value


def safe_softmax(scores: Tensor) -> Tensor:
    """softmax over the last dim that gives 0 (not NaN) on rows that are entirely -inf."""
    masked_row = np.all(np.isneginf(scores._data), axis=-1, keepdims=True)
    if not masked_row.any():
        return scores.softmax(-1)
    # such rows are softmaxed as zeros (finite, so no NaN reaches the gradient), then zeroed
    return scores.masked_fill(masked_row, 0.0).softmax(-1).masked_fill(masked_row, 0.0)


def float_mask(attn_mask, dtype) -> Optional[Tensor]:
    """A boolean mask (True = may attend) as an additive float mask of 0 and -inf."""
    if attn_mask is None or attn_mask._data.dtype != np.bool_:
        return attn_mask
    return Tensor._make(np.where(attn_mask._data, 0, -np.inf).astype(dtype))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: Optional[float] = None, enable_gqa: bool = False
                                 ) -> Tensor:
    """softmax(q k^T / sqrt(E) + mask) v, with torch's choice of fused kernel or composite."""

    if enable_gqa:
        raise NotImplementedError("scaled_dot_product_attention: enable_gqa is not supported")
    dtype = query._data.dtype
    if attn_mask is not None and attn_mask._data.dtype not in (np.bool_, dtype):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {attn_mask.dtype} and  query.dtype: "
                           f"{query.dtype} instead.")
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    mask = float_mask(attn_mask, dtype)
    fused = (query.ndim == key.ndim == value.ndim == 4 and dropout_p == 0.0
             and query.shape[-1] == key.shape[-1] == value.shape[-1]
             and query.shape[-2] > 0 and key.shape[-2] > 0
             and (mask is None or not mask.requires_grad))
    if fused:
        return ScaledDotProductAttention.apply(query, key, value,
                                               None if mask is None else mask._data,
                                               is_causal, scale)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        allowed = _causal(query.shape[-2], key.shape[-2])
        mask = Tensor._make(np.where(allowed, 0, -np.inf).astype(dtype))
    factor = math.sqrt(scale)
    scores = (query * factor).matmul(key.transpose(-2, -1) * factor)
    if mask is not None:
        scores = scores + mask
    probs = safe_softmax(scores)
    if dropout_p > 0.0:
        probs = dropout(probs, dropout_p)
    return probs.matmul(value)
