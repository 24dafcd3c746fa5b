"""Scaled dot-product attention: torch's fused CPU kernel as one Function, and its math fallback.

torch (CPU) runs 4-D inputs with equal head dims and no dropout through a fused kernel that saves
(attn_mask, key, query, value, logsumexp, output); everything else runs a composite of matmul,
softmax and dropout. ``scaled_dot_product_attention`` picks the same path so graphs match.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._parallel import parallel_for
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
        output = np.empty_like(query)  # laid out like the query, as torch's kernel does
        logsumexp = np.empty(output.shape[:-1], query.dtype)

        def part(first: int, last: Optional[int]) -> None:
            rows = _rows(first, last, query.shape[0], query.ndim)
            _attend(rows(query), rows(key), rows(value), rows(attn_mask), is_causal, scale,
                    rows(output), rows(logsumexp, query.ndim - 1))

        _over_batch(query, key, value, part)
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


# Scores below _EXP_SAFE have exponentials far inside the float range whatever the row length
# (and whatever v's scale, within reason); a row whose sum of exponentials is at least
# _SUM_SAFE had a score above about -60, so its exponentials that matter are normal floats.
_EXP_SAFE = 20.0
_SUM_SAFE = 1e-20


def _attend(query, key, value, mask, is_causal: bool, scale: float, output: np.ndarray,
            logsumexp: np.ndarray) -> None:
    """softmax(q k^T scale + mask) v into ``output`` and each row's log of its softmax
    denominator into ``logsumexp`` (+inf for a fully masked row, so that exp(score -
    logsumexp) is 0 there in backward).

    A softmax is unchanged by any number taken from a whole row; the row's max is the usual
    one, but a max over a short last axis is NumPy's slowest pass here (15x one over the whole
    array). So for float32 and float64 scores all below _EXP_SAFE (one reduction), the
    exponentials are taken as they are, and only if some row's sum shows its exponentials
    lost precision (or a row is fully masked) are the scores computed again and each row's
    max taken (as for a score that is nan or not below _EXP_SAFE). Row
    sums are einsum's one pass over each row (a sum over a short last axis is ~4x slower),
    and the product with v is taken before dividing by them, as torch's kernel does: the
    division then runs over the output, no larger than the scores."""
    scores = _scores(query, key, mask, is_causal, scale)
    with np.errstate(over="ignore", under="ignore"):  # per thread: set in the part
        if scores.dtype in _WIDE and scores.max(initial=-np.inf) < _EXP_SAFE:
            exps = np.exp(scores, out=scores)  # in place: no second array of scores
            total = np.einsum("...j->...", exps)[..., None]
            if total.min(initial=np.inf) >= _SUM_SAFE:
                logsumexp[...] = np.log(total[..., 0])
                _weighted_sum(exps, value, total, output)
                return
            scores = _scores(query, key, mask, is_causal, scale)  # seldom: computed again
        _attend_from_row_max(scores, value, output, logsumexp)


def _attend_from_row_max(scores: np.ndarray, value, output: np.ndarray,
                         logsumexp: np.ndarray) -> None:
    """``_attend`` after subtracting each row's max (in place: ``scores`` is a fresh array)."""
    top = scores.max(axis=-1, keepdims=True)
    masked_row = np.isneginf(top)
    any_masked = bool(masked_row.any())
    if any_masked:
        top = np.where(masked_row, 0, top)
    exps = np.subtract(scores, top, out=scores)
    np.exp(exps, out=exps)
    total = (np.einsum("...j->...", exps)[..., None] if exps.dtype in _WIDE
             else exps.sum(axis=-1, keepdims=True))  # NumPy sums halves in float32
    with np.errstate(divide="ignore", invalid="ignore"):
        normaliser = np.log(total)
        normaliser += top
        if any_masked:  # exps are all 0 there: an infinite total gives a 0 output
            normaliser = np.where(masked_row, np.inf, normaliser)
            total = np.where(masked_row, np.inf, total)
        logsumexp[...] = normaliser[..., 0]
        _weighted_sum(exps, value, total, output)


def _weighted_sum(exps: np.ndarray, value, total: np.ndarray, output: np.ndarray) -> None:
    """(exps / total) v into ``output``; float32 and float64 divide the product instead of
    the exponentials (half precision would overflow in the product of unnormalised weights)."""
    if output.dtype in _WIDE:
        np.matmul(exps.astype(output.dtype, copy=False), value, out=output)
        output /= total.astype(output.dtype, copy=False)
    else:
        probs = np.divide(exps, total, out=exps)
        np.matmul(probs.astype(output.dtype, copy=False), value, out=output)


_WIDE = (np.dtype(np.float32), np.dtype(np.float64))


# scores per part below which splitting over the batch costs more than it saves. A part is
# ~12 NumPy calls whatever its size, each letting go of the GIL and taking it back; small parts
# (32768 scores, 8 of them at 2 threads) left two threads handing the GIL to each other.
_GRAIN = 65536


def _over_batch(query, key, value, part) -> None:
    """``part(first, last)`` over the leading (batch) dim, split over the intra-op threads
    when query, key and value share all their batch dims (BLAS and NumPy's loops release the
    GIL); else once over everything."""
    batch = query.shape[:-2]
    if query.ndim < 3 or key.shape[:-2] != batch or value.shape[:-2] != batch:
        part(0, None)
        return
    per_row = math.prod(batch[1:]) * query.shape[-2] * key.shape[-2]
    parallel_for(batch[0], -(-_GRAIN // max(per_row, 1)), part)


def _rows(first: int, last: Optional[int], count: int, ndim: int):
    """The slicer of a part: an array of rank ``rank`` (the query's unless given) and the
    batch's leading size is cut to rows [first, last); others (a broadcast mask, None) are
    used whole, as is everything when ``last`` is None (the work was not split)."""

    def rows(array, rank: int = ndim):
        if last is None or array is None or array.ndim != rank or array.shape[0] != count:
            return array
        return array[first:last]

    return rows


def _plain(grad: Tensor, query: Tensor, key: Tensor, value: Tensor) -> bool:
    """Float32 or float64 throughout: the array formulas' arithmetic is then torch's."""
    dtype = query._data.dtype
    return (dtype in (np.float32, np.float64) and grad._data.dtype == dtype
            and key._data.dtype == dtype and value._data.dtype == dtype)


def _backward_arrays(ctx, grad, attn_mask, key, query, value, logsumexp, output):
    """The first-order gradients on arrays (no graph of them is wanted): the formulas of
    ``backward``, each product written once into its result and every elementwise step done
    in place; split over the batch like the forward."""
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    needs = ctx.needs_input_grad
    results = [_grad_buffer(batch, array.shape[-2:], query.dtype) if need else None
               for array, need in zip((query, key, value), needs[:3])]
    mask = None if attn_mask is None else attn_mask._data

    def part(first: int, last: Optional[int]) -> None:
        rows = _rows(first, last, query.shape[0], query.ndim)
        _grads_into(ctx, rows(grad), rows(mask), rows(key), rows(query), rows(value),
                    rows(logsumexp, query.ndim - 1), rows(output), [rows(r) for r in results])

    _over_batch(query, key, value, part)
    return tuple(None if r is None else Tensor._make(r) for r in results)


def _grad_buffer(batch: tuple, matrix: tuple, dtype) -> np.ndarray:
    """A gradient of shape batch + matrix, laid out as torch's kernel lays out its gradients:
    (batch, length, heads, dim) in memory, seen as (batch, heads, length, dim)."""
    if len(batch) != 2:
        return np.empty(batch + matrix, dtype)
    return np.empty((batch[0], matrix[0], batch[1], matrix[1]), dtype).swapaxes(1, 2)


def _grads_into(ctx, grad, mask, key, query, value, logsumexp, output, results) -> None:
    grad_query, grad_key, grad_value = results
    probs = _scores(query, key, mask, ctx.is_causal, ctx.scale)
    probs -= logsumexp[..., None]
    np.exp(probs, out=probs)
    if grad_value is not None:
        np.matmul(np.swapaxes(probs, -1, -2), grad, out=grad_value)
    if grad_query is not None or grad_key is not None:
        grad_scores = np.matmul(grad, np.swapaxes(value, -1, -2))
        grad_scores -= np.einsum("...i,...i->...", grad, output)[..., None]
        grad_scores *= probs
        grad_scores *= query.dtype.type(ctx.scale)
        if grad_query is not None:
            np.matmul(grad_scores, key, out=grad_query)
        if grad_key is not None:
            np.matmul(np.swapaxes(grad_scores, -1, -2), query, out=grad_key)


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
