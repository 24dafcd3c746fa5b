"""adaptive_max_pool1d/2d/3d: the max over each adaptive window (window i along a dim of size L
pooled to O spans ``floor(i L / O)`` to ``ceil((i + 1) L / O)``) and its flat in-plane index."""
from __future__ import annotations

import math

import numpy as np

from ...ops._base import Op, through_saved
from ...tensor import Tensor
from .pooling import MaxPoolScatter


def _window_rows(size: int, out: int) -> np.ndarray:
    """(out, K) input positions of each window, the shorter ones padded with their last
    position (a repeat after the real ones changes neither the max nor its first index)."""
    index = np.arange(out)
    starts = (index * size) // out
    ends = -((-(index + 1) * size) // out)
    width = int((ends - starts).max())
    return np.minimum(starts[:, None] + np.arange(width), ends[:, None] - 1)


class AdaptiveMaxPool(Op):
    """out = max over each adaptive window; backward scatters grad to the argmax positions"""

    node_name = "AdaptiveMaxPool2DBackward0"
    saved_names = ("self", "result1")

    @staticmethod
    def forward(ctx, self, output_size):
        nd = len(output_size)
        sizes = self.shape[-nd:]
        lead = self.shape[:-nd]
        rows = [_window_rows(size, out) for size, out in zip(sizes, output_size)]
        # one fancy index per dim, shaped to give windows of shape lead + (O1, K1, O2, K2, ...)
        index = tuple(rows[d].reshape([rows[d].shape[i - 2 * d] if i in (2 * d, 2 * d + 1) else 1
                                       for i in range(2 * nd)]) for d in range(nd))
        windows = self[(Ellipsis,) + index]
        order = [len(lead) + 2 * d for d in range(nd)] + [len(lead) + 2 * d + 1
                                                          for d in range(nd)]
        windows = windows.transpose(tuple(range(len(lead))) + tuple(order))
        widths = [row.shape[1] for row in rows]
        flat = windows.reshape(lead + tuple(output_size) + (math.prod(widths),))
        best = np.argmax(flat, axis=-1)
        result = np.take_along_axis(flat, best[..., None], -1)[..., 0]
        # the chosen window position back to an in-plane flat index
        offsets = np.unravel_index(best, widths)
        position = np.zeros(best.shape, np.int64)
        for d in range(nd):
            cells = np.arange(output_size[d]).reshape(
                [-1 if i == d else 1 for i in range(nd)])
            position = position * sizes[d] + rows[d][cells, offsets[d]]
        ctx.self_shape, ctx.nd = self.shape, nd
        ctx.save_for_backward(self, position)
        return np.ascontiguousarray(result), position

    @staticmethod
    def backward(ctx, grad, _grad_indices=None):
        self, indices = ctx.saved_tensors
        grad = through_saved(grad, self)
        return MaxPoolScatter.apply(grad, indices._data, ctx.self_shape, ctx.nd), None


class AdaptiveMaxPool3D(AdaptiveMaxPool):
    node_name = "AdaptiveMaxPool3DBackward0"


def _check_non_empty(name: str, input: Tensor) -> None:
    for dim in range(1, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {dim} being empty")


def _output_size(name: str, input: Tensor, output_size, nd: int) -> tuple:
    if not isinstance(output_size, int) and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    sizes = (output_size,) * nd if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    sizes = tuple(input.shape[input.ndim - nd + i] if s is None else int(s)
                  for i, s in enumerate(sizes))
    _check_non_empty(name, input)
    return sizes


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, flat in-plane indices) of the max over each adaptive 2-D window."""
    sizes = _output_size("adaptive_max_pool2d", input, output_size, 2)
    return AdaptiveMaxPool.apply(input, sizes)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive 2-D windows giving ``output_size``; with ``return_indices`` also the
    flat in-plane index of each max."""
    output, indices = adaptive_max_pool2d_with_indices(input, output_size)
    return (output, indices) if return_indices else output


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, indices) of the max over each adaptive 1-D window (as torch: a 2-D pool on an
    unsqueezed input)."""
    size = output_size if isinstance(output_size, int) else tuple(output_size)
    if not isinstance(size, int):
        if len(size) != 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(size)})")
        size = size[0]
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    _check_non_empty("adaptive_max_pool1d", input)
    output, indices = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, size))
    return output.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive 1-D windows giving ``output_size`` (with indices if asked)."""
    output, indices = adaptive_max_pool1d_with_indices(input, output_size)
    return (output, indices) if return_indices else output


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(values, flat in-volume indices) of the max over each adaptive 3-D window."""
    sizes = _output_size("adaptive_max_pool3d", input, output_size, 3)
    return AdaptiveMaxPool3D.apply(input, sizes)


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive 3-D windows giving ``output_size`` (with indices if asked)."""
    output, indices = adaptive_max_pool3d_with_indices(input, output_size)
    return (output, indices) if return_indices else output


__all__ = ["adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices"]
