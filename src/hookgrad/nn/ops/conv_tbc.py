"""conv_tbc: a 1-D convolution over time-major input ``(time, batch, in_channels)`` with a
``(kernel_width, in_channels, out_channels)`` weight, zero-padded by ``pad`` steps at each end
(a negative ``pad`` crops), as torch's ``conv_tbc``:

    out[t] = bias + sum_k x_padded[t + k] @ weight[k]
"""
from __future__ import annotations

import numpy as np

from ...ops._base import Op
from ...ops.padding import pad as pad_op
from ...tensor import Tensor


def _padded(array: np.ndarray, pad: int) -> np.ndarray:
    if pad >= 0:
        return np.pad(array, ((pad, pad), (0, 0), (0, 0)))
    return array[-pad:array.shape[0] + pad]


class ConvTbc(Op):
    """d x = grad convolved back with the time-flipped weight; d weight[k] = sum_t
    x_padded[t + k]^T grad[t]; d bias = grad summed over time and batch"""

    node_name = "ConvTbcBackward0"
    saved_names = ("self", "weight", "bias")

    @staticmethod
    def forward(ctx, self, weight, bias, pad):
        ctx._saved_pad = pad
        ctx.save_for_backward(self, weight, bias)
        width = weight.shape[0]
        padded = _padded(self, pad)
        length = padded.shape[0] - width + 1
        if length < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {length}: "
                               f"[{length}, {self.shape[1]}, {weight.shape[2]}]")
        out = np.broadcast_to(bias, (length, self.shape[1], weight.shape[2])).copy()
        for k in range(width):  # a loop over the kernel taps, each a batched matmul
            out += padded[k:k + length] @ weight[k]
        return out

    @staticmethod
    def backward(ctx, grad):
        self, weight, bias = ctx.saved_tensors
        pad, width = ctx._saved_pad, weight.shape[0]
        time = self.shape[0]
        # the full correlation with the flipped kernel is the gradient of the padded input
        padded_grad = conv_tbc(grad, weight.flip(0).transpose(1, 2),
                               bias.new_zeros(self.shape[2]), width - 1)
        if pad >= 0:
            grad_input = padded_grad[pad:pad + time]
        else:
            grad_input = pad_op(padded_grad, (0, 0, 0, 0, -pad, -pad))
        padded = pad_op(self, (0, 0, 0, 0, pad, pad)) if pad >= 0 else self[-pad:time + pad]
        windows = padded.unfold(0, width, 1)  # (L, B, C_in, K): windows[t, b, c, k] = P[t + k]
        grad_weight = windows.permute(3, 2, 0, 1).reshape(width, self.shape[2], -1) @ \
            grad.reshape(-1, grad.shape[2])
        return grad_input, grad_weight, grad.sum((0, 1)), None


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of time-major ``(T, B, C_in)`` input with a ``(K, C_in, C_out)``
    weight and ``(C_out,)`` bias, ``pad`` zero steps at each end: ``(T + 2 pad - K + 1, B,
    C_out)``."""
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias tensor must be 1-dimensional.")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    return ConvTbc.apply(input, weight, bias, int(pad))


__all__ = ["conv_tbc"]
