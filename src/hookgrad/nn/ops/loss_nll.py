"""nll_loss's nodes: the loss, picked at each sample's target class and weighted, and its
gradient, a scatter into zeros that is a Function of its own (its adjoint is nll_loss again),
so that double backward through cross entropy works.
"""
from __future__ import annotations

import numpy as np

from ...autograd import grad_mode
from ...ops._base import Op
from ...ops._reduce_util import shown_dim
from ...ops._util import quiet_errors
from ._loss_backward import _start
from ...tensor import Tensor


def _picked(values: np.ndarray, target: np.ndarray) -> np.ndarray:
    """values[n, target[n], ...] for (N, C, ...) values; values[target] for (C,)."""
    if values.ndim == 1:
        return values[target]
    if values.ndim == 2:  # plain fancy indexing: a fraction of take_along_axis's Python work
        return values[np.arange(values.shape[0]), target]
    return np.take_along_axis(values, np.expand_dims(target, 1), axis=1).squeeze(1)


def _class_weights(input: np.ndarray, target: np.ndarray, weight, ignore_index: int):
    """(safe target, per-sample weight with ignored samples at 0), checking target bounds. The
    weight is None when every sample's is 1 (no class weights, every target a class, none
    ignored): the common case, which then needs neither a weight array nor its sum."""
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if target.size and not 0 <= ignore_index < classes:
        # the common case, in two reductions: every target a class, none of them ignored
        low, high = np.minimum.reduce(target, None), np.maximum.reduce(target, None)
        if low >= 0 and high < classes and low != ignore_index and high != ignore_index:
            sample = None if weight is None else weight[target].astype(input.dtype, copy=False)
            return target, sample
    valid = target != ignore_index
    bad = valid & ((target < 0) | (target >= classes))
    if np.any(bad):
        raise IndexError(f"Target {int(target[bad].flat[0])} is out of bounds.")
    safe = np.where(valid, target, 0)
    sample = valid.astype(input.dtype) if weight is None else weight[safe] * valid
    return safe, sample.astype(input.dtype, copy=False)


def _nll_grad(grad: np.ndarray, target: np.ndarray, weight, reduction: str, ignore_index: int,
              shape: tuple, unweighted: bool = False) -> np.ndarray:
    """nll_loss's input gradient: ``-w[y] grad`` (over the total weight for 'mean') at each
    sample's target class, zero elsewhere and for ignored samples. ``grad`` is 0-d unless the
    reduction is 'none'. ``unweighted``: forward found every weight 1 (``_class_weights``), so
    the checks are not made again and the value is torch's ``-(grad / N)``."""
    template = np.zeros(shape, grad.dtype)
    if unweighted:
        safe = target
        with quiet_errors():
            value = -(grad / grad.dtype.type(target.size)) if reduction == "mean" else -grad
    else:
        safe, sample = _class_weights(template, target, weight, ignore_index)
        if sample is None:
            sample = np.ones(target.shape, grad.dtype)
        with quiet_errors():
            if reduction == "mean":
                sample = sample / np.add.reduce(sample, None)
            value = -sample * grad
        if safe is not target:  # some may be ignored: theirs is 0 even where grad is inf or NaN
            value = np.where(target != ignore_index, value, 0)
    if template.ndim == 1:
        template[safe] = value
    elif template.ndim == 2:
        template[np.arange(template.shape[0]), safe] = value
    else:
        value = np.broadcast_to(value, safe.shape)  # one value for all when unweighted
        np.put_along_axis(template, np.expand_dims(safe, 1), np.expand_dims(value, 1), axis=1)
    return template


class NllLoss(Op):
    """-w[y] x[y], averaged with the weights of the non-ignored targets (reduction 'mean')"""

    node_name = "NllLossBackward0"
    saved_names = ("self", "target", "weight", "total_weight")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, weight, reduction, ignore_index):
        _start(ctx, reduction, ignore_index=ignore_index)
        ctx._saved_ignore_index = shown_dim(ignore_index)  # as torch's int: -100 unsigned
        safe, sample = _class_weights(self, target, weight, ignore_index)
        ctx.unweighted = sample is None
        if sample is None:  # every weight 1: the total is the count, the loss the picked values
            total_weight = np.asarray(target.size, self.dtype)
            loss = -_picked(self, safe)
        else:
            total_weight = np.asarray(np.add.reduce(sample, None), self.dtype)
            loss = -_picked(self, safe) * sample
        ctx.save_for_backward(self, target, weight, total_weight)
        if reduction == "sum":
            return np.asarray(np.add.reduce(loss, None), self.dtype)
        if reduction == "mean":
            with quiet_errors():
                return np.asarray(np.add.reduce(loss, None) / total_weight, self.dtype)
        return loss

    @staticmethod
    def backward(ctx, grad):
        self, target, weight, _total_weight = ctx.saved_tensors
        weight = None if weight is None else weight._data
        if not grad_mode._state.enabled:  # no graph of the gradient: the scatter itself
            return (Tensor._make(_nll_grad(grad._data, target._data, weight, ctx.reduction,
                                           ctx.ignore_index, self._data.shape,
                                           ctx.unweighted)),)
        cls = NllLossGrad if self._data.ndim <= 2 else NllLoss2dGrad
        return (cls.apply(grad, self, target._data, weight, ctx.reduction, ctx.ignore_index),)


class NllLoss2d(NllLoss):
    node_name = "NllLoss2DBackward0"


class NllLossGrad(Op):
    """grad_input[n, y] = -w[y] grad (/ total weight): the scatter that is nll_loss's adjoint.
    As torch's ``nll_loss_backward`` it has an edge to the input (only its shape is read; its
    gradient is zero), so the first gradient is differentiable with respect to it."""

    node_name = "NllLossBackwardBackward0"
    saved_names = ("target", "weight")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, grad, self, target, weight, reduction, ignore_index):
        _start(ctx, reduction, ignore_index=ignore_index)
        ctx._saved_ignore_index = shown_dim(ignore_index)  # as torch's int: -100 unsigned
        ctx.self_meta = (self.shape, self.dtype)
        ctx.save_for_backward(target, weight)
        return _nll_grad(grad, target, weight, reduction, ignore_index, self.shape)

    @staticmethod
    def backward(ctx, grad):
        target, weight = ctx.saved_tensors
        cls = NllLoss if grad.ndim <= 2 else NllLoss2d
        for_grad = cls.apply(grad, target._data, None if weight is None else weight._data,
                             ctx.reduction, ctx.ignore_index) if ctx.needs_input_grad[0] else None
        for_self = Tensor._make(np.zeros(*ctx.self_meta)) if ctx.needs_input_grad[1] else None
        return for_grad, for_self, None, None


class NllLoss2dGrad(NllLossGrad):
    node_name = "NllLoss2DBackwardBackward0"
