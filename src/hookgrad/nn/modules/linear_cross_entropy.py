"""LinearCrossEntropyLoss: a classifier head and its cross-entropy loss in one module."""
from __future__ import annotations

import math
from typing import Optional

from ...tensor import Tensor
from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss


class LinearCrossEntropyLoss(_WeightedLoss):
    """``F.linear_cross_entropy`` with its own ``linear`` layer of ``in_features`` inputs and
    ``num_classes * prod(out_features)`` outputs (kept two-dimensional, as torch keeps it, and
    reshaped to ``(num_classes, *out_features, in_features)`` at each call)."""

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (),
                 bias: bool = False, device=None, dtype=None, reduction: str = "mean",
                 weight: Optional[Tensor] = None, ignore_index: Optional[int] = None,
                 label_smoothing: float = 0.0, options=None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features) * num_classes, bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        linear_weight = self.linear.weight.reshape(shape + (self.linear.in_features,))
        linear_bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
