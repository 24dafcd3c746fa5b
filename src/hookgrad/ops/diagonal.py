"""Triangles and diagonals: tril, triu (and in place), diagonal (a writable view), diag_embed,
diag, diagflat, trace, fill_diagonal_.

A diagonal and its embedding are each other's gradient: the backward of ``diagonal`` writes the
gradient onto the diagonal of zeros, the backward of ``diag_embed`` reads it off again.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..tensor import Tensor
from . import strided
from ._out import write_out
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .reduce import _const
from ._base import is_number, not_implemented, Op


def _triangle_mask(shape: tuple, diagonal: int, lower: bool) -> np.ndarray:
    rows, cols = shape[-2:]
    mask = np.tri(rows, cols, diagonal, dtype=bool)
    return mask if lower else ~np.tri(rows, cols, diagonal - 1, dtype=bool)


def _check_matrix(self: np.ndarray, op: str) -> None:
    if self.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")


class Tril(Op):
    """the lower triangle (from ``diagonal``); its gradient is grad's lower triangle"""

    node_name = "TrilBackward0"
    _lower = True

    @classmethod
    def forward(cls, ctx, self, diagonal):
        _check_matrix(self, "tril" if cls._lower else "triu")
        ctx.diagonal, ctx._saved_diagonal = diagonal, shown_dim(diagonal)  # shown as given
        keep = _triangle_mask(self.shape, diagonal, cls._lower)
        return np.where(keep, self, np.zeros((), self.dtype))

    @classmethod
    def backward(cls, ctx, grad):
        op = Tril if cls._lower else Triu
        return op.apply(grad, ctx.diagonal), None


class Triu(Tril):
    node_name = "TriuBackward0"
    _lower = False


class TrilInplace(Tril):
    node_name = "TrilBackward0"
    _inplace = True
    _overlap_ok = True  # torch writes an expanded self without complaint

    @classmethod
    def forward(cls, ctx, self, diagonal):
        _check_matrix(self, "tril" if cls._lower else "triu")
        ctx.diagonal, ctx._saved_diagonal = diagonal, shown_dim(diagonal)  # shown as given
        keep = _triangle_mask(self.shape, diagonal, cls._lower)
        np.copyto(self, np.zeros((), self.dtype), where=~keep)
        return self


class TriuInplace(TrilInplace):
    node_name = "TriuBackward0"
    _lower = False


def tril(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """Lower triangle (on and below diagonal ``diagonal``); the rest zeroed."""
    return Tril.apply(input, int(diagonal))


def triu(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """Upper triangle (on and above diagonal ``diagonal``); the rest zeroed."""
    return Triu.apply(input, int(diagonal))


def tril_(input: Tensor, diagonal: int = 0) -> Tensor:
    """In place ``tril``."""
    return TrilInplace.apply(input, int(diagonal))


def triu_(input: Tensor, diagonal: int = 0) -> Tensor:
    """In place ``triu``."""
    return TriuInplace.apply(input, int(diagonal))


# ---------------------------------------------------------------------------------------------
# diagonal (a view) and diag_embed (its gradient, and the other way round)
# ---------------------------------------------------------------------------------------------
def _diagonal_view(x: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """The diagonal as a writable strided view: dims dim1 and dim2 removed, the diagonal last."""
    rows, cols = x.shape[dim1], x.shape[dim2]
    if offset >= 0:
        length, start = max(min(rows, cols - offset), 0), (0, offset)
    else:
        length, start = max(min(rows + offset, cols), 0), (-offset, 0)
    index = [slice(None)] * x.ndim
    if length:
        index[dim1], index[dim2] = slice(start[0], None), slice(start[1], None)
    else:
        index[dim1], index[dim2] = slice(0, 0), slice(0, 0)
    corner = x[tuple(index)]
    keep = [d for d in range(x.ndim) if d not in (dim1, dim2)]
    shape = tuple(x.shape[d] for d in keep) + (length,)
    strides = tuple(x.strides[d] for d in keep) + (x.strides[dim1] + x.strides[dim2],)
    return np.lib.stride_tricks.as_strided(corner, shape, strides,
                                           writeable=x.flags.writeable)


class Diagonal(Op):
    """a view of the diagonal between dim1 and dim2, shifted by ``offset``"""

    node_name = "DiagonalBackward0"
    _view_of = 0

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2, shown=None):
        _show_diagonal(ctx, offset, dim1, dim2, shown)
        ctx._saved_self_sym_sizes = self.shape
        return _diagonal_view(self, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalBackward.apply(grad, ctx._saved_self_sym_sizes, *ctx.args), \
            None, None, None


class DiagonalCopy(Diagonal):
    """diag() of a matrix: the diagonal as a fresh tensor"""

    node_name = "DiagonalBackward0_copy"
    _view_of = None

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2, shown=None):
        return Diagonal.forward(ctx, self, offset, dim1, dim2, shown).copy()


class DiagonalBackward(Op):
    """grad written onto the diagonal of zeros of the input's shape"""

    node_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        out = np.zeros(shape, grad.dtype)
        _diagonal_view(out, offset, dim1, dim2)[...] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


def _show_diagonal(ctx, offset, dim1, dim2, shown) -> None:
    """Keeps (offset, dim1, dim2) for the formula and shows them as the caller gave them
    (``shown``: the dims before normalizing), a negative one read back unsigned."""
    ctx.args = (offset, dim1, dim2)
    dim1, dim2 = (dim1, dim2) if shown is None else shown
    ctx._saved_offset, ctx._saved_dim1, ctx._saved_dim2 = (shown_dim(offset), shown_dim(dim1),
                                                           shown_dim(dim2))


def _diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple:
    dim1, dim2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return dim1, dim2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """a view of the diagonal (removes dim1 and dim2, appends the diagonal as the last dim)"""
    return diagonal_with(Diagonal, input, offset, dim1, dim2)


def diagonal_with(cls, input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``diagonal`` through ``cls``: the view, or ``diagonal_copy``'s ``DiagonalCopy``."""
    shown = (dim1, dim2)
    dim1, dim2 = _diagonal_dims(input._data.ndim, dim1, dim2)
    return cls.apply(input, int(offset), dim1, dim2, shown)


class DiagEmbed(Op):
    """the last dim of self placed on the diagonal of new dims dim1, dim2"""

    node_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, self, offset, dim1, dim2, shown=None):
        _show_diagonal(ctx, offset, dim1, dim2, shown)
        size = self.shape[-1] + abs(offset) if self.ndim else 1 + abs(offset)
        lead = list(self.shape[:-1])
        ndim = len(lead) + 2
        shape = []
        for d in range(ndim):
            shape.append(size if d in (dim1, dim2) else lead.pop(0))
        out = np.zeros(shape, self.dtype)
        _diagonal_view(out, offset, dim1, dim2)[...] = self
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Tensors whose last-two-dimension diagonals (at ``offset``) hold the last dimension of
    ``input``."""
    shown = (dim1, dim2)
    dim1, dim2 = _diagonal_dims(input._data.ndim + 1, dim1, dim2)
    return DiagEmbed.apply(input, int(offset), dim1, dim2, shown)


def diag(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """a vector on the diagonal of a square matrix, or the diagonal of a matrix.

    With ``out`` torch runs diag_embed's or diagonal_copy's out kernel, which resizes out
    before refusing another dtype (diag_embed's first refuses a dtype the result cannot be
    cast to, in diag's words)."""
    ndim = input._data.ndim
    if ndim == 1:
        result = DiagEmbed.apply(input, int(diagonal), 0, 1, (-2, -1))  # torch's diag_embed
    elif ndim == 2:
        result = DiagonalCopy.apply(input, int(diagonal), 0, 1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")
    if out is None:
        return result
    name = "aten::diag_embed" if ndim == 1 else "aten::diagonal_copy"
    result_dtype, out_dtype = result._data.dtype, out._data.dtype
    if (ndim == 1 and result_dtype != out_dtype and not (grad_mode.is_grad_enabled() and (
            result.requires_grad or out.requires_grad)) and not _dtype.can_cast(
            _dtype.from_numpy_dtype(result_dtype), _dtype.from_numpy_dtype(out_dtype))):
        raise RuntimeError(f"diag: result type {_dtype.scalar_type_name(result_dtype)} can't be "
                           f"cast to the desired out= type {_dtype.scalar_type_name(out_dtype)}")
    return write_out(out, result, name, same_dtype=True, resize_first=True)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened input on diagonal ``offset``."""
    return DiagEmbed.apply(input.reshape(-1), int(offset), 0, 1, (-2, -1))


class Trace(Op):
    """the sum of the main diagonal; its gradient is grad on the diagonal"""

    node_name = "TraceBackward0"

    @staticmethod
    def forward(ctx, self):
        if self.dtype == np.bool_:  # torch's kernel has no bool form (checked before the rank)
            raise not_implemented("trace", self.dtype)
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        ctx._saved_self_sym_sizes = self.shape
        dtype = np.dtype(np.int64) if self.dtype.kind in "biu" else self.dtype
        return np.asarray(np.trace(self, dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        rows, cols = ctx._saved_self_sym_sizes
        return grad * _const(np.eye(rows, cols, dtype=grad._data.dtype))


def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a matrix."""
    return Trace.apply(input)


# ---------------------------------------------------------------------------------------------
# fill_diagonal_: a fill on a strided view, so the input's history becomes CopySlices as in torch
# ---------------------------------------------------------------------------------------------
def fill_diagonal_(input: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """set the main diagonal (all dims equal; a tall matrix may ``wrap`` every cols+1 rows)"""
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]  # element strides of a contiguous layout
    step = int(strides.sum())
    count = min(shape)
    if len(shape) == 2 and wrap and shape[0] > shape[1] + 1:
        count = (input._data.size + step - 1) // step
    if not is_number(fill_value) and not isinstance(fill_value, Tensor):
        raise TypeError("fill_diagonal_(): argument 'fill_value' must be Number")
    if input._data.flags.c_contiguous:
        strided.as_strided(input, (count,), (step,)).fill_(fill_value)
        return input
    mask = np.zeros(input._data.size, bool)
    mask[np.arange(count) * step] = True
    with warnings.catch_warnings():  # torch's fill_diagonal_ does not warn for expanded input
        warnings.filterwarnings("ignore", "Use of masked_fill_ on expanded", UserWarning)
        return input.masked_fill_(mask.reshape(shape), fill_value)
