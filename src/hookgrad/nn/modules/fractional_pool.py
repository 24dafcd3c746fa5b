"""FractionalMaxPool2d/3d: module forms of ``F.fractional_max_pool2d/3d``."""
from __future__ import annotations

from typing import Optional

from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _tuple(value, nd: int) -> tuple:
    return (value,) * nd if isinstance(value, (int, float)) else tuple(value)


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> None:
        super().__init__()
        name = type(self).__name__
        if self._nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _tuple(kernel_size, self._nd)
        self.return_indices = return_indices
        # a fixed sample per plane makes the pooling deterministic (gradcheck, tests)
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, self._nd) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, self._nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        pool = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Module form of ``F.fractional_max_pool2d``: ``kernel_size`` windows at random
    fractional strides, giving ``output_size`` or ``output_ratio`` of the input; the samples
    are drawn anew at each call unless ``_random_samples`` fixes them."""
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Module form of ``F.fractional_max_pool3d`` (see ``FractionalMaxPool2d``)."""
    _nd = 3
