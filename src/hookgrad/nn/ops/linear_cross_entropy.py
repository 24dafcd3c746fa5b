"""linear_cross_entropy: cross entropy of ``input @ linear_weight.T (+ linear_bias)`` against
target, as torch composes its reference path (``linear``, a reshape to the logits' shape,
``cross_entropy``), so values, gradients and the recorded graph are torch's."""
from __future__ import annotations

import math
from typing import Optional

from ...tensor import Tensor
from .linear import linear
from .loss import cross_entropy


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Optional[Tensor] = None, weight: Optional[Tensor] = None,
                         reduction: str = "mean", ignore_index: Optional[int] = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """``cross_entropy(linear(input, W, b).reshape(N, C, *out_features), target)``.

    ``linear_weight`` is ``(C, *out_features, in_features)`` (more than one output dim gives
    a K-dimensional loss) and ``input`` is ``(N, in_features)`` or ``(in_features,)``. A target
    shaped like the logits holds class probabilities (then ``ignore_index`` must be None).
    ``options`` selects torch's chunked path, which saves memory for the same values; hookgrad
    always takes the reference path, so it is accepted and has no effect."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        rows = math.prod(out_features) * num_classes
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


__all__ = ["linear_cross_entropy"]
