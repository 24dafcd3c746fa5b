"""rms_norm and local_response_norm, composed of existing ops as torch composes them."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...ops._base import HALF_TYPES
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
