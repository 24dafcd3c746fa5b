"""Reductions, scans and softmax. Forward on NumPy arrays; each backward restores the reduced
dims and is written with Tensor ops, so double backward comes free.

Non-tensor state is kept on ``ctx`` under torch's inspection names (``_saved_dim``,
``_saved_keepdim``, ``_saved_self_sym_sizes``) so ``grad_fn._saved_dim`` reads as in torch.
"""
from __future__ import annotations

import builtins
import types
import warnings

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..tensor import Tensor
from ._util import normalize_dim
from .elementwise import _Op

_UNSET = object()  # ``x.sum()`` and ``x.sum(dim=None)`` are different overloads in torch
_TORCH_NAME = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def torch_type_name(array: np.ndarray) -> str:
    """torch's ScalarType name of an array's dtype (``Float``, ``Long`` ...)."""
    return _TORCH_NAME[array.dtype.name]


def reduce_dims(dim, ndim: int) -> tuple:
    """``dim`` (None, int or sequence) as sorted non-negative axes; None and an empty sequence
    mean every dim, as in torch. A 0-d tensor accepts dim 0/-1 and reduces over nothing."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, (int, np.integer)) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    wrapped = []
    for d in dims:
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool):
            raise TypeError(f"dim must be an int or a tuple of ints, not {type(d).__name__}")
        d = normalize_dim(int(d), ndim)
        if d in wrapped:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        wrapped.append(d)
    return tuple(sorted(wrapped)) if ndim else ()


def _kept_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def _restore(grad: Tensor, shape: tuple, dims: tuple, keepdim: bool) -> Tensor:
    """A reduced tensor reshaped so it broadcasts against the input again."""
    if not keepdim and dims:
        return grad.reshape(_kept_shape(shape, dims))
    return grad


def _accumulator(dtype: np.dtype) -> np.dtype:
    """torch accumulates half precision in float32 on the CPU."""
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _numpy_dtype(dtype) -> np.dtype | None:
    return None if dtype is None else _dtype.to_numpy_dtype(dtype)


def _const(array: np.ndarray) -> Tensor:
    return Tensor._make(np.asarray(array))


def as_dtype(tensor: Tensor, dtype: np.dtype) -> Tensor:
    """``tensor.to(dtype)`` for a NumPy dtype, recorded only when it changes something."""
    if tensor._data.dtype == dtype:
        return tensor
    return tensor.to(_dtype.from_numpy_dtype(dtype))


def _check_float(array: np.ndarray, op: str) -> None:
    if array.dtype.kind not in "fc":
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {torch_type_name(array)}")


def _check_nonempty(array: np.ndarray, dims: tuple, op: str, all_dims: bool) -> None:
    """torch refuses max/amax/argmax over an empty slice: the reduction has no identity."""
    if all_dims and array.size == 0:
        raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                           f"== 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if array.shape[d] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")


# -- sum and mean ---------------------------------------------------------------------------------
class Sum(_Op):
    """d sum = grad broadcast over the reduced dims"""

    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        ctx._saved_self_sym_sizes, ctx._saved_dim, ctx._saved_keepdim = self.shape, dims, keepdim
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        total = np.sum(self, axis=dims, keepdims=keepdim, dtype=_accumulator(dtype))
        return np.asarray(total).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx._saved_self_sym_sizes
        return _restore(grad, shape, ctx._saved_dim, ctx._saved_keepdim).expand(shape)


class SumAll(Sum):
    node_name = "SumBackward0"


def sum(input: Tensor, dim=_UNSET, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.sum: integers and bools sum to int64; half precision accumulates in float32."""
    if dim is _UNSET and not keepdim:
        return SumAll.apply(input, tuple(range(input._data.ndim)), False, _numpy_dtype(dtype))
    dims = reduce_dims(None if dim is _UNSET else dim, input._data.ndim)
    return Sum.apply(input, dims, keepdim, _numpy_dtype(dtype))


class Mean(_Op):
    """d mean = grad broadcast over the reduced dims / their element count"""

    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, self, dims, keepdim, dtype=None):
        if dtype is None:
            _check_float(self, "mean")
            dtype = self.dtype
        ctx._saved_self_sym_sizes, ctx._saved_dim, ctx._saved_keepdim = self.shape, dims, keepdim
        ctx._saved_self_sym_numel = self.size
        ctx.count = int(np.prod([self.shape[d] for d in dims], dtype=np.int64))
        total = np.sum(self, axis=dims, keepdims=keepdim, dtype=_accumulator(dtype))
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(total / total.dtype.type(ctx.count)).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        shape = ctx._saved_self_sym_sizes
        grad = _restore(grad, shape, ctx._saved_dim, ctx._saved_keepdim)
        return grad.expand(shape) / ctx.count


class MeanAll(Mean):
    node_name = "MeanBackward0"


def mean(input: Tensor, dim=_UNSET, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.mean: floating inputs only (or an explicit ``dtype``); half accumulates in float32."""
    if dim is _UNSET and not keepdim:
        return MeanAll.apply(input, tuple(range(input._data.ndim)), False, _numpy_dtype(dtype))
    dims = reduce_dims(None if dim is _UNSET else dim, input._data.ndim)
    return Mean.apply(input, dims, keepdim, _numpy_dtype(dtype))


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


# -- variance and standard deviation --------------------------------------------------------------
def _variance(self: np.ndarray, dims: tuple, correction: float, keepdim: bool) -> np.ndarray:
    work = _accumulator(self.dtype)
    x = self.astype(work, copy=False)
    count = int(np.prod([self.shape[d] for d in dims], dtype=np.int64))
    dof = builtins.max(0.0, count - correction)
    if dof <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=4)
    with np.errstate(invalid="ignore", divide="ignore"):
        centered = x - np.sum(x, axis=dims, keepdims=True) / work.type(builtins.max(count, 1))
        squares = np.sum(centered * centered, axis=dims, keepdims=keepdim)
        return np.asarray(squares / work.type(dof)).astype(self.dtype, copy=False)


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
    grad = _restore(grad, self._data.shape, dims, ctx._saved_keepdim)
    count = int(np.prod([self._data.shape[d] for d in dims], dtype=np.int64))
    with np.errstate(divide="ignore"):
        scale = float(np.float64(2.0) / np.float64(count - correction))
    return scale * grad * (self - self.mean(dims, keepdim=True))


def _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction) -> None:
    if self.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    ctx.dims, ctx.correction, ctx.all_dims = dims, correction, all_dims
    ctx._saved_dim = None if all_dims else dims
    ctx._saved_keepdim, ctx._saved_correction = keepdim, saved_correction


class Var(_Op):
    """d var = 2 (x - mean) / (N - correction)"""

    node_name = "VarBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction)
        ctx.save_for_backward(self)
        return _variance(self, dims, correction, keepdim)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _var_backward(ctx, grad, self)


class Std(_Op):
    """d std = d var / (2 std), zero where std is zero"""

    node_name = "StdBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, correction, keepdim, all_dims, saved_correction=None):
        _var_context(ctx, self, dims, correction, keepdim, all_dims, saved_correction)
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


def var(input: Tensor, dim=_UNSET, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    """torch.var: sum((x - mean)^2) / (N - correction); ``unbiased=False`` is correction 0."""
    return Var.apply(input, *_var_args("var", input, dim, unbiased, keepdim, correction))


def std(input: Tensor, dim=_UNSET, unbiased: bool | None = None, keepdim: bool = False, *,
        correction=None) -> Tensor:
    return Std.apply(input, *_var_args("std", input, dim, unbiased, keepdim, correction))


# -- max, min, amax, amin, argmax, argmin ---------------------------------------------------------
class _ValuesIndices(tuple):
    """torch.return_types.max / min: a named pair (values, indices) that prints like torch's."""

    __slots__ = ()
    _name = ""
    n_fields = n_sequence_fields = 2

    def __new__(cls, values: Tensor, indices: Tensor):
        return super().__new__(cls, (values, indices))

    @property
    def values(self) -> Tensor:
        return self[0]

    @property
    def indices(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class MaxResult(_ValuesIndices):
    _name = "max"


class MinResult(_ValuesIndices):
    _name = "min"


# torch.return_types: ``isinstance(x.max(0), torch.return_types.max)``
return_types = types.ModuleType("hookgrad.return_types", "Named results of reductions.")
return_types.max, return_types.min = MaxResult, MinResult


class _Extreme(_Op):
    """max(dim) / min(dim): values and int64 indices; the gradient goes to the index torch
    picks (the first extreme, or the first NaN)."""

    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, self, dim, keepdim, op):
        ctx._saved_self_sym_sizes, ctx._saved_dim, ctx._saved_keepdim = self.shape, dim, keepdim
        if self.ndim == 0:
            indices = np.zeros((), np.int64)
            ctx.save_for_backward(indices)
            return self.copy(), indices
        _check_nonempty(self, (dim,), op, False)
        pick = np.argmax if op == "max" else np.argmin
        indices = pick(self, axis=dim, keepdims=True)
        values = np.take_along_axis(self, indices, axis=dim)
        if not keepdim:
            values, indices = np.squeeze(values, dim), np.squeeze(indices, dim)
        indices = indices.astype(np.int64, copy=False)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        (indices,) = ctx.saved_tensors
        shape, dim = ctx._saved_self_sym_sizes, ctx._saved_dim
        if not shape:
            return grad, None, None, None
        positions = indices._data if ctx._saved_keepdim else np.expand_dims(indices._data, dim)
        along = np.arange(shape[dim]).reshape((-1,) + (1,) * (len(shape) - dim - 1))
        grad = _restore(grad, shape, (dim,), ctx._saved_keepdim)
        return grad.expand(shape).masked_fill(positions != along, 0.0), None, None, None


class MaxDim(_Extreme):
    node_name = "MaxBackward0"


class MinDim(_Extreme):
    node_name = "MinBackward0"


class _ExtremeAll(_Op):
    """max() / min(): ties share the gradient evenly (torch's evenly_distribute_backward)."""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, op):
        _check_nonempty(self, (), op, True)
        result = np.asarray(np.max(self) if op == "max" else np.min(self))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        if np.isnan(result._data):
            mask = np.isnan(self._data)
        else:
            mask = self._data == result._data
        return (grad / int(mask.sum())).expand(self.shape).masked_fill(~mask, 0.0), None


class MaxAll(_ExtremeAll):
    node_name = "MaxBackward1"


class MinAll(_ExtremeAll):
    node_name = "MinBackward1"


def _extreme(op: str, input: Tensor, dim, keepdim, other):
    from . import math as _math

    if isinstance(dim, Tensor) or other is not None:
        tensor = other if other is not None else dim
        return (_math.maximum if op == "max" else _math.minimum)(input, tensor)
    if dim is None:
        if keepdim:
            raise TypeError(f"{op}() received an invalid combination of arguments - got "
                            f"(keepdim=bool): keepdim needs a dim")
        return (MaxAll if op == "max" else MinAll).apply(input, op)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}() received an invalid combination of arguments - got "
                        f"({type(dim).__name__}), but expected one of:\n * ()\n"
                        f" * (Tensor other)\n * (int dim, bool keepdim = False)")
    dim = normalize_dim(int(dim), input._data.ndim)
    values, indices = (MaxDim if op == "max" else MinDim).apply(input, dim, keepdim, op)
    return (MaxResult if op == "max" else MinResult)(values, indices)


def max(input: Tensor, dim=None, keepdim: bool = False, *, other: Tensor | None = None):
    """max(), max(dim, keepdim) -> (values, indices), or max(other) = maximum(input, other)."""
    return _extreme("max", input, dim, keepdim, other)


def min(input: Tensor, dim=None, keepdim: bool = False, *, other: Tensor | None = None):
    return _extreme("min", input, dim, keepdim, other)


class _Amax(_Op):
    """amax/amin: the gradient is shared equally among the elements equal to the result"""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, keepdim, op, all_dims):
        _check_nonempty(self, dims, op, all_dims)
        ctx.dims, ctx._saved_dim, ctx._saved_keepdim = dims, () if all_dims else dims, keepdim
        reduce = np.max if op == "amax" else np.min
        result = np.asarray(reduce(self, axis=dims, keepdims=keepdim))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        shape, dims, keepdim = self._data.shape, ctx.dims, ctx._saved_keepdim
        grad = _restore(grad, shape, dims, keepdim)
        mask = _restore(result, shape, dims, keepdim)._data == self._data
        count = mask.sum(axis=dims, keepdims=True)
        return (grad / _const(count)) * _const(mask), None, None, None, None


class Amax(_Amax):
    node_name = "AmaxBackward0"


class Amin(_Amax):
    node_name = "AminBackward0"


def _amax(cls, op: str, input: Tensor, dim, keepdim: bool) -> Tensor:
    all_dims = dim is None or (not isinstance(dim, (int, np.integer)) and len(dim) == 0)
    dims = reduce_dims(dim, input._data.ndim)
    return cls.apply(input, dims, keepdim, op, all_dims)


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims when empty); ties share the gradient equally."""
    return _amax(Amax, "amax", input, dim, keepdim)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    return _amax(Amin, "amin", input, dim, keepdim)


def _arg_extreme(op: str, input: Tensor, dim, keepdim: bool) -> Tensor:
    data = input._data
    pick = np.argmax if op == "argmax" else np.argmin
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        index = np.asarray(pick(data.reshape(-1)), dtype=np.int64)
        return Tensor._make(index.reshape((1,) * data.ndim) if keepdim else index)
    dim = normalize_dim(dim, data.ndim)
    if data.ndim == 0:
        return Tensor._make(np.zeros((), np.int64))
    _check_nonempty(data, (dim,), op, False)
    return Tensor._make(np.asarray(pick(data, axis=dim, keepdims=keepdim), dtype=np.int64))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (a NaN counts as the maximum); int64, no gradient."""
    return _arg_extreme("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return _arg_extreme("argmin", input, dim, keepdim)


# -- logsumexp and prod --------------------------------------------------------------------------
class Logsumexp(_Op):
    """d logsumexp = grad * exp(self - result)"""

    node_name = "LogsumexpBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, keepdim):
        ctx._saved_dim, ctx._saved_keepdim = dims, keepdim
        work = self.astype(_accumulator(self.dtype), copy=False)
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            if self.size:
                shift = np.max(work, axis=dims, keepdims=True)
                shift = np.where(np.isinf(shift), 0, shift).astype(work.dtype, copy=False)
            else:
                shift = np.zeros(_kept_shape(self.shape, dims), work.dtype)
            total = np.sum(np.exp(work - shift), axis=dims, keepdims=True)
            result = np.log(total) + shift
        if not keepdim:
            result = np.squeeze(result, dims)
        result = np.asarray(result).astype(self.dtype, copy=False)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        shape, dims, keepdim = self._data.shape, ctx._saved_dim, ctx._saved_keepdim
        grad = _restore(grad, shape, dims, keepdim)
        return grad * (self - _restore(result, shape, dims, keepdim)).exp(), None, None


def logsumexp(input: Tensor, dim=_UNSET, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) computed stably; integer inputs give the default float dtype."""
    if dim is _UNSET:
        raise TypeError("logsumexp() missing 1 required positional arguments: \"dim\"")
    if input._data.dtype.kind not in "fc":
        input = input.to(_dtype.get_default_dtype())
    return Logsumexp.apply(input, reduce_dims(dim, input._data.ndim), keepdim)


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
    if not grad_mode.is_grad_enabled():
        if dim is None and zeros > 1:
            return Tensor._make(np.zeros_like(data))
        flat = data.reshape(-1) if dim is None else data
        others = _others_product(flat, 0 if dim is None else dim).reshape(data.shape)
        return grad * _const(others)
    if dim is None:
        return grad * _others_product_graph(self.reshape(-1), 0).reshape(data.shape)
    return grad * _others_product_graph(self, dim)


class Prod(_Op):
    node_name = "ProdBackward1"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dim, keepdim, dtype=None):
        ctx._saved_dim, ctx._saved_keepdim = dim, keepdim
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        axis = None if dim is None or self.ndim == 0 else dim
        result = np.prod(self, axis=axis, keepdims=keepdim and axis is not None,
                         dtype=_accumulator(dtype))
        result = np.asarray(result).astype(dtype, copy=False)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        if self.ndim == 0:
            return grad, None, None, None
        self = as_dtype(self, result._data.dtype)  # torch differentiates in ``dtype``
        dim = ctx._saved_dim
        if dim is not None:
            shape = self._data.shape
            grad = _restore(grad, shape, (dim,), ctx._saved_keepdim)
            result = _restore(result, shape, (dim,), ctx._saved_keepdim)
        return _prod_backward(grad, self, result, dim), None, None, None


class ProdAll(Prod):
    node_name = "ProdBackward0"


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype=None) -> Tensor:
    """torch.prod over all elements or one dim; integers give int64."""
    if dim is None:
        return ProdAll.apply(input, None, False, _numpy_dtype(dtype))
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    return Prod.apply(input, normalize_dim(int(dim), input._data.ndim), keepdim,
                      _numpy_dtype(dtype))


# -- softmax, log_softmax, cumsum ----------------------------------------------------------------
def _softmax_dtype_check(array: np.ndarray, dim: int, op: str) -> None:
    if array.dtype.kind != "f":
        kernel = f"{op}_lastdim_kernel_impl" if dim == array.ndim - 1 or array.ndim == 0 \
            else f"{op}_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{torch_type_name(array)}'")


class Softmax(_Op):
    """d softmax = result * (grad - sum(grad * result))"""

    node_name = "SoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self, dim):
        _softmax_dtype_check(self, dim, "softmax")
        ctx._saved_dim = dim
        work = self.astype(_accumulator(self.dtype), copy=False)
        axis = dim if self.ndim else None
        with np.errstate(invalid="ignore", over="ignore"):
            exps = np.exp(work - np.max(work, axis=axis, keepdims=True)) if self.size else work
            result = (exps / np.sum(exps, axis=axis, keepdims=True)).astype(self.dtype)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        dim = ctx._saved_dim if result.ndim else ()
        return result * (grad - (grad * result).sum(dim, keepdim=True)), None


class LogSoftmax(_Op):
    """d log_softmax = grad - exp(result) * sum(grad)"""

    node_name = "LogSoftmaxBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self, dim):
        _softmax_dtype_check(self, dim, "log_softmax")
        ctx._saved_dim = dim
        work = self.astype(_accumulator(self.dtype), copy=False)
        axis = dim if self.ndim else None
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            shifted = work - np.max(work, axis=axis, keepdims=True) if self.size else work
            result = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
        result = result.astype(self.dtype)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        dim = ctx._saved_dim if result.ndim else ()
        return grad - result.exp() * grad.sum(dim, keepdim=True), None


def _softmax(cls, input: Tensor, dim, dtype) -> Tensor:
    if dim is None:
        raise TypeError(f"{cls.__name__.lower()}() missing 1 required positional arguments: "
                        "\"dim\"")
    if dtype is not None and _dtype.to_numpy_dtype(dtype) != input._data.dtype:
        input = input.to(dtype)
    return cls.apply(input, normalize_dim(dim, input._data.ndim))


def softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``; ``dtype`` casts the input first (ToCopyBackward0)."""
    return _softmax(Softmax, input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype=None) -> Tensor:
    return _softmax(LogSoftmax, input, dim, dtype)


class Cumsum(_Op):
    """d cumsum = the reversed cumulative sum of grad"""

    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, self, dim, dtype=None):
        ctx._saved_dim = dim
        if dtype is None:
            dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        if self.ndim == 0:
            return self.astype(dtype)
        return np.cumsum(self, axis=dim, dtype=_accumulator(dtype)).astype(dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0:
            return grad, None, None
        return ReversedCumsum.apply(grad, ctx._saved_dim), None, None


class ReversedCumsum(_Op):
    """Sum from each position to the end (cumsum's gradient; its own gradient is cumsum)."""

    node_name = "ReversedCumsumBackward0"

    @staticmethod
    def forward(ctx, self, dim):
        ctx.dim = dim
        return np.flip(np.cumsum(np.flip(self, dim), axis=dim), dim).copy()

    @staticmethod
    def backward(ctx, grad):
        return Cumsum.apply(grad, ctx.dim), None


def cumsum(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    return Cumsum.apply(input, normalize_dim(dim, input._data.ndim), _numpy_dtype(dtype))


# -- any / all --------------------------------------------------------------------------------
def _logical_reduce(fn, input: Tensor, dim, keepdim: bool) -> Tensor:
    data = input._data
    dims = reduce_dims(dim, data.ndim)
    result = np.asarray(fn(data, axis=dims, keepdims=keepdim))
    return Tensor._make(result.astype(np.uint8) if data.dtype == np.uint8 else result)


def any(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """True where any element is nonzero; uint8 inputs give uint8, as in torch."""
    return _logical_reduce(np.any, input, dim, keepdim)


def all(input: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    return _logical_reduce(np.all, input, dim, keepdim)


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "cumsum", "log_softmax",
           "logsumexp", "max", "mean", "min", "prod", "softmax", "std", "sum", "sum_to_size",
           "var"]
