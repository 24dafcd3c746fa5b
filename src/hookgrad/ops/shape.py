"""Shape ops that copy: repeat, flip, roll (joining and splitting: ``join.py``; padding:
``padding.py``; index ops along one dim: ``gather_scatter.py``)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._args import _shape_args
from . import _layout
from ._base import Op
from ._reduce_util import shown_dims
from ._util import existing_dim, normalize_dim


# ---------------------------------------------------------------------------------------------
# repeat / flip / roll
# ---------------------------------------------------------------------------------------------
class Repeat(Op):
    """gradient: grad split into (repeat, size) pairs per dim, summed over the repeats"""

    node_name = "RepeatBackward0"
    saved_values = {"repeats": "repeats", "self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, repeats):
        if len(repeats) < self.ndim:
            raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                               "number of dimensions of tensor")
        shape = (1,) * (len(repeats) - self.ndim) + self.shape
        target = [r * s for r, s in zip(repeats, shape)]
        if any(r < 0 for r in repeats):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(target)}: {target}")
        ctx.self_shape, ctx.shape, ctx.repeats = self.shape, shape, tuple(repeats)
        return _layout.contiguous(np.tile(self.reshape(shape), repeats))  # empty ones too

    @staticmethod
    def backward(ctx, grad):
        if 0 in ctx.repeats:  # nothing of self reached the output (torch: constant zeros)
            return Tensor._make(np.zeros(ctx.self_shape, grad._data.dtype)), None
        pairs = tuple(x for r, s in zip(ctx.repeats, ctx.shape) for x in (r, s))
        summed = grad.reshape(pairs).sum(tuple(range(0, len(pairs), 2)))
        return summed.reshape(ctx.self_shape), None


def repeat(input: Tensor, *repeats) -> Tensor:
    """The tensor tiled ``sizes`` times along each dimension (a copy)."""
    return Repeat.apply(input, _shape_args(repeats, "repeat"))


def flipped(array: np.ndarray, dims) -> np.ndarray:
    """A copy of ``array`` reversed along ``dims``, laid out as torch's flip lays it out."""
    if not array.size:  # torch copies an empty input as it is, strides and all
        return _layout.preserve(array.copy(), array)
    # torch's flip is elementwise on a reversed view: it keeps a dense input's layout
    result = np.flip(array, dims).copy(order="K") if dims else array.copy(order="K")
    return _layout.pointwise(result, array)


class Flip(Op):
    """gradient: grad flipped back (a copy; np.flip alone would be a view)"""

    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, self, dims, shown=None):
        ctx.dims, ctx._saved_dims = dims, shown_dims(dims if shown is None else shown)
        return flipped(self, dims)

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input: Tensor, *dims) -> Tensor:
    """A copy with the order of elements reversed along ``dims``."""
    dims = _shape_args(dims, "flip")
    normalized = tuple(normalize_dim(d, input._data.ndim) for d in dims)
    for d in normalized:
        if normalized.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return Flip.apply(input, normalized if input._data.ndim else (), shown=dims)


class Roll(Op):
    """gradient: grad rolled back"""

    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, self, shifts, dims, shown=None):
        ctx.shifts, ctx.dims = shifts, dims
        # shifts and dims as given, negative ones read back unsigned as torch's node shows them
        ctx._saved_shifts = shown_dims(shifts)
        ctx._saved_dims = shown_dims(dims if shown is None else shown)
        if not self.size and (dims or self.ndim == 1):
            # torch clones an empty input (flattened first when no dim is given), strides kept
            return _layout.preserve(self.copy(), self)
        if not dims:  # roll the flattened tensor
            return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
        return np.require(np.roll(self, shifts, dims), requirements="C")  # torch's is contiguous

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Elements shifted by ``shifts`` along ``dims``, wrapping around."""
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    normalized = tuple(existing_dim(d, input._data.ndim) for d in dims)
    return Roll.apply(input, tuple(int(s) for s in shifts), normalized, shown=dims)
