"""More shape helpers: fliplr, flipud, hsplit, vsplit, dsplit, tril_indices, triu_indices,
unravel_index and vander."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from .creation import ones
from .join import cat
from ._base import not_implemented
from .shape import flip
from .structure import tensor_split


def fliplr(input: Tensor) -> Tensor:
    """The columns (dim 1) in reverse order; a copy, as torch's."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """The rows (dim 0) in reverse order; a copy, as torch's."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def _split_along(name: str, dim: int, least: int, input: Tensor, indices_or_sections):
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but "
                           f"got a tensor with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, int):
        size = input.shape[dim]
        if indices_or_sections == 0 or size % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{indices_or_sections}!")
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); a number of sections must divide
    the size."""
    dim = 0 if input.ndim == 1 else 1
    return _split_along("hsplit", dim, 1, input, indices_or_sections)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 0 of a tensor with at least 2 dims."""
    return _split_along("vsplit", 0, 2, input, indices_or_sections)


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 2 of a tensor with at least 3 dims."""
    return _split_along("dsplit", 2, 3, input, indices_or_sections)


def _triangle_indices(name: str, lower: bool, row: int, col: int, offset: int, dtype) -> Tensor:
    dtype = _dtype.int64 if dtype is None else dtype
    if dtype.numpy.kind not in "iu":
        raise not_implemented(name, dtype.numpy)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    pick = np.tril_indices if lower else np.triu_indices
    rows, cols = pick(row, offset, col)
    return Tensor._make(np.stack([rows, cols]).astype(dtype.numpy).reshape(2, -1))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """(2, N) row and column indices of the lower triangle of a ``row x col`` matrix (on and
    below diagonal ``offset``), in row-major order."""
    return _triangle_indices("tril_indices", True, row, col, offset, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """(2, N) row and column indices of the upper triangle (on and above diagonal
    ``offset``), in row-major order."""
    return _triangle_indices("triu_indices", False, row, col, offset, dtype)


def unravel_index(indices: Tensor, shape) -> tuple:
    """The coordinates in ``shape`` of flat ``indices`` (one int64 tensor per dim); indices
    outside the shape wrap around, with Python's floor semantics, as torch's do."""
    if not isinstance(indices, Tensor):
        indices = Tensor._make(np.asarray(indices))
    if indices._data.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{_dtype.from_numpy_dtype(indices._data.dtype)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(size < 0 for size in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    flat = indices._data.astype(np.int64)
    coordinates = []
    for size in reversed(shape):
        coordinates.append(np.mod(flat, size) if size else np.zeros_like(flat))
        flat = np.floor_divide(flat, size) if size else flat
    return tuple(Tensor._make(c) for c in reversed(coordinates))


def vander(x: Tensor, N=None, increasing: bool = False) -> Tensor:
    """Columns are powers of ``x``: ``x^(N-1) ... x^0`` (or increasing); integer inputs give
    int64. Built from a running product, so it stays in the graph."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    columns = x.shape[0] if N is None else N
    if columns < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _dtype.promote_types(x.dtype, _dtype.int64)
    first = ones(x.shape[0], min(columns, 1), dtype=dtype)
    if columns > 1:
        powers = x.to(dtype).unsqueeze(1).expand(x.shape[0], columns - 1).cumprod(1)
        result = cat([first, powers], 1)
    else:
        result = first
    return result if increasing else flip(result, 1)


METHODS = {"fliplr": fliplr, "flipud": flipud, "hsplit": hsplit, "vsplit": vsplit,
           "dsplit": dsplit}
