"""MaxUnpool1d/2d/3d, LPPool1d/2d/3d, ChannelShuffle and Softmax2d layers."""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _tuple(value, nd: int) -> tuple:
    return (value,) * nd if isinstance(value, int) else tuple(value)


class _MaxUnpoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._nd)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _tuple(padding, self._nd)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._nd - 1]
        return unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Module form of ``F.max_unpool1d``."""
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Module form of ``F.max_unpool2d``."""
    _nd = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Module form of ``F.max_unpool3d``."""
    _nd = 3


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _nd = 2

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        pool = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._nd - 1]
        return pool(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Module form of ``F.lp_pool1d``."""
    _nd = 1


class LPPool2d(_LPPoolNd):
    """Module form of ``F.lp_pool2d``."""
    _nd = 2


class LPPool3d(_LPPoolNd):
    """Module form of ``F.lp_pool3d``."""
    _nd = 3


class ChannelShuffle(Module):
    """Module form of ``F.channel_shuffle``."""
    __constants__ = ["groups"]

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) at every spatial position."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3)
