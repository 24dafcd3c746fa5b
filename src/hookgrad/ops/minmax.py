"""max / min (values and indices), amax / amin and argmax / argmin: reductions that pick
elements, so their gradient goes to the picked ones (ties share it where torch shares it)."""
from __future__ import annotations

import types

import numpy as np

from ..tensor import Tensor
from . import _layout
from . import pointwise as _math
from ._reduce_util import (_UNSET, _check_nonempty, _const, _restore, reduce_dims, shown_dim,
                           shown_dims)
from ._util import normalize_dim, ordered, quiet_errors
from ._base import Op


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


class _Extreme(Op):
    """max(dim) / min(dim): values and int64 indices; the gradient goes to the index torch
    picks (the first extreme, or the first NaN)."""

    saved_names = ("indices",)

    @staticmethod
    def forward(ctx, self, dim, keepdim, op, shown=_UNSET):
        ctx._saved_self_sym_sizes, ctx.dim, ctx._saved_keepdim = self.shape, dim, keepdim
        ctx._saved_dim = dim if shown is _UNSET else shown  # as given (-1 read back unsigned)
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
        values = _layout.contiguous(values)
        indices = _layout.contiguous(indices.astype(np.int64, copy=False))
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad, grad_indices=None):
        (indices,) = ctx.saved_tensors
        shape, dim = ctx._saved_self_sym_sizes, ctx.dim
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


class _ExtremeAll(Op):
    """max() / min(): ties share the gradient evenly (torch's evenly_distribute_backward)."""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, op):
        _check_nonempty(self, (), op, True)
        with quiet_errors():  # ml_dtypes' bfloat16 comparisons flag NaN as invalid
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
    values, indices = (MaxDim if op == "max" else MinDim).apply(
        input, normalize_dim(int(dim), input._data.ndim), keepdim, op, shown=shown_dim(dim))
    return (MaxResult if op == "max" else MinResult)(values, indices)


def max(input: Tensor, dim=None, keepdim: bool = False, *, other: Tensor | None = None):
    """max(), max(dim, keepdim) -> (values, indices), or max(other) = maximum(input, other)."""
    return _extreme("max", input, dim, keepdim, other)


def min(input: Tensor, dim=None, keepdim: bool = False, *, other: Tensor | None = None):
    """Minimum of all elements; with ``dim``, ``(values, indices)``; with a tensor, the elementwise
    minimum."""
    return _extreme("min", input, dim, keepdim, other)


class _Amax(Op):
    """amax/amin: the gradient is shared equally among the elements equal to the result"""

    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, dims, keepdim, op, all_dims, shown=_UNSET):
        _check_nonempty(self, dims, op, all_dims)
        ctx.dims, ctx._saved_keepdim = dims, keepdim
        ctx._saved_dim = (() if all_dims else dims) if shown is _UNSET else shown
        reduce = np.max if op == "amax" else np.min
        with quiet_errors():
            result = _layout.contiguous(np.asarray(reduce(self, axis=dims, keepdims=keepdim)))
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
    shape = input._data.shape
    if not all_dims and 0 in shape:  # torch asks this of each dim as given, before repeats
        for given in ((dim,) if isinstance(dim, (int, np.integer)) else dim):
            if isinstance(given, (int, np.integer)) and shape and \
                    shape[normalize_dim(int(given), len(shape))] == 0:
                raise IndexError(f"{op}(): Expected reduction dim {int(given)} to have non-zero "
                                 "size.")
    dims = reduce_dims(dim, input._data.ndim)
    return cls.apply(input, dims, keepdim, op, all_dims, shown=shown_dims(dim) or ())


def amax(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Maximum over ``dim`` (all dims when empty); ties share the gradient equally."""
    return _amax(Amax, "amax", input, dim, keepdim)


def amin(input: Tensor, dim=(), keepdim: bool = False) -> Tensor:
    """Minimum over ``dim`` (all dims by default); the gradient is shared among ties."""
    return _amax(Amin, "amin", input, dim, keepdim)


def _arg_extreme(op: str, input: Tensor, dim, keepdim: bool) -> Tensor:
    data = input._data
    if data.dtype == np.bool_:
        raise RuntimeError(f"{op}(): does not support bool input")
    data = ordered(data)  # bfloat16's NaN counts as the extreme only as a float
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
    return Tensor._make(_layout.contiguous(
        np.asarray(pick(data, axis=dim, keepdims=keepdim), dtype=np.int64)))


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the first maximum (a NaN counts as the maximum); int64, no gradient."""
    return _arg_extreme("argmax", input, dim, keepdim)


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the (first) minimum, over all elements or along ``dim``."""
    return _arg_extreme("argmin", input, dim, keepdim)
