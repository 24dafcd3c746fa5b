"""Scans and the reductions torch fuses: cumprod, cummax / cummin, logcumsumexp, diff,
var_mean / std_mean, aminmax, nansum, nanmean.

Backwards are written with tensor ops (double backward comes free); the ones whose closed form
divides by the input (cumprod) fall back to an O(n^2) product when the input has zeros, as
torch's does.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from .join import cat
from ._reduce_util import (_UNSET, _accumulator, _const, _numpy_dtype, _restore,
                           reduce_dims, shown_dim, shown_dims)
from ._util import normalize_dim, ordered, quiet_errors
from .minmax import _ValuesIndices, return_types
from .reduce import _var_args, _var_backward, _var_context, _var_shown, _variance
from .sorting import _result_type
from ._base import not_implemented, Op


def _reversed_cumsum(tensor: Tensor, dim: int) -> Tensor:
    return tensor.flip(dim).cumsum(dim).flip(dim)


class Cumprod(Op):
    """d x_i = sum over j >= i of grad_j * result_j / x_i (without dividing where x has zeros)"""

    node_name = "CumprodBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dim, dtype, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        if self.ndim == 0:
            result = self.astype(dtype)
        else:
            result = _layout.contiguous(
                np.cumprod(self, axis=dim, dtype=_accumulator(dtype)).astype(dtype))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        dim = ctx.dim
        if self.ndim == 0 or self._data.size <= 1 or self._data.shape[dim] == 1:
            return grad, None, None  # the product is the input itself: torch hands grad on
        if not np.any(self._data == 0):
            return _reversed_cumsum(grad * result, dim) / self, None, None
        # row i of the square: self with element i set to 1, so its cumprod skips x_i
        shape = self._data.shape
        n = shape[dim]
        trailing = (1,) * (len(shape) - dim - 1)
        square = self.unsqueeze(dim).expand(shape[:dim] + (n, n) + shape[dim + 1:])
        square = square.masked_fill(np.eye(n, dtype=bool).reshape((n, n) + trailing), 1.0)
        later = np.triu(np.ones((n, n), bool)).reshape((n, n) + trailing)  # j >= i
        products = square.cumprod(dim + 1) * _const(later.astype(self._data.dtype))
        return (products * grad.unsqueeze(dim)).sum(dim + 1), None, None


def cumprod(input: Tensor, dim: int, *, dtype=None, out=None) -> Tensor:
    """Running product along ``dim``."""
    return Cumprod.apply(input, normalize_dim(dim, input._data.ndim), _numpy_dtype(dtype),
                         shown=shown_dim(dim))


CummaxResult = _result_type("cummax")
CumminResult = _result_type("cummin")


class Cummax(Op):
    """running max and the index of its latest occurrence (a NaN stays the max)"""

    node_name = "CummaxBackward0"
    saved_names = ("self", "indices")
    _accumulate = np.maximum

    @classmethod
    def forward(cls, ctx, self, dim, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            ctx.save_for_backward(self, indices)
            return self.copy(), indices
        with quiet_errors():  # ml_dtypes' bfloat16 comparisons flag NaN as invalid
            values = cls._accumulate.accumulate(self, axis=dim)
        positions = np.arange(self.shape[dim]).reshape((-1,) + (1,) * (self.ndim - dim - 1))
        hit = self == values
        if self.dtype.kind in "fV":
            hit |= np.isnan(self)
        indices = np.maximum.accumulate(np.where(hit, positions, 0), axis=dim).astype(np.int64)
        values, indices = _layout.contiguous(values), _layout.contiguous(indices)  # as torch's
        ctx.save_for_backward(self, indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        self, indices = ctx.saved_tensors
        if self.ndim == 0:
            return grad, None
        zeros = Tensor._make(np.zeros(self._data.shape, grad._data.dtype))
        return zeros.scatter_add(ctx.dim, indices, grad), None


class Cummin(Cummax):
    node_name = "CumminBackward0"
    _accumulate = np.minimum


def cummax(input: Tensor, dim: int) -> CummaxResult:
    """Running maximum along ``dim`` and the index where each was reached."""
    return CummaxResult(*Cummax.apply(input, normalize_dim(dim, input._data.ndim),
                                      shown=shown_dim(dim)))


def cummin(input: Tensor, dim: int) -> CumminResult:
    """Running minimum along ``dim`` and the index where each was reached."""
    return CumminResult(*Cummin.apply(input, normalize_dim(dim, input._data.ndim),
                                      shown=shown_dim(dim)))


class Logcumsumexp(Op):
    """log of the running sum of exp;  d x_i = sum over j >= i of grad_j exp(x_i - result_j),
    summed in log space for the positive and the negative parts of grad (no overflow)"""

    node_name = "LogcumsumexpBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dim, shown=_UNSET):
        ctx.dim, ctx._saved_dim = dim, dim if shown is _UNSET else shown
        if self.dtype.kind not in "fV":
            raise not_implemented("logcumsumexp_out_cpu", self.dtype)
        result = self.copy() if self.ndim == 0 else _layout.contiguous(
            np.logaddexp.accumulate(self, axis=dim))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        if self.ndim == 0:
            return grad, None
        dim = ctx.dim
        g = grad._data
        parts = []
        for sign in (1.0, -1.0):
            log_grad = (grad * sign).masked_fill(~(g * sign > 0), 1.0).log()
            log_grad = log_grad.masked_fill(~(g * sign > 0), float("-inf"))
            suffix = (log_grad - result).flip(dim).logcumsumexp(dim).flip(dim)
            parts.append((suffix + self).exp())
        return parts[0] - parts[1], None


def logcumsumexp(input: Tensor, dim: int, *, out=None) -> Tensor:
    """Running ``log(sum(exp(x)))`` along ``dim``, computed stably."""
    return Logcumsumexp.apply(input, normalize_dim(dim, input._data.ndim), shown=shown_dim(dim))


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """the n-th forward difference along dim (logical xor for bools), as torch composes it"""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = normalize_dim(dim, input._data.ndim)
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        input = cat([_along(p, input, dim) for p in parts], dim)
    for _ in range(n):  # one difference per order
        size = input._data.shape[dim]
        if size == 0:
            break
        later, earlier = input.narrow(dim, 1, size - 1), input.narrow(dim, 0, size - 1)
        input = later.logical_xor(earlier) if input._data.dtype == np.bool_ else later - earlier
    return input


def _along(part, input: Tensor, dim: int) -> Tensor:
    if part._data.ndim != input._data.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    return part


# ---------------------------------------------------------------------------------------------
# var_mean / std_mean
# ---------------------------------------------------------------------------------------------
def _mean(self: np.ndarray, dims: tuple, keepdim: bool) -> np.ndarray:
    work = _accumulator(self.dtype)
    return _layout.contiguous(
        np.asarray(np.mean(self, axis=dims, keepdims=keepdim, dtype=work)).astype(self.dtype))


def _mean_backward(ctx, grad: Tensor, self: Tensor) -> Tensor:
    shape = self._data.shape
    count = int(np.prod([shape[d] for d in ctx.dims], dtype=np.int64))
    return _restore(grad, shape, ctx.dims, ctx._saved_keepdim).expand(shape) / count


class VarMean(Op):
    node_name = "VarMeanBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None,
                shown=_UNSET):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction, shown)
        ctx.save_for_backward(self)
        return _variance(self, dims, correction, keepdim), _mean(self, dims, keepdim)

    @staticmethod
    def backward(ctx, grad_var, grad_mean):
        (self,) = ctx.saved_tensors
        return _var_backward(ctx, grad_var, self) + _mean_backward(ctx, grad_mean, self)


class StdMean(Op):
    node_name = "StdMeanBackward0"
    saved_names = ("self", "result0")

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None,
                shown=_UNSET):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction, shown)
        std = np.asarray(np.sqrt(_variance(self, dims, correction, keepdim)))
        ctx.save_for_backward(self, std)
        return std, _mean(self, dims, keepdim)

    @staticmethod
    def backward(ctx, grad_std, grad_mean):
        self, std = ctx.saved_tensors
        grad_var = (grad_std / (std * 2)).masked_fill((std == 0)._data, 0.0)
        return _var_backward(ctx, grad_var, self) + _mean_backward(ctx, grad_mean, self)


def var_mean(input: Tensor, dim=_UNSET, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """(var, mean) in one pass"""
    return VarMean.apply(input, *_var_args("var_mean", input, dim, unbiased, keepdim, correction),
                         shown=_var_shown(dim))


def std_mean(input: Tensor, dim=_UNSET, unbiased=None, keepdim: bool = False, *,
             correction=None) -> tuple:
    """``(std, mean)`` over ``dim`` in one call (``correction`` as in ``std``)."""
    return StdMean.apply(input, *_var_args("std_mean", input, dim, unbiased, keepdim, correction),
                         shown=_var_shown(dim))


# ---------------------------------------------------------------------------------------------
# aminmax, nansum, nanmean
# ---------------------------------------------------------------------------------------------
class AminmaxResult(_ValuesIndices):
    """torch.return_types.aminmax: (min, max)"""

    __slots__ = ()
    _name = "aminmax"

    @property
    def min(self) -> Tensor:
        return self[0]

    @property
    def max(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


return_types.aminmax = AminmaxResult


class Aminmax(Op):
    """ties share each gradient evenly, as amin and amax do"""

    node_name = "AminmaxBackward0"
    saved_names = ("self", "min", "max")

    @staticmethod
    def forward(ctx, self, dims, keepdim, dim):
        for d in (dims if dim is not None else ()):
            if self.shape[d] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        if self.size == 0 and dim is None:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        ctx.dims, ctx._saved_dim, ctx._saved_keepdim = dims, dim, keepdim
        with quiet_errors():
            low = _layout.contiguous(np.asarray(np.min(self, axis=dims, keepdims=keepdim)))
            high = _layout.contiguous(np.asarray(np.max(self, axis=dims, keepdims=keepdim)))
        ctx.save_for_backward(self, low, high)
        return low, high

    @staticmethod
    def backward(ctx, grad_min, grad_max):
        self, low, high = ctx.saved_tensors
        total = None
        for grad, result in ((grad_min, low), (grad_max, high)):
            shape, dims, keepdim = self._data.shape, ctx.dims, ctx._saved_keepdim
            mask = _restore(result, shape, dims, keepdim)._data == self._data
            count = mask.sum(axis=dims, keepdims=True)
            part = (_restore(grad, shape, dims, keepdim) / _const(count)) * _const(mask)
            total = part if total is None else total + part
        return total, None, None, None


def aminmax(input: Tensor, *, dim=None, keepdim: bool = False) -> AminmaxResult:
    """(min, max) over all elements or one dim"""
    dims = reduce_dims(None if dim is None else normalize_dim(int(dim), input._data.ndim),
                       input._data.ndim)
    return AminmaxResult(*Aminmax.apply(input, dims, keepdim, shown_dim(dim)))


class Nansum(Op):
    """the sum treating NaN as 0;  d = grad where self is not NaN"""

    node_name = "NansumBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype, dim):
        ctx.dims, ctx._saved_dim, ctx._saved_keepdim = dims, dim, keepdim
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        ctx.save_for_backward(self)
        total = np.nansum(ordered(self), axis=dims, keepdims=keepdim, dtype=_accumulator(dtype))
        return _layout.contiguous(np.asarray(total).astype(dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        shape = self._data.shape
        grad = _restore(grad, shape, ctx.dims, ctx._saved_keepdim).expand(shape)
        return grad.masked_fill(np.isnan(self._data), 0.0), None, None, None, None


def _dims_of(input: Tensor, dim):
    """The dims to reduce, and ``dim`` as torch's node shows it (as given)."""
    return reduce_dims(dim, input._data.ndim), shown_dims(dim)


def nansum(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Sum treating NaN as zero."""
    dims, saved = _dims_of(input, dim)
    return Nansum.apply(input, dims, keepdim, _numpy_dtype(dtype), saved)


def nanmean(input: Tensor, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """nansum / the count of non-NaN elements (as torch composes it)"""
    if dtype is None and input._data.dtype.kind not in "fV":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_dtype.scalar_type_name(input._data.dtype)}")
    dims, saved = _dims_of(input, dim)
    count = Tensor._make(np.asarray(np.sum(~np.isnan(input._data), axis=dims, keepdims=keepdim),
                                    np.int64))
    return Nansum.apply(input, dims, keepdim, _numpy_dtype(dtype), saved) / count
