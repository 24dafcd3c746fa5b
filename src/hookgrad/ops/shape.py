"""Shape ops that copy: cat, stack, repeat, flip, pad, gather/scatter and friends."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._util import normalize_dim
from .elementwise import _Op


class Cat(_Op):
    """gradient: the slices of grad that each input filled"""

    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        tensors = [t for t in tensors]
        ndim = max(t.ndim for t in tensors)
        dim = normalize_dim(dim, ndim)
        ctx.dim = dim
        ctx.sizes = [t.shape[dim] if t.ndim else 0 for t in tensors]
        ctx.shapes = [t.shape for t in tensors]
        parts = [t.astype(dtype, copy=False) for t in tensors if not (t.ndim == 1 and t.size == 0)]
        for t in parts:
            if t.ndim != ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, parts[0].shape))
                                     if i != dim):
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                   f"Expected size {parts[0].shape[1 - dim if ndim > 1 else 0]} "
                                   f"but got size {t.shape[1 - dim if ndim > 1 else 0]} for tensor"
                                   f" number {tensors.index(t) if False else 1} in the list.")
        return np.concatenate(parts, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        grads = []
        offset = 0
        for size, shape in zip(ctx.sizes, ctx.shapes):
            if len(shape) == 1 and shape[0] == 0:
                grads.append(None)
                continue
            grads.append(grad.narrow(ctx.dim, offset, size))
            offset += size
        return (None, None, *grads)


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        if t._data.dtype != dtype:
            dtype = _dtype.promote_types(_dtype.from_numpy_dtype(dtype), t.dtype).numpy
    return Cat.apply(dim, dtype, *tensors)


concat = concatenate = cat


class Stack(_Op):
    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        shape = tensors[0].shape
        for i, t in enumerate(tensors):
            if t.shape != shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
        dim = normalize_dim(dim, len(shape) + 1)
        ctx.dim = dim
        return np.stack([t.astype(dtype, copy=False) for t in tensors], axis=dim)

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *grad.unbind(ctx.dim))


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        if t._data.dtype != dtype:
            dtype = _dtype.promote_types(_dtype.from_numpy_dtype(dtype), t.dtype).numpy
    return Stack.apply(dim, dtype, *tensors)
