"""Volumetric layers: Conv3d, ConvTranspose3d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d."""
from __future__ import annotations

from typing import Optional

from ...tensor import Tensor
from ..functional import conv_transpose3d
from ..ops.pool3d import adaptive_avg_pool3d, avg_pool3d, max_pool3d
from .conv import _ConvNd, _ConvTransposeNd, _tuple
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .. import functional as F

__all__ = ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d"]


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W); weight (out, in / groups, kD, kH, kW), initialised
    as torch does (kaiming_uniform_ with a = sqrt(5), then the bias); a padding_mode other
    than 'zeros' pads with F.pad first, as torch does."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 3), _tuple(stride, 3),
                         padding if isinstance(padding, str) else _tuple(padding, 3),
                         _tuple(dilation, 3), False, (0, 0, 0), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, F.conv3d)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose of Conv3d; weight (in, out / groups, kD, kH, kW)."""

    _nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 3), _tuple(stride, 3),
                         _tuple(padding, 3), _tuple(dilation, 3), True, _tuple(output_padding, 3),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Optional[list] = None) -> Tensor:
        return conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                self._output_padding(input, output_size), self.groups,
                                self.dilation)


class MaxPool3d(MaxPool2d):
    """Max over 3-D windows (optionally with the flat indices of the maxima)."""

    def forward(self, input: Tensor):
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(AvgPool2d):
    """Mean over 3-D windows."""

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Mean over adaptive windows giving a (D', H', W') = ``output_size`` result."""

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)
