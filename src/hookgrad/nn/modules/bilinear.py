"""Bilinear: y = x1^T A x2 + b, initialised like torch (U(-1/sqrt(in1), 1/sqrt(in1)) for the
weight, then the bias)."""
from __future__ import annotations

import math

from ...tensor import Tensor
from .. import init
from ..ops.bilinear import bilinear
from .linear import add_weight_and_bias
from .module import Module

__all__ = ["Bilinear"]


class Bilinear(Module):
    """y[..., o] = x1 A[o] x2 + b[o] with weight A of shape (out, in1, in2)."""

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        add_weight_and_bias(self, (out_features, in1_features, in2_features),
                            out_features if bias else None, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Redraws ``weight`` and ``bias`` from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got "
                             f"(in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
