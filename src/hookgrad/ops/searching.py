"""Set and search ops: unique, unique_consecutive, nonzero, argwhere, count_nonzero,
searchsorted, bucketize, bincount, isin. Their results are indices or counts, so none has a
gradient; unique keeps torch's node whose backward refuses, so ``requires_grad`` reads the same.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._util import existing_dim, ordered
from ._reduce_util import reduce_dims
from ._base import is_number, Op


class _NotDifferentiable(Op):
    """The output has a grad_fn (as in torch) whose backward raises torch's error."""

    _derivative = ""

    @classmethod
    def backward(cls, ctx, *grads):
        raise NotImplementedError(f"the derivative for '{cls._derivative}' is not implemented.")


def _unique_all(x: np.ndarray, want_inverse: bool, want_counts: bool):
    values, inverse, counts = np.unique(ordered(x).reshape(-1), return_inverse=True,
                                        return_counts=True,
                                        equal_nan=False)  # each NaN is its own value in torch
    values = values.astype(x.dtype, copy=False)
    return values, inverse.reshape(x.shape).astype(np.int64), counts.astype(np.int64)


def _unique_dim(x: np.ndarray, dim: int, consecutive: bool):
    """unique slices along ``dim``: sorted lexicographically (unique) or runs (consecutive)."""
    if 0 in x.shape[:dim] + x.shape[dim + 1:]:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    moved = np.moveaxis(x, dim, 0)
    rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))  # -1 fails when empty
    if consecutive:
        order = np.arange(rows.shape[0])
    else:
        order = np.lexsort(ordered(rows).T[::-1]) if rows.shape[1] else \
            np.arange(rows.shape[0])
    ranked = rows[order]
    starts = np.ones(len(order), bool)
    starts[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    group = np.cumsum(starts) - 1
    inverse = np.empty(len(order), np.int64)
    inverse[order] = group
    counts = np.diff(np.append(np.flatnonzero(starts), len(order))).astype(np.int64)
    kept = ranked[starts].reshape((-1,) + moved.shape[1:])
    return np.moveaxis(kept, 0, dim), inverse, counts


class Unique(_NotDifferentiable):
    node_name = "Unique2Backward0"
    _derivative = "_unique2"

    @staticmethod
    def forward(ctx, self):
        return _unique_all(self, True, True)


class UniqueDim(_NotDifferentiable):
    node_name = "UniqueDimBackward0"
    _derivative = "unique_dim"

    @staticmethod
    def forward(ctx, self, dim):
        return _unique_dim(self, dim, consecutive=False)


class UniqueConsecutive(_NotDifferentiable):
    node_name = "UniqueConsecutiveBackward0"
    _derivative = "unique_consecutive"

    @staticmethod
    def forward(ctx, self, dim):
        if dim is not None:
            return _unique_dim(self, dim, consecutive=True)
        flat = self.reshape(-1)
        starts = np.ones(flat.size, bool)
        starts[1:] = flat[1:] != flat[:-1]
        inverse = (np.cumsum(starts) - 1).reshape(self.shape).astype(np.int64)
        counts = np.diff(np.append(np.flatnonzero(starts), flat.size)).astype(np.int64)
        return flat[starts], inverse, counts


def _unique_result(outputs, return_inverse: bool, return_counts: bool):
    values, inverse, counts = outputs
    if not return_inverse and not return_counts:
        return values
    result = (values,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim=None):
    """sorted unique values (or slices along ``dim``), with inverse indices and counts"""
    if dim is None:
        outputs = Unique.apply(input)
    else:
        outputs = UniqueDim.apply(input, existing_dim(int(dim), input._data.ndim))
    return _unique_result(outputs, return_inverse, return_counts)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):
    """one value (or slice) per run of equal neighbours"""
    if dim is not None:
        dim = existing_dim(int(dim), input._data.ndim)
    outputs = UniqueConsecutive.apply(input, dim)
    return _unique_result(outputs, return_inverse, return_counts)


# ---------------------------------------------------------------------------------------------
# nonzero / count_nonzero
# ---------------------------------------------------------------------------------------------
def nonzero(input: Tensor, *, as_tuple: bool = False, out=None):
    """(n, ndim) int64 indices of the nonzero elements, or one index tensor per dim"""
    data = input._data
    if as_tuple:
        flat = data.reshape(-1) if data.ndim == 0 else data  # 0-d: one index along a dim
        return tuple(Tensor._make(i.astype(np.int64)) for i in np.nonzero(flat))
    return Tensor._make(np.argwhere(data).astype(np.int64))


def argwhere(input: Tensor) -> Tensor:
    """Indices of the nonzero elements, one row per element."""
    return nonzero(input)


def count_nonzero(input: Tensor, dim=None) -> Tensor:
    """Number of nonzero elements (over ``dim`` if given)."""
    data = input._data
    dims = reduce_dims(dim, data.ndim)  # an empty list is every dim; a 0-d input takes 0 or -1
    counts = np.count_nonzero(data, axis=dims) if dims else (data != 0).astype(np.int64)
    return Tensor._make(np.asarray(counts, np.int64))


# ---------------------------------------------------------------------------------------------
# searchsorted / bucketize
# ---------------------------------------------------------------------------------------------
def _side(right: bool, side) -> str:
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got "
                           "side of left while right was True")
    return side


def _positions(boundaries: np.ndarray, values: np.ndarray, side: str, sorter) -> np.ndarray:
    common = np.result_type(boundaries, values)
    boundaries, values = boundaries.astype(common, copy=False), values.astype(common, copy=False)
    if sorter is not None:
        boundaries = np.take_along_axis(boundaries, sorter, -1)
    if boundaries.ndim == 1:
        return np.searchsorted(boundaries, values, side=side)
    rows = boundaries.reshape(-1, boundaries.shape[-1])
    queries = values.reshape(rows.shape[0], -1)
    found = np.stack([np.searchsorted(row, query, side=side)  # one search per boundary row
                      for row, query in zip(rows, queries)])
    return found.reshape(values.shape)


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None, out=None) -> Tensor:
    """where ``input`` would go in the last dim of ``sorted_sequence`` to keep it sorted"""
    boundaries = sorted_sequence._data
    side = _side(right, side)
    if is_number(input):
        if boundaries.ndim != 1:
            raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                               f"boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({boundaries.ndim}) and input value's dim(0) numel(1)")
        values = np.asarray(input)
    else:
        values = input._data
        if boundaries.ndim != 1 and (boundaries.shape[:-1] != values.shape[:-1]
                                     or values.ndim != boundaries.ndim):
            raise RuntimeError(
                f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                f"dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(boundaries.shape)} and input value tensor "
                f"{list(values.shape)}")
    order = None if sorter is None else sorter._data
    found = _positions(boundaries, values, side, order)
    return Tensor._make(np.asarray(found, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out=None) -> Tensor:
    """the bucket of each value: boundaries[i-1] < x <= boundaries[i] (``right``: <= x <)"""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries._data.ndim})")
    values = np.asarray(input) if is_number(input) else input._data
    found = _positions(boundaries._data, values, "right" if right else "left", None)
    return Tensor._make(np.asarray(found, np.int32 if out_int32 else np.int64))


# ---------------------------------------------------------------------------------------------
# bincount / isin
# ---------------------------------------------------------------------------------------------
class Bincount(_NotDifferentiable):
    node_name = "torch::autograd::NotImplemented"
    _derivative = "bincount"

    @staticmethod
    def forward(ctx, self, weights, minlength):
        # torch sums float32 weights in float32 and every other dtype (half ones too) in float64
        dtype = weights.dtype if weights.dtype == np.float32 else np.dtype(np.float64)
        return np.bincount(self, weights.astype(np.float64), minlength).astype(dtype)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """how often each non-negative integer occurs (weighted: the sum of its weights)"""
    data = input._data
    if data.dtype.kind not in "iub" or data.dtype.kind == "b":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(data.dtype)}'")
    if data.ndim != 1 or (data.size and data.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is None:
        return Tensor._make(np.bincount(data, minlength=minlength).astype(np.int64))
    if weights._data.ndim != 1 or weights._data.shape[0] != data.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    return Bincount.apply(data, weights, minlength)


def isin(elements, test_elements, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is in ``test_elements``"""
    left = np.asarray(elements) if is_number(elements) else elements._data
    right = np.asarray(test_elements) if is_number(test_elements) else test_elements._data
    for array in (left, right):
        if array.dtype.kind == "b":
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    return Tensor._make(np.asarray(np.isin(left, right, invert=invert)))
