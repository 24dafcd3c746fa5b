"""Linear systems: torch.linalg.solve / solve_ex / solve_triangular / inv_ex / cholesky /
cholesky_ex and the older torch.cholesky, cholesky_solve, cholesky_inverse, triangular_solve.

The forwards lean on NumPy's LAPACK calls (``np.linalg.solve``, ``cholesky``, ``inv``); where
LAPACK refuses (a singular matrix, one that is not positive-definite) the factorisation is
redone column by column on NumPy, vectorised over the batch, to find what torch reports: the
first zero pivot, the order of the first minor that is not positive-definite. The gradients are
written with these same functions, so they have second derivatives.
"""
from __future__ import annotations

import numpy as np

from .._warnings import warn_once
from ..tensor import Tensor
from ._base import Op
from ._out import write_out
from ._linalg_common import (check_square, column_major, named_result,
                             same_dtype)
from .diagonal import tril, triu
from .linalg import _broadcast_batch
from .linalg_det import LinAlgError, LinalgInvEx, lu_factor

SolveExResult = named_result("linalg_solve_ex", ("result", "info"))
InvExResult = named_result("linalg_inv_ex", ("inverse", "info"))
CholeskyExResult = named_result("linalg_cholesky_ex", ("L", "info"))
TriangularSolveResult = named_result("triangular_solve", ("solution", "cloned_coefficient"))


# -- arrays -------------------------------------------------------------------------------------
def substitute(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool = False) -> np.ndarray:
    """T^-1 B for triangular T by forward or back substitution, one row at a time over the
    whole batch: a zero on T's diagonal gives inf/NaN, as LAPACK's trsm does."""
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    T = np.broadcast_to(T, batch + T.shape[-2:])
    X = np.array(np.broadcast_to(B, batch + B.shape[-2:]), dtype=np.result_type(T, B))
    n = T.shape[-1]
    with np.errstate(all="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            done = slice(i + 1, n) if upper else slice(0, i)
            X[..., i, :] -= (T[..., i, None, done] @ X[..., done, :])[..., 0, :]
            if not unit:
                X[..., i, :] /= T[..., i, i, None]
    return X


def triangular(T: np.ndarray, B: np.ndarray, upper: bool, unit: bool = False,
               left: bool = True) -> np.ndarray:
    """T^-1 B (or B T^-1 when not ``left``) reading only T's ``upper``/lower triangle."""
    if not left:
        return triangular(T.swapaxes(-1, -2), B.swapaxes(-1, -2), not upper,
                          unit).swapaxes(-1, -2)
    mask = np.triu(np.ones(T.shape[-2:], bool), 1 if unit else 0) if upper else \
        np.tril(np.ones(T.shape[-2:], bool), -1 if unit else 0)
    T = np.where(mask, T, 0) + (np.eye(T.shape[-1], dtype=T.dtype) if unit else 0)
    if T.size and B.size:
        try:
            batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
            return np.linalg.solve(np.broadcast_to(T, batch + T.shape[-2:]),
                                   np.broadcast_to(B, batch + B.shape[-2:]))
        except np.linalg.LinAlgError:
            pass
    return substitute(T, B, upper, unit)


def lu_solve_arrays(lu: np.ndarray, pivots: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A^-1 B from A's LU factors and 1-based pivots (rows of B swapped in pivot order)."""
    batch = np.broadcast_shapes(lu.shape[:-2], B.shape[:-2])
    B = np.array(np.broadcast_to(B, batch + B.shape[-2:]))
    pivots = np.broadcast_to(pivots, batch + pivots.shape[-1:]) - 1
    flat_B, flat_p = B.reshape((-1,) + B.shape[-2:]), pivots.reshape(-1, pivots.shape[-1])
    rows = np.arange(flat_B.shape[0])
    for k in range(flat_p.shape[1]):
        top = flat_B[rows, k].copy()
        flat_B[rows, k] = flat_B[rows, flat_p[:, k]]
        flat_B[rows, flat_p[:, k]] = top
    Y = substitute(lu, flat_B.reshape(B.shape), upper=False, unit=True)
    return substitute(lu, Y, upper=True)


def first_zero_pivot(lu: np.ndarray) -> np.ndarray:
    """LAPACK's info: the 1-based index of the first zero on U's diagonal, 0 if none."""
    zero = np.diagonal(lu, axis1=-2, axis2=-1) == 0
    return np.where(zero.any(-1), zero.argmax(-1) + 1, 0).astype(np.int32)


def cholesky_arrays(A: np.ndarray) -> tuple:
    """(L, info) from A's lower triangle; info is the order of the first leading minor that is
    not positive-definite (L then holds the columns done so far, as potrf leaves it)."""
    try:
        return np.linalg.cholesky(A) if A.size else A.copy(), np.zeros(A.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        pass
    n = A.shape[-1]
    L = np.tril(A).reshape((-1, n, n))
    info = np.zeros(L.shape[0], np.int32)
    with np.errstate(all="ignore"):
        for j in range(n):
            pivot = L[:, j, j] - (L[:, j, :j] ** 2).sum(-1)
            failed = (info == 0) & ~(pivot > 0)
            info[failed] = j + 1
            root = np.sqrt(pivot)
            L[:, j, j] = root
            done = np.einsum("bik,bk->bi", L[:, j + 1:, :j], L[:, j, :j])
            L[:, j + 1:, j] = (L[:, j + 1:, j] - done) / root[:, None]
    return L.reshape(A.shape), info.reshape(A.shape[:-2])


def raise_info(info: np.ndarray, message: str) -> None:
    """torch's check_errors: the first failing batch element named when A is batched."""
    if not np.any(info):
        return
    flat = info.reshape(-1)
    index = int(np.argmax(flat != 0))
    where = f"(Batch element {index}): " if info.ndim else ""
    raise LinAlgError(message.format(where=where, info=int(flat[index])))


# -- solve_triangular ---------------------------------------------------------------------------
def _check_system(A: np.ndarray, B: np.ndarray, op: str, left: bool) -> None:
    check_square(A, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    same_dtype(A, B, op)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation {equation} "
                           f"({A.shape[-2]}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    _broadcast_batch(B.shape[:-2], A.shape[:-2])  # torch's message for batches that differ


def _triangle(grad: Tensor, upper: bool, unit: bool) -> Tensor:
    return triu(grad, 1 if unit else 0) if upper else tril(grad, -1 if unit else 0)


class LinalgSolveTriangular(Op):
    """X = A^-1 B (left) or B A^-1;  dB = A^-T g (g A^-T), dA = -dB X^T (-X^T dB) on A's
    triangle"""

    node_name = "LinalgSolveTriangularBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        _check_system(A, B, "linalg.solve_triangular", left)
        ctx._saved_upper, ctx._saved_left = upper, left
        ctx._saved_unitriangular = unitriangular
        result = triangular(A, B, upper, unitriangular, left).astype(A.dtype, copy=False)
        result = column_major(result)
        # A's gradient goes through B's (-A^-T g X^T), so A is kept when either needs one
        ctx.save_for_backward(A if any(ctx.needs_input_grad[:2]) else None,
                              result if ctx.needs_input_grad[0] else None)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, result = ctx.saved_tensors
        upper, left, unit = ctx._saved_upper, ctx._saved_left, ctx._saved_unitriangular
        grad_B = grad_A = None
        if A is not None:
            grad_B = solve_triangular(A.mT, grad, upper=not upper, left=left,
                                      unitriangular=unit)
        if result is not None:
            product = -(grad_B @ result.mT) if left else -(result.mT @ grad_B)
            grad_A = _triangle(product, upper, unit)
        if not ctx.needs_input_grad[1]:
            grad_B = None
        return grad_A, grad_B, None, None, None


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out=None) -> Tensor:
    """X with A X = B (``left``) or X A = B for triangular A, reading only the ``upper`` (or
    lower) triangle; ``unitriangular`` takes A's diagonal as ones."""
    result = LinalgSolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular))
    return write_out(out, result, "linalg_solve_triangular") if out is not None else result


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):
    """torch.triangular_solve (deprecated in torch): (A^-1 b, a copy of A), A read as ``upper``
    or lower triangular, transposed first when ``transpose``."""
    warn_once("torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
              "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular "
              "has its arguments reversed and does not return a copy of one of the inputs.\n"
              "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
              "X = torch.linalg.solve_triangular(A, B).")
    matrix = A.mT if transpose else A
    solution = TriangularSolve.apply(b, matrix, bool(upper) != bool(transpose), unitriangular)
    return TriangularSolveResult(solution, Tensor._make(column_major(A._data)))


class TriangularSolve(LinalgSolveTriangular):
    """triangular_solve's node: the same formula under torch's older name"""

    node_name = "TriangularSolveBackward0"
    saved_names = ("self", "A", "solution")

    @staticmethod
    def forward(ctx, b, A, upper, unitriangular):
        _check_system(A, b, "linalg.solve_triangular", True)
        ctx._saved_upper, ctx._saved_unitriangular = upper, unitriangular
        result = column_major(triangular(A, b, upper, unitriangular).astype(A.dtype, copy=False))
        ctx.save_for_backward(b, A, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        _b, A, result = ctx.saved_tensors
        upper, unit = ctx._saved_upper, ctx._saved_unitriangular
        grad_b = solve_triangular(A.mT, grad, upper=not upper, unitriangular=unit)
        grad_A = _triangle(-(grad_b @ result.mT), upper, unit)
        return grad_b, grad_A, None, None


# -- solve --------------------------------------------------------------------------------------
def _vector_rhs(A: np.ndarray, B: np.ndarray) -> bool:
    """torch reads B as a (batch of) vector(s) when it is 1-D or has A's shape without the
    last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


class LinalgSolveEx(Op):
    """X = A^-1 B (left) or B A^-1;  dB = solve(A^T, g), dA = -dB X^T (left) / -X^T dB"""

    node_name = "LinalgSolveExBackward0"
    saved_names = ("A", "LU", "pivots", "result")

    @staticmethod
    def forward(ctx, A, B, left, check_errors, op):
        raised_by = op  # torch names the op differently when it refuses a singular A
        op = "linalg.solve" if op == "torch.linalg.solve" else op
        check_square(A, op)
        same_dtype(A, B, op)
        vector = _vector_rhs(A, B)
        matrix = B[..., None] if vector else B  # a column even for XA = B, as torch's check
        _check_system(A, matrix, op, left)
        ctx._saved_left, ctx.vector = left, vector
        system = A if left else A.swapaxes(-1, -2)
        rhs = matrix if left else matrix.swapaxes(-1, -2)
        lu, pivots, _ = lu_factor(np.ascontiguousarray(system))
        info = first_zero_pivot(lu)
        if check_errors:
            raise_info(info, f"{raised_by}: {{where}}The solver failed because the input matrix is "
                             f"singular.")
        if not np.any(info) and system.size and rhs.size:
            batch = np.broadcast_shapes(system.shape[:-2], rhs.shape[:-2])
            result = np.linalg.solve(np.broadcast_to(system, batch + system.shape[-2:]),
                                     np.broadcast_to(rhs, batch + rhs.shape[-2:]))
        else:
            result = lu_solve_arrays(lu, pivots, rhs)
        result = (result if left else result.swapaxes(-1, -2)).astype(A.dtype, copy=False)
        result = result[..., 0] if vector and left else result[..., 0, :] if vector else result
        # LAPACK's layout for AX = B: each matrix column by column (a batch of vectors as
        # one matrix); XA = B is solved transposed, so its result is row-major
        if left and result.ndim >= 2:
            result = column_major(result)
        else:
            result = np.ascontiguousarray(result)
        ctx.save_for_backward(A, lu, pivots, result)
        return result, info

    @staticmethod
    def backward(ctx, grad, grad_info=None):
        A, _lu, _pivots, result = ctx.saved_tensors
        left, vector = ctx._saved_left, ctx.vector
        grad_B = solve(A.mT, grad, left=left)
        if vector:
            grad_B_m = grad_B.unsqueeze(-1) if left else grad_B.unsqueeze(-2)
            result_m = result.unsqueeze(-1) if left else result.unsqueeze(-2)
        else:
            grad_B_m, result_m = grad_B, result
        grad_A = -(grad_B_m @ result_m.mT) if left else -(result_m.mT @ grad_B_m)
        return grad_A, grad_B, None, None, None


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,
             out=None):
    """(X, info) with A X = B (``left``) or X A = B; info is the 1-based index of the first
    zero pivot of A's LU (0: solved), an error only when ``check_errors``."""
    result, info = LinalgSolveEx.apply(A, B, bool(left), bool(check_errors), "linalg.solve_ex")
    return SolveExResult(result, info)


def solve(A: Tensor, B: Tensor, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B (``left``) or X A = B, A square and invertible; B may be a (batch of)
    vector(s). A singular A raises ``torch.linalg.LinAlgError``."""
    result = LinalgSolveEx.apply(A, B, bool(left), True, "torch.linalg.solve")[0]
    return write_out(out, result, "linalg_solve") if out is not None else result


def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """(A^-1, info): info the first zero pivot of A's LU (0 when A is invertible)."""
    check_square(A._data, "linalg.inv_ex")
    info = first_zero_pivot(lu_factor(A._data)[0])
    if check_errors or not np.any(info):
        return InvExResult(LinalgInvEx.apply(A, "linalg.inv_ex"), Tensor._make(info))
    identity = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype), A._data.shape)
    inverse = solve_ex(A, Tensor._make(identity.copy())).result
    return InvExResult(inverse, Tensor._make(info))


# -- Cholesky -----------------------------------------------------------------------------------
class LinalgCholeskyEx(Op):
    """A = L L^T;  dA = sym(L^-T Phi(L^T g) L^-1), Phi: lower triangle, half diagonal"""

    node_name = "LinalgCholeskyExBackward0"
    saved_names = ("L",)

    @staticmethod
    def forward(ctx, A, upper, check_errors, op):
        check_square(A, op)
        ctx._saved_upper = upper
        L, info = cholesky_arrays(A.swapaxes(-1, -2) if upper else A)
        if check_errors:
            raise_info(info, f"{op}: {{where}}The factorization could not be completed because "
                             f"the input is not positive-definite (the leading minor of order "
                             f"{{info}} is not positive-definite).")
        L = L.astype(A.dtype, copy=False)
        L = column_major(L.swapaxes(-1, -2) if upper else L)
        ctx.save_for_backward(L)
        return L, info

    @staticmethod
    def backward(ctx, grad, grad_info=None):
        (L,) = ctx.saved_tensors
        if ctx._saved_upper:
            L, grad = L.mT, grad.mT
        phi = tril(L.mT @ grad)
        phi = phi - 0.5 * tril(triu(phi))
        grad_A = solve_triangular(L.mT, solve_triangular(L.mT, phi, upper=True).mT,
                                  upper=True)
        return 0.5 * (grad_A + grad_A.mT), None, None, None


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): the Cholesky factor of each symmetric positive-definite matrix (from its lower
    triangle, or upper with ``upper``); info the order of the first minor that is not
    positive-definite (0: none)."""
    L, info = LinalgCholeskyEx.apply(A, bool(upper), bool(check_errors), "linalg.cholesky_ex")
    return CholeskyExResult(L, info)


def cholesky(A: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.linalg.cholesky (and torch.cholesky): L with A = L L^T (U^T U with ``upper``);
    ``torch.linalg.LinAlgError`` when A is not positive-definite."""
    result = LinalgCholeskyEx.apply(A, bool(upper), True, "linalg.cholesky")[0]
    return write_out(out, result, "linalg_cholesky") if out is not None else result


class Cholesky(LinalgCholeskyEx):
    """torch.cholesky's node: linalg.cholesky's formula under its older name"""

    node_name = "CholeskyBackward0"


def cholesky_old(input: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """torch.cholesky and Tensor.cholesky (deprecated in torch for torch.linalg.cholesky)."""
    warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
              "removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced "
              "with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
              "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will "
              "produce equivalent results for all valid (symmetric positive definite) inputs.")
    result = Cholesky.apply(input, bool(upper), True, "linalg.cholesky")[0]
    return write_out(out, result, "cholesky") if out is not None else result


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """X with (L L^T) X = B from the Cholesky factor L (U^T U with ``upper``)."""
    return CholeskySolve.apply(B, L, bool(upper))


class CholeskySolve(Op):
    """X = (L L^T)^-1 B;  dB = (L L^T)^-1 g, dL from d(L L^T) = -dB X^T symmetrised"""

    node_name = "CholeskySolveBackward0"
    saved_names = ("self", "input2", "result")

    @staticmethod
    def forward(ctx, B, L, upper):
        _check_system(L, B, "cholesky_solve", True)
        ctx._saved_upper = upper
        lower = L.swapaxes(-1, -2) if upper else L
        Y = triangular(lower, B, upper=False)
        result = triangular(lower.swapaxes(-1, -2), Y, upper=True).astype(B.dtype, copy=False)
        result = column_major(result)
        ctx.save_for_backward(B, L, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        _B, L, result = ctx.saved_tensors
        upper = ctx._saved_upper
        grad_B = cholesky_solve(grad, L, upper)
        common = -(grad_B @ result.mT)
        common = common + common.mT
        grad_L = (L @ common) if upper else (common @ L)
        return grad_B, grad_L, None


def cholesky_inverse(L: Tensor, upper: bool = False, *, out=None) -> Tensor:
    """(L L^T)^-1 (U^T U with ``upper``) from a Cholesky factor."""
    check_square(L._data, "cholesky_inverse", "input")
    return CholeskyInverse.apply(L, bool(upper))


class CholeskyInverse(Op):
    """R = (L L^T)^-1;  dL = -(R (g + g^T) R) L  (L^T-side when upper)"""

    node_name = "CholeskyInverseBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, L, upper):
        ctx._saved_upper = upper
        lower = L.swapaxes(-1, -2) if upper else L
        identity = np.broadcast_to(np.eye(L.shape[-1], dtype=L.dtype), L.shape)
        inverse_lower = triangular(lower, identity, upper=False)
        result = (inverse_lower.swapaxes(-1, -2) @ inverse_lower).astype(L.dtype, copy=False)
        result = column_major(result)
        ctx.save_for_backward(L, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        L, result = ctx.saved_tensors
        common = -(result @ (grad + grad.mT) @ result)
        return ((L @ common) if ctx._saved_upper else (common @ L)), None


METHODS = {"cholesky": cholesky_old, "cholesky_solve": cholesky_solve,
           "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve}
