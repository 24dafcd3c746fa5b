"""prelu (torch's PreluKernelBackward0) and softmin."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ... import _dtype
from ..._warnings import warn
from ...ops import pointwise as P
from ...ops import activation as _activation
from ...ops import reduce as R
from ...ops import _layout
from ...ops._base import Op
from ...ops.creation import zeros, zeros_like
from ...tensor import Tensor


class PreluKernel(Op):
    """x where x > 0, else weight * x;  its gradients are one node, :class:`PreluKernelBackward`"""

    node_name = "PreluKernelBackward0"
    saved_names = ("self", "weight")

    @staticmethod
    def forward(ctx, self, weight):
        ctx.save_for_backward(self, weight)
        return np.where(self > 0, self, weight * self).astype(self.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        self, weight = ctx.saved_tensors
        grad_self, grad_weight = PreluKernelBackward.apply(grad, self, weight)
        need_self, need_weight = ctx.needs_input_grad[:2]
        # grad_weight has the input's shape: the engine sums it to the weight's
        return (grad_self if need_self else None), (grad_weight if need_weight else None)


class PreluKernelBackward(Op):
    """torch's ``_prelu_kernel_backward``: (grad_output where x > 0 else weight grad_output,
    0 where x > 0 else x grad_output), both of the input's shape, as one node
    (``PreluKernelBackwardBackward0``) that saves grad_output, x and the weight.

    Its derivatives are torch's, which take the first branch where x >= 0 (at x == 0 they
    follow the positive branch while the gradients above took the slope one, as torch's do),
    and give zeros, not None, for x or the weight when the gradient that would carry one is
    undefined."""

    node_name = "PreluKernelBackwardBackward0"
    saved_names = ("grad_output", "self", "weight")

    @staticmethod
    def forward(ctx, grad_output, self, weight):
        ctx.set_materialize_grads(False)  # which incoming gradients are defined picks the formula
        ctx.save_for_backward(grad_output, self, weight)
        dtype = self.dtype
        positive = self > 0
        grad_self = np.where(positive, grad_output, weight * grad_output).astype(dtype, copy=False)
        grad_weight = np.where(positive, dtype.type(0), self * grad_output).astype(dtype,
                                                                                  copy=False)
        return (_layout.pointwise(grad_self, self, weight, grad_output),
                _layout.pointwise(grad_weight, self, weight, grad_output))

    @staticmethod
    def backward(ctx, grad_grad_self, grad_grad_weight):
        grad_output, self, weight = ctx.saved_tensors
        need_grad_output, need_self, need_weight = ctx.needs_input_grad[:3]
        non_negative = self >= 0
        zero = zeros((), dtype=self.dtype)
        for_grad_output = for_self = for_weight = None
        if need_grad_output:
            if grad_grad_self is None:
                for_grad_output = P.where(non_negative, zero, grad_grad_weight * self)
            elif grad_grad_weight is None:
                for_grad_output = P.where(non_negative, grad_grad_self, grad_grad_self * weight)
            else:
                for_grad_output = P.where(non_negative, grad_grad_self,
                                          grad_grad_self * weight + grad_grad_weight * self)
        if need_self:
            for_self = (zeros_like(self) if grad_grad_weight is None
                        else P.where(non_negative, zero, grad_output * grad_grad_weight))
        if need_weight:
            for_weight = (zeros_like(self) if grad_grad_self is None
                          else P.where(non_negative, zero, grad_output * grad_grad_self))
        return for_grad_output, for_self, for_weight


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
    # as torch: the weight viewed as (1, numel, 1, ...) for a batch, (1,) for a vector and ()
    # for a scalar input, a view recorded only where the shape changes
    shape = (1, weight.numel()) + (1,) * (input.ndim - 2) if input.ndim > 1 else \
        (1,) * input.ndim
    if tuple(weight.shape) != shape:
        weight = weight.reshape(shape)
    return PreluKernel.apply(input, weight)


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``softmax(-input)`` along ``dim``: weights that favour the smallest entries."""
    if dim is None:
        warn("Implicit dimension choice for softmin has been deprecated. Change the "
             "call to include dim=X as an argument.")
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return R.softmax(-input, dim, dtype=dtype)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In place ``elu``."""
    return _activation.elu(input, alpha, True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In place ``leaky_relu``."""
    return _activation.leaky_relu(input, negative_slope, True)
