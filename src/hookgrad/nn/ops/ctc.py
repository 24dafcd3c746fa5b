"""Connectionist temporal classification loss (``F.ctc_loss``, ``torch.ctc_loss``).

The loss of one sample is ``-log p(target | log_probs)``, summed over every alignment of the
target (blanks between and around labels, labels repeated) to the first ``input_length``
frames. It is worked out in log space over the *extended* target ``blank, l1, blank, l2, ...,
blank`` (2 S + 1 positions): the forward variables ``alpha`` in ``forward`` (kept for backward,
as torch keeps them as its second result), the backward variables ``beta`` in ``backward``.
Both recursions step over time in Python and are vectorized over the batch and the extended
positions, so a call costs T NumPy passes, whatever the batch and target sizes.

The gradient is torch's: ``exp(log_probs) - exp(log(sum of alpha beta at the class) + nll -
log_probs)``, i.e. the gradient with respect to the *logits* when ``log_probs`` came from
``log_softmax`` (the form torch returns; composed with ``log_softmax`` it is the true
gradient). Frames past a sample's input length get zero; with ``zero_infinity`` so does every
sample whose loss is infinite (no alignment fits), whose gradient is otherwise NaN, as torch's.
Like torch's, the gradient has no derivative of its own: differentiating it raises.

As in torch, ``ctc_loss`` is composed around the ``CtcLossBackward0`` node: a ``where`` zeroes
infinite losses for ``zero_infinity``, 'mean' divides each loss by its target length (at least
1) and averages, 'sum' sums, and unbatched input is unsqueezed and its loss squeezed back.
"""
from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from ... import _dtype
from ...autograd import grad_mode
from ...ops import pointwise as P
from ...ops.activation_extra import NotImplementedDerivative
from ...ops._base import Op
from ...ops._util import quiet_errors
from ...tensor import Tensor
from .loss import _reduction

_CHECKING = " (while checking arguments for ctc_loss_allocate_outputs)"
_REDUCTION_BY_ENUM = {1: "mean", 2: "sum"}  # torch's at::Reduction; any other value is 'none'

Lengths = Union[Tensor, Sequence[int]]


def _log_sum_exp(*terms: np.ndarray) -> np.ndarray:
    """log(sum(exp(terms))) elementwise, shifted by the largest term (0 where all are -inf,
    so an impossible position stays -inf without a NaN)."""
    top = terms[0]
    for term in terms[1:]:
        top = np.maximum(top, term)
    top = np.where(np.isneginf(top), 0, top)
    total = np.exp(terms[0] - top)
    for term in terms[1:]:
        total += np.exp(term - top)
    with quiet_errors():
        return np.log(total) + top


def _extended(targets: np.ndarray, target_lengths: np.ndarray, blank: int, width: int):
    """(N, 2 S + 1) extended labels (blank at even positions, padding past a sample's target
    as blank) and the (N, 2 S + 1) mask of positions that may skip back two (a label that
    differs from the label two before it)."""
    n, longest = target_lengths.shape[0], (width - 1) // 2
    steps = np.arange(longest)
    if targets.ndim == 2:
        labels = targets[:, :longest]
    else:  # concatenated: each sample's labels start after the previous samples'
        starts = np.cumsum(target_lengths) - target_lengths
        index = np.minimum(starts[:, None] + steps, max(targets.shape[0] - 1, 0))
        labels = targets[index] if targets.size else np.zeros((n, longest), np.int64)
    labels = np.where(steps < target_lengths[:, None], labels, blank)
    extended = np.full((n, width), blank, np.int64)
    extended[:, 1::2] = labels
    skips = np.zeros((n, width), bool)
    skips[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    return extended, skips


def _alphas(log_probs, extended, skips, input_lengths, target_lengths):
    """log alpha, (N, T, 2 S + 1), and the negative log likelihood, (N,)."""
    frames, n, _ = log_probs.shape
    width = extended.shape[1]
    rows = np.arange(n)[:, None]
    neg_inf = log_probs.dtype.type(-np.inf)
    alpha = np.full((n, frames, width), neg_inf, log_probs.dtype)
    emit = log_probs[0][rows, extended]
    alpha[:, 0, 0] = emit[:, 0]
    if width > 1:
        alpha[:, 0, 1] = np.where(target_lengths > 0, emit[:, 1], neg_inf)
    for t in range(1, frames):
        prev = alpha[:, t - 1]
        one = np.concatenate([np.full((n, 1), neg_inf, prev.dtype), prev[:, :-1]], 1)
        two = np.concatenate([np.full((n, 2), neg_inf, prev.dtype), prev[:, :-2]], 1)[:, :width]
        two = np.where(skips, two, neg_inf)
        alpha[:, t] = _log_sum_exp(prev, one, two) + log_probs[t][rows, extended]
    last = np.maximum(input_lengths - 1, 0)
    ends = alpha[np.arange(n), last]
    final = ends[np.arange(n), 2 * target_lengths]
    before = ends[np.arange(n), np.maximum(2 * target_lengths - 1, 0)]
    likelihood = np.where(target_lengths > 0, _log_sum_exp(final, before), final)
    # no frames: certain for an empty target (log 1, so a loss of -0.0 as torch's), else never
    likelihood = np.where(input_lengths > 0, likelihood,
                          np.where(target_lengths > 0, neg_inf, 0))
    return alpha, np.asarray(-likelihood, log_probs.dtype)


def _betas(log_probs, extended, skips, input_lengths, target_lengths):
    """log beta, (T, N, 2 S + 1): each sample's recursion starts at its own last frame."""
    frames, n, _ = log_probs.shape
    width = extended.shape[1]
    rows = np.arange(n)[:, None]
    neg_inf = log_probs.dtype.type(-np.inf)
    beta = np.full((frames, n, width), neg_inf, log_probs.dtype)
    positions = np.arange(width)
    # the positions a path may end at: the last blank and the last label
    ending = (positions == 2 * target_lengths[:, None]) | (
        (positions == 2 * target_lengths[:, None] - 1) & (target_lengths[:, None] > 0))
    # a label may be skipped to from two before: skips shifted back by two positions
    jump = np.concatenate([skips[:, 2:], np.zeros((n, 2), bool)], 1)
    for t in range(frames - 1, -1, -1):
        emit = log_probs[t][rows, extended]
        start = np.where(ending, emit, neg_inf)
        if t + 1 < frames:
            nxt = beta[t + 1]
            one = np.concatenate([nxt[:, 1:], np.full((n, 1), neg_inf, nxt.dtype)], 1)
            two = np.concatenate([nxt[:, 2:], np.full((n, 2), neg_inf, nxt.dtype)], 1)
            two = np.where(jump, two, neg_inf)
            step = _log_sum_exp(nxt, one, two) + emit
        else:
            step = start
        at_end = (input_lengths - 1 == t)[:, None]
        inside = (t < input_lengths - 1)[:, None]
        beta[t] = np.where(at_end, start, np.where(inside, step, neg_inf))
    return beta


def _lengths(values: Lengths, name: str) -> np.ndarray:
    if isinstance(values, Tensor):
        if values.dtype.is_floating_point or values.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        return values._data.astype(np.int64).reshape(-1)
    return np.asarray(list(values), np.int64).reshape(-1)


def _check(log_probs: np.ndarray, targets: np.ndarray, input_lengths: np.ndarray,
           target_lengths: np.ndarray, blank: int) -> None:
    """torch's argument checks, with its messages."""
    if log_probs.size == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional "
                           f"tensor for argument #1 'log_probs'{_CHECKING}")
    frames, n, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{_CHECKING}")
    for name, values, most in (("target_lengths", target_lengths, None),
                               ("input_lengths", input_lengths, frames)):
        if values.size and values.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{int(values.min())}{_CHECKING}")
        if most is not None and values.size and values.max() > most:
            raise RuntimeError(f"Expected {name} to have value at most {most}, but got value "
                               f"{int(values.max())}{_CHECKING}")
    if targets.ndim == 1:
        total = int(target_lengths.sum())
        if targets.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{_CHECKING}")
        return
    if targets.shape[0] != n:
        raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{_CHECKING}")
    longest = int(target_lengths.max()) if n else 0
    if targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, "
                           f"but got size {targets.shape[1]} for argument #2 'targets'{_CHECKING}")


class CtcLoss(Op):
    """Each sample's negative log likelihood over all alignments of its target."""

    node_name = "CtcLossBackward0"
    saved_names = ("log_probs", "targets", "result0", "result1")
    saved_values = {"blank": "blank", "input_lengths": "input_lengths_shown",
                    "target_lengths": "target_lengths_shown", "zero_infinity": "zero_infinity"}

    @staticmethod
    def forward(ctx, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
        ctx.blank, ctx.zero_infinity = blank, zero_infinity
        ctx.input_lengths_shown = tuple(int(v) for v in input_lengths)
        ctx.target_lengths_shown = tuple(int(v) for v in target_lengths)
        width = 2 * (int(target_lengths.max()) if target_lengths.size else 0) + 1
        extended, skips = _extended(targets, target_lengths, blank, width)
        with quiet_errors():
            alpha, nll = _alphas(log_probs, extended, skips, input_lengths, target_lengths)
        ctx.save_for_backward(log_probs, targets, nll, alpha)
        return nll

    @staticmethod
    def backward(ctx, grad):
        log_probs, targets, nll, alpha = (s._data for s in ctx.saved_tensors)
        input_lengths = np.asarray(ctx.input_lengths_shown, np.int64)
        target_lengths = np.asarray(ctx.target_lengths_shown, np.int64)
        extended, skips = _extended(targets, target_lengths, ctx.blank, alpha.shape[2])
        frames, n, classes = log_probs.shape
        with quiet_errors():
            beta = _betas(log_probs, extended, skips, input_lengths, target_lengths)
            both = alpha.transpose(1, 0, 2) + beta  # (T, N, 2 S + 1)
            top = both.max(axis=2, keepdims=True) if both.shape[2] else np.zeros((frames, n, 1))
            top = np.where(np.isneginf(top), 0, top)
            one_hot = (extended[:, :, None] == np.arange(classes)).astype(log_probs.dtype)
            # sum over the extended positions holding each class, shifted by the frame's top
            per_class = np.einsum("tns,nsc->tnc", np.exp(both - top), one_hot)
            posterior = np.exp(np.log(per_class) + top + nll[None, :, None] - log_probs)
            value = np.exp(log_probs) - posterior
        keep = np.arange(frames)[:, None] < input_lengths[None, :]
        if ctx.zero_infinity:
            keep = keep & ~np.isinf(nll)[None, :]
        value = np.where(keep[:, :, None], value, 0).astype(log_probs.dtype, copy=False)
        value = value * grad._data.reshape(1, n, 1)
        if grad_mode.is_grad_enabled():
            # torch has no derivative of _ctc_loss_backward: differentiating it raises
            log_probs_tensor = ctx.saved_tensors[0]
            result = NotImplementedDerivative.apply(value, grad, log_probs_tensor,
                                                    "_ctc_loss_backward")
        else:
            result = Tensor._make(value)
        return result, None, None, None, None, None


def _ctc(log_probs: Tensor, targets: Tensor, input_lengths: Lengths, target_lengths: Lengths,
         blank: int, reduction: str, zero_infinity: bool) -> Tensor:
    """The loss for a checked reduction name: torch's composition around CtcLossBackward0."""
    if log_probs._data.dtype not in (np.float32, np.float64):  # torch's CPU kernel's dtypes
        raise NotImplementedError(
            f"\"ctc_loss_cpu\" not implemented for '{_dtype.scalar_type_name(log_probs.dtype)}'")
    unbatched = log_probs.ndim != 3
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
    inputs = _lengths(input_lengths, "input_lengths")
    lengths = _lengths(target_lengths, "target_lengths")
    labels = targets._data.astype(np.int64, copy=False)
    _check(log_probs._data, labels, inputs, lengths, blank)
    loss = CtcLoss.apply(log_probs, labels, inputs, lengths, blank, bool(zero_infinity))
    if zero_infinity:
        zero = Tensor._make(np.zeros((), loss._data.dtype))
        loss = P.where(loss == float("inf"), zero, loss)
    if reduction == "mean":
        divisor = Tensor._make(np.maximum(lengths, 1).astype(loss._data.dtype))
        return (loss / divisor).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.squeeze(0) if unbatched else loss


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Lengths,
             target_lengths: Lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """CTC loss of ``log_probs`` ((T, N, C) or unbatched (T, C), log-softmax output) against
    ``targets`` padded (N, S) or concatenated 1-D, with per-sample ``input_lengths`` and
    ``target_lengths`` (tensors or sequences of ints). 'mean' divides each loss by its target
    length (at least 1) before averaging; ``zero_infinity`` zeroes impossible samples' losses
    and gradients."""
    reduction = _reduction(None, None, reduction)
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                zero_infinity)


def ctc_loss_enum(log_probs: Tensor, targets: Tensor, input_lengths: Lengths,
                  target_lengths: Lengths, blank: int = 0, reduction: int = 1,
                  zero_infinity: bool = False) -> Tensor:
    """torch's top-level ``ctc_loss``: the reduction as torch's enum (1 mean, 2 sum, else
    none)."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise TypeError(f"ctc_loss(): argument 'reduction' must be int, not "
                        f"{type(reduction).__name__}")
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank,
                _REDUCTION_BY_ENUM.get(reduction, "none"), zero_infinity)
