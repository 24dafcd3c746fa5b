"""Determinants and the inverse: det, slogdet, logdet, inverse (torch.linalg.det / slogdet / inv
and their top-level names).

det and slogdet come from an LU factorisation with partial pivoting, LAPACK's getrf written on
NumPy (one step per column, each step vectorised over the batch), so the node saves what torch's
saves: A, its LU, the 1-based int32 pivots and the result. The gradients use the inverse:
d det(A) = det(A) A^-T and d log|det A| = A^-T, written with Tensor ops (so they have second
derivatives); a singular A takes det's gradient from the adjugate through an SVD instead.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import Op
from .pointwise import where
from .minmax import _ValuesIndices, return_types


class LinAlgError(RuntimeError):
    """A matrix the operation cannot handle (singular for ``inv``), as ``torch.linalg``'s."""


class SlogdetResult(_ValuesIndices):
    """torch.return_types.slogdet: (sign, logabsdet)"""

    __slots__ = ()
    _name = "slogdet"

    @property
    def sign(self) -> Tensor:
        return self[0]

    @property
    def logabsdet(self) -> Tensor:
        return self[1]

    def __repr__(self) -> str:
        return f"torch.return_types.slogdet(\nsign={self[0]!r},\nlogabsdet={self[1]!r})"


return_types.slogdet = SlogdetResult


def _check(A: np.ndarray, op: str) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype.kind not in "fV":
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")


def lu_factor(A: np.ndarray) -> tuple:
    """(LU, pivots, permutation sign): L below the diagonal (unit diagonal implied), U on and
    above it, pivots 1-based as LAPACK's getrf gives them."""
    n = A.shape[-1]
    batch = A.shape[:-2]
    if A.size == 0:
        return A.copy(), np.zeros(batch + (n,), np.int32), np.ones(batch, A.dtype)
    lu = A.reshape((-1, n, n)).copy()
    pivots = np.empty((lu.shape[0], n), np.int32)
    rows = np.arange(lu.shape[0])
    with np.errstate(all="ignore"):
        for k in range(n):
            pivot = np.abs(lu[:, k:, k]).argmax(axis=1) + k
            pivots[:, k] = pivot + 1
            top = lu[rows, k, :].copy()
            lu[rows, k, :] = lu[rows, pivot, :]
            lu[rows, pivot, :] = top
            diagonal = lu[:, k, k:k + 1]
            below = lu[:, k + 1:, k]
            np.divide(below, diagonal, out=below, where=diagonal != 0)
            lu[:, k + 1:, k + 1:] -= below[:, :, None] * lu[:, k, None, k + 1:]
    swaps = (pivots != np.arange(1, n + 1, dtype=np.int32)).sum(axis=1)
    sign = np.where(swaps % 2 == 1, -1, 1).astype(A.dtype)
    return lu.reshape(A.shape), pivots.reshape(batch + (n,)), sign.reshape(batch)


def _diagonal(lu: np.ndarray) -> np.ndarray:
    return np.diagonal(lu, axis1=-2, axis2=-1)


class LinalgDet(Op):
    """det A = sign(permutation) prod diag(U);  d A = grad det(A) A^-T"""

    node_name = "LinalgDetBackward0"
    saved_names = ("A", "LU", "pivots", "result")

    @staticmethod
    def forward(ctx, A, op):
        _check(A, op)
        lu, pivots, sign = lu_factor(A)
        result = np.asarray(sign * _diagonal(lu).prod(axis=-1), dtype=A.dtype)
        ctx.save_for_backward(A, lu, pivots, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, _lu, _pivots, result = ctx.saved_tensors
        scale = (grad * result).unsqueeze(-1).unsqueeze(-1)
        if np.all(result._data != 0):
            try:
                return scale * A.inverse().mT, None
            except LinAlgError:  # singular in LAPACK's eyes though the product of U is not 0
                pass
        return _adjugate_transposed(A._data, grad._data), None  # first order only


def _adjugate_transposed(A: np.ndarray, grad: np.ndarray) -> Tensor:
    """grad times d det / d A = adj(A)^T for any A, singular or not, from A = U S V^T:
    adj(A) = det(U) det(V) V diag(prod of the other singular values) U^T."""
    u, s, vh = np.linalg.svd(A)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    orientation = np.linalg.det(u) * np.linalg.det(vh)
    adjugate = (vh.swapaxes(-1, -2) * others[..., None, :]) @ u.swapaxes(-1, -2)
    scale = (grad * orientation)[..., None, None]
    return Tensor._make((scale * adjugate.swapaxes(-1, -2)).astype(A.dtype))


class LinalgSlogdet(Op):
    """(sign, log|det A|);  d A = grad_logabsdet A^-T (the sign has no gradient)"""

    node_name = "LinalgSlogdetBackward0"
    saved_names = ("A", "LU", "pivots", "sign")

    @staticmethod
    def forward(ctx, A, op):
        _check(A, op)
        lu, pivots, sign = lu_factor(A)
        diagonal = _diagonal(lu)
        sign = np.asarray(sign * np.sign(diagonal).prod(axis=-1), dtype=A.dtype)
        with np.errstate(divide="ignore"):
            logabsdet = np.asarray(np.log(np.abs(diagonal)).sum(axis=-1), dtype=A.dtype)
        ctx.save_for_backward(A, lu, pivots, sign)
        return sign, logabsdet

    @staticmethod
    def backward(ctx, grad_sign, grad_logabsdet):
        A = ctx.saved_tensors[0]
        if grad_logabsdet is None:
            return None, None
        return grad_logabsdet.unsqueeze(-1).unsqueeze(-1) * A.inverse().mT, None


class LinalgInvEx(Op):
    """A^-1;  d A = -A^-T grad A^-T"""

    node_name = "LinalgInvExBackward0"
    saved_names = ("inverse",)

    @staticmethod
    def forward(ctx, A, op):
        _check(A, op)
        try:
            result = np.linalg.inv(A).astype(A.dtype, copy=False) if A.size else A.copy()
        except np.linalg.LinAlgError:
            zero = _diagonal(lu_factor(A)[0]) == 0
            index = int(np.argmax(zero.reshape(-1, A.shape[-1]).any(axis=0)))
            raise LinAlgError(f"{op}: The diagonal element {index + 1} is zero, the inversion "
                              f"could not be completed because the input matrix is "
                              f"singular.") from None
        # each matrix column-major, as LAPACK leaves it in torch's result
        result = np.ascontiguousarray(result.swapaxes(-1, -2)).swapaxes(-1, -2)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (inverse,) = ctx.saved_tensors
        transposed = inverse.mT
        return -(transposed @ grad @ transposed), None


def det(A: Tensor, *, out=None) -> Tensor:
    """The determinant of each square matrix in A's last two dims."""
    return LinalgDet.apply(A, "linalg.det")


def slogdet(A: Tensor, *, out=None):
    """(sign, log|det|) of each square matrix: finite where det underflows or overflows."""
    sign, logabsdet = LinalgSlogdet.apply(A, "linalg.slogdet")
    return SlogdetResult(sign, logabsdet)


def logdet(A: Tensor) -> Tensor:
    """log det A: NaN where det A < 0, -inf where it is 0."""
    if isinstance(A, Tensor) and A._data.dtype.kind not in "fV":
        raise RuntimeError(f"logdet: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A._data.dtype)}")
    sign, logabsdet = LinalgSlogdet.apply(A, "linalg.slogdet")
    return where(sign == -1, float("nan"), logabsdet)


def inverse(A: Tensor, *, out=None) -> Tensor:
    """The inverse of each square matrix; a singular one raises ``linalg.LinAlgError``."""
    return LinalgInvEx.apply(A, "linalg.inv")


METHODS = {"det": det, "slogdet": slogdet, "logdet": logdet, "inverse": inverse}
