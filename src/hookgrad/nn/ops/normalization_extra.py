"""rms_norm and local_response_norm, composed of existing ops as torch composes them, and
torch's legacy cross-map LRN (nn.CrossMapLRN2d) with its own forward and backward."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ... import _dtype
from ...autograd import grad_mode
from ...ops._base import HALF_TYPES, Op
from ...ops.arithmetic_scalar import add_scalar
from ...ops.padding import pad
from ...tensor import Tensor


def rms_norm(input: Tensor, normalized_shape, weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    """``x / sqrt(mean(x^2) + eps)`` over the trailing ``normalized_shape`` dims, times
    ``weight``; ``eps`` defaults to the machine epsilon of the compute dtype (half precision is
    computed in float32)."""
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        "ints, not int")
    normalized_shape = tuple(normalized_shape)
    n = len(normalized_shape)
    if input.ndim < n:
        raise ValueError(f"Input tensor must have at least {n} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - n:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*{', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(normalized_shape)}")
    half = input._data.dtype in HALF_TYPES
    x = input.float() if half else input
    if eps is None:
        eps = float(np.finfo(x._data.dtype).eps)
    dims = tuple(range(input.ndim - n, input.ndim))
    result = x * add_scalar(x.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    if half:
        result = result.to(input.dtype)
    return result if weight is None else result * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Each element divided by ``(k + alpha * mean of x^2 over size neighbouring channels) **
    beta`` (zero-padded at the edges, so the mean always counts ``size`` channels)."""
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    square = (input * input).unsqueeze(1)
    rest = (0, 0) * (input.ndim - 2)
    square = pad(square, rest + (size // 2, (size - 1) // 2))
    channels = input.shape[1]
    total = square.narrow(2, 0, channels)
    for offset in range(1, size):  # one add per neighbour: a loop over the window, not elements
        total = total + square.narrow(2, offset, channels)
    div = (total.squeeze(1) / size * alpha + k).pow(beta)
    return input / div


def _cross_map_windows(channels: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The channel windows of torch's legacy cross-map LRN as 0/1 matrices [c, j].

    Forward: channel c sums the squares of channels c - h + 1 .. c + h - 1, h = (size - 1) // 2
    + 1, and always channel 0 as well (the legacy running sum never drops it). Backward: the
    gradient of channel c gathers channels c - h .. c + size - h - 1. Both are what torch
    computes, which is not the exact derivative of its own forward."""
    half = (size - 1) // 2 + 1
    c = np.arange(channels)[:, None]
    j = np.arange(channels)[None, :]
    forward = (np.abs(j - c) <= half - 1) | (j == 0)
    backward = (j >= c - half) & (j <= c + size - half - 1)
    return forward, backward


def _channel_sum(window: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.einsum("cj,njhw->nchw", window.astype(values.dtype), values)


class CrossMapLRN2dFunction(Op):
    """y = x * scale^-beta, scale = k + alpha/size * (window sum of x^2);
    dx = g * scale^-beta - 2 alpha beta / size * x * (backward window sum of g y / scale)"""

    node_name = "CrossMapLRN2dBackward"
    saved_names = ("input", "output", "scale")

    @staticmethod
    def forward(ctx, input, size, alpha, beta, k):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D "
                             f"instead.")
        if input.dtype.kind not in "fV":  # the legacy kernel writes floats into a copy of x
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_dtype.scalar_type_name(input.dtype)}")
        if input.shape[1] == 0:
            raise IndexError(f"select(): index 0 out of range for tensor of size "
                             f"{list(input.shape)} at dimension 1")
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        input = np.ascontiguousarray(input)  # torch's result is a fresh row-major tensor
        forward_window, _ = _cross_map_windows(input.shape[1], size)
        scale = k + alpha / size * _channel_sum(forward_window, input * input)
        output = np.ascontiguousarray(input * scale ** -beta)
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    def backward(ctx, grad):
        input, output, scale = ctx.saved_tensors
        if grad_mode.is_grad_enabled():  # torch's backward writes through out= kernels
            raise RuntimeError("mul(): functions with out=... arguments don't support automatic "
                               "differentiation, but one of the arguments requires grad.")
        channels = input.shape[1]
        if ctx.size == 1:  # torch's legacy backward cannot narrow its padded buffer
            raise RuntimeError(f"start (1) + length ({channels}) exceeds dimension size "
                               f"({channels}).")
        x, y, s, g = input._data, output._data, scale._data, grad._data
        _, backward_window = _cross_map_windows(channels, ctx.size)
        gathered = _channel_sum(backward_window, g * y / s)
        result = g * s ** -ctx.beta - 2 * ctx.alpha * ctx.beta / ctx.size * x * gathered
        return Tensor._make(result.astype(x.dtype, copy=False)), None, None, None, None


def cross_map_lrn2d(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                    k: float = 1.0) -> Tensor:
    """torch's legacy cross-channel LRN of a 4-D input (``nn.CrossMapLRN2d``'s function)."""
    return CrossMapLRN2dFunction.apply(input, int(size), float(alpha), float(beta), float(k))
