"""cumsum: a scan (the output keeps the input's shape), whose gradient is the reversed scan."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._reduce_util import _UNSET, _accumulator, _numpy_dtype, shown_dim
from ._util import normalize_dim
from ._base import Op


class Cumsum(Op):
    """d cumsum = the reversed cumulative sum of grad"""

    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, self, dim, dtype=None, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        if self.ndim == 0:
            return self.astype(dtype)
        result = np.cumsum(self, axis=dim, dtype=_accumulator(dtype)).astype(dtype, copy=False)
        return np.require(result, requirements="C")  # torch's result is contiguous

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0 or grad.shape[ctx.dim] == 1:
            return grad, None, None  # nothing to sum: torch hands grad on as it is
        return ReversedCumsum.apply(grad, ctx.dim), None, None


class ReversedCumsum(Op):
    """Sum from each position to the end (cumsum's gradient; its own gradient is cumsum)."""

    node_name = "ReversedCumsumBackward0"

    @staticmethod
    def forward(ctx, self, dim):
        ctx.dim = dim
        return np.flip(np.cumsum(np.flip(self, dim), axis=dim), dim).copy()

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, ctx.dim), None


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Running sum along ``dim``."""
    return Cumsum.apply(input, normalize_dim(dim, input._data.ndim), _numpy_dtype(dtype),
                        shown=shown_dim(dim))
