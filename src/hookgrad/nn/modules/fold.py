"""Fold and Unfold: module faces of ``fold`` (col2im) and ``unfold`` (im2col)."""
from __future__ import annotations

from ...tensor import Tensor
from ..ops.fold import fold, unfold
from .module import Module

__all__ = ["Fold", "Unfold"]


class _SlidingBlocks(Module):
    """The block geometry that Fold and Unfold share, kept in torch's attribute names."""

    def __init__(self, kernel_size, dilation, padding, stride) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def _geometry(self) -> tuple:
        return self.kernel_size, self.dilation, self.padding, self.stride

    def extra_repr(self) -> str:
        names = ("kernel_size", "dilation", "padding", "stride")
        return ", ".join(f"{name}={value}" for name, value in zip(names, self._geometry()))


class Fold(_SlidingBlocks):
    """Sum sliding-block columns (N, C * prod(kernel_size), L) into (N, C, *output_size)."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, *self._geometry())

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"


class Unfold(_SlidingBlocks):
    """Extract sliding blocks of (N, C, H, W) as columns (N, C * prod(kernel_size), L)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, *self._geometry())
