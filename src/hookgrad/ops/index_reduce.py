"""index_reduce: ``source``'s slices along ``dim`` reduced (prod, mean, amax, amin) into a copy of
``input`` at the positions ``index`` names, with or without input's own values.

It is scatter_reduce with the 1-D index spread over ``source``'s shape, so both share one kernel
and one set of gradient formulas (amax/amin ties share the gradient equally; prod never divides
by a zero); only the checks, the node and what it shows differ.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._warnings import warn_once
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .inplace import inplace
from .scatter_reduce import _reduce_into, reduce_grads

_REDUCES = ("prod", "mean", "amax", "amin")
_BETA = "index_reduce() is in beta and the API may change at any time."


def _spread(index: np.ndarray, dim: int, shape: tuple) -> np.ndarray:
    """The scatter-style index: ``index`` along ``dim``, repeated over source's other dims."""
    along = (1,) * dim + (-1,) + (1,) * (len(shape) - dim - 1)
    return np.ascontiguousarray(np.broadcast_to(index.astype(np.int64).reshape(along), shape))


class IndexReduce(Op):
    """out[..., index[i], ...] = reduce(self[..., index[i], ...], source[..., i, ...]);
    gradients: scatter_reduce's, with index spread over source's shape"""
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory

    node_name = "IndexReduceBackward0"
    saved_names = ("self", "index", "source", "result")
    saved_values = {"reduce": "reduce", "include_self": "include_self"}

    @staticmethod
    def forward(ctx, self, dim, index, source, reduce, include_self):
        # ``dim`` as the caller gave it, which torch's node shows (negative read back unsigned)
        ctx._saved_dim, dim = shown_dim(dim), normalize_dim(dim, self.ndim)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        flat_self, flat_source = self.reshape(-1) if self.ndim == 0 else self, source
        if source.ndim == 0:
            flat_source = source.reshape(1)
        spread = _spread(index.reshape(-1), dim, flat_source.shape)
        result = _reduce_into(flat_self, dim, spread, flat_source, reduce, include_self)
        result = result.reshape(self.shape)  # the very array returned: saved as the output
        ctx.save_for_backward(self, index, source, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, index, source, result = ctx.saved_tensors
        if not ctx.include_self and index._data.dtype != np.int64:
            # torch clears the receiving slices with index_fill, which takes int64 only
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        shape, source_shape = tuple(self.shape), tuple(source.shape)
        if not shape:  # a 0-dim self works as one slot
            grad, self, result = grad.reshape(1), self.reshape(1), result.reshape(1)
        if not source_shape:
            source = source.reshape(1)
        spread = Tensor._make(_spread(index._data.reshape(-1), ctx.dim, tuple(source.shape)))
        grad_self, grad_source = reduce_grads(grad, self, spread, source, result, ctx.dim,
                                              ctx.reduce, ctx.include_self)
        return (grad_self.reshape(shape) if ctx.needs_input_grad[0] else None, None, None,
                grad_source.reshape(source_shape) if ctx.needs_input_grad[3] else None,
                None, None)


def _check(input: Tensor, dim: int, index, source, reduce: str, op: str) -> np.ndarray:
    """torch's checks in torch's order, so the same bad call fails with the same message."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' (position 3) must be Tensor, not "
                        f"{type(source).__name__}")
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = normalize_dim(dim, input.ndim)
    array = array_for_forward(index)  # saved, it is the index tensor, version and all
    if array.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{array.ndim} with type: {_dtype.scalar_type_name(array.dtype)} and "
                         f"size: {list(array.shape)}")
    if array.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_dtype.scalar_type_name(array.dtype)}")
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_dtype.scalar_type_name(input._data.dtype)})"
                           f" and source ({_dtype.scalar_type_name(source._data.dtype)}) must "
                           f"have the same scalar type")
    count = source.shape[dim] if source.ndim else 1
    if array.size != count:
        raise RuntimeError(f"index_reduce_(): Number of indices ({array.size}) should be equal "
                           f"to source.size(dim): ({count}), for dim: {dim}")
    same = source.ndim == input.ndim and all(
        a == b for d, (a, b) in enumerate(zip(input.shape, source.shape)) if d != dim)
    if not same and not (input.ndim == 0 and source.ndim == 0):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")
    size = input.shape[dim] if input.ndim else 1
    if ((array < 0) | (array >= size)).any():
        raise IndexError("index out of range in self")
    return array


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` whose slices ``index[i]`` along ``dim`` are reduced by ``reduce``
    (prod, mean, amax, amin) with ``source``'s slice ``i``; repeated indices all take part, and
    ``include_self=False`` leaves input's own values out of the slices that receive any."""
    array = _check(input, dim, index, source, reduce, "index_reduce")
    warn_once(_BETA)
    return IndexReduce.apply(input, dim, array, source, reduce, include_self)


def index_reduce_(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In place ``index_reduce``."""
    array = _check(input, dim, index, source, reduce, "index_reduce_")
    warn_once(_BETA)
    return inplace(IndexReduce, input, dim, array, source, reduce, include_self)


METHODS = {"index_reduce": index_reduce, "index_reduce_": index_reduce_}
