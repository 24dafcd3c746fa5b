"""``as_strided_scatter``: a copy of ``input`` with ``src`` written where
``as_strided(size, stride, storage_offset)`` would lie; ``slice_inverse``, the view that undoes
a slice; and torch-level spellings of two in-place methods (``as_strided_``, ``resize_as_``).

The geometry is read on the result's own storage: the copy keeps ``input``'s strides (gaps
included) over a fresh storage that starts at the result's first element, as torch's does.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor, root_array
from ._base import Op
from .scatter_more import _check_src, _copy_keeping_strides
from .strided import AsStrided, _positions, as_strided_with

# torch 2.13's gradient for ``input`` keeps the incoming gradient inside the written region
# and zeroes it outside (the reverse of the derivative, which gradcheck in torch flags); the
# gradient is given as torch gives it, so that programs and comparisons see the same numbers
_SELF_GRAD_INSIDE_REGION = True


def _element_strides(array: np.ndarray) -> tuple:
    return tuple(s // array.itemsize for s in array.strides)


def _check_bounds(size: tuple, stride: tuple, offset: int, itemsize: int,
                  storage_size: int) -> None:
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > storage_size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {itemsize} requiring a storage size of {need * itemsize} are out of "
            f"bounds for storage of size {storage_size * itemsize}")


class AsStridedScatter(Op):
    """out = input with ``src`` at the region's storage positions; d src = grad read at those
    positions, d input = grad masked by the region (see ``_SELF_GRAD_INSIDE_REGION``)"""

    node_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, self, src, size, stride, storage_offset):
        result = _copy_keeping_strides(self)
        storage = root_array(result).reshape(-1)
        _check_bounds(size, stride, storage_offset, result.itemsize, storage.size)
        region = _positions(size, stride, storage_offset)
        storage[region] = _dtype.astype(np.asarray(src), result.dtype).reshape(-1)
        ctx.geometry = (self.shape, _element_strides(result), size, stride, storage_offset)
        return result

    @staticmethod
    def backward(ctx, grad):
        in_size, in_stride, size, stride, offset = ctx.geometry
        in_positions = _positions(in_size, in_stride, 0)
        region = _positions(size, stride, offset)
        grad_self = grad_src = None
        if ctx.needs_input_grad[0]:
            inside = np.isin(in_positions, region).reshape(in_size)
            keep = inside if _SELF_GRAD_INSIDE_REGION else ~inside
            grad_self = grad * Tensor._make(keep.astype(grad._data.dtype))
        if ctx.needs_input_grad[1]:
            length = int(max(in_positions.max(initial=-1), region.max(initial=-1))) + 1
            storage = Tensor._make(np.zeros(length, grad._data.dtype))
            storage = storage.index_add(0, Tensor._make(in_positions), grad.reshape(-1))
            grad_src = storage[Tensor._make(region)].reshape(size)
        return grad_self, grad_src, None, None, None


def as_strided_scatter(input: Tensor, src: Tensor, size, stride,
                       storage_offset=None) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``as_strided(size, stride,
    storage_offset)`` of that copy (offset 0 when None)."""
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = 0 if storage_offset is None else int(storage_offset)
    _check_src(src.shape, size)
    return AsStridedScatter.apply(input, src, size, stride, offset)


def as_strided_(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """``input.as_strided_(...)``: ``input`` itself becomes that view of its storage."""
    return input.as_strided_(size, stride, storage_offset)


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """``input.resize_as_(the_template)``: ``input`` takes the template's shape in place."""
    if memory_format is None:
        return input.resize_as_(the_template)
    return input.resize_as_(the_template, memory_format=memory_format)


class SliceInverse(AsStrided):
    """``as_strided`` of ``input`` with the geometry of ``src`` (a slice of a tensor laid out
    as ``input``): the whole sliced tensor seen again; backward as ``as_strided``'s"""

    node_name = "SliceInverseBackward0"


def slice_inverse(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """The inverse of ``src = base.slice(dim, start, end, step)`` over ``input``'s storage: a
    view of ``input`` with ``src``'s size, strides and storage offset (the slice arguments
    only name which slice it was, as in torch)."""
    return as_strided_with(SliceInverse, input, tuple(src.shape), src.stride(),
                           src.storage_offset())
