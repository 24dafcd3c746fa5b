"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve: the symmetric indefinite factorisation
P A P^T = L D L^T with Bunch-Kaufman partial pivoting, stored as LAPACK's sytrf leaves it for
the lower triangle, and the solve on that compact form (LAPACK's sytrs).

D is block diagonal with 1x1 and 2x2 blocks. ``LD`` holds L's multipliers below the diagonal
(L's unit diagonal is implied) and D on it, a 2x2 block's off-diagonal entry at (k+1, k).
``pivots`` are 1-based: ``p > 0`` at k is a 1x1 block after swapping rows/columns k and p;
``-p`` at both k and k+1 is a 2x2 block after swapping k+1 and p. Only A's lower triangle is
read. Torch gives neither function a derivative: a result in a graph refuses backward.

Each step looks at one column (vectorised over the rows below it); a batch is factorised one
matrix at a time because every matrix chooses its own pivots.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import Op
from ._linalg_common import check_float, column_major, named_result
from .linalg import _broadcast_batch

LdlFactorResult = named_result("linalg_ldl_factor", ("LD", "pivots"))
LdlFactorExResult = named_result("linalg_ldl_factor_ex", ("LD", "pivots", "info"))

# Bunch and Kaufman's threshold (1 + sqrt(17)) / 8 balances element growth of the two block sizes
_ALPHA = (1 + math.sqrt(17)) / 8


def _swap_symmetric(a: np.ndarray, k: int, first: int, second: int) -> None:
    """Exchange rows and columns ``first < second`` of the trailing lower triangle a[k:, k:]."""
    below = a[second + 1:, first].copy()
    a[second + 1:, first] = a[second + 1:, second]
    a[second + 1:, second] = below
    between = a[first + 1:second, first].copy()
    a[first + 1:second, first] = a[second, first + 1:second]
    a[second, first + 1:second] = between
    a[first, first], a[second, second] = a[second, second], a[first, first]


def _largest(values: np.ndarray) -> int:
    """BLAS's i_amax: the first index of the largest magnitude; a NaN wins only in front."""
    magnitudes = np.abs(values)
    if math.isnan(magnitudes[0]):
        return 0
    return int(np.argmax(np.where(np.isnan(magnitudes), -np.inf, magnitudes)))


def _fortran_max(a: float, b: float) -> float:
    """Fortran's MAX as LAPACK's build evaluates it: the second value unless the first is
    larger, so a NaN first argument gives way."""
    return a if a > b else b


def _choose_pivot(a: np.ndarray, k: int) -> tuple[int, int, bool]:
    """(pivot row, block size, singular) for column k by Bunch-Kaufman's tests."""
    n = a.shape[0]
    diagonal = abs(a[k, k])
    if k + 1 < n:
        largest_row = k + 1 + _largest(a[k + 1:, k])
        column_max = abs(a[largest_row, k])
    else:
        largest_row, column_max = k, 0.0
    if _fortran_max(diagonal, column_max) == 0:
        return k, 1, True
    if diagonal >= _ALPHA * column_max:
        return k, 1, False
    # the largest off-diagonal entry in row/column largest_row of the trailing matrix
    row_part = a[largest_row, k:largest_row]
    row_max = abs(row_part[_largest(row_part)])
    if largest_row + 1 < n:
        below = a[largest_row + 1:, largest_row]
        row_max = _fortran_max(row_max, abs(below[_largest(below)]))
    if diagonal >= _ALPHA * column_max * (column_max / row_max):
        return k, 1, False
    if abs(a[largest_row, largest_row]) >= _ALPHA * row_max:
        return largest_row, 1, False
    return largest_row, 2, False


def _eliminate_one(a: np.ndarray, k: int) -> None:
    """The rank-one update of a 1x1 pivot; the column becomes L's multipliers."""
    column = a[k + 1:, k]
    a[k + 1:, k + 1:] -= np.multiply.outer(column, column / a[k, k])
    column /= a[k, k]


def _eliminate_two(a: np.ndarray, k: int) -> None:
    """The rank-two update of the 2x2 pivot at (k, k+1), in the inverse-block form sytf2 uses."""
    off = a[k + 1, k]
    scaled_second = a[k + 1, k + 1] / off
    scaled_first = a[k, k] / off
    factor = 1 / (scaled_second * scaled_first - 1) / off
    first, second = a[k + 2:, k], a[k + 2:, k + 1]
    multiplier_first = factor * (scaled_second * first - second)
    multiplier_second = factor * (scaled_first * second - first)
    a[k + 2:, k + 2:] -= (np.multiply.outer(first, multiplier_first)
                          + np.multiply.outer(second, multiplier_second))
    a[k + 2:, k] = multiplier_first
    a[k + 2:, k + 1] = multiplier_second


def _factor_one(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(LD, 1-based pivots, info) of one matrix; ``a`` is overwritten."""
    n = a.shape[0]
    pivots = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        pivot, size, singular = _choose_pivot(a, k)
        if singular:
            info = info or k + 1
            pivots[k] = k + 1
            k += 1
            continue
        last = k + size - 1
        if pivot != last:
            _swap_symmetric(a, k, last, pivot)
            if size == 2:
                a[k + 1, k], a[pivot, k] = a[pivot, k], a[k + 1, k]
        if size == 1:
            _eliminate_one(a, k)
            pivots[k] = pivot + 1
        else:
            _eliminate_two(a, k)
            pivots[k] = pivots[k + 1] = -(pivot + 1)
        k += size
    return np.tril(a), pivots, info


def ldl_arrays(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = A.shape[-1]
    batch = A.shape[:-2]
    count = math.prod(batch)
    work = A.reshape((count, n, n)).copy()
    pivots = np.empty((count, n), np.int32)
    info = np.empty(work.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for index in range(work.shape[0]):
            work[index], pivots[index], info[index] = _factor_one(work[index])
    return (column_major(work.reshape(A.shape)), pivots.reshape(batch + (n,)),
            info.reshape(batch))


def _check_square(A: np.ndarray, op: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


class _Refused(Op):
    """torch records a node for these whose backward raises"""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.aten} is not implemented")


class LinalgLdlFactorEx(_Refused):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, A, check_errors, op):
        ctx.aten = "linalg_ldl_factor_ex"
        _check_square(A, "torch.linalg.ldl_factor_ex")
        if A.dtype.kind in "fV" and A.dtype.itemsize < 4:  # half types reach the kernel
            raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                      f"'{_dtype.scalar_type_name(A.dtype)}'")
        check_float(A, "torch.linalg.ldl_factor_ex")
        LD, pivots, info = ldl_arrays(A)
        if check_errors and np.any(info):
            # torch reaches an internal assert here, naming the code LAPACK returned
            code = int(info.reshape(-1)[np.argmax(info.reshape(-1) != 0)])
            raise RuntimeError(f"{op}: Unknown error code: {code}.")
        return LD, pivots, info


def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info) of the Bunch-Kaufman LDL^T factorisation of each symmetric matrix
    (its lower triangle is read); info > 0 names the first zero 1x1 pivot, 1-based.
    ``hermitian`` only matters for complex input, which hookgrad does not have."""
    LD, pivots, info = LinalgLdlFactorEx.apply(A, bool(check_errors),
                                               "torch.linalg.ldl_factor_ex")
    return LdlFactorExResult(LD, pivots, info)


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """(LD, pivots) of each symmetric matrix; a singular D is an error."""
    LD, pivots, _ = LinalgLdlFactorEx.apply(A, True, "torch.linalg.ldl_factor")
    return LdlFactorResult(LD, pivots)


def _forward_solve(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> None:
    """b <- D^-1 L^-1 P b, in place."""
    n = ld.shape[0]
    k = 0
    while k < n:
        if pivots[k] > 0:
            swap = pivots[k] - 1
            b[[k, swap]] = b[[swap, k]]
            b[k + 1:] -= np.multiply.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
            continue
        swap = -pivots[k] - 1
        b[[k + 1, swap]] = b[[swap, k + 1]]
        b[k + 2:] -= (np.multiply.outer(ld[k + 2:, k], b[k])
                      + np.multiply.outer(ld[k + 2:, k + 1], b[k + 1]))
        off = ld[k + 1, k]
        scaled_first, scaled_second = ld[k, k] / off, ld[k + 1, k + 1] / off
        determinant = scaled_first * scaled_second - 1
        first, second = b[k] / off, b[k + 1] / off
        b[k] = (scaled_second * first - second) / determinant
        b[k + 1] = (scaled_first * second - first) / determinant
        k += 2


def _backward_solve(ld: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> None:
    """b <- P^T L^-T b, in place."""
    k = ld.shape[0] - 1
    while k >= 0:
        if pivots[k] > 0:
            b[k] -= ld[k + 1:, k] @ b[k + 1:]
            swap = pivots[k] - 1
            b[[k, swap]] = b[[swap, k]]
            k -= 1
            continue
        b[k] -= ld[k + 1:, k] @ b[k + 1:]
        b[k - 1] -= ld[k + 1:, k - 1] @ b[k + 1:]
        swap = -pivots[k] - 1
        b[[k, swap]] = b[[swap, k]]
        k -= 2


def _check_solve(LD: np.ndarray, pivots: np.ndarray, B: np.ndarray) -> None:
    op = "torch.linalg.ldl_solve"
    _check_square(LD, op)
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B.ndim, 1)}, {max(B.ndim, 1) - 1}], but got -2)")
    if LD.dtype.kind in "fV" and LD.dtype.itemsize < 4:
        raise NotImplementedError(f"\"ldl_solve_kernel_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(LD.dtype)}'")
    check_float(LD, op)
    if B.dtype != LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_dtype.scalar_type_name(B.dtype)} and A of type "
                           f"{_dtype.scalar_type_name(LD.dtype)} instead.")
    if pivots.shape != LD.shape[:-1]:
        raise RuntimeError(f"{op}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if pivots.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: Expected pivots to be integers. Got "
                           f"{_dtype.scalar_type_name(pivots.dtype)}")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is "
                           f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if pivots.size and np.abs(pivots).max() > LD.shape[-1]:
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). "
                           "Did you properly pass the result of ldl_factor?")
    if pivots.size and np.abs(pivots).min() < 1:
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. "
                           "Did you properly pass the result of ldl_factor?")


class LinalgLdlSolve(_Refused):
    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, LD, pivots, B):
        ctx.aten = "linalg_ldl_solve"
        _check_solve(LD, pivots, B)
        n, columns = LD.shape[-1], B.shape[-1]
        batch = _broadcast_batch(B.shape[:-2], LD.shape[:-2])
        count = math.prod(batch)
        factors = np.broadcast_to(LD, batch + (n, n)).reshape(count, n, n)
        orders = np.broadcast_to(pivots, batch + (n,)).reshape(count, n)
        result = np.broadcast_to(B, batch + (n, columns)).reshape(count, n, columns).copy()
        with np.errstate(all="ignore"):
            for index in range(result.shape[0]):
                _forward_solve(factors[index], orders[index], result[index])
                _backward_solve(factors[index], orders[index], result[index])
        return column_major(result.reshape(batch + (n, columns)))


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out=None) -> Tensor:
    """X with A X = B from ``ldl_factor``'s (LD, pivots); batches of LD and B broadcast."""
    return LinalgLdlSolve.apply(LD, pivots, B)
