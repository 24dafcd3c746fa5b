"""The losses' gradients as torch records them under ``create_graph``: one node per loss
(``MseLossBackwardBackward0``, ``SmoothL1LossBackwardBackward0``, ``HuberLossBackwardBackward0``,
``BinaryCrossEntropyBackwardBackward0``) with edges to the incoming gradient, the input and the
target, saving them through ``save_for_backward`` so that an in-place write to any of them makes
a later backward through the gradient refuse, as torch's does.

Each forward is torch's ``*_loss_backward`` kernel on arrays, laid out as torch's (row-major,
except binary cross entropy's, laid out as the input); each backward gives torch's second
derivatives. The gradient for the incoming gradient
is the kernel again, full-shaped: for 'mean' and 'sum' the engine sums it to the 0-d
grad_output. l1_loss and binary_cross_entropy_with_logits have no such node in torch (their
gradients are composites there as here). Without ``create_graph`` the losses in ``loss.py`` keep
their cheaper path and none of these nodes is made.
"""
from __future__ import annotations

import numpy as np

from ...ops import _layout
from ...ops._base import Op
from ...ops._util import quiet_errors

REDUCTION_ENUM = {"none": 0, "mean": 1, "sum": 2}  # torch's at::Reduction, as _saved_reduction
_EPSILON = 1e-12  # torch's floor on x (1 - x) in binary_cross_entropy's gradients


def _kernel_result(values: np.ndarray, self: np.ndarray, reduction: str) -> np.ndarray:
    """A loss-backward kernel's output: the input's dtype and shape, row-major, scaled by
    1 / numel for 'mean'."""
    if reduction == "mean":
        values = values / self.dtype.type(self.size)
    values = np.asarray(values, dtype=self.dtype)  # (0-d arithmetic gives a NumPy scalar)
    return values if values.flags.c_contiguous else np.ascontiguousarray(values)


def _mean_scaled(value, self, reduction: str):
    """A second derivative, divided by the element count for 'mean'."""
    return value / self.numel() if reduction == "mean" else value


def _start(ctx, reduction: str, **settings):
    """Keep the reduction (and beta or delta) on the node, where torch's _saved_* show them."""
    ctx.reduction = reduction
    ctx.reduction_enum = REDUCTION_ENUM[reduction]
    for name, value in settings.items():
        setattr(ctx, name, value)


class MseLossBackward(Op):
    """2 (x - y) grad_output (/ numel for 'mean'): torch's ``mse_loss_backward``.

    Its derivatives: the same kernel on grad for grad_output, 2 grad grad_output (/ numel) for
    the input and its negative for the target."""

    node_name = "MseLossBackwardBackward0"
    saved_names = ("grad_output", "self", "target")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, grad_output, self, target, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(grad_output, self, target)
        return _kernel_result(2 * (self - target) * grad_output, self, reduction)

    @staticmethod
    def backward(ctx, grad):
        grad_output, self, target = ctx.saved_tensors
        need_grad_output, need_self, need_target = ctx.needs_input_grad[:3]
        grad_grad_output = grad_self = grad_target = None
        if need_grad_output:
            grad_grad_output = MseLossBackward.apply(grad, self, target, ctx.reduction)
        if need_self or need_target:
            second = _mean_scaled(grad * grad_output * 2, self, ctx.reduction)
            grad_self = second if need_self else None
            grad_target = -second if need_target else None
        return grad_grad_output, grad_self, grad_target, None


class SmoothL1LossBackward(Op):
    """clamp((x - y) / beta, -1, 1) grad_output (/ numel): torch's ``smooth_l1_loss_backward``.

    Its derivatives: the same kernel on grad for grad_output, grad grad_output / beta where
    |x - y| < beta (/ numel) for the input and its negative for the target."""

    node_name = "SmoothL1LossBackwardBackward0"
    saved_names = ("grad_output", "self", "target")
    saved_values = {"reduction": "reduction_enum", "beta": "beta"}

    @staticmethod
    def forward(ctx, grad_output, self, target, reduction, beta):
        _start(ctx, reduction, beta=beta)
        ctx.save_for_backward(grad_output, self, target)
        slope = np.clip((self - target) / self.dtype.type(beta), -1, 1)
        return _kernel_result(slope * grad_output, self, reduction)

    @staticmethod
    def backward(ctx, grad):
        grad_output, self, target = ctx.saved_tensors
        beta, reduction = ctx.beta, ctx.reduction
        need_grad_output, need_self, need_target = ctx.needs_input_grad[:3]
        grad_grad_output = grad_self = grad_target = None
        if need_grad_output:
            grad_grad_output = SmoothL1LossBackward.apply(grad, self, target, reduction, beta)
        if need_self or need_target:
            inside = np.abs(self._data - target._data) < beta
            second = _mean_scaled((grad * grad_output / beta).where(inside, 0.0), self,
                                  reduction)
            grad_self = second if need_self else None
            grad_target = -second if need_target else None
        return grad_grad_output, grad_self, grad_target, None, None


class HuberLossBackward(Op):
    """clamp(x - y, -delta, delta) grad_output (/ numel): torch's ``huber_loss_backward``.

    Its derivatives: the same kernel on grad for grad_output, grad grad_output where
    |x - y| <= delta (/ numel) for the input and its negative for the target."""

    node_name = "HuberLossBackwardBackward0"
    saved_names = ("grad_output", "self", "target")
    saved_values = {"reduction": "reduction_enum", "delta": "delta"}

    @staticmethod
    def forward(ctx, grad_output, self, target, reduction, delta):
        _start(ctx, reduction, delta=delta)
        ctx.save_for_backward(grad_output, self, target)
        slope = np.clip(self - target, -self.dtype.type(delta), self.dtype.type(delta))
        return _kernel_result(slope * grad_output, self, reduction)

    @staticmethod
    def backward(ctx, grad):
        grad_output, self, target = ctx.saved_tensors
        delta, reduction = ctx.delta, ctx.reduction
        need_grad_output, need_self, need_target = ctx.needs_input_grad[:3]
        grad_grad_output = grad_self = grad_target = None
        if need_grad_output:
            grad_grad_output = HuberLossBackward.apply(grad, self, target, reduction, delta)
        if need_self or need_target:
            inside = np.abs(self._data - target._data) <= delta
            second = _mean_scaled((grad * grad_output).where(inside, 0.0), self, reduction)
            grad_self = second if need_self else None
            grad_target = -second if need_target else None
        return grad_grad_output, grad_self, grad_target, None, None


class BinaryCrossEntropyBackward(Op):
    """w grad_output (x - y) / max(x (1 - x), eps) (/ numel): torch's
    ``binary_cross_entropy_backward``. The weight is saved but has no edge (torch's loss is not
    differentiable with respect to it).

    Its derivatives, with torch's eps inside the denominators (d = (x + eps)(1 - x + eps)):
    w grad (x - y) / d for grad_output (summed for 'mean'/'sum' by the engine),
    w grad grad_output (x^2 - 2 x y + y) / d^2 for the input and
    -w grad grad_output / max(x (1 - x), eps) for the target, each / numel for 'mean'."""

    node_name = "BinaryCrossEntropyBackwardBackward0"
    saved_names = ("grad_output", "self", "target", "weight")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, grad_output, self, target, weight, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(grad_output, self, target, weight)
        kind = self.dtype.type
        with quiet_errors():
            floor = np.maximum((kind(1) - self) * self, kind(_EPSILON))
            values = grad_output * (self - target) / floor
        if weight is not None:
            values = values * weight
        if reduction == "mean":
            values = values / kind(self.size)
        # torch's kernel writes into empty_like(self): laid out as the input, not row-major
        return _layout.preserve(np.asarray(values, self.dtype), self)

    @staticmethod
    def backward(ctx, grad):
        grad_output, x, target, weight = ctx.saved_tensors
        need_grad_output, need_self, need_target = ctx.needs_input_grad[:3]
        scale = grad if weight is None else grad * weight
        denominator = (x + _EPSILON) * (1 - x + _EPSILON)
        grad_grad_output = grad_self = grad_target = None
        if need_grad_output:
            grad_grad_output = _mean_scaled(scale * (x - target) / denominator, x, ctx.reduction)
        if need_self:
            numerator = x * x - 2 * x * target + target
            grad_self = _mean_scaled(scale * grad_output * numerator
                                     / (denominator * denominator), x, ctx.reduction)
        if need_target:
            floor = ((1 - x) * x).clamp_min(_EPSILON)  # torch floors this one, not shifts it
            grad_target = _mean_scaled(-scale * grad_output / floor, x, ctx.reduction)
        return grad_grad_output, grad_self, grad_target, None, None
