"""The gradients of relu, threshold, hardtanh, the shrinks and leaky_relu as one node each that
masks or scales ``grad`` by a pattern read from a saved tensor (torch's ``threshold_backward``
and its kin), with the node names torch gives them."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._base import Op


class PatternBackward(Op):
    """``grad`` masked or scaled by a pattern read from one saved tensor: the gradient of relu,
    threshold, hardtanh, the shrinks and leaky_relu, as torch's ``threshold_backward(grad,
    self, threshold)`` and its kin (subclasses carry torch's node names).

    Recorded as one node that saves the tensor, so under ``create_graph`` the gradient requires
    grad when either the incoming gradient or the saved tensor does, its own gradient is the
    same pattern applied again, and its derivative with respect to the saved tensor is a fresh
    zero that requires no grad (torch's ``zeros_like(grad)``): it reaches, say, the base of a
    view that relu_ rewrote without carrying the incoming gradient's history there.
    ``pattern(grad, saved)`` works on arrays and returns a new one."""

    saved_names = ("self",)

    @staticmethod
    def forward(ctx, grad, saved, pattern):
        ctx.pattern = pattern
        ctx.save_for_backward(saved)
        return pattern(grad, saved)

    @staticmethod
    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        again = ctx._forward_cls.apply(grad, saved, ctx.pattern)
        return again, Tensor._make(np.zeros(saved.shape, saved._data.dtype)), None


def masked_where(condition):
    """A ``PatternBackward`` pattern: ``grad`` with zeros where ``condition(saved)`` holds."""
    def pattern(grad: np.ndarray, saved: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):  # ml_dtypes' bfloat16 warns comparing NaN
            mask = condition(saved)
        # laid out as torch's elementwise ``*_backward(grad, self)`` lays its result out
        return _layout.pointwise(np.where(mask, np.zeros((), grad.dtype), grad), grad, saved)
    return pattern


class ThresholdBackwardBackward(PatternBackward):
    node_name = "ThresholdBackwardBackward0"


class HardtanhBackwardBackward(PatternBackward):
    node_name = "HardtanhBackwardBackward0"


class HardshrinkBackwardBackward(PatternBackward):
    node_name = "HardshrinkBackwardBackward0"


class SoftshrinkBackwardBackward(PatternBackward):
    node_name = "SoftshrinkBackwardBackward0"


class LeakyReluBackwardBackward(PatternBackward):
    node_name = "LeakyReluBackwardBackward0"
