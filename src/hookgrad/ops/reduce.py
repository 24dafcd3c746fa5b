"""Reductions. Gradients broadcast back over the reduced dims."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._util import normalize_dims
from .elementwise import _Op


def _restore(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """Reshape a reduced gradient so it broadcasts against the input again."""
    if not keepdim and dims:
        kept = tuple(1 if i in dims else s for i, s in enumerate(shape))
        grad = grad.reshape(kept)
    return grad


class Sum(_Op):
    """d sum = 1 broadcast over the reduced dims"""

    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        ctx.self_shape = self.shape
        ctx.dims, ctx.keepdim = dims, keepdim
        if dtype is None and self.dtype.kind in "biu":
            dtype = np.int64
        return np.asarray(np.sum(self, axis=dims, keepdims=keepdim, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        grad = _restore(grad, ctx.self_shape, ctx.dims, ctx.keepdim)
        return grad.expand(ctx.self_shape), None, None, None


class SumAll(Sum):
    node_name = "SumBackward0"


def sum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    from .._dtype import to_numpy_dtype

    np_dtype = None if dtype is None else to_numpy_dtype(dtype)
    if dim is None:
        return SumAll.apply(input, tuple(range(input._data.ndim)), False, np_dtype)
    return Sum.apply(input, normalize_dims(dim, input._data.ndim), keepdim, np_dtype)


class Mean(_Op):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        if self.dtype.kind not in "fc" and dtype is None:
            raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                               f"a floating point or complex dtype. Got: {_torch_name(self)}")
        ctx.self_shape = self.shape
        ctx.dims, ctx.keepdim = dims, keepdim
        ctx.count = int(np.prod([self.shape[d] for d in dims], dtype=np.int64))
        return np.asarray(np.mean(self, axis=dims, keepdims=keepdim, dtype=dtype)).astype(
            dtype or self.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        grad = _restore(grad, ctx.self_shape, ctx.dims, ctx.keepdim)
        return grad.expand(ctx.self_shape) / ctx.count, None, None, None


class MeanAll(Mean):
    node_name = "MeanBackward0"


def _torch_name(array: np.ndarray) -> str:
    from .._dtype import from_numpy_dtype

    return from_numpy_dtype(array.dtype).name.capitalize()


def mean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    from .._dtype import to_numpy_dtype

    np_dtype = None if dtype is None else to_numpy_dtype(dtype)
    if dim is None:
        return MeanAll.apply(input, tuple(range(input._data.ndim)), False, np_dtype)
    return Mean.apply(input, normalize_dims(dim, input._data.ndim), keepdim, np_dtype)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """Sum broadcast dims away so the result has ``size`` (the reverse of expand)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if input._data.shape == shape:
        return input
    lead = input._data.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and input._data.shape[i + lead] != 1)
    result = sum(input, dims, keepdim=True)
    return result.reshape(shape) if lead or result._data.shape != shape else result
