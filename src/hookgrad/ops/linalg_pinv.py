"""The pseudo-inverse, least squares and the matrix exponential: torch.linalg.pinv / lstsq /
matrix_exp and the older torch.pinverse, torch.matrix_exp.

pinv comes from the SVD (eigh when ``hermitian``), dropping singular values at or below
max(atol, rtol * largest); lstsq's solution is pinv(A) B with rcond as that rtol, the
minimum-norm solution LAPACK's drivers give. matrix_exp is scaling and squaring of a Taylor
polynomial; its gradient is the upper-right block of exp([[A^T, G], [0, A^T]]).
"""
from __future__ import annotations


import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import Op
from ._linalg_common import check_square, column_major, named_result
from .join import cat
from .linalg_norms import _threshold

LstsqResult = named_result("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _pinv_arrays(A: np.ndarray, atol, rtol, hermitian: bool) -> np.ndarray:
    if A.size == 0:
        return np.zeros(A.shape[:-2] + A.shape[-1:] + A.shape[-2:-1], A.dtype)
    if hermitian:
        values, vectors = np.linalg.eigh(A)
        keep = np.abs(values) > _threshold(np.abs(values), A, atol, rtol)
        with np.errstate(divide="ignore"):
            inverted = np.where(keep, 1 / np.where(keep, values, 1), 0).astype(A.dtype)
        return (vectors * inverted[..., None, :]) @ vectors.swapaxes(-1, -2)
    U, S, Vh = np.linalg.svd(A, full_matrices=False)
    keep = S > _threshold(S, A, atol, rtol)
    inverted = np.where(keep, 1 / np.where(keep, S, 1), 0).astype(A.dtype)
    return (Vh.swapaxes(-1, -2) * inverted[..., None, :]) @ U.swapaxes(-1, -2)


def pinv_backward(grad: Tensor, pinv: Tensor, A: Tensor) -> Tensor:
    """dA for P = pinv(A) (torch's formula, exact where the rank does not change)."""
    m, n = A.shape[-2:]
    pinv_t, grad_t = pinv.mT, grad.mT
    if m <= n:
        K = grad_t @ pinv
        K_pinv_t = K @ pinv_t
        return (-(pinv @ K).mT + K_pinv_t - (A @ pinv) @ K_pinv_t
                + (pinv_t @ pinv) @ (grad_t - K @ A))
    K = pinv @ grad_t
    pinv_t_K = pinv_t @ K
    return (-(K @ pinv).mT + pinv_t_K - (pinv_t_K @ pinv) @ A
            + (grad_t - A @ K) @ pinv @ pinv_t)


class LinalgPinv(Op):
    """P = V S^+ U^T;  dA = pinv_backward(g, P, A)"""

    node_name = "LinalgPinvBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, A, atol, rtol, hermitian):
        if A.ndim < 2 or A.dtype.kind not in "fV" or A.dtype.itemsize < 4:
            raise RuntimeError(f"linalg.pinv({_dtype.scalar_type_name(A.dtype)}"
                               f"{{{list(A.shape)}}}): expected a tensor with 2 or more "
                               f"dimensions of float, double, cfloat or cdouble types")
        if hermitian:
            check_square(A, "linalg.pinv")
        result = np.ascontiguousarray(_pinv_arrays(A, atol, rtol, hermitian))
        ctx.save_for_backward(A, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, result = ctx.saved_tensors
        return pinv_backward(grad, result, A), None, None, None


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False, out=None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix; singular values at or below
    max(atol, rtol * largest) count as zero (rtol defaults to eps * max(m, n) when atol is
    not given)."""
    return LinalgPinv.apply(A, atol, rtol, bool(hermitian))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: pinv with ``rcond`` as the relative tolerance."""
    return LinalgPinv.apply(input, None, rcond, False)


# -- lstsq --------------------------------------------------------------------------------------
class LinalgLstsq(Op):
    """X = pinv(A) B;  dB = pinv(A)^T g, dA = pinv_backward(g B^T, pinv(A), A)"""

    node_name = "LinalgLstsqBackward0"
    saved_names = ("self", "b", "solution")

    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        op = "torch.linalg.lstsq"
        if A.ndim < 2:
            raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
        if B.ndim < 1:
            raise RuntimeError(f"{op}: other must have at least 1 dimension.")
        if A.dtype != B.dtype:
            raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but "
                               f"got input's dtype {_dtype.scalar_type_name(A.dtype)} and "
                               f"other's dtype {_dtype.scalar_type_name(B.dtype)}")
        if A.dtype.kind not in "fV" or A.dtype.itemsize < 4:
            raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                               f"Got {_dtype.scalar_type_name(A.dtype)}")
        if A.ndim < B.ndim or A.ndim - B.ndim > 1:
            raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and "
                               f"(input.dim() - other.dim()) <= 1")
        vector = B.ndim == A.ndim - 1
        matrix = B[..., None] if vector else B
        if matrix.shape[-2] != A.shape[-2]:
            raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2)")
        m, n = A.shape[-2:]
        rtol = rcond if rcond is not None and rcond >= 0 else np.finfo(A.dtype).eps * max(m, n)
        S = np.linalg.svd(A, compute_uv=False) if A.size else np.zeros(A.shape[:-2] + (0,))
        rank = (S > _threshold(S, A, None, rtol)).sum(-1).astype(np.int64)
        solution = (_pinv_arrays(A, None, rtol, False) @ matrix).astype(A.dtype, copy=False)
        batch = np.broadcast_shapes(A.shape[:-2], matrix.shape[:-2])
        residuals = np.zeros((0,), A.dtype)
        if driver != "gelsy" and m > n and np.all(rank == n):
            residuals = ((A @ solution - matrix) ** 2).sum(-2).astype(A.dtype)
            residuals = residuals[..., 0] if vector else residuals
        if driver == "gels":
            rank = np.zeros((0,), np.int64)
        else:
            rank = np.broadcast_to(rank, batch).copy()
        values = S.astype(A.dtype) if driver in ("gelsd", "gelss") else np.zeros((0,), A.dtype)
        solution = _in_lapack_buffer(solution[..., 0] if vector else solution, max(m, n), vector)
        ctx.vector, ctx.has_residuals = vector, residuals.ndim > 1 or residuals.size > 0
        ctx.save_for_backward(A, B, solution)
        return solution, residuals, rank, values

    @staticmethod
    def backward(ctx, grad, grad_residuals=None, grad_rank=None, grad_values=None):
        A, B, solution = ctx.saved_tensors
        pinv_A = pinv(A)
        if ctx.vector:
            B, solution = B.unsqueeze(-1), solution.unsqueeze(-1)
        grad_A = grad_B = None
        if grad is not None:
            grad = grad.unsqueeze(-1) if ctx.vector else grad
            grad_B = pinv_A.mT @ grad
            grad_A = pinv_backward(grad @ B.mT, pinv_A, A)
        if grad_residuals is not None and ctx.has_residuals:
            # at the optimum d||A x - b||^2 = 2 (A x - b) . (dA x - db)
            weight = grad_residuals.unsqueeze(-1) if ctx.vector else grad_residuals
            scaled = 2 * (A @ solution - B) * weight.unsqueeze(-2)
            grad_A = scaled @ solution.mT if grad_A is None else grad_A + scaled @ solution.mT
            grad_B = -scaled if grad_B is None else grad_B - scaled
        if grad_B is not None and ctx.vector:
            grad_B = grad_B.squeeze(-1)
        return grad_A, grad_B, None, None


def _in_lapack_buffer(solution: np.ndarray, rows: int, vector: bool) -> np.ndarray:
    """The solution as torch returns it: the first n rows of a buffer of max(m, n) rows (B's
    rows), each matrix column by column, as LAPACK's drivers overwrite B."""
    n = solution.shape[-1] if vector else solution.shape[-2]
    if vector:
        buffer = np.zeros(solution.shape[:-1] + (rows,), solution.dtype)
        buffer[..., :n] = solution
        return buffer[..., :n]
    buffer = column_major(np.zeros(solution.shape[:-2] + (rows, solution.shape[-1]),
                                   solution.dtype))
    buffer[..., :n, :] = solution
    return buffer[..., :n, :]


def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||: the minimum-norm
    solution; which of the others are filled follows torch's CPU ``driver`` (gelsy by
    default: rank only; gelsd and gelss add singular values; residuals, squared, for full-rank
    tall A except with gelsy)."""
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    return LstsqResult(*LinalgLstsq.apply(A, B, rcond, driver))


# -- matrix_exp ---------------------------------------------------------------------------------
_TAYLOR_DEGREE = 18


def matrix_exp_arrays(A: np.ndarray) -> np.ndarray:
    """exp(A): each matrix scaled by 2^-s to a 1-norm of at most 1/2, a degree-18 Taylor
    polynomial (in float64), then squared s times."""
    if A.size == 0:
        return A.copy()
    work = A.astype(np.float64)
    norm = np.abs(work).sum(-2).max(-1)
    with np.errstate(divide="ignore"):
        steps = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 0.5))).astype(int)
    steps = np.where(np.isfinite(norm), steps, 0)
    scaled = work / (2.0 ** steps)[..., None, None]
    identity = np.eye(A.shape[-1])
    result = identity + scaled / _TAYLOR_DEGREE
    for k in range(_TAYLOR_DEGREE - 1, 0, -1):
        result = identity + (scaled @ result) / k
    for step in range(int(steps.max(initial=0))):
        squared = result @ result
        result = np.where((step < steps)[..., None, None], squared, result)
    return result.astype(A.dtype)


class LinalgMatrixExp(Op):
    """exp(A);  dA = exp([[A^T, g], [0, A^T]])'s upper-right block"""

    node_name = "LinalgMatrixExpBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, A):
        check_square(A, "linalg.matrix_exp")
        ctx.save_for_backward(A)
        return matrix_exp_arrays(A)

    @staticmethod
    def backward(ctx, grad):
        (A,) = ctx.saved_tensors
        n = A.shape[-1]
        zeros = Tensor._make(np.zeros(grad._data.shape, grad._data.dtype))
        block = cat([cat([A.mT, grad], -1), cat([zeros, A.mT], -1)], -2)
        return matrix_exp(block)[..., :n, n:]


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential sum A^k / k! of each square matrix (float16/bfloat16 computed in
    float32 and rounded once, as hookgrad's half-precision ops are)."""
    if A._data.dtype.kind in "fV" and A._data.dtype.itemsize == 2:
        return LinalgMatrixExp.apply(A.float()).to(A.dtype)
    return LinalgMatrixExp.apply(A)


METHODS = {"pinverse": pinverse, "matrix_exp": matrix_exp}
