"""The margin losses torch computes in one kernel each, recorded as torch records them:
``SoftMarginLossBackward0``, ``MultiMarginLossBackward0`` and ``MultilabelMarginLossBackward0``,
with torch's saved attributes (``_saved_reduction`` as torch's enum int, ``_saved_margin``,
``_saved_p``, ``_saved_weight``, ``_saved_is_target``, ...).

Their second derivatives follow torch too: soft margin's gradient is a node of its own
(``SoftMarginLossBackwardBackward0``) that can be differentiated again, while torch has no
derivative for the two multi-class kernels' gradients, so under ``create_graph`` theirs is a
``NotImplemented`` node whose backward raises torch's error.
"""
from __future__ import annotations

import numpy as np

from ...autograd import grad_mode
from ...ops._base import Op
from ...ops._util import quiet_errors
from ...ops.activation_extra import NotImplementedDerivative
from ...tensor import Tensor
from ._loss_backward import _kernel_result, _mean_scaled, _start


def _reduced(loss: np.ndarray, reduction: str) -> np.ndarray:
    if reduction == "mean":
        return np.asarray(loss.mean(), loss.dtype)
    if reduction == "sum":
        return np.asarray(loss.sum(), loss.dtype)
    return loss


def _no_second_derivative(values: np.ndarray, grad: Tensor, self: Tensor, name: str) -> Tensor:
    """The gradient as a tensor; under ``create_graph`` one whose own backward raises, as
    torch has no derivative for ``name``."""
    if grad_mode.is_grad_enabled():
        return NotImplementedDerivative.apply(values, grad, self, name)
    return Tensor._make(values)


class SoftMarginLoss(Op):
    """log(1 + exp(-y x));  d/dx = -y sigmoid(-y x)"""

    node_name = "SoftMarginLossBackward0"
    saved_names = ("self", "target")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(self, target)
        with quiet_errors():
            loss = np.log1p(np.exp(-target * self))
        # torch's kernel writes into the input's dtype whatever the target's
        return _reduced(np.asarray(loss, self.dtype), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target = ctx.saved_tensors
        # the target takes no edge, as in torch
        return SoftMarginLossBackward.apply(grad, self, target._data, ctx.reduction), None, None


class SoftMarginLossBackward(Op):
    """-y grad_output exp(-y x) / (1 + exp(-y x)) (/ numel): torch's
    ``soft_margin_loss_backward``. Its derivatives: the same kernel on grad for grad_output and
    grad grad_output y^2 exp(-y x) / (1 + exp(-y x))^2 (/ numel) for the input; the target has
    no edge (torch's loss is not differentiable with respect to it)."""

    node_name = "SoftMarginLossBackwardBackward0"
    saved_names = ("grad_output", "self", "target")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, grad_output, self, target, reduction):
        _start(ctx, reduction)
        ctx.save_for_backward(grad_output, self, target)
        with quiet_errors():
            z = np.exp(-target * self)
            values = -target * z / (1 + z) * grad_output
        return _kernel_result(values, self, reduction)

    @staticmethod
    def backward(ctx, grad):
        grad_output, self, target = ctx.saved_tensors
        need_grad_output, need_self = ctx.needs_input_grad[:2]
        grad_grad_output = grad_self = None
        if need_grad_output:
            grad_grad_output = SoftMarginLossBackward.apply(grad, self, target._data,
                                                            ctx.reduction)
        if need_self:
            z = (-target * self).exp()
            one_plus = z + 1
            second = grad * grad_output * target * target * z / (one_plus * one_plus)
            grad_self = _mean_scaled(second, self, ctx.reduction).to(self.dtype)
        return grad_grad_output, grad_self, None, None


def _margins(rows: np.ndarray, labels: np.ndarray, margin: float):
    """(margin - x[y] + x[j] for every class j, the mask of j != y) for (N, C) rows."""
    samples, classes = rows.shape
    own = np.arange(classes) == labels[:, None]
    picked = rows[np.arange(samples), labels][:, None]
    return rows.dtype.type(margin) - picked + rows, ~own


class MultiMarginLoss(Op):
    """sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]) / C per sample"""

    node_name = "MultiMarginLossBackward0"
    saved_names = ("self", "target", "weight")
    saved_values = {"margin": "margin", "p": "p", "reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, p, margin, weight, reduction):
        _start(ctx, reduction, p=p, margin=margin)
        ctx.save_for_backward(self, target, weight)
        rows = self.reshape(-1, self.shape[-1]) if self.ndim else self.reshape(1, 1)
        labels = target.reshape(-1)
        z, other = _margins(rows, labels, margin)
        hinge = np.maximum(z, 0)
        if p == 2:
            hinge = hinge * hinge
        if weight is not None:
            hinge = hinge * weight[labels][:, None]
        loss = np.where(other, hinge, 0).sum(1) / rows.dtype.type(rows.shape[1])
        if self.ndim < 2 and reduction == "none":
            loss = loss.reshape(target.shape)
        return _reduced(np.asarray(loss, self.dtype), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target, weight = ctx.saved_tensors
        x = self._data
        rows = x.reshape(-1, x.shape[-1]) if x.ndim else x.reshape(1, 1)
        labels = target._data.reshape(-1)
        z, other = _margins(rows, labels, ctx.margin)
        kind = rows.dtype.type
        slope = np.where(other & (z > 0), kind(1) if ctx.p == 1 else 2 * z, kind(0))
        if weight is not None:
            slope = slope * weight._data[labels][:, None]
        scale = grad._data.reshape(-1, 1) if ctx.reduction == "none" else grad._data
        slope = slope * scale / kind(rows.shape[1])
        if ctx.reduction == "mean":
            slope = slope / kind(rows.shape[0])
        slope[np.arange(rows.shape[0]), labels] = -slope.sum(1)
        values = np.ascontiguousarray(slope.reshape(x.shape), dtype=x.dtype)
        grad_self = _no_second_derivative(values, grad, self, "multi_margin_loss_backward")
        return grad_self, None, None, None, None, None


def _multilabel_layout(rows: np.ndarray, labels: np.ndarray):
    """(the valid-target mask (N, K), the picked class per target (N, K), the one-hot (N, K, C)
    of each valid target, is_target (N, C)); a sample's targets end at its first -1."""
    classes = rows.shape[1]
    valid = np.cumprod(labels != -1, axis=1).astype(bool)
    if bool(np.any(valid & ((labels < 0) | (labels >= classes)))):
        raise RuntimeError("argument #2 'target' is out of range")
    picked = np.where(valid, labels, 0)
    one_hot = (picked[:, :, None] == np.arange(classes)) & valid[:, :, None]
    return valid, picked, one_hot, one_hot.any(1)


def _multilabel_hinge(rows, labels):
    """(1 - x[target k] + x[j] for each valid target k and non-target j (N, K, C), where it
    counts, the one-hot of the targets)."""
    valid, picked, one_hot, is_target = _multilabel_layout(rows, labels)
    own = np.take_along_axis(rows, picked, 1)
    z = rows.dtype.type(1) - own[:, :, None] + rows[:, None, :]
    counts = valid[:, :, None] & ~is_target[:, None, :]
    return z, counts, one_hot, is_target


class MultilabelMarginLoss(Op):
    """sum over each target k and non-target j of max(0, 1 - (x[k] - x[j])) / C per sample"""

    node_name = "MultilabelMarginLossBackward0"
    saved_names = ("self", "target", "is_target")
    saved_values = {"reduction": "reduction_enum"}

    @staticmethod
    def forward(ctx, self, target, reduction):
        _start(ctx, reduction)
        rows = self.reshape(1, -1) if self.ndim < 2 else self
        z, counts, _, is_target = _multilabel_hinge(rows, target.reshape(rows.shape))
        ctx.save_for_backward(self, target, is_target.astype(self.dtype).reshape(self.shape))
        loss = np.where(counts, np.maximum(z, 0), 0).sum((1, 2)) / rows.dtype.type(rows.shape[1])
        if self.ndim < 2:
            loss = loss.reshape(())
        return _reduced(np.asarray(loss, self.dtype), reduction)

    @staticmethod
    def backward(ctx, grad):
        self, target, _ = ctx.saved_tensors
        x = self._data
        rows = x.reshape(1, -1) if x.ndim < 2 else x
        z, counts, one_hot, _ = _multilabel_hinge(rows, target._data.reshape(rows.shape))
        kind = rows.dtype.type
        active = (counts & (z > 0)).astype(rows.dtype)  # (N, K, C)
        scale = grad._data.reshape(-1, 1) if ctx.reduction == "none" else grad._data
        scale = scale / kind(rows.shape[1])
        if ctx.reduction == "mean":
            scale = scale / kind(rows.shape[0])
        values = active.sum(1) - np.einsum("nk,nkc->nc", active.sum(2),
                                           one_hot.astype(rows.dtype))
        values = np.ascontiguousarray((values * scale).reshape(x.shape), dtype=x.dtype)
        grad_self = _no_second_derivative(values, grad, self,
                                          "multilabel_margin_loss_backward")
        return grad_self, None, None
