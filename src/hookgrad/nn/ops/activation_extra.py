"""prelu (torch's PreluKernelBackward0) and softmin."""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from ... import _dtype
from ...ops import pointwise as P
from ...ops import activation as _activation
from ...ops import reduce as R
from ...ops._base import Op
from ...ops.creation import zeros_like
from ...tensor import Tensor


class PreluKernel(Op):
    """x where x > 0, else weight * x;  d x = grad or weight * grad, d weight = x * grad below 0"""

    node_name = "PreluKernelBackward0"
    saved_names = ("self", "weight")

    @staticmethod
    def forward(ctx, self, weight):
        ctx.save_for_backward(self, weight)
        return np.where(self > 0, self, weight * self).astype(self.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        self, weight = ctx.saved_tensors
        positive = self > 0
        grad_self = P.where(positive, grad, weight * grad) if ctx.needs_input_grad[0] else None
        grad_weight = (P.where(positive, zeros_like(grad), self * grad)
                       if ctx.needs_input_grad[1] else None)
        return grad_self, grad_weight


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)`` with one slope, or one per channel (dim 1)."""
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim > 1 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    if input._data.dtype != weight._data.dtype:
        names = [_dtype.scalar_type_name(t._data.dtype) for t in (input, weight)]
        raise RuntimeError(f"prelu: Type promoting not supported. Got {names[0]} and {names[1]}")
    if input.ndim > 1 and weight.numel() != 1:
        weight = weight.reshape((1, channels) + (1,) * (input.ndim - 2))
    elif input.ndim == 0:
        weight = weight.reshape(())  # a 0-dim input keeps its shape
    return PreluKernel.apply(input, weight)


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``softmax(-input)`` along ``dim``: weights that favour the smallest entries."""
    if dim is None:
        warnings.warn("Implicit dimension choice for softmin has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=_stacklevel)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return R.softmax(-input, dim, dtype=dtype)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In place ``elu``."""
    return _activation.elu(input, alpha, True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In place ``leaky_relu``."""
    return _activation.leaky_relu(input, negative_slope, True)
