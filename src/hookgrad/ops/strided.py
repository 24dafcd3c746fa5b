"""``as_strided``: a view of any geometry over a tensor's storage.

It is also what a view's history becomes after its base (or a sibling view) changed in place:
torch rebuilds such a history as one ``AsStridedBackward0`` on the base's new history rather
than replaying the chain of view ops, and ``autograd/views.py`` does the same with this op.
"""
from __future__ import annotations

import numpy as np

from ..autograd import views as _views
from ..tensor import Tensor, root_array
from ._base import Op
from ._reduce_util import _UNSET


def _storage(array: np.ndarray) -> tuple:
    """(the array owning ``array``'s memory, ``array``'s offset in it, in elements)."""
    root = root_array(array)
    start = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return root, start // array.itemsize


def _positions(size: tuple, stride: tuple, offset: int) -> np.ndarray:
    """The storage index of every element of the geometry, in row-major order of ``size``."""
    positions = np.full(size, offset, np.int64)
    for dim, (count, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[dim] = count
        positions += (np.arange(count, dtype=np.int64) * step).reshape(shape)
    return positions.reshape(-1)


class AsStrided(Op):
    """``input.as_strided(size, stride, storage_offset)``: element ``i`` sits at storage index
    ``storage_offset + sum(i_k * stride_k)``.

    Backward: the gradient is added into a zero storage at the view's positions (so elements
    that share a position add up), then read at the input's positions; where the input itself
    reaches one position several times, each reader gets an equal share, as in torch."""

    node_name = "AsStridedBackward0"
    _view_of = 0

    @staticmethod
    def forward(ctx, self, size, stride, storage_offset, given_offset=_UNSET):
        # torch's node shows the arguments as given: storage_offset None when not given
        ctx._saved_size, ctx._saved_stride = tuple(size), tuple(stride)
        ctx._saved_storage_offset = storage_offset if given_offset is _UNSET else given_offset
        root, start = _storage(self)
        ctx.input_geometry = (self.shape, tuple(s // self.itemsize for s in self.strides), start)
        ctx.geometry = (size, stride, storage_offset)
        need = 0 if 0 in size else storage_offset + 1 + sum(
            (n - 1) * s for n, s in zip(size, stride))
        available = root.nbytes // self.itemsize
        if need > available:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{storage_offset}, and itemsize {self.itemsize} requiring a storage size of "
                f"{need * self.itemsize} are out of bounds for storage of size "
                f"{available * self.itemsize}")
        # a 1-d view of the whole storage in memory order (the owner may be laid out in any
        # order), then the geometry over it
        flat = root.reshape(-1, order="A" if root.flags.f_contiguous else "C")
        return np.lib.stride_tricks.as_strided(
            flat[storage_offset:], size, tuple(s * self.itemsize for s in stride),
            writeable=self.flags.writeable)

    @staticmethod
    def backward(ctx, grad):
        in_size, in_stride, in_offset = ctx.input_geometry
        size, stride, offset = ctx.geometry
        out_positions = _positions(size, stride, offset)
        in_positions = _positions(in_size, in_stride, in_offset)
        length = int(max(out_positions.max(initial=-1), in_positions.max(initial=-1))) + 1
        storage = Tensor._make(np.zeros(length, grad._data.dtype))
        storage = storage.index_add(0, Tensor._make(out_positions), grad.reshape(-1))
        result = storage[Tensor._make(in_positions)]
        readers = np.bincount(in_positions, minlength=length)
        if in_positions.size and readers.max() > 1:
            share = (1.0 / readers[in_positions]).astype(grad._data.dtype)
            result = result * Tensor._make(share)
        return result.reshape(in_size), None, None, None


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (in elements), starting
    ``storage_offset`` elements into the storage (``input``'s own offset when None)."""
    return as_strided_with(AsStrided, input, size, stride, storage_offset)


def as_strided_with(cls, input: Tensor, size, stride, storage_offset=None) -> Tensor:
    """``as_strided``'s checks, then ``cls`` (the view, or ``as_strided_copy``'s twin)."""
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{list(size)}")
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return cls.apply(input, size, stride, offset,
                     None if storage_offset is None else int(storage_offset))


def _rebuild(base: Tensor, view: Tensor) -> Tensor:
    """A view's history after its base changed in place: ``as_strided`` of the base over the
    view's geometry (its strides as NumPy holds them, which empty views keep too)."""
    array = view._data
    _, start = _storage(array)
    return AsStrided.apply(base, array.shape, tuple(s // array.itemsize for s in array.strides),
                           start)


_views.REBUILD = _rebuild
