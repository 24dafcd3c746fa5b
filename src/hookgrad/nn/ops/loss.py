"""Loss Functions with torch's fused nodes (NllLossBackward0, MseLossBackward0, ...).

Forward works on arrays; backward is a few tensor ops on the saved input and target (so double
backward comes free), except nll_loss, whose gradient is a scatter: that is a Function whose own
backward is nll_loss again.
"""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from ...autograd import grad_mode
from ...ops._util import broadcast_error, quiet_errors
from ...tensor import Tensor
from ...ops.reduce import log_softmax
from ...ops._base import Op

REDUCTIONS = ("none", "mean", "sum")
_EPSILON = float(np.float32(1e-12))  # torch's BCE floor is a float constant


def reduce_array(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "mean":
        return np.asarray(loss.mean(), loss.dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), loss.dtype)
    return loss


def _per_element(grad, reduction: str, count: int):
    """The incoming gradient as a per-element factor (mean divides by the element count)."""
    return grad / count if reduction == "mean" else grad


def _pair(ctx, grad_input):
    """Gradients for (input, target) of a loss that depends on input - target only; row-major,
    as torch's ``*_loss_backward`` kernels allocate their output contiguous whatever the
    layout of the input or the incoming gradient."""
    need_input, need_target = ctx.needs_input_grad[:2]
    grad_input = grad_input.contiguous()
    return (grad_input if need_input else None, -grad_input if need_target else None)


class MseLoss(Op):
    """mean((x - y)^2);  d/dx = 2 (x - y)"""

    node_name = "MseLossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, self, target, reduction):
        ctx.reduction = reduction
        ctx.save_for_backward(self, target)
        diff = self - target
        return reduce_array(diff * diff, reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        factor = _per_element(grad, ctx.reduction, self.numel())
        return _pair(ctx, 2 * (self - target) * factor)


class SmoothL1Loss(Op):
    """0.5 z^2 / beta for |z| < beta, else |z| - 0.5 beta (z = x - y)"""

    node_name = "SmoothL1LossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, self, target, reduction, beta):
        ctx.reduction, ctx.beta = reduction, beta
        ctx.save_for_backward(self, target)
        z = np.abs(self - target)
        beta = self.dtype.type(beta)
        loss = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        return reduce_array(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        diff = self - target
        slope = (diff / ctx.beta).clamp(-1.0, 1.0)
        return _pair(ctx, slope * _per_element(grad, ctx.reduction, self.numel()))


class HuberLoss(Op):
    """0.5 z^2 for |z| < delta, else delta (|z| - 0.5 delta)"""

    node_name = "HuberLossBackward0"
    saved_names = ("self", "target")

    @staticmethod
    def forward(ctx, self, target, reduction, delta):
        ctx.reduction, ctx.delta = reduction, delta
        ctx.save_for_backward(self, target)
        z = np.abs(self - target)
        delta = self.dtype.type(delta)
        loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
        return reduce_array(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        slope = (self - target).clamp(-ctx.delta, ctx.delta)
        return _pair(ctx, slope * _per_element(grad, ctx.reduction, self.numel()))


class BinaryCrossEntropy(Op):
    """-w (y log x + (1 - y) log(1 - x)), each log clamped at -100 as in torch"""

    node_name = "BinaryCrossEntropyBackward0"
    saved_names = ("self", "target", "weight")

    @staticmethod
    def forward(ctx, self, target, weight, reduction):
        if self.size and (np.any(self < 0) or np.any(self > 1) or np.any(np.isnan(self))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        ctx.reduction = reduction
        if weight is not None:
            weight = np.broadcast_to(weight, self.shape)
        ctx.save_for_backward(self, target, weight)
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(self), -100)
            log_1mx = np.maximum(np.log1p(-self), -100)
        loss = -(target * log_x + (1 - target) * log_1mx)
        if weight is not None:
            loss = loss * weight
        return reduce_array(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target, weight = ctx.saved_tensors
        factor = _per_element(grad, ctx.reduction, self.numel())
        if weight is not None:
            factor = factor * weight
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            grad_input = factor * (self - target) / ((1 - self) * self).clamp_min(_EPSILON)
        if ctx.needs_input_grad[1]:
            grad_target = factor * ((-self).log1p() - self.log())  # unclamped, as torch
        return grad_input, grad_target


class BinaryCrossEntropyWithLogits(Op):
    """(1 - y) x + l softplus(-x), l = 1 + (pos_weight - 1) y; times weight"""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"
    saved_names = ("pos_weight", "self", "target", "weight")

    @staticmethod
    def forward(ctx, self, target, weight, pos_weight, reduction):
        ctx.reduction = reduction
        ctx.save_for_backward(pos_weight, self, target, weight)
        softplus = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)
        if pos_weight is not None:
            softplus = softplus * (1 + (pos_weight - 1) * target)
        loss = (1 - target) * self + softplus
        if weight is not None:
            loss = loss * weight
        return reduce_array(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        pos_weight, self, target, weight = ctx.saved_tensors
        factor = _per_element(grad, ctx.reduction, self.numel())
        if weight is not None:
            factor = factor * weight
        grad_input = grad_target = None
        if ctx.needs_input_grad[0]:
            if pos_weight is not None:
                scale = 1 + (pos_weight - 1) * target
                grad_input = factor * (scale * self.sigmoid() - pos_weight * target)
            else:
                grad_input = factor * (self.sigmoid() - target)
        if ctx.needs_input_grad[1]:
            if pos_weight is not None:
                softplus = (-self.abs()).exp().log1p() + (-self).clamp_min(0)
                grad_target = factor * ((pos_weight - 1) * softplus - self)
            else:
                grad_target = factor * -self
        return grad_input, grad_target


# -- negative log likelihood -------------------------------------------------------------------
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

    @staticmethod
    def forward(ctx, self, target, weight, reduction, ignore_index):
        ctx.reduction, ctx.ignore_index = reduction, ignore_index
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

    @staticmethod
    def forward(ctx, grad, self, target, weight, reduction, ignore_index):
        ctx.reduction, ctx.ignore_index = reduction, ignore_index
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


# -- the functional API --------------------------------------------------------------------------
def _reduction(size_average, reduce, reduction: str) -> str:
    """torch's legacy (size_average, reduce) pair mapped to a reduction name, then checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.", stacklevel=3)
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _broadcast_pair(input: Tensor, target: Tensor):
    if input.shape == target.shape:
        return input, target
    warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                  f"({input.shape}). This will likely lead to incorrect results due to "
                  "broadcasting. Please ensure they have the same size.", stacklevel=3)
    try:
        shape = np.broadcast_shapes(input.shape, target.shape)
    except ValueError:
        raise broadcast_error("broadcast_tensors", input.shape, target.shape) from None
    return (input if input.shape == shape else input.expand(shape),
            target if target.shape == shape else target.expand(shape))


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str, mean_by_weight: bool):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _reduced(loss: Tensor, reduction: str) -> Tensor:
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    """Squared error, reduced by ``reduction``."""
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target).pow(2), weight, input, reduction, True)
    return MseLoss.apply(input, target, _reduction(size_average, reduce, reduction))


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Optional[Tensor] = None) -> Tensor:
    """Absolute error, reduced by ``reduction``."""
    input, target = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction, True)
    return _reduced((input - target).abs(), _reduction(size_average, reduce, reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Quadratic below ``beta``, linear above, scaled by ``1 / beta``."""
    input, target = _broadcast_pair(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0.0:
        return _reduced((input - target).abs(), reduction)
    return SmoothL1Loss.apply(input, target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Optional[Tensor] = None) -> Tensor:
    """Quadratic below ``delta``, linear above."""
    input, target = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(HuberLoss.apply(input, target, "none", delta), weight, input,
                         reduction, False)
    return HuberLoss.apply(input, target, _reduction(None, None, reduction), delta)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``-(t * log(p) + (1 - t) * log(1 - p))``, the logs clamped at -100 as torch does."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    weights = None if weight is None else np.broadcast_to(weight._data, input.shape)
    return BinaryCrossEntropy.apply(input, target, weights, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Optional[Tensor] = None, size_average=None,
                                     reduce=None, reduction: str = "mean",
                                     pos_weight: Optional[Tensor] = None) -> Tensor:
    """Binary cross-entropy on logits, with ``pos_weight`` and ``weight``, computed stably."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    return BinaryCrossEntropyWithLogits.apply(
        input, target, None if weight is None else weight._data,
        None if pos_weight is None else pos_weight._data, reduction)


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: minus the log-probability at each target class (``weight``,
    ``ignore_index`` as torch)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type(target)}")
    if input.ndim >= 2 and input.shape[0] != (target.shape[0] if target.ndim else -1):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    weights = None if weight is None else weight._data
    if input.ndim <= 2:
        return NllLoss.apply(input, target._data, weights, reduction, ignore_index)
    if input.ndim == 4:
        return NllLoss2d.apply(input, target._data, weights, reduction, ignore_index)
    n = input.shape[0]
    flat = input.contiguous().view(n, classes, 1, -1)
    result = NllLoss2d.apply(flat, target._data.reshape(n, 1, -1), weights, reduction,
                             ignore_index)
    if reduction == "none":
        return result.view((n,) + tuple(input.shape[2:]))
    return result


def _type(tensor: Tensor) -> str:
    return {"int32": "Int", "int16": "Short", "int8": "Char", "float32": "Float",
            "float64": "Double", "bool": "Bool"}.get(tensor._data.dtype.name,
                                                     tensor._data.dtype.name)


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                  size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input)) for class indices; -sum(p log_softmax) for probabilities;
    label smoothing mixes in the uniform target, composed exactly as torch composes it."""
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if input.ndim == 1 else 1
    classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    weight_shape = [1] * input.ndim
    weight_shape[class_dim] = classes
    if target._data.dtype.kind in "fV":
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        product = logp * target
        if weight is not None:
            product = product * weight.view(weight_shape)
        if reduction == "none":
            return -product.sum(class_dim)
        if reduction == "sum":
            return -product.sum()
        return -product.sum() / (input.numel() / classes)
    loss = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0.0:
        return loss
    ignored = target._data == ignore_index
    if weight is not None:
        smooth = -(logp * weight.view(weight_shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        if weight is not None:
            total = float(weight._data[target._data[~ignored]].sum())
        else:
            total = float((~ignored).sum())
        smooth = smooth.sum() / total
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / classes)
