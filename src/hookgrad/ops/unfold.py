"""``Tensor.unfold(dimension, size, step)``: every window of ``size`` along ``dimension``, ``step``
apart, as a view (no copy: the windows overlap in memory when step < size).

Its backward adds each window's gradient back where the window came from. Windows overlap, so
the sum goes one window offset at a time: for a fixed offset ``k`` the positions
``i * step + k`` are distinct, and one strided slice takes them all.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim


def _windows(self: np.ndarray, dim: int, size: int, step: int) -> np.ndarray:
    if self.ndim == 0:
        return np.lib.stride_tricks.as_strided(self, (size,), (self.itemsize,),
                                               writeable=self.flags.writeable)
    count = (self.shape[dim] - size) // step + 1
    shape = self.shape[:dim] + (count,) + self.shape[dim + 1:] + (size,)
    strides = (self.strides[:dim] + (self.strides[dim] * step,) + self.strides[dim + 1:]
               + (self.strides[dim],))
    return np.lib.stride_tricks.as_strided(self, shape, strides, writeable=self.flags.writeable)


class Unfold(Op):
    """windows of ``size`` along ``dimension``, ``step`` apart, in a new last dim (a view)"""

    node_name = "UnfoldBackward0"
    _view_of = 0

    @staticmethod
    def forward(ctx, self, dimension, size, step, shown=None):
        ctx._saved_self_sym_sizes, ctx.dimension = self.shape, dimension
        ctx._saved_dimension = shown_dim(dimension if shown is None else shown)  # as given
        ctx._saved_size, ctx._saved_step = size, step
        return _windows(self, dimension, size, step)

    @staticmethod
    def backward(ctx, grad):
        return UnfoldBackward.apply(grad, ctx._saved_self_sym_sizes, ctx.dimension,
                                    ctx._saved_size, ctx._saved_step), None, None, None


class UnfoldBackward(Op):
    """each window of grad added back onto zeros of the input's shape"""

    node_name = "UnfoldBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dimension, size, step):
        ctx.args = (dimension, size, step)
        out = np.zeros(shape, grad.dtype)
        if not shape:
            out[...] = grad.sum()
            return out
        count = grad.shape[dimension]
        moved = np.moveaxis(out, dimension, -1)  # a view: writes reach out
        windows = np.moveaxis(grad, dimension, -2)
        for offset in range(size):
            moved[..., offset:offset + step * (count - 1) + 1:step] += windows[..., offset]
        return out

    @staticmethod
    def backward(ctx, grad):
        return Unfold.apply(grad, *ctx.args), None, None, None, None


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every slice of ``size`` elements along ``dimension``, ``step`` apart, as a view with the
    window in a new last dimension."""
    return unfold_with(Unfold, input, dimension, size, step)


def unfold_with(cls, input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``unfold``'s checks, then ``cls`` (the view, or ``unfold_copy``'s twin)."""
    ndim = input.ndim
    shown, dimension = dimension, normalize_dim(dimension, max(ndim, 1))
    length = input.shape[dimension] if ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dimension} is {length} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return cls.apply(input, dimension, int(size), int(step), shown)


METHODS = {"unfold": unfold}
