"""Sliding blocks: ``unfold`` (torch's im2col) and ``fold`` (col2im, its adjoint).

unfold lays every kh x kw window of a padded (N, C, H, W) input out as a column:
out[n, c * kh * kw + i * kw + j, l] = x_pad[n, c, s_h * (l // W_out) + d_h * i, ...]; the
windows are a strided view (``conv.windows``) copied once. fold sums the columns back into
their windows (``pooling._scatter_windows``: one strided add per kernel offset). Each is linear
and the other's adjoint, so backward of one is the other and nothing is saved.
"""
from __future__ import annotations

import numpy as np

from ...ops._base import Op
from ...tensor import Tensor
from .conv import _pad, windows
from .pooling import _scatter_windows


def _blocks(size: int, kernel: int, dilation: int, padding: int, stride: int) -> int:
    """Sliding windows along one dim (floor division rounding toward -inf, as torch's)."""
    return (size + 2 * padding - (dilation * (kernel - 1) + 1)) // stride + 1


def _im2col(x: np.ndarray, kernel, dilation, padding, stride) -> np.ndarray:
    n, c = x.shape[:2]
    out = tuple(_blocks(s, k, d, p, st) for s, k, d, p, st in
                zip(x.shape[2:], kernel, dilation, padding, stride))
    view = windows(_pad(x, padding), out, kernel, stride, dilation)  # (N, C, oh, ow, kh, kw)
    columns = np.ascontiguousarray(view.transpose(0, 1, 4, 5, 2, 3))
    return columns.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])


def _col2im(columns: np.ndarray, size, kernel, dilation, padding, stride) -> np.ndarray:
    n = columns.shape[0]
    channels = columns.shape[1] // (kernel[0] * kernel[1])
    out = tuple(_blocks(s, k, d, p, st) for s, k, d, p, st in
                zip(size, kernel, dilation, padding, stride))
    values = columns.reshape((n, channels) + tuple(kernel) + out).transpose(0, 1, 4, 5, 2, 3)
    result = _scatter_windows(values, tuple(size), tuple(kernel), tuple(stride),
                              tuple(padding), tuple(dilation))
    return np.ascontiguousarray(result)


class Im2Col(Op):
    """columns of every sliding window (linear in x)"""

    node_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, input, kernel, dilation, padding, stride):
        ctx.geometry = (tuple(input.shape[2:]), kernel, dilation, padding, stride)
        return _im2col(input, kernel, dilation, padding, stride)

    @staticmethod
    def backward(ctx, grad):
        size, kernel, dilation, padding, stride = ctx.geometry
        return Col2Im.apply(grad, size, kernel, dilation, padding, stride), None


class Col2Im(Op):
    """windows summed back from their columns: the adjoint of ``Im2Col``"""

    node_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, input, size, kernel, dilation, padding, stride):
        ctx.geometry = (kernel, dilation, padding, stride)
        return _col2im(input, size, kernel, dilation, padding, stride)

    @staticmethod
    def backward(ctx, grad):
        return Im2Col.apply(grad, *ctx.geometry), None


_POSITIONS = {"im2col": ("kernel_size", "dilation", "padding", "stride"),
              "col2im": ("output_size", "kernel_size", "dilation", "padding", "stride")}


def _pair(value, name: str, function: str) -> tuple:
    where = f"{function}(): argument '{name}' (position {_POSITIONS[function].index(name) + 2})"
    if isinstance(value, bool) or isinstance(value, float):
        raise TypeError(f"{where} must be tuple of ints, but found element of type "
                        f"{type(value).__name__} at pos 0")
    if isinstance(value, (int, np.integer)):
        return (int(value), int(value))
    value = tuple(value)
    if len(value) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    for position, item in enumerate(value):
        if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise TypeError(f"{where} must be tuple of ints, but found element of type "
                            f"{type(item).__name__} at pos {position}")
    return tuple(int(v) for v in value)


def _check_common(kernel, dilation, padding, stride, stride_first: bool) -> None:
    checks = [
        (kernel, lambda v: v > 0, "kernel size should be greater than zero, but got "
         "kernel_height: {} kernel_width: {}"),
        (dilation, lambda v: v > 0, "dilation should be greater than zero, but got "
         "dilation_height: {} dilation_width: {}"),
        (padding, lambda v: v >= 0, "padding should be non-negative, but got pad_height: {} "
         "pad_width: {}"),
        (stride, lambda v: v > 0, "stride should be greater than zero, but got "
         "stride_height: {} stride_width: {}")]
    if stride_first:  # col2im checks stride second
        checks.insert(1, checks.pop())
    for values, good, message in checks:
        if not all(good(v) for v in values):
            raise RuntimeError(message.format(*values))


def _geometry_text(kernel, dilation, padding, stride) -> str:
    return (f"kernel_size=({kernel[0]}, {kernel[1]}), dilation=({dilation[0]}, {dilation[1]}), "
            f"padding=({padding[0]}, {padding[1]})")


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extract sliding local blocks of a (N, C, H, W) or (C, H, W) tensor as columns of shape
    (N, C * kh * kw, L), as torch.nn.functional.unfold."""
    kernel = _pair(kernel_size, "kernel_size", "im2col")
    dilation = _pair(dilation, "dilation", "im2col")
    padding = _pair(padding, "padding", "im2col")
    stride = _pair(stride, "stride", "im2col")
    _check_common(kernel, dilation, padding, stride, False)
    shape = tuple(input.shape)
    if input.ndim not in (3, 4) or 0 in shape[input.ndim - 3:]:
        if input.ndim < 3:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got 2)")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(shape)}")
    height, width = shape[-2:]
    blocks = (_blocks(height, kernel[0], dilation[0], padding[0], stride[0]),
              _blocks(width, kernel[1], dilation[1], padding[1], stride[1]))
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({height}, {width}), "
                           f"{_geometry_text(kernel, dilation, padding, stride)}, calculated "
                           f"shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}),"
                           " but its components must be at least one.")
    batched = input.ndim == 4
    result = Im2Col.apply(input if batched else input.unsqueeze(0), kernel, dilation, padding,
                          stride)
    return result if batched else result.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sum columns (N, C * kh * kw, L) back into a (N, C, *output_size) tensor (overlapping
    windows add up), as torch.nn.functional.fold."""
    size = _pair(output_size, "output_size", "col2im")
    kernel = _pair(kernel_size, "kernel_size", "col2im")
    dilation = _pair(dilation, "dilation", "col2im")
    padding = _pair(padding, "padding", "col2im")
    stride = _pair(stride, "stride", "col2im")
    _check_common(kernel, dilation, padding, stride, True)
    shape = tuple(input.shape)
    if not ((input.ndim == 2 and shape[0] and shape[1])
            or (input.ndim == 3 and shape[1] and shape[2])):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           "batch size and non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    planes, length = shape[-2:]
    if planes % (kernel[0] * kernel[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and "
                           f"kernel_size=({kernel[0]}, {kernel[1]}).")
    blocks = (_blocks(size[0], kernel[0], dilation[0], padding[0], stride[0]),
              _blocks(size[1], kernel[1], dilation[1], padding[1], stride[1]))
    text = (f"Given output_size=({size[0]}, {size[1]}), "
            f"{_geometry_text(kernel, dilation, padding, stride)}, "
            f"stride=({stride[0]}, {stride[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(text + "expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    if min(blocks) < 1:
        raise RuntimeError(text + "calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), which is too small (non-positive)")
    batched = input.ndim == 3
    result = Col2Im.apply(input if batched else input.unsqueeze(0), size, kernel, dilation,
                          padding, stride)
    return result if batched else result.squeeze(0)
