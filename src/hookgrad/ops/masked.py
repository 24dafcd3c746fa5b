"""Masked and indexed updates: masked_select, masked_scatter(_), index_fill(_).

masked_select and masked_scatter are each other's gradient: what one gathers from the positions
of a mask, the other writes back to them.
"""
from __future__ import annotations

import numpy as np

from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from . import _layout
from .join import cat
from ._reduce_util import _UNSET, shown_dim
from ._util import broadcast_error, normalize_dim
from .._dtype import scalar_type_name
from ._base import (cast, _check_inplace_shape, check_number_fits, is_number, Op,
                    python_number, warn_expanded_write)


def _mask(mask, op: str) -> np.ndarray:
    # a mask tensor's array is saved as the tensor (its version checked in backward)
    array = array_for_forward(mask) if isinstance(mask, Tensor) else np.asarray(mask)
    if array.dtype != np.bool_:
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype "
                           f"{scalar_type_name(array.dtype)}")
    return array


class MaskedSelect(Op):
    """the elements where mask is set (both broadcast), as a 1-D tensor"""

    node_name = "MaskedSelectBackward0"
    saved_names = ("mask", "self")

    @staticmethod
    def forward(ctx, self, mask):
        try:
            shape = np.broadcast_shapes(self.shape, mask.shape)
        except ValueError:
            raise broadcast_error("masked_select", mask.shape, self.shape) from None  # as torch
        ctx.shape = shape
        ctx.save_for_backward(mask, self)
        return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]

    @staticmethod
    def backward(ctx, grad):
        mask, self = ctx.saved_tensors
        zeros = Tensor._make(np.zeros(ctx.shape, grad._data.dtype))
        return MaskedScatter.apply(zeros, np.broadcast_to(mask._data, ctx.shape), grad), None


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements where ``mask`` is True, as a 1-d tensor."""
    if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return MaskedSelect.apply(input, array_for_forward(mask))


class MaskedScatter(Op):
    """source's leading elements written, in order, where mask is set"""

    node_name = "MaskedScatterBackward0"
    saved_names = ("mask",)

    @staticmethod
    def forward(ctx, self, mask, source):
        shape = np.broadcast_shapes(self.shape, mask.shape)
        ctx._saved_source_sym_sizes = source.shape
        ctx.save_for_backward(mask)  # as given (torch's _saved_mask): backward broadcasts it
        mask = np.broadcast_to(mask, shape)
        count = int(np.count_nonzero(mask))
        if count > source.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        out = np.array(np.broadcast_to(self, shape), order="C")  # row-major, as torch's
        out[mask] = source.reshape(-1)[:count]
        return out

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        grad_source = None
        if ctx.needs_input_grad[2]:
            shape = ctx._saved_source_sym_sizes
            picked = MaskedSelect.apply(grad, mask._data)
            missing = int(np.prod(shape, dtype=np.int64)) - picked._data.size
            if missing:
                padding = Tensor._make(np.zeros(missing, grad._data.dtype))
                picked = _cat(picked, padding)
            grad_source = picked.reshape(shape)
        return grad.masked_fill(mask._data, 0.0), None, grad_source


def _cat(a: Tensor, b: Tensor) -> Tensor:
    return cat([a, b])


class MaskedScatterInplace(MaskedScatter):
    _operand_overlap = None  # torch does not look (it reads source as it writes)
    node_name = "MaskedScatterBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, mask, source):
        _check_inplace_shape(self.shape, mask.shape, "masked_scatter_")
        result = MaskedScatter.forward(ctx, self, mask, source)
        np.copyto(self, result)
        return self


def _scatter_args(input: Tensor, mask, source: Tensor, op: str) -> np.ndarray:
    mask = _mask(mask, "masked_scatter_")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_type(input)} and {_type(source)}")
    try:
        np.broadcast_shapes(input._data.shape, mask.shape)
    except ValueError:
        raise broadcast_error(op, input._data.shape, mask.shape) from None
    return mask


def _type(tensor: Tensor) -> str:
    return scalar_type_name(tensor._data.dtype)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy where the True positions of ``mask`` take consecutive elements of ``source``."""
    return MaskedScatter.apply(input, _scatter_args(input, mask, source, "masked_scatter"),
                               source)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """In place ``masked_scatter``."""
    mask = _scatter_args(input, mask, source, "masked_scatter_")
    if mask.ndim > input._data.ndim:
        raise RuntimeError(f"expand(CPUBoolType{{{list(mask.shape)}}}, size="
                           f"{list(input._data.shape)}): the number of sizes provided "
                           f"({input._data.ndim}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({mask.ndim})")
    return MaskedScatterInplace.apply(input, mask, source)


# ---------------------------------------------------------------------------------------------
# index_fill: a number (or 0-dim tensor) written at index along dim
# ---------------------------------------------------------------------------------------------
class IndexFill(Op):
    """d self = grad with the filled slices zeroed"""

    node_name = "IndexFillBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown  # shown as given
        ctx.save_for_backward(index)
        out = _layout.preserve(self.copy(), self)  # torch fills a clone of self
        IndexFill._fill(out, dim, index, value)
        return out

    @staticmethod
    def _fill(out: np.ndarray, dim: int, index: np.ndarray, value) -> None:
        if out.ndim == 0:
            if index.size:
                out[...] = cast(value, out.dtype)
            return
        key = (slice(None),) * dim + (index.reshape(-1),)
        out[key] = cast(value, out.dtype)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return IndexFill.apply(grad, ctx.dim, index._data, 0.0), None, None, None


class IndexFillTensor(IndexFill):
    """a 0-dim tensor value: it gets the sum of the filled slices of grad"""

    node_name = "IndexFillBackward1"

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        return IndexFill.forward(ctx, self, dim, index, value, shown)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        dim = ctx.dim
        grad_self = IndexFill.apply(grad, dim, index._data, 0.0)
        grad_value = None
        if ctx.needs_input_grad[3]:
            picked = grad if grad._data.ndim == 0 else grad.index_select(dim, index)
            grad_value = picked.sum()
        return grad_self, None, None, grad_value


class IndexFillInplace(IndexFill):
    node_name = "IndexFillBackward0"
    _inplace = True
    _overlap_ok = True  # torch only warns

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        warn_expanded_write(self, "index_fill_", "tensor[mask] = scalar")
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        ctx.save_for_backward(index)
        IndexFill._fill(self, dim, index, value)
        return self


class IndexFillTensorInplace(IndexFillTensor):
    _operand_overlap = None  # torch reads the 0-d value first
    node_name = "IndexFillBackward1"
    _inplace = True
    _overlap_ok = True

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        return IndexFillInplace.forward(ctx, self, dim, index, value, shown)


def _index_fill(input: Tensor, dim: int, index: Tensor, value, inplace: bool) -> Tensor:
    data = input._data
    shown, dim = shown_dim(dim), normalize_dim(dim, data.ndim)
    if not isinstance(index, Tensor) or index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    positions = index._data
    if positions.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = data.shape[dim] if data.ndim else 1
    bad = (positions < -size) | (positions >= size)
    if bad.any():
        raise IndexError(f"index {int(positions[bad].flat[0])} is out of bounds for dimension "
                         f"{dim} with size {size}")
    if (positions < 0).any():
        positions = np.asarray(positions % max(size, 1))  # 0-d stays an array
    else:  # saved as is, it is the index tensor, version and all
        positions = array_for_forward(index)
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value._data.ndim} dimension(s).")
        cls = IndexFillTensorInplace if inplace else IndexFillTensor
        return cls.apply(input, dim, positions, value, shown=shown)
    if not is_number(value):
        raise TypeError(f"index_fill(): argument 'value' must be Number, not "
                        f"{type(value).__name__}")
    check_number_fits(value, data.dtype)
    cls = IndexFillInplace if inplace else IndexFill
    return cls.apply(input, dim, positions, python_number(value), shown=shown)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """A copy with the slices at ``index`` along ``dim`` set to ``value``."""
    return _index_fill(input, dim, index, value, inplace=False)


def index_fill_(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    """In place ``index_fill``."""
    return _index_fill(input, dim, index, value, inplace=True)
