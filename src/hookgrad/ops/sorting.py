"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode.

Every one picks elements, so its gradient is the output gradient scattered back to the picked
positions (torch's value_selecting_reduction_backward), written with ``scatter`` so double
backward comes free. Orders are NumPy's stable sorts: NaN counts as the largest value, as in
torch, and ties keep their original order.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._reduce_util import _UNSET, shown_dim
from ._util import normalize_dim, ordered
from .minmax import _ValuesIndices, return_types
from ._base import not_implemented, Op


def _result_type(name: str) -> type:
    result = type(name, (_ValuesIndices,), {"__slots__": (), "_name": name})
    setattr(return_types, name, result)  # isinstance(x.sort(), torch.return_types.sort)
    return result


SortResult = _result_type("sort")
TopkResult = _result_type("topk")
KthvalueResult = _result_type("kthvalue")
MedianResult = _result_type("median")
NanmedianResult = _result_type("nanmedian")
ModeResult = _result_type("mode")


def stable_argsort(x: np.ndarray, dim: int, descending: bool = False) -> np.ndarray:
    """Stable order along ``dim``; descending keeps equal elements in their original order too
    (a stable sort of the reversed array, reversed back), with NaN first."""
    x = ordered(x)
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    order = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return x.shape[dim] - 1 - np.flip(order, dim)


def selected_backward(grad: Tensor, indices: Tensor, dim: int, shape: tuple,
                      keepdim: bool = True) -> Tensor:
    """The gradient of picking ``indices`` along ``dim``: grad scattered into zeros."""
    if not shape:
        return grad
    index = indices
    if not keepdim:
        grad, index = grad.unsqueeze(dim), Tensor._make(np.expand_dims(indices._data, dim))
    zeros = Tensor._make(np.zeros(shape, grad._data.dtype))
    return zeros.scatter(dim, index, grad)


class _Selecting(Op):
    """values and int64 indices picked along one dim; grad goes back to the picked elements.
    Non-tensor state keeps torch's inspection names (``grad_fn._saved_dim`` ...)."""

    saved_names = ("indices",)
    _keepdim = True  # sort and topk keep the dim; the reductions have a keepdim argument

    @staticmethod
    def _save(ctx, self, indices, dim, keepdim=None, shown=_UNSET) -> None:
        # the formula reads ``dim`` (normalized); the node shows it as the caller gave it
        ctx._saved_self_sym_sizes, ctx.dim = self.shape, dim
        ctx._saved_dim = dim if shown is _UNSET else shown
        if keepdim is not None:
            ctx._saved_keepdim = keepdim
        ctx.save_for_backward(indices)

    @classmethod
    def backward(cls, ctx, grad, grad_indices=None):
        (indices,) = ctx.saved_tensors
        keepdim = getattr(ctx, "_saved_keepdim", True)
        return selected_backward(grad, indices, ctx.dim, ctx._saved_self_sym_sizes,
                                 keepdim), None, None, None, None


class Sort(_Selecting):
    node_name = "SortBackward0"

    @staticmethod
    def forward(ctx, self, dim, descending, shown=_UNSET):
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            Sort._save(ctx, self, indices, dim, shown=shown)
            return self.copy(), indices
        indices = stable_argsort(self, dim, descending).astype(np.int64, copy=False)
        Sort._save(ctx, self, indices, dim, shown=shown)
        # torch sorts into empty_like(self): a dense input's layout, else row-major
        return (_layout.preserve(np.take_along_axis(self, indices, dim), self),
                _layout.preserve(indices, self))


class SortStable(Sort):
    node_name = "SortBackward1"


def _dim(input: Tensor, dim) -> int:
    return normalize_dim(int(dim), input._data.ndim)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool | None = None, *,
         out=None) -> SortResult:
    """(values, indices) along ``dim``; stable always (so ``stable=`` changes only the node)."""
    cls = Sort if stable is None else SortStable
    return SortResult(*cls.apply(input, _dim(input, dim), bool(descending),
                                 shown=shown_dim(dim)))


def argsort(input: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (``stable`` keeps ties in order)."""
    dim = _dim(input, dim)
    if input._data.ndim == 0:
        return Tensor._make(np.zeros((), np.int64))
    indices = stable_argsort(input._data, dim, descending).astype(np.int64)
    return Tensor._make(_layout.preserve(indices, input._data))  # as sort's indices


def msort(input: Tensor) -> Tensor:
    """sort along dim 0, values only"""
    return sort(input, 0).values


class Topk(_Selecting):
    node_name = "TopkBackward0"

    @staticmethod
    def forward(ctx, self, k, dim, largest, sorted_, shown=_UNSET):
        if self.dtype == np.bool_:
            raise RuntimeError("topk does not support bool dtypes on CPU")
        size = self.shape[dim] if self.ndim else 1
        if not 0 <= k <= size:
            raise RuntimeError("selected index k out of range")
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            Topk._save(ctx, self, indices, dim, shown=shown)
            return self.copy(), indices
        order = stable_argsort(self, dim, descending=largest)
        indices = np.take(order, np.arange(k), axis=dim).astype(np.int64, copy=False)
        Topk._save(ctx, self, indices, dim, shown=shown)
        return np.take_along_axis(self, indices, dim), indices


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True, *,
         out=None) -> TopkResult:
    """the k largest (or smallest) along ``dim``, in order (``sorted=False`` keeps that order)"""
    return TopkResult(*Topk.apply(input, int(k), _dim(input, dim), bool(largest), sorted,
                                  shown=shown_dim(dim)))


def _pick(self: np.ndarray, dim: int, keepdim: bool, position: np.ndarray):
    """values and indices at ``position`` (per slice, keepdims shape) of the stable order."""
    order = stable_argsort(self, dim)
    indices = np.take_along_axis(order, position, dim).astype(np.int64, copy=False)
    values = np.take_along_axis(self, indices, dim)
    if not keepdim:
        values, indices = np.squeeze(values, dim), np.squeeze(indices, dim)
    return values, indices


def _reduced_shape(self: np.ndarray, dim: int) -> tuple:
    return self.shape[:dim] + (1,) + self.shape[dim + 1:]


class Kthvalue(_Selecting):
    node_name = "KthvalueBackward0"

    @staticmethod
    def forward(ctx, self, k, dim, keepdim, shown=_UNSET):
        size = self.shape[dim] if self.ndim else 1
        if not size:
            raise IndexError(f"kthvalue(): Expected reduction dim {dim} to have non-zero size.")
        if not 1 <= k <= size:
            raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
        if self.ndim == 0:  # torch answers a 0-d input itself, of any dtype
            indices = np.zeros((), np.int64)
            Kthvalue._save(ctx, self, indices, dim, keepdim, shown)
            return self.copy(), indices
        if self.dtype == np.bool_:
            raise not_implemented("kthvalue_cpu", self.dtype)
        position = np.full(_reduced_shape(self, dim), k - 1)
        values, indices = _pick(self, dim, keepdim, position)
        Kthvalue._save(ctx, self, indices, dim, keepdim, shown)
        return values, indices


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,
             out=None) -> KthvalueResult:
    """the k-th smallest along ``dim`` (k from 1)"""
    return KthvalueResult(*Kthvalue.apply(input, int(k), _dim(input, dim), bool(keepdim),
                                          shown=shown_dim(dim)))


def _median_position(self: np.ndarray, dim: int, skip_nan: bool) -> np.ndarray:
    """Where the lower median sits in the stable order: NaN sorts last, so a slice with NaN
    picks its first NaN (median) or ignores them (nanmedian)."""
    nans = np.isnan(self).sum(axis=dim, keepdims=True) if self.dtype.kind in "fV" else \
        np.zeros(_reduced_shape(self, dim), np.int64)
    size = self.shape[dim]
    if skip_nan:
        return np.maximum(size - nans - 1, 0) // 2
    return np.where(nans > 0, size - nans, (size - 1) // 2)


class MedianDim(_Selecting):
    node_name = "MedianBackward1"
    _skip_nan = False
    _op = "median"

    @classmethod
    def forward(cls, ctx, self, dim, keepdim, shown=_UNSET):
        if self.ndim and self.shape[dim] == 0:  # before the dtype; nanmedian's says median() too
            raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
        if self.dtype == np.bool_:
            raise not_implemented("median_out", self.dtype)
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            cls._save(ctx, self, indices, dim, keepdim, shown)
            return self.copy(), indices
        values, indices = _pick(self, dim, keepdim, _median_position(self, dim, cls._skip_nan))
        cls._save(ctx, self, indices, dim, keepdim, shown)
        return values, indices


class NanmedianDim(MedianDim):
    node_name = "NanmedianBackward1"
    _skip_nan = True
    _op = "nanmedian"


class Median(Op):
    """the lower median of all elements; ties (and NaN) share the gradient evenly"""

    node_name = "MedianBackward0"
    saved_names = ("self", "result")
    _skip_nan = False

    @classmethod
    def forward(cls, ctx, self):
        if self.dtype == np.bool_:
            raise not_implemented("median_cpu", self.dtype)
        flat = self.reshape(-1)
        if flat.size == 0:
            result = np.asarray(np.nan, self.dtype) if self.dtype.kind in "fV" else \
                np.zeros((), self.dtype)
        else:
            position = _median_position(flat, 0, cls._skip_nan)
            result = np.asarray(flat[stable_argsort(flat, 0)[position[0]]])
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        mask = np.isnan(self._data) if np.isnan(result._data) else self._data == result._data
        count = max(int(mask.sum()), 1)
        return (grad / count).expand(self.shape).masked_fill(~mask, 0.0)


class Nanmedian(Median):
    node_name = "NanmedianBackward0"
    _skip_nan = True


def median(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """median(): the lower median; median(dim) -> (values, indices)"""
    if dim is None:
        return Median.apply(input)
    return MedianResult(*MedianDim.apply(input, _dim(input, dim), bool(keepdim),
                                         shown=shown_dim(dim)))


def nanmedian(input: Tensor, dim=None, keepdim: bool = False, *, out=None):
    """median ignoring NaN (NaN only where a slice is all NaN)"""
    if dim is None:
        return Nanmedian.apply(input)
    return NanmedianResult(*NanmedianDim.apply(input, _dim(input, dim), bool(keepdim),
                                               shown=shown_dim(dim)))


def _runs(sorted_rows: np.ndarray):
    """First and last position of the run of equal values each position belongs to; NaNs
    (sorted last) make one run, as torch's mode counts them."""
    n = sorted_rows.shape[1]
    positions = np.broadcast_to(np.arange(n), sorted_rows.shape)
    later, earlier = sorted_rows[:, 1:], sorted_rows[:, :-1]
    differs = later != earlier
    if sorted_rows.dtype.kind == "f":
        differs &= ~(np.isnan(later) & np.isnan(earlier))
    starts = np.ones(sorted_rows.shape, bool)
    starts[:, 1:] = differs
    ends = np.ones(sorted_rows.shape, bool)
    ends[:, :-1] = differs
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, positions, n), 1), axis=1), 1)
    return first, last


class Mode(_Selecting):
    """the most frequent value (the smallest of equally frequent ones) and its last index"""

    node_name = "ModeBackward0"

    @staticmethod
    def forward(ctx, self, dim, keepdim, shown=_UNSET):
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            Mode._save(ctx, self, indices, dim, keepdim, shown)
            return self.copy(), indices
        if self.shape[dim] == 0:
            raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
        moved = np.moveaxis(self, dim, -1)
        rows = moved.reshape(-1, moved.shape[-1])
        order = np.argsort(ordered(rows), axis=1, kind="stable")
        first, last = _runs(np.take_along_axis(ordered(rows), order, 1))
        best = np.argmax(last - first, axis=1)[:, None]  # first longest run: smallest value
        picked = np.take_along_axis(order, np.take_along_axis(last, best, 1), 1)
        indices = np.moveaxis(picked.reshape(moved.shape[:-1] + (1,)), -1, dim)
        indices = indices.astype(np.int64)
        values = np.take_along_axis(self, indices, dim)
        if not keepdim:
            values, indices = np.squeeze(values, dim), np.squeeze(indices, dim)
        Mode._save(ctx, self, indices, dim, keepdim, shown)
        return values, indices


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *, out=None) -> ModeResult:
    """The most frequent value along ``dim`` and an index where it occurs."""
    return ModeResult(*Mode.apply(input, _dim(input, dim), bool(keepdim),
                                  shown=shown_dim(dim)))
