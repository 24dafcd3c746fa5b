"""The less common losses (kl_div, margin ranking, hinge and cosine embedding, soft and multi
margin, Gaussian and Poisson NLL, triplet margin, multilabel soft margin), composed of existing
ops as torch composes most of them, so gradients and double backward come from those ops.

``soft_margin_loss``, ``multi_margin_loss`` and ``multilabel_margin_loss``, fused kernels in
torch, are single nodes as there (``margin_losses.py``).
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._warnings import warn
from ... import _dtype
from ...autograd import grad_mode
from ...ops import pointwise as P
from ...ops.activation_extra import logsigmoid
from ...ops.arithmetic_scalar import add_scalar, mul_scalar, number_minus, sub_scalar
from ...ops.creation import ones_like, zeros_like
from ...ops.pointwise_binary import xlogy
from ...autograd.saved import array_for_forward
from ...tensor import Tensor
from .distance import pairwise_distance
from .loss import _reduction
from .margin_losses import MultilabelMarginLoss, MultiMarginLoss, SoftMarginLoss

_KL_MEAN_WARNING = (
    "reduction: 'mean' divides the total loss by both the batch size and the support size."
    "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
    "'mean' will be changed to behave the same as 'batchmean' in the next major release.")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Pointwise ``target * (log(target) - input)`` (``input`` holds log-probabilities; with
    ``log_target`` so does ``target``); ``'batchmean'`` divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warn(_KL_MEAN_WARNING)
    batchmean = reduction == "batchmean"
    if not batchmean:
        _reduction(None, None, reduction)
    return kl_div_pointwise_reduced(input, target, reduction, log_target)


def kl_div_pointwise_reduced(input: Tensor, target: Tensor, reduction: str,
                             log_target: bool) -> Tensor:
    """``kl_div``'s computation for a checked reduction (torch's top-level form, no warning)."""
    batchmean = reduction == "batchmean"
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    if batchmean:
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` (1 or -1) says which
    input should rank higher."""
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce(add_scalar(-target * (input1 - input2), margin).clamp_min(0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other
    target values get both terms, as in torch)."""
    reduction = _reduction(size_average, reduce, reduction)
    zero = zeros_like(input)
    below = P.where(target != 1, number_minus(margin, input).clamp_min(0), zero)
    return _reduce(below + P.where(target != -1, input, zero), reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))``, the two-class logistic loss."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.requires_grad and grad_mode.is_grad_enabled():  # torch's node has no such edge
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    return SoftMarginLoss.apply(input, target._data, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos(x1, x2) - margin)`` where it is
    -1; rows of 2-D inputs with a 1-D target, or one pair of vectors with a 0-D target."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.ndim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    expected = 2 if target.ndim == 1 else 1
    if input1.ndim != expected or input2.ndim != expected:
        raise RuntimeError(
            f"{target.ndim}D target tensor expects {expected}D input tensors, but found inputs "
            f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = target.ndim
    epsilon = 1e-12  # torch's floor on each squared norm
    product = (input1 * input2).sum(dim)
    norms = add_scalar((input1 * input1).sum(dim), epsilon) * \
        add_scalar((input2 * input2).sum(dim), epsilon)
    cos = product / norms.sqrt()
    zero = zeros_like(cos)
    loss = P.where(target == 1, number_minus(1, cos), zero) + \
        P.where(target == -1, sub_scalar(cos, margin).clamp_min(0), zero)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """``0.5 * (log(var) + (input - target)^2 / var)`` (plus ``0.5 log(2 pi)`` when ``full``);
    ``var`` is clamped to ``eps`` without the clamp entering the gradient, as torch does."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool(np.any(var._data < 0)):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)  # one variance per row of input
        elif not (input.ndim == var.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with grad_mode.no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target * input`` for a log-rate input,
    else ``input - target * log(input + eps)``; ``full`` adds Stirling's term where
    ``target > 1``."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * add_scalar(input, eps).log()
    if full:
        stirling = target * target.log() - target + \
            mul_scalar(mul_scalar(target, 2 * math.pi).log(), 0.5)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _check_triplet(margin: float, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    """The triplet losses' shared argument checks, with torch's errors."""
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with the p-norm distance;
    ``swap`` uses the smaller of d(anchor, negative) and d(positive, negative)."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_triplet(margin, anchor, positive, negative)
    to_positive = pairwise_distance(anchor, positive, p, eps)
    to_negative = pairwise_distance(anchor, negative, p, eps)
    if swap:
        to_negative = P.minimum(to_negative, pairwise_distance(positive, negative, p, eps))
    return _reduce((add_scalar(to_positive, margin) - to_negative).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (pairwise_distance by
    default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_triplet(margin, anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    to_positive, to_negative = distance(anchor, positive), distance(anchor, negative)
    if swap:
        to_negative = P.minimum(to_negative, distance(positive, negative))
    return _reduce((margin + to_positive - to_negative).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over the classes (the last dim), then reduced."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.ndim - 1) / input.shape[input.ndim - 1]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                          reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: per sample, ``sum over its target classes j and the other
    classes i of max(0, 1 - (x[j] - x[i])) / C``; a sample's targets end at its first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target._data.dtype != np.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{_dtype.scalar_type_name(target._data.dtype)}")
    return MultilabelMarginLoss.apply(input, target._data, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Optional[Tensor] = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: per sample, ``sum over j != y of max(0, margin - x[y] +
    x[j])^p / C`` (times ``weight[y]``)."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad and grad_mode.is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect "
                           "to argument 'weight'. This input cannot have requires_grad True.")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    rows = input if input.ndim == 2 else input.reshape(1, -1)
    samples, classes = rows.shape
    if target.ndim > 1 or target.numel() != samples:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{samples}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    for tensor, expected in ((target, np.dtype(np.int64)), (weight, input._data.dtype)):
        if tensor is not None and tensor._data.dtype != expected:
            raise RuntimeError(f"expected scalar type {_dtype.scalar_type_name(expected)} but "
                               f"found {_dtype.scalar_type_name(tensor._data.dtype)}")
    labels = target._data.reshape(-1)
    if bool(np.any((labels < 0) | (labels >= classes))):
        raise RuntimeError("target out of range")
    return MultiMarginLoss.apply(input, array_for_forward(target), p, margin,
                                 None if weight is None else weight._data, reduction)


__all__ = ["kl_div", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "gaussian_nll_loss", "poisson_nll_loss",
           "triplet_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "triplet_margin_with_distance_loss", "multilabel_margin_loss"]
