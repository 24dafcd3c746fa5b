"""3-D pooling (max_pool3d, avg_pool3d, adaptive_avg_pool3d) and conv_transpose3d.

The pooling Functions of ``pooling.py`` work for any number of trailing spatial dims; this file
checks arguments the way torch's 3-D kernels do and gives the nodes torch's 3-D names.
"""
from __future__ import annotations

from ...tensor import Tensor
from . import pooling as _pool


class MaxPool3DWithIndices(_pool.MaxPoolWithIndices):
    node_name = "MaxPool3DWithIndicesBackward0"


class AvgPool3D(_pool.AvgPool):
    node_name = "AvgPool3DBackward0"


class AdaptiveAvgPool3D(_pool.AdaptiveAvgPool):
    node_name = "AdaptiveAvgPool3DBackward0"


def _triple(value, name: str, function: str) -> tuple:
    if isinstance(value, int):
        return (value,) * 3
    value = tuple(value)
    if len(value) == 1:
        return value * 3
    if len(value) != 3:
        what = "must either be a single int, or a tuple of three ints" if name != "stride" \
            else "must be omitted, a single int, or a tuple of three ints"
        raise RuntimeError(f"{function}: {name} {what}")
    return tuple(int(v) for v in value)


def _arguments(function, kernel_size, stride, padding, dilation=1):
    kernel = _triple(kernel_size, "kernel_size", function)
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        stride = kernel
    else:
        stride = _triple(stride, "stride", function)
    return (kernel, stride, _triple(padding, "padding", function),
            _triple(dilation, "dilation", function))


def _check(input: Tensor, kernel, stride, padding, dilation) -> None:
    if input.ndim not in (4, 5) or 0 in tuple(input.shape[-4:]):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for k, p, d in zip(kernel, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = True):
    """(values, flat per-volume indices) of the max over each 3-D window."""
    kernel, stride, padding, dilation = _arguments("max_pool3d", kernel_size, stride, padding,
                                                   dilation)
    _check(input, kernel, stride, padding, dilation)
    if any(p > k // 2 for k, p in zip(kernel, padding)):
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"kT: {kernel[0]} kW: {kernel[2]} kH: {kernel[1]} padT: {padding[0]} "
            f"padW: {padding[2]} padH: {padding[1]}")
    size = tuple(input.shape[-3:])
    out = _pool.pooled_size(size, kernel, stride, padding, dilation, ceil_mode)
    if min(out) <= 0:
        channels = input.shape[-4]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (channels,) + size))}). "
                           f"Calculated output size: ({'x'.join(map(str, (channels,) + out))}). "
                           "Output size is too small")
    return MaxPool3DWithIndices.apply(input, kernel, stride, padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Max over each 3-D window of (N, C, D, H, W) or (C, D, H, W) input."""
    output, indices = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                              ceil_mode)
    return (output, indices) if return_indices else output


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Mean over each 3-D window (padding counted unless count_include_pad is False)."""
    kernel, stride, padding, dilation = _arguments("avg_pool3d", kernel_size, stride, padding)
    _check(input, kernel, stride, padding, dilation)
    size = tuple(input.shape[-3:])
    if any(s < k for s, k in zip(size, kernel)):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than "
                           f"kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return AvgPool3D.apply(input, kernel, stride, padding, ceil_mode, count_include_pad,
                           divisor_override)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Average over the adaptive windows that split each of D, H, W into ``output_size``."""
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    if isinstance(output_size, int):
        output_size = (output_size,) * 3
    size = tuple(input.shape[-3:])
    output_size = tuple(s if o is None else int(o) for o, s in zip(output_size, size))
    if output_size == (1, 1, 1):
        return input.mean((-1, -2, -3), keepdim=True)  # torch's shortcut (MeanBackward1)
    return AdaptiveAvgPool3D.apply(input, output_size)
