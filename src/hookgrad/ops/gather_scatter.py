"""Index ops along one dim: gather / take_along_dim, scatter / scatter_add, index_select /
index_add.

Index tensors are passed to ``apply`` as ndarrays (they get no gradient), checked first with
torch's messages so that NumPy never answers a bad index in its own words.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..autograd.saved import array_for_forward
from ..tensor import Tensor
from ._out import write_out
from ._reduce_util import _UNSET, shown_dim
from ._util import normalize_dim

from .views import expand
from ._base import Op, _check_writable, check_number_fits


def _index_data(index, op: str) -> np.ndarray:
    """The index array of a gather/scatter/index_add family op: int64 or int32, as torch's
    kernels take (every scatter variant reports itself as scatter(), index_add as
    index_add_() with the dtype it got)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    array = array_for_forward(index)  # saved, it is the index tensor, version and all
    if array.dtype != np.int64 and array.dtype != np.int32:
        if op.startswith("index_add"):
            raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                               f"{_dtype.scalar_type_name(array.dtype)}")
        name = "scatter" if op.startswith("scatter") else op.rstrip("_")
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")
    return array


def _along(index: np.ndarray, dim: int) -> tuple:
    """The NumPy key that addresses ``index``'s own positions, with ``index`` along ``dim``."""
    return tuple(index if d == dim else
                 np.arange(n).reshape((1,) * d + (n,) + (1,) * (index.ndim - d - 1))
                 for d, n in enumerate(index.shape))


def _check_index(self_shape: tuple, index: np.ndarray, dim: int, other=None) -> None:
    # a 0-d self or index counts as one element along one dim
    if max(index.ndim, 1) != max(len(self_shape), 1) and index.size:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if index.size == 0:
        return
    shape = self_shape if self_shape else (1,)
    index_shape = index.shape if index.ndim else (1,)
    for d, n in enumerate(index_shape):
        if other is None and d != dim and n > shape[d]:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(index.shape)} to be no larger than self {list(self_shape)}"
                               f" apart from dimension {dim}")
        if other is not None and ((d != dim and n > shape[d]) or n > other[d]):
            raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                               f"{list(self_shape)} apart from dimension {dim} and to be no "
                               f"larger size than src {list(other)}")
    size = shape[dim]
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {int(index[bad].flat[0])} is out of bounds for dimension "
                           f"{dim} with size {size}")


class Gather(Op):
    """out[i][j][k] = self[i][index[i][j][k]][k] (dim 1); gradient: scatter_add into zeros"""

    node_name = "GatherBackward0"
    saved_names = ("index", "self")
    saved_values = {"sparse_grad": "sparse_grad"}

    @staticmethod
    def forward(ctx, self, dim, index, shown=_UNSET, sparse_grad=False):
        ctx.sparse_grad = sparse_grad  # accepted; the gradient stays dense
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        _check_index(self.shape, index, dim)
        ctx.dim = dim
        ctx.save_for_backward(index, self)
        if index.size == 0:
            return np.zeros(index.shape, self.dtype)
        if self.ndim == 0:  # every index is 0 (checked): the one element, repeated
            return np.full(index.shape, self, dtype=self.dtype)
        if index.ndim == 0:  # then self is 1-d: one element, kept 0-d
            return np.array(self[int(index)], dtype=self.dtype)
        return self[_along(index.astype(np.int64), dim)]

    @staticmethod
    def backward(ctx, grad):
        index, self = ctx.saved_tensors
        zeros = Tensor._make(np.zeros(self._data.shape, grad._data.dtype))
        return ScatterAdd.apply(zeros, ctx.dim, index._data, grad), None, None


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None) -> Tensor:
    """Picks, along ``dim``, the element named by ``index`` for every position of ``index``."""
    result = Gather.apply(input, normalize_dim(dim, input._data.ndim),
                          _index_data(index, "gather"), shown=shown_dim(dim),
                          sparse_grad=bool(sparse_grad))
    return write_out(out, result, "gather", same_dtype=True)


def take_along_dim(input: Tensor, indices: Tensor, dim=None) -> Tensor:
    """gather after broadcasting input and indices in every dim but ``dim`` (as torch)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_dtype.scalar_type_name(indices._data.dtype)}")
    if input._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = normalize_dim(dim, input._data.ndim)
    input_shape, index_shape = list(input._data.shape), list(indices._data.shape)
    input_shape[dim] = index_shape[dim] = 1
    shape = list(np.broadcast_shapes(tuple(input_shape), tuple(index_shape)))
    shape[dim] = input._data.shape[dim]
    input = expand(input, shape)
    shape[dim] = indices._data.shape[dim]
    return gather(input, dim, expand(indices, shape))


class ScatterAdd(Op):
    """self with src added at index along dim; gradient: grad for self, grad gathered for src"""

    node_name = "ScatterAddBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, src, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, src, np.add.at, inplace=False)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        return grad, None, None, Gather.apply(grad, ctx.dim, index._data)


class ScatterAddInplace(ScatterAdd):
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory
    node_name = "ScatterAddBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, src, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, src, np.add.at, inplace=True)


def _check_scatter(self: np.ndarray, dim: int, index: np.ndarray, src) -> None:
    """``src`` is an array of src values, or a 0-d array holding the value to write."""
    if src.ndim == 0 and index.ndim != 0:
        _check_index(self.shape, index, dim)
        return
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_index(self.shape, index, dim, other=src.shape or (1,))


def _scatter_forward(ctx, self: np.ndarray, dim: int, index: np.ndarray, src, write,
                     inplace: bool) -> np.ndarray:
    """The forward of every scatter op: ``write`` (add or assign) src at index, into self or
    into a copy of it; only the index is saved."""
    _check_scatter(self, dim, index, src)
    if inplace:
        _check_writable(self)
    ctx.dim = dim
    ctx.save_for_backward(index)
    out = self if inplace else np.array(self, copy=True, order="C")  # torch's is row-major
    _scatter_into(out, dim, index, src, write)
    return out


def _scatter_into(out: np.ndarray, dim: int, index: np.ndarray, src, write) -> None:
    if index.size == 0:
        return
    if out.ndim == 0 or index.ndim == 0:  # at most 1-d all round: written as 1-d
        flat = index.reshape(-1)
        write(out.reshape(-1), flat, np.reshape(src, -1)[:flat.size] if np.ndim(src) else src)
        return
    key = _along(index.astype(np.int64), dim)
    if src.ndim:  # only the index's extent of src is used
        src = src[tuple(slice(0, n) for n in index.shape)]
    write(out, key, src)


def _assign(out, key, src) -> None:
    out[key] = src


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """A copy with ``src`` added at ``index`` along ``dim`` (repeats accumulate)."""
    return ScatterAdd.apply(input, normalize_dim(dim, input._data.ndim),
                            _index_data(index, "scatter_add"), src, shown=shown_dim(dim))


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """In place ``scatter_add``."""
    return ScatterAddInplace.apply(input, normalize_dim(dim, input._data.ndim),
                                   _index_data(index, "scatter_add_"), src,
                                   shown=shown_dim(dim))


class Scatter(Op):
    """self with src written at index; gradient: grad with those positions zeroed for self,
    grad gathered at index for src"""

    node_name = "ScatterBackward0"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, src, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, src, _assign, inplace=False)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zero = np.zeros((), grad._data.dtype)
        grad_self = ScatterValue.apply(grad, ctx.dim, index._data, zero)
        return grad_self, None, None, Gather.apply(grad, ctx.dim, index._data)


class ScatterValue(Op):
    """self with a number written at index; gradient: grad with those positions zeroed"""

    node_name = "ScatterBackward1"
    saved_names = ("index",)

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, value, _assign, inplace=False)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zero = np.zeros((), grad._data.dtype)
        return ScatterValue.apply(grad, ctx.dim, index._data, zero), None, None, None


class ScatterInplace(Scatter):
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory
    node_name = "ScatterBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, src, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, src, _assign, inplace=True)


class ScatterValueInplace(ScatterValue):
    node_name = "ScatterBackward1"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, value, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _scatter_forward(ctx, self, dim, index, value, _assign, inplace=True)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, *, value=None) -> Tensor:
    """A copy with ``src`` (or ``value``) written at ``index`` along ``dim``; ``reduce`` combines
    instead."""
    return _scatter("scatter", Scatter, ScatterValue, input, dim, index, src, value)


def scatter_(input: Tensor, dim: int, index: Tensor, src=None, *, value=None) -> Tensor:
    """In place ``scatter``."""
    return _scatter("scatter_", ScatterInplace, ScatterValueInplace, input, dim, index, src,
                    value)


def _scatter(op: str, tensor_op, value_op, input: Tensor, dim: int, index: Tensor, src,
             value) -> Tensor:
    """scatter(src=Tensor) or scatter(value=number) (also a number passed as src)."""
    shown, dim = shown_dim(dim), normalize_dim(dim, input._data.ndim)
    index = _index_data(index, op)
    if isinstance(src, Tensor):
        return tensor_op.apply(input, dim, index, src, shown=shown)
    number = value if src is None else src
    check_number_fits(number, input._data.dtype)
    fill = np.asarray(number).astype(input._data.dtype)
    return value_op.apply(input, dim, index, fill, shown=shown)


class IndexSelect(Op):
    """self's slices at index along dim; gradient: index_add of grad into zeros"""

    node_name = "IndexSelectBackward0"
    saved_names = ("index",)
    saved_values = {"self_sym_sizes": "self_shape"}

    @staticmethod
    def forward(ctx, self, dim, index, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        size = self.shape[dim] if self.ndim else 1
        if not size and index.size and self.ndim > 1:  # torch's check before the bounds one
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
        bad = (index < 0) | (index >= size)
        if bad.any():
            # torch's CPU kernel reports dim 1 of a matrix-or-higher with its own message
            if dim == 1 and self.ndim > 1:
                raise RuntimeError(f"INDICES element is out of DATA bounds, id="
                                   f"{int(index[bad].flat[0])} axis_dim={size}")
            raise IndexError("index out of range in self")
        ctx.dim, ctx.self_shape = dim, self.shape
        ctx.save_for_backward(index)
        if self.ndim == 0:
            return self.copy()
        return np.take(self, index.reshape(-1), axis=dim)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        zeros = Tensor._make(np.zeros(ctx.self_shape, grad._data.dtype))
        return IndexAdd.apply(zeros, ctx.dim, index._data, grad, 1), None, None


def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """The slices at ``index`` along ``dim`` (a copy)."""
    shown, dim = shown_dim(dim), normalize_dim(dim, input._data.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' must be Tensor, not "
                        f"{type(index).__name__}")
    if index._data.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    return write_out(out, IndexSelect.apply(input, dim, array_for_forward(index), shown=shown),
                     "index_select",
                     same_dtype="index_select(): self and result must have the same scalar "
                                "type")


class IndexAdd(Op):
    """self + alpha * source added at index along dim; gradient: grad for self,
    alpha * grad.index_select(dim, index) for source"""

    node_name = "IndexAddBackward0"
    saved_names = ("index", "source")
    saved_values = {"alpha": "alpha", "source_dim": "source_dim"}

    @staticmethod
    def forward(ctx, self, dim, index, source, alpha, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _index_add_forward(ctx, self, dim, index, source, alpha, inplace=False)

    @staticmethod
    def backward(ctx, grad):
        index, source = ctx.saved_tensors
        if grad._data.ndim == 0:
            grad_source = grad.reshape(source._data.shape)
        else:
            grad_source = IndexSelect.apply(grad, ctx.dim, index._data)
        if ctx.alpha != 1:
            grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None


class IndexAddInplace(IndexAdd):
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory
    node_name = "IndexAddBackward0"
    _inplace = True

    @staticmethod
    def forward(ctx, self, dim, index, source, alpha, shown=_UNSET):
        ctx._saved_dim = dim if shown is _UNSET else shown  # dim as given
        return _index_add_forward(ctx, self, dim, index, source, alpha, inplace=True)


def _index_add_forward(ctx, self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                       alpha, inplace: bool) -> np.ndarray:
    if inplace:
        _check_writable(self)
    ctx.dim, ctx.alpha, ctx.source_dim = dim, alpha, source.ndim
    ctx.save_for_backward(index, source)
    out = self if inplace else np.array(self, copy=True, order="C")  # torch's is row-major
    _index_add_into(out, dim, index, source, alpha)
    return out


def _index_add_into(out: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray,
                    alpha) -> None:
    size = out.shape[dim] if out.ndim else 1
    bad = (index < -size) | (index >= size)
    if bad.any():
        raise IndexError("index out of range in self")
    values = source if alpha == 1 else source * np.asarray(alpha).astype(out.dtype)
    if out.ndim == 0:
        out[...] += np.sum(values)
        return
    key = (slice(None),) * dim + (index.reshape(-1),)
    np.add.at(out, key, values)


def _same_dtype_as_source(input: Tensor, source: Tensor) -> None:
    if isinstance(source, Tensor) and source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_add_(): self ({_dtype.scalar_type_name(input._data.dtype)}) "
                           f"and source ({_dtype.scalar_type_name(source._data.dtype)}) must "
                           "have the same scalar type")


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """A copy with ``alpha * source`` rows added at ``index`` along ``dim`` (repeats accumulate)."""
    _same_dtype_as_source(input, source)
    return IndexAdd.apply(input, normalize_dim(dim, input._data.ndim),
                          _index_data(index, "index_add"), source, alpha, shown=shown_dim(dim))


def index_add_(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """In place ``index_add``."""
    _same_dtype_as_source(input, source)
    return IndexAddInplace.apply(input, normalize_dim(dim, input._data.ndim),
                                 _index_data(index, "index_add_"), source, alpha,
                                 shown=shown_dim(dim))
