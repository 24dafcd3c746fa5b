"""Loss Functions with torch's fused nodes (NllLossBackward0, MseLossBackward0, ...).

Forward works on arrays; backward is a few tensor ops on the saved input and target. Under
``create_graph`` the gradients of mse, smooth_l1, huber and binary_cross_entropy are recorded as
torch records them, one ``...BackwardBackward0`` node each (``_loss_backward.py``); nll_loss's
gradient is a scatter whose own backward is nll_loss again (``loss_nll.py``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..._warnings import warn
from ...ops._util import broadcast_error
from ...autograd.saved import array_for_forward
from ...tensor import Tensor
from ...ops.reduce import log_softmax
from ...ops._reduce_util import torch_type_name
from ...ops._base import Op
from ...ops.arithmetic_scalar import add_scalar, div_scalar, mul_scalar
from ...autograd import grad_mode
from .loss_nll import NllLoss, NllLoss2d
from ._loss_backward import (BinaryCrossEntropyBackward, HuberLossBackward, MseLossBackward,
                             SmoothL1LossBackward, _start)

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


def _same_dtype(input: Tensor, target: Tensor) -> None:
    """torch's loss kernels that write into the input's dtype refuse a target of another."""
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {torch_type_name(target._data)} but expected "
                           f"{torch_type_name(input._data)}")


def _pair(ctx, grad_input):
    """Gradients for (input, target) of a loss that depends on input - target only; row-major,
    as torch's ``*_loss_backward`` kernels allocate their output contiguous whatever the
    layout of the input or the incoming gradient."""
    need_input, need_target = ctx.needs_input_grad[:2]
    grad_input = grad_input.contiguous()
    return (grad_input if need_input else None, -grad_input if need_target else None)


def _recorded_pair(ctx, node, grad, self, target, *settings):
    """Under ``create_graph``: torch's gradient node for the input, and for the target the
    same node with input and target swapped (its kernel is odd in x - y), as torch records."""
    need_input, need_target = ctx.needs_input_grad[:2]
    return (node.apply(grad, self, target, ctx.reduction, *settings) if need_input else None,
            node.apply(grad, target, self, ctx.reduction, *settings) if need_target else None)


class MseLoss(Op):
    """mean((x - y)^2);  d/dx = 2 (x - y)"""

    node_name = "MseLossBackward0"
    saved_names = ("self", "target")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(self, target)
        diff = self - target
        return reduce_array(diff * diff, reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        if grad_mode._state.enabled:
            return _recorded_pair(ctx, MseLossBackward, grad, self, target)
        factor = _per_element(grad, ctx.reduction, self.numel())
        return _pair(ctx, 2 * (self - target) * factor)


class SmoothL1Loss(Op):
    """0.5 z^2 / beta for |z| < beta, else |z| - 0.5 beta (z = x - y)"""

    node_name = "SmoothL1LossBackward0"
    saved_names = ("self", "target")
    saved_values = {"reduction": "reduction_enum", "beta": "beta"}

    @staticmethod
    def forward(ctx, self, target, reduction, beta):
        _start(ctx, reduction, beta=beta)
        ctx.save_for_backward(self, target)
        z = np.abs(self - target)
        beta = z.dtype.type(beta)
        loss = np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta)
        # an elementwise kernel in torch: the result is of the promoted dtype
        return reduce_array(loss.astype(np.result_type(self, target), copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        if grad_mode._state.enabled:
            return _recorded_pair(ctx, SmoothL1LossBackward, grad, self, target, ctx.beta)
        diff = self - target
        slope = (diff / ctx.beta).clamp(-1.0, 1.0)
        return _pair(ctx, slope * _per_element(grad, ctx.reduction, self.numel()))


class HuberLoss(Op):
    """0.5 z^2 for |z| < delta, else delta (|z| - 0.5 delta)"""

    node_name = "HuberLossBackward0"
    saved_names = ("self", "target")
    saved_values = {"reduction": "reduction_enum", "delta": "delta"}

    @staticmethod
    def forward(ctx, self, target, reduction, delta):
        _start(ctx, reduction, delta=delta)
        ctx.save_for_backward(self, target)
        z = np.abs(self - target)
        delta = self.dtype.type(delta)
        loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
        return reduce_array(loss.astype(self.dtype, copy=False), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        _same_dtype(self, target)  # torch's backward kernel writes into self's dtype
        if grad_mode._state.enabled:
            return _recorded_pair(ctx, HuberLossBackward, grad, self, target, ctx.delta)
        slope = (self - target).clamp(-ctx.delta, ctx.delta)
        return _pair(ctx, slope * _per_element(grad, ctx.reduction, self.numel()))


class BinaryCrossEntropy(Op):
    """-w (y log x + (1 - y) log(1 - x)), each log clamped at -100 as in torch"""

    node_name = "BinaryCrossEntropyBackward0"
    saved_names = ("self", "target", "weight")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, weight, reduction):
        if self.size and (np.any(self < 0) or np.any(self > 1) or np.any(np.isnan(self))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        _start(ctx, reduction)
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
        grad_input = grad_target = None
        if ctx.needs_input_grad[0] and grad_mode._state.enabled:
            grad_input = BinaryCrossEntropyBackward.apply(
                grad, self, target, None if weight is None else weight._data, ctx.reduction)
        elif ctx.needs_input_grad[0]:
            factor = _per_element(grad, ctx.reduction, self.numel())
            if weight is not None:
                factor = factor * weight
            grad_input = factor * (self - target) / ((1 - self) * self).clamp_min(_EPSILON)
        if ctx.needs_input_grad[1]:  # -logit(x) grad (w) (/ numel): unclamped, as torch's
            grad_target = -self.logit() * grad
            if weight is not None:
                grad_target = grad_target * weight
            if ctx.reduction == "mean":
                grad_target = grad_target / self.numel()
        return grad_input, grad_target


class BinaryCrossEntropyWithLogits(Op):
    """(1 - y) x + l softplus(-x), l = 1 + (pos_weight - 1) y; times weight"""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"
    saved_names = ("pos_weight", "self", "target", "weight")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, weight, pos_weight, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(pos_weight, self, target, weight)
        softplus = np.log1p(np.exp(-np.abs(self))) + np.maximum(-self, 0)
        if pos_weight is not None:
            softplus = softplus * (1 + (pos_weight - 1) * target)
        loss = (1 - target) * self + softplus
        if weight is not None:
            loss = loss * weight
        # torch builds the loss in place on ``1 - target``: it keeps the target's dtype
        dtype = target.dtype if target.dtype.kind == "f" else self.dtype
        return reduce_array(loss.astype(dtype, copy=False), reduction)

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


# -- the functional API --------------------------------------------------------------------------
def _reduction(size_average, reduce, reduction: str) -> str:
    """torch's legacy (size_average, reduce) pair mapped to a reduction name, then checked."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
        warn(f"size_average and reduce args will be deprecated, please use "
             f"reduction='{reduction}' instead.")
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _broadcast_pair(input: Tensor, target: Tensor):
    if input.shape == target.shape:
        return input, target
    warn(f"Using a target size ({target.shape}) that is different to the input size "
         f"({input.shape}). This will likely lead to incorrect results due to "
         "broadcasting. Please ensure they have the same size.")
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
    _same_dtype(input, target)
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
    if input.ndim >= 2 and input.shape[0] != (target.shape[0] if target.ndim else -1):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if weight is not None and weight.requires_grad and grad_mode.is_grad_enabled():
        # torch has no derivative for the class weights: its autograd layer refuses them
        # before the kernel's own checks (the 2d kernel takes inputs of 3 or more dims)
        kernel = "nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward"
        raise RuntimeError(f"The function '{kernel}' is not differentiable with respect to "
                           f"argument 'weight'. This input cannot have requires_grad True.")
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_type(target)}")
    classes = input.shape[0] if input.ndim == 1 else input.shape[1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    weights = None if weight is None else weight._data
    if input.ndim <= 2:
        return NllLoss.apply(input, array_for_forward(target), weights, reduction, ignore_index)
    if input.ndim == 4:
        return NllLoss2d.apply(input, array_for_forward(target), weights, reduction,
                               ignore_index)
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
            target = add_scalar(mul_scalar(target, 1 - label_smoothing),
                                label_smoothing / classes)
        product = logp * target
        if weight is not None:
            product = product * weight.view(weight_shape)
        if reduction == "none":
            return -product.sum(class_dim)
        if reduction == "sum":
            return -product.sum()
        return div_scalar(-product.sum(), input.numel() // classes)
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
    return mul_scalar(loss, 1 - label_smoothing) + mul_scalar(smooth, label_smoothing / classes)
