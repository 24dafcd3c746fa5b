"""Reductions: sum, mean, var, std, prod, any, all. Forward on NumPy arrays; each backward
restores the reduced dims and is written with Tensor ops, so double backward comes free.

Non-tensor state is kept on ``ctx`` under torch's inspection names (``_saved_dim``,
``_saved_keepdim``, ``_saved_self_sym_sizes``) so ``grad_fn._saved_dim`` reads as in torch.
The reductions that pick elements (max, min, amax, argmax ...) live in ``minmax.py``, softmax
and logsumexp in ``softmax.py``, cumsum in ``cumsum.py``; all are importable from here.
"""
from __future__ import annotations

import builtins

import numpy as np

from .._warnings import warn
from ..autograd import grad_mode
from ..tensor import Tensor
from . import _layout
from ._reduce_util import (_UNSET, _accumulator, _check_float, _const, _kept_shape, _numpy_dtype,
                           _restore, as_dtype, reduce_dims, shown_dim, shown_dims)
from ._reduce_util import torch_type_name  # noqa: F401  (its old import path)
from ._util import normalize_dim, quiet, quiet_errors
from ._base import _ARRAY_DTYPES, Op


# -- sum and mean ---------------------------------------------------------------------------------
class Sum(Op):
    """d sum = grad broadcast over the reduced dims"""

    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None, shown=_UNSET):
        # the formula reads ``dims`` (normalized); the node shows ``dim`` as the caller gave it
        ctx._saved_dim = dims if shown is _UNSET else shown
        ctx._saved_keepdim = keepdim
        return _sum_forward(ctx, self, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(ctx, grad)


def _sum_forward(ctx, self, dims, keepdim, dtype):
    ctx._saved_self_sym_sizes, ctx.dims, ctx.keepdim = self.shape, dims, keepdim
    if dtype is None:
        dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
    total = quiet(_sum, self, dims, keepdim, _accumulator(dtype))
    return np.asarray(total).astype(dtype, copy=False)


class SumAll(Sum):
    """``x.sum()``: torch's node keeps only the input's sizes"""

    node_name = "SumBackward0"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        return _sum_forward(ctx, self, dims, keepdim, dtype)


def sum(input: Tensor, dim=_UNSET, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.sum: integers and bools sum to int64; half precision accumulates in float32."""
    return _sum_or_mean(Sum, SumAll, input, dim, keepdim, dtype)


class Mean(Op):
    """d mean = grad broadcast over the reduced dims / their element count"""

    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None, shown=_UNSET):
        ctx._saved_dim = dims if shown is _UNSET else shown
        ctx._saved_keepdim = keepdim
        return _mean_forward(ctx, self, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(ctx, grad) / ctx.count


def _mean_forward(ctx, self, dims, keepdim, dtype):
    if dtype is None:
        _check_float(self, "mean")
        dtype = self.dtype
    ctx._saved_self_sym_sizes, ctx.dims, ctx.keepdim = self.shape, dims, keepdim
    ctx._saved_self_sym_numel = self.size
    ctx.count = int(np.prod([self.shape[d] for d in dims], dtype=np.int64))
    total = quiet(_sum, self, dims, keepdim, _accumulator(dtype))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(total / total.dtype.type(ctx.count)).astype(dtype, copy=False)


class MeanAll(Mean):
    """``x.mean()``: torch's node keeps only the input's sizes and element count"""

    node_name = "MeanBackward0"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        return _mean_forward(ctx, self, dims, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        data = grad._data
        if (grad_mode.is_grad_enabled() or type(grad) is not Tensor or data.ndim
                or data.dtype not in _ARRAY_DTYPES or not ctx.count):
            return Mean.backward(ctx, grad)  # (an empty input's gradient keeps zero strides)
        # the one value grad / count, filled in: dividing the expanded gradient computes it
        # once per element from a zero-stride input, NumPy's slow loop (70 us on 131K values)
        with np.errstate(all="ignore"):
            value = np.true_divide(data, ctx.count)
        return Tensor._make(np.full(ctx._saved_self_sym_sizes, value, data.dtype))



def mean(input: Tensor, dim=_UNSET, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.mean: floating inputs only (or an explicit ``dtype``); half accumulates in float32."""
    return _sum_or_mean(Mean, MeanAll, input, dim, keepdim, dtype)


def _sum_or_mean(op, op_all, input: Tensor, dim, keepdim: bool, dtype) -> Tensor:
    """``x.sum()`` (no dim given) is its own overload in torch, with its own node name."""
    if dim is _UNSET and not keepdim:
        return op_all.apply(input, tuple(range(input._data.ndim)), False, _numpy_dtype(dtype))
    dim = None if dim is _UNSET else dim
    return op.apply(input, reduce_dims(dim, input._data.ndim), keepdim, _numpy_dtype(dtype),
                    shown=shown_dims(dim))


def _expand_back(ctx, grad: Tensor) -> Tensor:
    """grad broadcast over the reduced dims again: the gradient of a sum."""
    shape = ctx._saved_self_sym_sizes
    return _restore(grad, shape, ctx.dims, ctx.keepdim).expand(shape)


def _summed_dims(from_shape: tuple, shape: tuple) -> tuple:
    """The dims of ``from_shape`` that summing to ``shape`` (its broadcast source) removes."""
    lead = len(from_shape) - len(shape)
    return tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and from_shape[i + lead] != 1)


def sum_array_to(array: np.ndarray, shape: tuple) -> np.ndarray:
    """A floating array summed down to ``shape`` (a shape it broadcasts from): what
    ``sum_to_size`` gives when nothing is recorded, for formulas that work on arrays."""
    from_shape = array.shape
    if from_shape == shape:
        return array
    row = len(shape) == 1 and len(from_shape) == 2 and from_shape[1] == shape[0]
    token = quiet_errors.enter()
    try:  # Sum's arithmetic (np.sum is this reduce), without its Python layers
        if row:  # a bias row: the fresh 1-D result is row-major as it comes
            return np.add.reduce(array, axis=0, dtype=_accumulator(array.dtype)).astype(
                array.dtype, copy=False)
        summed = np.add.reduce(array, axis=_summed_dims(from_shape, shape),
                               dtype=_accumulator(array.dtype), keepdims=True)
    finally:
        quiet_errors.exit(token)
    return _layout.contiguous(summed.astype(array.dtype, copy=False)).reshape(shape)


def sum_to_size(input: Tensor, *size) -> Tensor:
    """Sum broadcast dims away so the result has ``size`` (the reverse of expand)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    if input._data.shape == shape:
        return input
    array = input._data
    dims = _summed_dims(array.shape, shape)
    if dims and array.dtype.kind == "f" and type(input) is Tensor and not (
            grad_mode._state.enabled and input.requires_grad):
        # nothing to record (the engine reducing a broadcast gradient, say): Sum's forward
        # without its node, the same arithmetic in the same dtypes
        return Tensor._make(sum_array_to(array, shape))
    if not shape:  # torch sums everything at once here (SumBackward0)
        return sum(input)
    result = sum(input, dims, keepdim=True)
    return result.reshape(shape) if result._data.shape != shape else result


# -- variance and standard deviation --------------------------------------------------------------
def _variance(self: np.ndarray, dims: tuple, correction: float, keepdim: bool) -> np.ndarray:
    work = _accumulator(self.dtype)
    x = self.astype(work, copy=False)
    count = int(np.prod([self.shape[d] for d in dims], dtype=np.int64))
    dof = builtins.max(0.0, count - correction)
    if dof <= 0:
        warn("var(): degrees of freedom is <= 0. Correction should be strictly less "
             "than the reduction factor (input numel divided by output numel).",
             UserWarning)
    with np.errstate(invalid="ignore", divide="ignore"):
        if 0 < count < x.size:
            # torch reduces over some dims with a running (Welford) mean, exact where a row is
            # constant, so std there is exactly 0 and its gradient is masked to 0. Shifting each
            # row by its first element gives the same exact zeros (over all dims torch makes two
            # plain passes, as below).
            x = x - x[tuple(slice(0, 1) if d in dims else slice(None) for d in range(x.ndim))]
        centered = x - np.sum(x, axis=dims, keepdims=True) / work.type(builtins.max(count, 1))
        squares = np.sum(centered * centered, axis=dims, keepdims=keepdim)
        return _layout.contiguous(
            np.asarray(squares / work.type(dof)).astype(self.dtype, copy=False))


def _var_backward(ctx, grad: Tensor, self: Tensor) -> Tensor:
    """(2 / (N - correction)) * grad * (self - mean); with no dim and no degrees of freedom
    torch gives inf, or nan where the element equals the mean."""
    dims, correction = ctx.dims, ctx.correction
    if ctx.all_dims:
        dof = self._data.size - correction
        if dof <= 0:
            at_mean = (self == self.mean())._data
            return grad * _const(np.where(at_mean, np.nan, np.inf).astype(self._data.dtype))
        return (2.0 / dof) * grad * (self - self.mean())
    grad = _restore(grad, self._data.shape, dims, ctx.keepdim)
    count = int(np.prod([self._data.shape[d] for d in dims], dtype=np.int64))
    with np.errstate(divide="ignore"):
        scale = float(np.float64(2.0) / np.float64(count - correction))
    return scale * grad * (self - self.mean(dims, keepdim=True))


def _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction,
                 shown) -> None:
    if self.dtype.kind not in "fcV":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ctx.dims, ctx.correction, ctx.all_dims, ctx.keepdim = dims, correction, all_dims, keepdim
    # torch's node shows ``dim`` as given: None for none (and for ``()``, which its
    # overloads read as no dim), negative dims read back unsigned
    ctx._saved_dim = (None if all_dims else dims) if shown is _UNSET else shown
    ctx._saved_keepdim, ctx._saved_correction = keepdim, saved_correction


class Var(Op):
    """d var = 2 (x - mean) / (N - correction)"""

    node_name = "VarBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None,
                shown=_UNSET):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction, shown)
        ctx.save_for_backward(self)
        return _variance(self, dims, correction, keepdim)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _var_backward(ctx, grad, self)


class Std(Op):
    """d std = d var / (2 std), zero where std is zero"""

    node_name = "StdBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None,
                shown=_UNSET):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction, shown)
        result = np.asarray(np.sqrt(_variance(self, dims, correction, keepdim)))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        grad_var = (grad / (result * 2)).masked_fill((result == 0)._data, 0.0)
        return _var_backward(ctx, grad_var, self)


def _var_args(op: str, input: Tensor, dim, unbiased, keepdim, correction):
    """torch's overloads: var(unbiased), var(dim, unbiased, keepdim), var(dim, *, correction)."""
    if isinstance(dim, bool):  # the legacy var(unbiased) overload
        if unbiased is not None:
            raise TypeError(f"{op}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"(correction=..., unbiased=...): pass only one of them")
    # torch shows correction None for a bare var(), the number it used otherwise
    bare = dim is _UNSET and unbiased is None and correction is None and not keepdim
    dim = None if dim is _UNSET else dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    saved = None if bare else correction
    all_dims = dim is None or (not isinstance(dim, (int, np.integer)) and len(dim) == 0)
    return reduce_dims(dim, input._data.ndim), correction, keepdim, all_dims, saved


def _var_shown(dim):
    """``dim`` as var's node shows it (its overloads read a bool or ``()`` as no dim)."""
    if dim is _UNSET or dim is None or isinstance(dim, bool):
        return None
    return shown_dims(dim)


def var(input: Tensor, dim=_UNSET, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """torch.var: sum((x - mean)^2) / (N - correction); ``unbiased=False`` is correction 0."""
    return Var.apply(input, *_var_args("var", input, dim, unbiased, keepdim, correction),
                     shown=_var_shown(dim))


def std(input: Tensor, dim=_UNSET, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """Standard deviation over ``dim`` with ``correction`` (1, Bessel's, by default)."""
    return Std.apply(input, *_var_args("std", input, dim, unbiased, keepdim, correction),
                     shown=_var_shown(dim))


# -- prod -----------------------------------------------------------------------------------------
def _others_product(x: np.ndarray, axis: int) -> np.ndarray:
    """For each element, the product of the other elements along ``axis`` (zero-safe, O(n)):
    an exclusive cumulative product from the left times one from the right."""
    n = x.shape[axis]
    ones = np.ones(_kept_shape(x.shape, (axis,)), x.dtype)
    head = np.take(x, np.arange(n - 1), axis=axis)
    tail = np.flip(np.take(x, np.arange(1, n), axis=axis), axis)
    left = np.cumprod(np.concatenate([ones, head], axis), axis)
    right = np.flip(np.cumprod(np.concatenate([ones, tail], axis), axis), axis)
    return left * right


def _others_product_graph(x: Tensor, dim: int) -> Tensor:
    """The same product built from differentiable ops, for create_graph: each row of an
    (n, n) expansion has its diagonal set to one. O(n^2), as torch's double backward is."""
    shape = x._data.shape
    n = shape[dim]
    square = x.unsqueeze(dim).expand(shape[:dim] + (n, n) + shape[dim + 1:])
    diagonal = np.eye(n, dtype=bool).reshape((n, n) + (1,) * (len(shape) - dim - 1))
    return square.masked_fill(diagonal, 1.0).prod(dim + 1)


def _prod_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """grad * result / self without zeros; otherwise grad times the product of the others."""
    data = self._data
    zeros = int(np.count_nonzero(data == 0))
    if zeros == 0:
        return grad * (result / self)
    alone = data.size == 1 if dim is None else data.shape[dim] == 1
    if not grad_mode.is_grad_enabled() or alone:
        # (an element alone along ``dim`` has no others: its factor is a constant one, so the
        # gradient does not depend on the input, as torch's zero-safe formula gives it)
        if dim is None and zeros > 1:
            return Tensor._make(np.zeros_like(data))
        flat = data.reshape(-1) if dim is None else data
        others = _others_product(flat, 0 if dim is None else dim).reshape(data.shape)
        return grad * _const(others)
    if dim is None:
        return grad * _others_product_graph(self.reshape(-1), 0).reshape(data.shape)
    return grad * _others_product_graph(self, dim)


class Prod(Op):
    node_name = "ProdBackward1"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dim, keepdim, dtype=None, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown
        ctx._saved_keepdim = keepdim
        return _prod_forward(ctx, self, dim, keepdim, dtype)

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        if self.ndim == 0:
            return grad, None, None, None
        self = as_dtype(self, result._data.dtype)  # torch differentiates in ``dtype``
        dim = ctx.dim
        if dim is not None:
            shape = self._data.shape
            grad = _restore(grad, shape, (dim,), ctx.keepdim)
            result = _restore(result, shape, (dim,), ctx.keepdim)
        return _prod_backward(grad, self, result, dim), None, None, None


def _prod_forward(ctx, self, dim, keepdim, dtype):
    ctx.dim, ctx.keepdim = dim, keepdim
    if dtype is None:
        dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
    axis = None if dim is None or self.ndim == 0 else dim
    result = np.prod(self, axis=axis, keepdims=keepdim and axis is not None,
                     dtype=_accumulator(dtype))
    result = _layout.contiguous(np.asarray(result).astype(dtype, copy=False))
    ctx.save_for_backward(self, result)
    return result


class ProdAll(Prod):
    """``x.prod()``: torch's node keeps no dim"""

    node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, self, dim, keepdim, dtype=None):
        return _prod_forward(ctx, self, dim, keepdim, dtype)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype=None) -> Tensor:
    """torch.prod over all elements or one dim; integers give int64."""
    if dim is None:
        return ProdAll.apply(input, None, False, _numpy_dtype(dtype))
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return Prod.apply(input, normalize_dim(int(dim), input._data.ndim), keepdim,
                      _numpy_dtype(dtype), shown=shown_dim(dim))


# -- any / all --------------------------------------------------------------------------------
def _logical_reduce(fn, input: Tensor, dim, keepdim: bool) -> Tensor:
    """all/any: unlike the other reductions, an empty dim list reduces over no dim at all (the
    result is the input tested for nonzero), as torch's all and any do."""
    data = input._data
    if dim is not None and not isinstance(dim, (int, np.integer)) and len(dim) == 0:
        dims = ()
    else:
        dims = reduce_dims(dim, data.ndim)
    result = _layout.contiguous(np.asarray(fn(data, axis=dims, keepdims=keepdim)))
    return Tensor._make(result.astype(np.uint8) if data.dtype == np.uint8 else result)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """True where any element is nonzero; uint8 inputs give uint8, as in torch."""
    return _logical_reduce(np.any, input, dim, keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """True when every element (or every element along ``dim``) is nonzero."""
    return _logical_reduce(np.all, input, dim, keepdim)


# the reductions kept in their own modules, importable from here (their old home)
from .cumsum import Cumsum, ReversedCumsum, cumsum  # noqa: E402,F401
from .minmax import (Amax, Amin, MaxAll, MaxDim, MaxResult, MinAll,  # noqa: E402,F401
                     MinDim, MinResult, amax, amin, argmax, argmin, max, min, return_types)
from .softmax import (LogSoftmax, Logsumexp, Softmax, log_softmax,  # noqa: E402,F401
                      logsumexp, softmax)

__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "cumsum", "log_softmax",
           "logsumexp", "max", "mean", "min", "prod", "softmax", "std", "sum", "sum_to_size",
           "var"]


def _sum(array, dims, keepdim, dtype):
    return _layout.contiguous(np.asarray(np.sum(array, axis=dims, keepdims=keepdim, dtype=dtype)))
