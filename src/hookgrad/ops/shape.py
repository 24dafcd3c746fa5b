"""Shape ops that copy: cat, stack, hstack, vstack, repeat, flip, roll.

Padding lives in ``padding.py`` and the index ops along one dim (gather, scatter, index_select,
index_add) in ``gather_scatter.py``; both are importable from here, their old home.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._args import _shape_args, _to_out
from ._util import normalize_dim
from .elementwise import _Op
from .split import unbind
from .views import Slice

_SKIPPED = (0,)  # torch's legacy rule: 1-D empty tensors are left out of cat


def _promoted(tensors) -> np.dtype:
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 0, but got "
                            f"{type(tensor).__name__}")
    dtype = tensors[0]._data.dtype
    for tensor in tensors[1:]:
        if tensor._data.dtype != dtype:
            dtype = _dtype.promote_types(_dtype.from_numpy_dtype(dtype), tensor.dtype).numpy
    return dtype


# ---------------------------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------------------------
class Cat(_Op):
    """gradient: the slice of grad that each input filled"""

    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        for position, t in enumerate(tensors):
            if t.ndim == 0:
                raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                                   "concatenated")
        kept = [(i, t) for i, t in enumerate(tensors) if t.shape != _SKIPPED]
        ctx.shapes = [t.shape for t in tensors]
        if not kept:
            ctx.dim = 0
            return np.zeros(_SKIPPED, dtype)
        first = kept[0][1]
        dim = normalize_dim(dim, first.ndim)
        ctx.dim = dim
        for position, t in kept[1:]:
            if t.ndim != first.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got "
                                   f"{first.ndim} and {t.ndim}")
            for d in range(first.ndim):
                if d != dim and t.shape[d] != first.shape[d]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                       f"Expected size {first.shape[d]} but got size "
                                       f"{t.shape[d]} for tensor number {position} in the list.")
        return np.concatenate([t for _, t in kept], axis=dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        grads = []
        offset = 0
        for shape in ctx.shapes:
            if shape == _SKIPPED:
                grads.append(Tensor._make(np.zeros(_SKIPPED, grad._data.dtype)))
                continue
            size = shape[ctx.dim]
            grads.append(Slice.apply(grad, ctx.dim, offset, offset + size, 1))
            offset += size
        return (None, None, *grads)


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    result = Cat.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _to_out(result, out)


def concatenate(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    return cat(tensors, dim if axis is None else axis, out=out)


concat = cat


class Stack(_Op):
    """gradient: grad unbound along the new dim"""

    node_name = "StackBackward0"

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        shape = tensors[0].shape
        for i, t in enumerate(tensors):
            if t.shape != shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
        ctx.dim = normalize_dim(dim, len(shape) + 1)
        return np.stack(tensors, axis=ctx.dim, dtype=dtype)

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *unbind(grad, ctx.dim))


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    result = Stack.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _to_out(result, out)


def _atleast(tensor: Tensor, ndim: int) -> Tensor:
    if tensor._data.ndim >= ndim:
        return tensor
    if tensor._data.ndim == 0:
        return tensor.reshape((1,) * ndim)
    return tensor.unsqueeze(0)


def hstack(tensors, *, out=None) -> Tensor:
    tensors = [_atleast(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    return cat([_atleast(t, 2) for t in tensors], 0, out=out)


# ---------------------------------------------------------------------------------------------
# repeat / flip / roll
# ---------------------------------------------------------------------------------------------
class Repeat(_Op):
    """gradient: grad split into (repeat, size) pairs per dim, summed over the repeats"""

    node_name = "RepeatBackward0"

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
        ctx.self_shape, ctx.shape, ctx.repeats = self.shape, shape, repeats
        return np.tile(self.reshape(shape), repeats)

    @staticmethod
    def backward(ctx, grad):
        if 0 in ctx.repeats:  # nothing of self reached the output (torch: constant zeros)
            return Tensor._make(np.zeros(ctx.self_shape, grad._data.dtype)), None
        pairs = tuple(x for r, s in zip(ctx.repeats, ctx.shape) for x in (r, s))
        summed = grad.reshape(pairs).sum(tuple(range(0, len(pairs), 2)))
        return summed.reshape(ctx.self_shape), None


def repeat(input: Tensor, *repeats) -> Tensor:
    return Repeat.apply(input, _shape_args(repeats, "repeat"))


class Flip(_Op):
    """gradient: grad flipped back (a copy; np.flip alone would be a view)"""

    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, self, dims):
        ctx.dims = dims
        return np.flip(self, dims).copy() if dims else self.copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(input: Tensor, *dims) -> Tensor:
    dims = _shape_args(dims, "flip")
    normalized = tuple(normalize_dim(d, input._data.ndim) for d in dims)
    for d in normalized:
        if normalized.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return Flip.apply(input, normalized if input._data.ndim else ())


class Roll(_Op):
    """gradient: grad rolled back"""

    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, self, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        if not dims:  # roll the flattened tensor
            return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
        return np.roll(self, shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        return Roll.apply(grad, tuple(-s for s in ctx.shifts), ctx.dims), None, None


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    shifts = (shifts,) if isinstance(shifts, (int, np.integer)) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, (int, np.integer)) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    dims = tuple(normalize_dim(d, input._data.ndim) for d in dims)
    return Roll.apply(input, tuple(int(s) for s in shifts), dims)


# padding and the index ops along one dim keep their old import path
from .padding import ConstantPadNd, pad  # noqa: E402,F401
from .gather_scatter import (Gather, IndexAdd, IndexAddInplace, IndexSelect,  # noqa: E402,F401
                             Scatter, ScatterAdd, ScatterAddInplace, ScatterInplace, ScatterValue,
                             ScatterValueInplace, gather, index_add, index_add_, index_select,
                             scatter, scatter_, scatter_add, scatter_add_, take_along_dim)
