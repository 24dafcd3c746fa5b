"""Decompositions with gradients: torch.linalg.svd / svdvals, eigh / eigvalsh and qr, plus the
older torch.svd (V, not V^H) and torch.qr.

Forwards are NumPy's LAPACK calls (gesdd, syevd, geqrf), batched. Singular vectors and
eigenvectors are defined only up to sign, so two LAPACK builds may return them with different
signs; every gauge-invariant quantity (products, projectors, the gradients of such losses)
agrees. The gradients are torch's formulas: with repeated singular values or eigenvalues the
vectors' gradient divides by zero and gives inf/NaN there, as torch's does.
"""
from __future__ import annotations

import numpy as np

from .._warnings import warn_once
from ..tensor import Tensor
from ._base import Op
from ._linalg_common import check_matrix, check_square, column_major, eye_like, named_result
from .diagonal import diag_embed, tril, triu
from .join import cat
from .linalg_det import LinAlgError
from .linalg_solve import solve_triangular

SvdResult = named_result("linalg_svd", ("U", "S", "Vh"))
OldSvdResult = named_result("svd", ("U", "S", "V"))
EighResult = named_result("linalg_eigh", ("eigenvalues", "eigenvectors"))
QrResult = named_result("linalg_qr", ("Q", "R"))
OldQrResult = named_result("qr", ("Q", "R"))


# -- SVD ----------------------------------------------------------------------------------------
def _svd_arrays(A: np.ndarray, full_matrices: bool) -> tuple:
    m, n = A.shape[-2:]
    k = min(m, n)
    if k == 0:  # LAPACK is not called: identity factors of the shapes torch gives
        batch = A.shape[:-2]
        rows, cols = (m, n) if full_matrices else (k, k)
        return (np.broadcast_to(np.eye(m, rows, dtype=A.dtype), batch + (m, rows)).copy(),
                np.zeros(batch + (0,), A.dtype),
                np.broadcast_to(np.eye(cols, n, dtype=A.dtype), batch + (cols, n)).copy())
    if not np.all(np.isfinite(A)):
        if np.any(np.isnan(A)):
            raise LinAlgError("linalg.svd: The algorithm failed to converge because the input "
                              "matrix contained non-finite values.")
        U, S, Vh = _svd_arrays(np.zeros_like(A), full_matrices)  # torch: NaN singular values
        return U, np.full_like(S, np.nan), Vh
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return column_major(U), S.astype(A.dtype, copy=False), column_major(Vh)


class LinalgSvd(Op):
    """A = U diag(S) V^H; the gradient is torch's svd_backward (on the first min(m, n) columns
    of U and rows of Vh when ``full_matrices``)"""

    node_name = "LinalgSvdBackward0"
    saved_names = ("S", "U", "Vh")

    @staticmethod
    def forward(ctx, A, full_matrices, op):
        check_matrix(A, op)
        ctx._saved_full_matrices = full_matrices
        ctx._saved_S_sym_argsize_minus_1 = min(A.shape[-2:])
        U, S, Vh = _svd_arrays(A, full_matrices)
        ctx.save_for_backward(S, U, Vh)  # torch's order
        return U, S, Vh

    @staticmethod
    def backward(ctx, grad_U, grad_S, grad_Vh):
        S, U, Vh = ctx.saved_tensors
        k = S.shape[-1]
        if ctx._saved_full_matrices:
            U, Vh = U[..., :k], Vh[..., :k, :]
            grad_U = None if grad_U is None else grad_U[..., :k]
            grad_Vh = None if grad_Vh is None else grad_Vh[..., :k, :]
        return svd_backward(grad_U, grad_S, grad_Vh, U, S, Vh), None, None


def _skew(X: Tensor) -> Tensor:
    return X - X.mT


def svd_backward(grad_U, grad_S, grad_Vh, U: Tensor, S: Tensor, Vh: Tensor) -> Tensor:
    """dA for A = U S Vh (U: m x k, Vh: k x n): the skew parts of U^T gU and V^T gV divided by
    S_j^2 - S_i^2, gS on the diagonal, and the parts of gU / gV outside the spans of U / V."""
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    if grad_U is None and grad_Vh is None:
        return (U * grad_S.unsqueeze(-2)) @ Vh
    squares = S * S
    gaps = squares.unsqueeze(-2) - squares.unsqueeze(-1) + eye_like(k, S._data.dtype)
    inner = 0
    if grad_U is not None:
        inner = _skew(U.mT @ grad_U) * S.unsqueeze(-2)
    if grad_Vh is not None:
        inner = inner + S.unsqueeze(-1) * _skew(Vh @ grad_Vh.mT)
    grad_A = inner / gaps
    if grad_S is not None:
        grad_A = grad_A + diag_embed(grad_S)
    if m > k and grad_U is not None:
        scaled = grad_U / S.unsqueeze(-2)
        grad_A = U @ grad_A + scaled - U @ (U.mT @ scaled)
        return grad_A @ Vh
    if n > k and grad_Vh is not None:
        scaled = grad_Vh / S.unsqueeze(-1)
        grad_A = grad_A @ Vh + scaled - (scaled @ Vh.mT) @ Vh
        return U @ grad_A
    return U @ grad_A @ Vh


def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """torch.linalg.svd: (U, S, Vh) with A = U diag(S) Vh, S descending; ``full_matrices``
    gives square U and Vh."""
    return SvdResult(*LinalgSvd.apply(A, bool(full_matrices), "linalg.svd"))


def svdvals(A: Tensor, *, driver=None, out=None) -> Tensor:
    """The singular values of each matrix, descending (differentiable through the SVD)."""
    return LinalgSvd.apply(A, False, "linalg.svd")[1]


def svd_old(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: (U, S, V) with V (not V^H); ``some=False`` gives square factors; without
    ``compute_uv`` U and V are zeros."""
    if not compute_uv:  # torch: square zero U and V, the values differentiable
        S = svdvals(input)
        batch, (m, n) = input._data.shape[:-2], input._data.shape[-2:]
        dtype = input._data.dtype
        return OldSvdResult(Tensor._make(np.zeros(batch + (m, m), dtype)), S,
                            Tensor._make(np.zeros(batch + (n, n), dtype)))
    U, S, Vh = LinalgSvd.apply(input, not some, "linalg.svd")
    return OldSvdResult(U, S, Vh.mT)


# -- eigh ---------------------------------------------------------------------------------------
def _check_uplo(UPLO: str) -> None:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


class LinalgEigh(Op):
    """A = V diag(L) V^T;  dA = V (diag(gL) + skew(V^T gV) / (L_j - L_i)) V^T"""

    node_name = "LinalgEighBackward0"
    saved_names = ("eigenvalues", "eigenvectors")

    @staticmethod
    def forward(ctx, A, UPLO, op):
        check_square(A, op)
        if A.size == 0:
            values, vectors = np.zeros(A.shape[:-1], A.dtype), A.copy()
        elif not np.all(np.isfinite(A)):  # LAPACK gives NaN eigenvalues here
            values = np.full(A.shape[:-1], np.nan, A.dtype)
            vectors = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape).copy()
        else:
            values, vectors = np.linalg.eigh(A, UPLO=UPLO)
        values, vectors = values.astype(A.dtype, copy=False), column_major(vectors)
        ctx.save_for_backward(values, vectors)
        return values, vectors

    @staticmethod
    def backward(ctx, grad_values, grad_vectors):
        values, vectors = ctx.saved_tensors
        if grad_vectors is None:
            return (vectors * grad_values.unsqueeze(-2)) @ vectors.mT, None, None
        n = values.shape[-1]
        projected = vectors.mT @ grad_vectors
        projected = 0.5 * (projected - projected.mT)
        gaps = values.unsqueeze(-2) - values.unsqueeze(-1) + eye_like(n, values._data.dtype)
        inner = projected / gaps
        if grad_values is not None:
            inner = inner + diag_embed(grad_values)
        return vectors @ inner @ vectors.mT, None, None


def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix, read from its
    lower (``UPLO='L'``) or upper triangle."""
    _check_uplo(UPLO)
    return EighResult(*LinalgEigh.apply(A, UPLO, "linalg.eigh"))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues of each symmetric matrix, ascending."""
    _check_uplo(UPLO)
    return LinalgEigh.apply(A, UPLO, "linalg.eigh")[0]


# -- QR -----------------------------------------------------------------------------------------
class LinalgQr(Op):
    """A = Q R;  for m >= n: dA = (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T; wide A splits into
    its first m columns and the rest"""

    node_name = "LinalgQrBackward0"
    saved_names = ("Q", "R")

    @staticmethod
    def forward(ctx, A, mode):
        check_matrix(A, "linalg.qr")
        ctx._saved_mode = mode
        m, n = A.shape[-2:]
        if A.size == 0:
            rows = m if mode == "complete" else min(m, n)
            Q = np.broadcast_to(np.eye(m, rows, dtype=A.dtype), A.shape[:-2] + (m, rows)).copy()
            R = np.zeros(A.shape[:-2] + (rows, n), A.dtype)
        elif mode == "r":
            R = np.linalg.qr(A, mode="r")
            Q = np.zeros((0,), A.dtype)
        else:
            Q, R = np.linalg.qr(A, mode=mode)
        Q, R = column_major(Q.astype(A.dtype, copy=False)) if Q.ndim >= 2 else Q, \
            column_major(R.astype(A.dtype, copy=False))
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, grad_Q, grad_R):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2] if Q._data.ndim >= 2 else 0, R.shape[-1]
        if ctx._saved_mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        if ctx._saved_mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols.")
        if grad_Q is None:
            grad_Q = Tensor._make(np.zeros_like(Q._data))
        if grad_R is None:
            grad_R = Tensor._make(np.zeros_like(R._data))
        if m >= n:
            return _qr_tall_grad(Q, R, grad_Q, grad_R), None
        square, rest = R[..., :m], R[..., m:]
        grad_rest = grad_R[..., m:]
        grad_left = _qr_tall_grad(Q, square, grad_Q + (Q @ rest) @ grad_rest.mT,
                                  grad_R[..., :m])
        return _cat_last(grad_left, Q @ grad_rest), None


def _cat_last(left: Tensor, right: Tensor) -> Tensor:
    return cat([left, right], -1)


def _qr_tall_grad(Q: Tensor, R: Tensor, grad_Q: Tensor, grad_R: Tensor) -> Tensor:
    M = R @ grad_R.mT - grad_Q.mT @ Q
    lower = tril(M, -1)
    copyltu = lower + lower.mT + tril(triu(M))
    return solve_triangular(R, (grad_Q + Q @ copyltu).mT, upper=True).mT


def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """torch.linalg.qr: (Q, R) with A = Q R, Q orthonormal columns, R upper triangular;
    ``mode`` 'reduced' (k = min(m, n) columns), 'complete' (square Q) or 'r' (R only, Q
    empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return QrResult(*LinalgQr.apply(A, mode))


def qr_old(input: Tensor, some: bool = True, *, out=None):
    """torch.qr: ``some`` for the reduced factors, else complete ones."""
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
              "future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
              "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
              "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return OldQrResult(*LinalgQr.apply(input, "reduced" if some else "complete"))


METHODS = {"svd": svd_old, "qr": qr_old}
