"""LU with partial pivoting: torch.linalg.lu_factor / lu_factor_ex / lu / lu_solve, and the
older torch.lu, torch.lu_unpack, torch.lu_solve.

The factorisation is LAPACK's getrf on NumPy (one step per column, each vectorised over the
batch) for any m x n matrix, so the pivots are LAPACK's (1-based, int32). The gradients are
torch's: for a square A = P L U, dA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T, with the
extra rows of a tall L or columns of a wide U handled by triangular solves.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from .._warnings import warn_once
from ..tensor import Tensor
from ._base import Op
from ._linalg_common import check_float, column_major, named_result, same_dtype
from .diagonal import tril, triu
from .join import cat
from .padding import pad
from .linalg_solve import lu_solve_arrays, raise_info, solve_triangular, substitute

LuFactorResult = named_result("linalg_lu_factor", ("LU", "pivots"))
LuFactorExResult = named_result("linalg_lu_factor_ex", ("LU", "pivots", "info"))
LuResult = named_result("linalg_lu", ("P", "L", "U"))
LuUnpackResult = named_result("lu_unpack", ("P", "L", "U"))


def _check(A: np.ndarray, op: str, pivot: bool = True) -> None:
    """torch's checks, each under the name torch's message uses."""
    if A.ndim < 2:
        shown = "torch.lu_factor" if "lu_factor" in op or op == "torch.lu" else op
        raise RuntimeError(f"{shown}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype.kind not in "fV":
        raise NotImplementedError(f"\"lu_cpu\" not implemented for "
                                  f"'{_dtype.scalar_type_name(A.dtype)}'")
    check_float(A, op)
    if not pivot:
        shown = "linalg.lu_factor" if "lu_factor" in op or op == "torch.lu" else op
        raise RuntimeError(f"{shown}: LU without pivoting is not implemented on the CPU")


def lu_arrays(A: np.ndarray) -> tuple:
    """(LU, pivots, info) of each m x n matrix; info is the first zero on U's diagonal."""
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    lu = A.reshape((-1, m, n)).copy()
    pivots = np.empty((lu.shape[0], k), np.int32)
    rows = np.arange(lu.shape[0])
    with np.errstate(all="ignore"):
        for j in range(k):
            pivot = np.abs(lu[:, j:, j]).argmax(axis=1) + j
            pivots[:, j] = pivot + 1
            top = lu[rows, j, :].copy()
            lu[rows, j, :] = lu[rows, pivot, :]
            lu[rows, pivot, :] = top
            diagonal = lu[:, j, j:j + 1]
            below = lu[:, j + 1:, j]
            np.divide(below, diagonal, out=below, where=diagonal != 0)
            lu[:, j + 1:, j + 1:] -= below[:, :, None] * lu[:, j, None, j + 1:]
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    info = np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)
    return (column_major(lu.reshape(A.shape)), pivots.reshape(batch + (k,)),
            info.reshape(batch))


def permutation(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """P (m x m) with A = P L U from LAPACK's row swaps."""
    flat = pivots.reshape(-1, pivots.shape[-1]).astype(np.int64) - 1
    order = np.broadcast_to(np.arange(m), (flat.shape[0], m)).copy()
    rows = np.arange(flat.shape[0])
    for j in range(flat.shape[1]):
        here = order[:, j].copy()
        order[:, j] = order[rows, flat[:, j]]
        order[rows, flat[:, j]] = here
    P = np.zeros((flat.shape[0], m, m), dtype)
    P[rows[:, None], order, np.arange(m)] = 1
    return P.reshape(pivots.shape[:-1] + (m, m))


def _unpack(LU: Tensor, k: int) -> tuple:
    m, n = LU._data.shape[-2:]
    L = tril(LU[..., :, :k], -1) + Tensor._make(np.eye(m, k, dtype=LU._data.dtype))
    return L, triu(LU[..., :k, :])


def lu_backward(grad_L, grad_U, P: Tensor, L: Tensor, U: Tensor) -> Tensor:
    """dA for A = P L U (L m x k unit lower, U k x n upper)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    grad_L = grad_L if grad_L is not None else Tensor._make(np.zeros_like(L._data))
    grad_U = grad_U if grad_U is not None else Tensor._make(np.zeros_like(U._data))
    if m == n:
        return P @ _square_part(grad_L, grad_U, L, U)
    if m < n:  # A = P L [U1 | U2]: U2 = L^-1 P^T A2
        U1, U2, grad_U1, grad_U2 = U[..., :k], U[..., k:], grad_U[..., :k], grad_U[..., k:]
        grad_A2 = solve_triangular(L.mT, grad_U2, upper=True, unitriangular=True)
        grad_A1 = _square_part(grad_L - grad_A2 @ U2.mT, grad_U1, L, U1)
        return P @ cat([grad_A1, grad_A2], -1)
    L1, L2, grad_L1, grad_L2 = L[..., :k, :], L[..., k:, :], grad_L[..., :k, :], grad_L[..., k:, :]
    grad_A2 = solve_triangular(U.mT, grad_L2, upper=False, left=False)  # P^T A = [L1; L2] U
    grad_A1 = _square_part(grad_L1, grad_U - L2.mT @ grad_A2, L1, U)
    return P @ cat([grad_A1, grad_A2], -2)


def _square_part(grad_L, grad_U, L, U) -> Tensor:
    inner = tril(L.mT @ grad_L, -1) + triu(grad_U @ U.mT)
    inner = solve_triangular(L.mT, inner, upper=True, unitriangular=True)
    return solve_triangular(U.mT, inner, upper=False, left=False)


class LinalgLuFactorEx(Op):
    """LU = L + U - I packed;  dA from lu_backward with gL, gU the two triangles of g"""

    node_name = "LinalgLuFactorExBackward0"
    saved_names = ("LU", "pivots")

    @staticmethod
    def forward(ctx, A, pivot, check_errors, op):
        _check(A, op, pivot)
        ctx._saved_pivot = pivot
        LU, pivots, info = lu_arrays(A)
        if check_errors:
            raise_info(info, f"{op}: {{where}}U[{{info}},{{info}}] is zero and using it on "
                             f"lu_solve would result in a division by zero. If you still want "
                             f"to perform the factorization, consider calling "
                             f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
        ctx.save_for_backward(LU, pivots)
        return LU, pivots, info

    @staticmethod
    def backward(ctx, grad, grad_pivots=None, grad_info=None):
        LU, pivots = ctx.saved_tensors
        m, n = LU._data.shape[-2:]
        k = min(m, n)
        L, U = _unpack(LU, k)
        P = Tensor._make(permutation(pivots._data, m, LU._data.dtype))
        return lu_backward(tril(grad[..., :, :k], -1), triu(grad[..., :k, :]), P, L,
                           U), None, None, None


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info): L (unit diagonal, not stored) and U packed in one matrix, LAPACK's
    1-based pivots, info the first zero on U's diagonal (0: none)."""
    LU, pivots, info = LinalgLuFactorEx.apply(A, bool(pivot), bool(check_errors),
                                              "torch.linalg.lu_factor_ex")
    return LuFactorExResult(LU, pivots, info)


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots) of each matrix; a zero on U's diagonal is an error (lu_factor_ex
    reports it instead)."""
    LU, pivots, _ = LinalgLuFactorEx.apply(A, bool(pivot), True, "torch.linalg.lu_factor")
    return LuFactorResult(LU, pivots)


def lu_old(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu (deprecated in torch): (LU, pivots[, infos])."""
    warn_once("torch.lu is deprecated in favor of torch.linalg.lu_factor / "
              "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
              "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
              "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
              "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be "
              "replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, info = LinalgLuFactorEx.apply(A, bool(pivot), not get_infos, "torch.lu")
    if get_infos:
        return LU, pivots, info
    return LU, pivots


class LinalgLu(Op):
    """A = P L U;  dA = lu_backward(gL, gU)"""

    node_name = "LinalgLuBackward0"
    saved_names = ("P", "L", "U")

    @staticmethod
    def forward(ctx, A, pivot):
        _check(A, "linalg.lu", pivot)
        ctx._saved_pivot = pivot
        m, n = A.shape[-2:]
        k = min(m, n)
        LU, pivots, _ = lu_arrays(A)
        P = permutation(pivots, m, A.dtype)
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=A.dtype)
        U = np.triu(LU[..., :k, :])
        ctx.save_for_backward(P, L, U)
        return P, L, U

    @staticmethod
    def backward(ctx, grad_P, grad_L, grad_U):
        P, L, U = ctx.saved_tensors
        return lu_backward(grad_L, grad_U, P, L, U), None


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U) with A = P L U: P a permutation, L unit lower (m x k), U upper (k x n)."""
    P, L, U = LinalgLu.apply(A, bool(pivot))
    return LuResult(P.detach(), L, U)


class LuUnpack(Op):
    """(P, L, U) from packed LU and pivots;  dLU = tril(gL, -1) + triu(gU)"""

    node_name = "LuUnpackBackward0"

    @staticmethod
    def forward(ctx, LU, pivots, unpack_data, unpack_pivots):
        if LU.ndim < 2:
            raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. "
                               f"Got size: {list(LU.shape)} instead")
        m, n = LU.shape[-2:]
        k = min(m, n)
        ctx._saved_LU_data_sym_argsize_minus_2 = m
        ctx._saved_LU_data_sym_argsize_minus_1 = n
        empty = np.zeros((0,), LU.dtype)
        P = permutation(pivots, m, LU.dtype) if unpack_pivots else empty
        if not unpack_data:
            return P, empty, empty
        L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=LU.dtype)
        return P, L, np.triu(LU[..., :k, :])

    @staticmethod
    def backward(ctx, grad_P, grad_L, grad_U):
        m, n = ctx._saved_LU_data_sym_argsize_minus_2, ctx._saved_LU_data_sym_argsize_minus_1
        parts = []
        if grad_L is not None:
            parts.append(_pad(tril(grad_L, -1), m, n))
        if grad_U is not None:
            parts.append(_pad(triu(grad_U), m, n))
        grad = parts[0] if len(parts) == 1 else parts[0] + parts[1]
        return grad, None, None, None


def _pad(grad: Tensor, m: int, n: int) -> Tensor:
    """grad (m x k, or k x n) placed in an m x n matrix of zeros."""
    rows = grad.shape[-2]
    return pad(grad, (0, n - grad.shape[-1], 0, m - rows))


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None):
    """(P, L, U) from lu_factor's packed result."""
    P, L, U = LuUnpack.apply(LU_data, LU_pivots._data, bool(unpack_data), bool(unpack_pivots))
    return LuUnpackResult(P.detach(), L, U)


class LinalgLuSolve(Op):
    """X = A^-1 B (or A^-T B, B A^-1, B A^-T) from A's LU;  dB = lu_solve with the adjoint
    flipped, dLU = the triangles of A's gradient moved onto L and U"""

    node_name = "LinalgLuSolveBackward0"
    saved_names = ("LU", "pivots", "result")

    @staticmethod
    def forward(ctx, LU, pivots, B, left, adjoint):
        op = "linalg.lu_solve"
        if B.ndim < 2:
            raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
        same_dtype(LU, B, op)
        n = LU.shape[-1]
        if LU.shape[-2] != n:
            raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                               f"{LU.shape[-2]} by {n} matrices")
        if (B.shape[-2] if left else B.shape[-1]) != n:
            raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                               f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                               f"{B.shape[-2]}x{B.shape[-1]})")
        ctx._saved_left, ctx._saved_adjoint = left, adjoint
        rhs = B if left else B.swapaxes(-1, -2)
        result = _solve_arrays(LU, pivots, rhs, adjoint != (not left))
        result = result if left else result.swapaxes(-1, -2)
        result = column_major(result.astype(B.dtype, copy=False))
        ctx.save_for_backward(LU, pivots, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        LU, pivots, result = ctx.saved_tensors
        left, adjoint = ctx._saved_left, ctx._saved_adjoint
        grad_B = lu_solve(LU, pivots, grad, left=left, adjoint=not adjoint)
        if not ctx.needs_input_grad[0]:
            return None, None, grad_B, None, None
        if left:  # X = A^-1 B: gA = -gB X^T;  X = A^-T B: gA = -X gB^T
            grad_A = -(result @ grad_B.mT) if adjoint else -(grad_B @ result.mT)
        else:  # X = B A^-1: gA = -X^T gB;  X = B A^-T: gA = -gB^T X
            grad_A = -(grad_B.mT @ result) if adjoint else -(result.mT @ grad_B)
        n = LU.shape[-1]
        L, U = _unpack(LU, n)
        P = Tensor._make(permutation(pivots._data, n, LU._data.dtype))
        moved = P.mT @ grad_A  # A = P L U: gL = tril(P^T gA U^T, -1), gU = triu(L^T P^T gA)
        grad_LU = tril(moved @ U.mT, -1) + triu(L.mT @ moved)
        return grad_LU, None, grad_B, None, None


def _solve_arrays(LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, adjoint: bool):
    if not adjoint:
        return lu_solve_arrays(LU, pivots, B)
    # A^T X = B with A = P L U:  U^T L^T P^T X = B
    Y = substitute(LU.swapaxes(-1, -2), B, upper=False)
    Z = substitute(LU.swapaxes(-1, -2), Y, upper=True, unit=True)
    P = permutation(pivots, LU.shape[-1], LU.dtype)
    return P @ Z


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False, out=None) -> Tensor:
    """X with A X = B (A^H X = B with ``adjoint``; X A = B when not ``left``) from lu_factor's
    (LU, pivots)."""
    return LinalgLuSolve.apply(LU, pivots._data if isinstance(pivots, Tensor) else pivots, B,
                               bool(left), bool(adjoint))


def lu_solve_old(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *, out=None) -> Tensor:
    """torch.lu_solve (deprecated in torch): lu_solve(LU, pivots, b)."""
    warn_once("torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be "
              "removed in a future PyTorch release.\nNote that torch.linalg.lu_solve has its "
              "arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced "
              "with\nX = torch.linalg.lu_solve(LU, pivots, B)")
    return lu_solve(LU_data, LU_pivots, b)


METHODS = {"lu": lu_old, "lu_solve": lu_solve_old}
