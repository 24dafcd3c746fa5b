"""put / put_: write (or add) ``source``'s values at positions of the flattened input.

The positions count through the input in row-major order whatever its strides, as torch's do,
and negative ones count from the end. Without ``accumulate`` a position written twice keeps
the last value; with it every value is added.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from . import _layout
from ._base import Op


def _positions(index: np.ndarray, shape: tuple) -> tuple:
    flat = index.reshape(-1)
    return np.unravel_index(np.where(flat < 0, flat + int(np.prod(shape)), flat), shape)


def _write(out: np.ndarray, index: np.ndarray, source: np.ndarray, accumulate: bool) -> None:
    if out.ndim == 0:
        out = out.reshape(1)
    where = _positions(index, out.shape)
    values = source.reshape(-1)
    if accumulate:
        np.add.at(out, where, values)
    else:
        out[where] = values


class Put(Op):
    """d self = grad, with the written positions zeroed unless accumulating;
    d source = grad at the written positions"""

    node_name = "PutBackward0"
    saved_names = ("index", "source")

    @staticmethod
    def forward(ctx, self, index, source, accumulate):
        ctx._saved_accumulate = accumulate
        ctx.save_for_backward(index, source)
        out = _layout.preserve(self.copy(), self)
        _write(out, index, source, accumulate)
        return out

    @staticmethod
    def backward(ctx, grad):
        index, source = ctx.saved_tensors
        grad_self = grad_source = None
        if ctx.needs_input_grad[0]:
            grad_self = grad if ctx._saved_accumulate else Put.apply(
                grad, index._data, np.zeros(index._data.shape, grad._data.dtype), False)
        if ctx.needs_input_grad[2]:
            grad_source = grad.reshape(-1)[index.reshape(-1)].reshape(source.shape)
        return grad_self, None, grad_source, None


class PutInplace(Put):
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory
    _inplace = True

    @staticmethod
    def forward(ctx, self, index, source, accumulate):
        ctx._saved_accumulate = accumulate
        ctx.save_for_backward(index, source)
        _write(self, index, source, accumulate)
        return self


def _checked(input: Tensor, index: Tensor, source: Tensor) -> None:
    if index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_dtype.scalar_type_name(index._data.dtype)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(
            f"put_(): self and source expected to have the same dtype, but got self.dtype = "
            f"{_dtype.scalar_type_name(input._data.dtype)} and source.dtype = "
            f"{_dtype.scalar_type_name(source._data.dtype)}")
    if source._data.size != index._data.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source._data.size}, "
                         f"index.numel() = {index._data.size}")
    size = input._data.size
    if index._data.size and not size:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    outside = (index._data < -size) | (index._data >= size)
    if outside.any():
        bad = int(index._data[outside].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {size} "
                         f"elements.")


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``source``'s values at the flat positions ``index`` (added
    there when ``accumulate``)."""
    _checked(input, index, source)
    return Put.apply(input, array_for_forward(index), source, bool(accumulate))


def put_(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In place ``put``."""
    _checked(input, index, source)
    return PutInplace.apply(input, array_for_forward(index), source, bool(accumulate))


METHODS = {"put": put, "put_": put_}
