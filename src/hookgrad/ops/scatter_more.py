"""Out-of-place writes into a copy: select_scatter, slice_scatter, diagonal_scatter (the
embedding of ``src`` where the view would be), index_copy, and scatter_reduce with torch's
reductions and gradients."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .creation import zeros_like
from .inplace import inplace


def _check_src(src_shape: tuple, view_shape: tuple) -> None:
    if tuple(src_shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src_shape)}, slice size = {list(view_shape)}")


def _copy_keeping_strides(array: np.ndarray) -> np.ndarray:
    """A copy with ``array``'s own strides, gaps included (torch allocates these results with
    the input's strides even when it is not dense; an overlapping input gives row-major)."""
    if array.size == 0 or not array.ndim or any(
            s <= 0 for n, s in zip(array.shape, array.strides) if n > 1):
        return array.copy()
    span = sum((n - 1) * s for n, s in zip(array.shape, array.strides)) // array.itemsize + 1
    buffer = np.empty(span, array.dtype)
    out = np.lib.stride_tricks.as_strided(buffer, array.shape, array.strides)
    out[...] = array
    return out


class _EmbedScatter(Op):
    """out = self with ``src`` written where the view lies; d self = grad with that region
    zeroed, d src = the view of grad"""

    @classmethod
    def forward(cls, ctx, self, src, *where):
        ctx.where = where
        result = _copy_keeping_strides(self)
        _copy_into(cls._region(result, *where), src)
        return result

    @classmethod
    def backward(cls, ctx, grad):
        grad_self = grad_src = None
        view = cls._view(grad, *ctx.where)
        if ctx.needs_input_grad[0]:
            grad_self = cls.apply(grad, zeros_like(view), *ctx.where)
        if ctx.needs_input_grad[1]:
            grad_src = view
        return (grad_self, grad_src) + (None,) * len(ctx.where)


class SelectScatter(_EmbedScatter):
    node_name = "SelectScatterBackward0"

    @staticmethod
    def _region(array, dim, index):
        return array[(slice(None),) * dim + (index,)]

    @staticmethod
    def _view(tensor, dim, index):
        return tensor.select(dim, index)


class SliceScatter(_EmbedScatter):
    node_name = "SliceScatterBackward0"

    @staticmethod
    def _region(array, dim, start, end, step):
        return array[(slice(None),) * dim + (slice(start, end, step),)]

    @staticmethod
    def _view(tensor, dim, start, end, step):
        return tensor[(slice(None),) * dim + (slice(start, end, step),)]


class DiagonalScatter(_EmbedScatter):
    node_name = "DiagonalScatterBackward0"

    @staticmethod
    def _region(array, offset, dim1, dim2):
        moved = np.moveaxis(array, (dim1, dim2), (-2, -1))
        rows, cols = moved.shape[-2:]
        length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
        first = np.arange(length) + max(-offset, 0)
        return _Diagonal(moved, first, first + offset)

    @staticmethod
    def _view(tensor, offset, dim1, dim2):
        return tensor.diagonal(offset, dim1, dim2)


class _Diagonal:
    """A writable stand-in for a diagonal view: ``copyto`` writes through fancy indices."""

    def __init__(self, array, rows, cols):
        self.array, self.rows, self.cols = array, rows, cols

    def __setitem__(self, key, value):
        self.array[..., self.rows, self.cols] = value


def _copy_into(region, src: np.ndarray) -> None:
    if isinstance(region, _Diagonal):
        region[...] = src
    else:
        _dtype.copyto(region, src)


def _embed(cls, input: Tensor, src: Tensor, view: Tensor, *where) -> Tensor:
    _check_src(src.shape, view.shape)
    return cls.apply(input, src, *where)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``src`` written into ``input.select(dim, index)``."""
    with grad_mode.no_grad():
        view = input.select(dim, index)
    dim = normalize_dim(dim, input.ndim)
    return _embed(SelectScatter, input, src, view, dim, index % input.shape[dim])


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written into the slice ``start:end:step`` of ``dim``."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = normalize_dim(dim, input.ndim)
    with grad_mode.no_grad():
        view = SliceScatter._view(input, dim, start, end, step)
    return _embed(SliceScatter, input, src, view, dim, start, end, step)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with ``src`` written onto the diagonal ``(offset, dim1, dim2)``."""
    with grad_mode.no_grad():
        view = input.diagonal(offset, dim1, dim2)
    dim1, dim2 = normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim)
    return _embed(DiagonalScatter, input, src, view, offset, dim1, dim2)


# -- index_copy ---------------------------------------------------------------------------------
class IndexCopy(Op):
    """out[..., index[i], ...] = source[..., i, ...];  d self = grad with those rows zeroed,
    d source = grad.index_select(dim, index), expanded to source's shape"""
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory

    node_name = "IndexCopyBackward0"
    # torch keeps source when its gradient is wanted: the formula reads its shape
    saved_names = ("index", "source")

    @staticmethod
    def forward(ctx, self, dim, index, source):
        # ``dim`` as the caller gave it, which torch's node shows (negative read back unsigned)
        ctx._saved_dim, ctx._saved_source_dim = shown_dim(dim), source.ndim
        ctx.given_dim = dim  # torch's formula passes dim on as given
        dim = normalize_dim(dim, self.ndim)
        ctx.save_for_backward(index, source if ctx.needs_input_grad[3] else None)
        result = self.copy()
        if self.ndim == 0:  # a 0-dim self is one row: source's one value replaces it
            result[()] = source.reshape(())
            return result
        result[(slice(None),) * dim + (index.reshape(-1),)] = source.reshape(
            source.shape[:dim] + (index.size,) + source.shape[dim + 1:]) if source.ndim else source
        return result

    @staticmethod
    def backward(ctx, grad):
        index, source = ctx.saved_tensors
        grad_self = grad.index_fill(ctx.given_dim, index, 0) if ctx.needs_input_grad[0] else None
        grad_source = None
        if ctx.needs_input_grad[3]:
            if source.ndim:
                grad_source = grad.index_select(ctx.given_dim, index).expand(source.shape)
            else:  # one row, summed to the 0-dim source's shape by apply
                grad_source = grad.index_select(ctx.given_dim, index.squeeze(0))
        return grad_self, None, None, grad_source


def _check_index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> int:
    if index._data.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_dtype.scalar_type_name(index._data.dtype)}")
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_dtype.scalar_type_name(input._data.dtype)} and (source) "
                           f"{_dtype.scalar_type_name(source._data.dtype)}")
    dim = normalize_dim(dim, input.ndim)
    count = index.numel()
    source_count = source.shape[dim] if source.ndim else 1
    if count != source_count:
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({source_count})")
    others = [d for d in range(input.ndim) if d != dim]
    for position, d in enumerate(others):  # torch numbers the slice's own dims
        if source.ndim and source.shape[d] != input.shape[d]:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                               f"shapes. Destination slice shape: {input.shape[d]} at dimension "
                               f"{position} and source slice shape: {source.shape[d]} at "
                               f"dimension {position}.")
    size = input.shape[dim] if input.ndim else 1
    bad = index._data[(index._data >= size) | (index._data < 0)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad.reshape(-1)[0])} is out of bounds for "
                         f"dimension {dim} with size {size}")
    return dim


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` whose slices ``index`` along ``dim`` are ``source``'s slices."""
    _check_index_copy(input, dim, index, source)
    return IndexCopy.apply(input, dim, array_for_forward(index), source)


def index_copy_(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In place ``index_copy``."""
    _check_index_copy(input, dim, index, source)
    return inplace(IndexCopy, input, dim, array_for_forward(index), source)



METHODS = {"select_scatter": select_scatter, "slice_scatter": slice_scatter,
           "diagonal_scatter": diagonal_scatter, "index_copy": index_copy,
           "index_copy_": index_copy_}
