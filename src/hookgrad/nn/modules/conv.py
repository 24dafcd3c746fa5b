"""Convolution layers (Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d) over F.conv*."""
from __future__ import annotations

from typing import Optional

from ...tensor import Tensor
from .. import functional as F
from .linear import add_weight_and_bias, reset_weight_and_bias
from .module import Module


def _tuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _check_conv_args(in_channels, out_channels, stride, padding, groups, padding_mode) -> None:
    """Reject a bad layer configuration up front, in the order torch reports problems."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    for label, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
        if channels % groups:
            raise ValueError(f"{label} must be divisible by groups")
    if isinstance(padding, str):
        if padding not in _PADDING_STRINGS:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             f"{_PADDING_STRINGS}")
        # 'same' needs the output as long as the input, which a stride > 1 cannot give.
        if padding == "same" and any(step != 1 for step in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                         f"padding_mode='{padding_mode}'")


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        super().__init__()
        _check_conv_args(in_channels, out_channels, stride, padding, groups, padding_mode)
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = kernel_size, stride, dilation
        self.padding, self.padding_mode = padding, padding_mode
        self.transposed, self.output_padding = transposed, output_padding
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + tuple(kernel_size)
        add_weight_and_bias(self, shape, out_channels if bias else None, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            text += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text

    def _reversed_padding(self) -> list:
        """F.pad's widths (last dim first) for a non-zeros padding_mode; 'same' puts the odd
        extra on the right, as torch does."""
        no_padding = (0,) * len(self.kernel_size)
        padding = no_padding if self.padding == "valid" else self.padding
        widths = []
        for k, d, p in reversed(list(zip(self.kernel_size, self.dilation,
                                         no_padding if padding == "same" else padding))):
            if padding == "same":
                total = d * (k - 1)
                widths += [total // 2, total - total // 2]
            else:
                widths += [p, p]
        return widths

    def _conv_forward(self, input: Tensor, conv) -> Tensor:
        """``conv`` (F.conv1d/2d/3d) with this layer's settings; a padding_mode other than
        'zeros' pads with F.pad in that mode first and convolves without padding, as torch's
        layers do (its graph: the pad's node under the convolution's)."""
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding(), mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)


class Conv1d(_ConvNd):
    """1-d convolution layer; default initialisation draws from torch's stream, so a seeded layer
    equals torch's."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 1), _tuple(stride, 1),
                         padding if isinstance(padding, str) else _tuple(padding, 1),
                         _tuple(dilation, 1), False, (0,), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, F.conv1d)


class Conv2d(_ConvNd):
    """2-d convolution layer; default initialisation draws from torch's stream, so a seeded layer
    equals torch's."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 2), _tuple(stride, 2),
                         padding if isinstance(padding, str) else _tuple(padding, 2),
                         _tuple(dilation, 2), False, (0, 0), groups, bias, padding_mode,
                         device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, F.conv2d)


class _ConvTransposeNd(_ConvNd):
    _nd = 2

    def _output_padding(self, input: Tensor, output_size: Optional[list]) -> tuple:
        """output_padding, or what makes the output exactly ``output_size`` (torch's rule)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        output_size = list(output_size)[-nd:]
        minimum = [(input.shape[-nd + d] - 1) * self.stride[d] - 2 * self.padding[d]
                   + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        for d in range(nd):
            if not minimum[d] <= output_size[d] < minimum[d] + self.stride[d]:
                maximum = [m + s - 1 for m, s in zip(minimum, self.stride)]
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {minimum} to {maximum} (for an input of "
                                 f"{list(input.shape[2:])})")
        return tuple(o - m for o, m in zip(output_size, minimum))


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-d convolution layer."""
    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 1), _tuple(stride, 1),
                         _tuple(padding, 1), _tuple(dilation, 1), True, _tuple(output_padding, 1),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Optional[list] = None) -> Tensor:
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-d convolution layer."""
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, _tuple(kernel_size, 2), _tuple(stride, 2),
                         _tuple(padding, 2), _tuple(dilation, 2), True, _tuple(output_padding, 2),
                         groups, bias, padding_mode, device, dtype)

    def forward(self, input: Tensor, output_size: Optional[list] = None) -> Tensor:
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)
