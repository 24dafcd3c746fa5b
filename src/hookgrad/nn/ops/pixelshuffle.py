"""pixel_shuffle and pixel_unshuffle: (*, C r^2, H, W) <-> (*, C, H r, W r).

Each is a reshape, a transpose and a copy; they are each other's inverse (and adjoint), so the
backward of one is the other and nothing is saved.
"""
from __future__ import annotations

import numpy as np

from ...ops._base import Op
from ...tensor import Tensor


def _shuffle(x: np.ndarray, factor: int) -> np.ndarray:
    """out[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]"""
    lead = x.shape[:-3]
    channels, height, width = x.shape[-3:]
    k = len(lead)
    split = x.reshape(lead + (channels // factor ** 2, factor, factor, height, width))
    order = tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2)
    return np.ascontiguousarray(split.transpose(order)).reshape(
        lead + (channels // factor ** 2, height * factor, width * factor))


def _unshuffle(x: np.ndarray, factor: int) -> np.ndarray:
    """out[..., c r^2 + i r + j, h, w] = x[..., c, h r + i, w r + j]"""
    lead = x.shape[:-3]
    channels, height, width = x.shape[-3:]
    k = len(lead)
    split = x.reshape(lead + (channels, height // factor, factor, width // factor, factor))
    order = tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3)
    return np.ascontiguousarray(split.transpose(order)).reshape(
        lead + (channels * factor ** 2, height // factor, width // factor))


class PixelShuffle(Op):
    """channel blocks of r^2 spread into r x r pixel blocks"""

    node_name = "PixelShuffleBackward0"

    @staticmethod
    def forward(ctx, input, factor):
        ctx.factor = factor
        return _shuffle(input, factor)

    @staticmethod
    def backward(ctx, grad):
        return PixelUnshuffle.apply(grad, ctx.factor), None


class PixelUnshuffle(Op):
    """r x r pixel blocks gathered into channel blocks of r^2"""

    node_name = "PixelUnshuffleBackward0"

    @staticmethod
    def forward(ctx, input, factor):
        ctx.factor = factor
        return _unshuffle(input, factor)

    @staticmethod
    def backward(ctx, grad):
        return PixelShuffle.apply(grad, ctx.factor), None


def _factor(value, function: str, name: str) -> int:
    if isinstance(value, (bool, float)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{function}(): argument '{name}' (position 2) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C r^2, H, W) into (*, C, H r, W r), as torch.nn.functional.pixel_shuffle."""
    factor = _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {factor}")
    channels = input.shape[-3]
    if channels % (factor * factor):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={channels} is "
                           f"not divisible by {factor * factor}")
    return PixelShuffle.apply(input, factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange (*, C, H r, W r) into (*, C r^2, H, W), the inverse of ``pixel_shuffle``."""
    factor = _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got "
                           f"{factor}")
    height, width = input.shape[-2:]
    if height % factor:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={height} is not divisible by {factor}")
    if width % factor:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={width} is not divisible by {factor}")
    return PixelUnshuffle.apply(input, factor)
