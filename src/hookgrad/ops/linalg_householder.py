"""Householder reflectors: torch.geqrf (LAPACK's packed QR, no gradient, as in torch) and
torch.linalg.householder_product / torch.orgqr (the first n columns of H_1 ... H_k, with
H_i = I - tau_i v_i v_i^T and v_i = e_i plus the part of column i below the diagonal)."""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import Op
from ._linalg_common import check_matrix, column_major, named_result
from .diagonal import tril
from .join import cat

GeqrfResult = named_result("geqrf", ("a", "tau"))


class Geqrf(Op):
    """(a, tau): R on and above a's diagonal, the reflectors below it"""

    node_name = "GeqrfBackward0"

    @staticmethod
    def forward(ctx, A):
        check_matrix(A, "geqrf")
        m, n = A.shape[-2:]
        if A.size == 0:
            return A.copy(), np.zeros(A.shape[:-2] + (min(m, n),), A.dtype)
        packed, tau = np.linalg.qr(A, mode="raw")
        return column_major(packed.swapaxes(-1, -2).astype(A.dtype)), tau.astype(A.dtype)

    @staticmethod
    def backward(ctx, grad_a, grad_tau):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


def geqrf(input: Tensor, *, out=None):
    """LAPACK's geqrf: QR as R and Householder reflectors packed in one matrix, plus tau."""
    return GeqrfResult(*Geqrf.apply(input))


def _reflectors(A: np.ndarray, k: int) -> np.ndarray:
    """v_1 ... v_k as the columns of an m x k array: unit diagonal, A's entries below it."""
    V = np.tril(A[..., :, :k], -1)
    V[..., np.arange(k), np.arange(k)] = 1
    return V


def _check(A: np.ndarray, tau: np.ndarray) -> None:
    op = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau.ndim < 1 or n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    if tau.shape[:-1] != A.shape[:-2]:
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{op}: tau dtype {_dtype.scalar_type_name(tau.dtype)} does not "
                           f"match input dtype {_dtype.scalar_type_name(A.dtype)}")
    if A.dtype.kind not in "fV" or A.dtype.itemsize < 4:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{_dtype.scalar_type_name(A.dtype)}")


class LinalgHouseholderProduct(Op):
    """Q = H_1 ... H_k E (E: the first n columns of I);  with P_i, S_i the products before
    and after H_i and G_i = P_i^T g S_i^T: dtau_i = -v_i^T G_i v_i,
    dv_i = -tau_i (G_i + G_i^T) v_i"""

    node_name = "LinalgHouseholderProductBackward0"
    saved_names = ("self", "tau", "result")

    @staticmethod
    def forward(ctx, A, tau):
        _check(A, tau)
        m, n = A.shape[-2:]
        k = tau.shape[-1]
        V = _reflectors(A, k)
        Q = np.broadcast_to(np.eye(m, n, dtype=A.dtype), A.shape).copy()
        for i in range(k - 1, -1, -1):
            v = V[..., :, i:i + 1]
            Q -= tau[..., i, None, None] * (v @ (v.swapaxes(-1, -2) @ Q))
        Q = column_major(Q)
        ctx.save_for_backward(A, tau, Q)
        return Q

    @staticmethod
    def backward(ctx, grad):
        A, tau, _Q = ctx.saved_tensors
        m, n = A.shape[-2:]
        k = tau.shape[-1]
        mask = np.tril(np.ones((m, k), bool), -1)
        V = tril(A[..., :, :k], -1) + Tensor._make(np.eye(m, k, dtype=A._data.dtype))
        reflectors = [V[..., :, i:i + 1] for i in range(k)]
        scales = [tau[..., i:i + 1].unsqueeze(-1) for i in range(k)]
        # suffixes S_i = H_{i+1} ... H_k E, built from the right
        suffix = Tensor._make(np.broadcast_to(np.eye(m, n, dtype=A._data.dtype),
                                              A._data.shape).copy())
        suffixes = [None] * k
        for i in range(k - 1, -1, -1):
            suffixes[i] = suffix
            v = reflectors[i]
            suffix = suffix - scales[i] * (v @ (v.mT @ suffix))
        # P_i^T g, moved along from the left: P_{i+1}^T g = H_i P_i^T g (H_i symmetric)
        moved = grad
        grad_tau, grad_V = [], []
        for i in range(k):
            v, scale = reflectors[i], scales[i]
            G = moved @ suffixes[i].mT
            grad_tau.append(-(v.mT @ G @ v).squeeze(-1))
            grad_V.append(-scale * ((G + G.mT) @ v))
            moved = moved - scale * (v @ (v.mT @ moved))
        grad_tau = cat(grad_tau, -1)
        grad_reflectors = cat(grad_V, -1).masked_fill(~mask, 0.0)
        if n > k:
            zeros = Tensor._make(np.zeros(A._data.shape[:-1] + (n - k,), A._data.dtype))
            grad_reflectors = cat([grad_reflectors, zeros], -1)
        return grad_reflectors, grad_tau


def householder_product(A: Tensor, tau: Tensor, *, out=None) -> Tensor:
    """The first n columns of the product of the Householder reflectors stored below A's
    diagonal (as geqrf leaves them) with the scales tau."""
    return LinalgHouseholderProduct.apply(A, tau)


def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """torch.orgqr: householder_product under LAPACK's name."""
    return LinalgHouseholderProduct.apply(input, tau)


METHODS = {"geqrf": geqrf, "orgqr": orgqr}
