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


def _product_arrays(A: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """H_1 ... H_k E, applied from the right end one reflector at a time."""
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    V = _reflectors(A, k)
    Q = np.broadcast_to(np.eye(m, n, dtype=A.dtype), A.shape).copy()
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q -= tau[..., i, None, None] * (v @ (v.swapaxes(-1, -2) @ Q))
    return Q


class LinalgHouseholderProduct(Op):
    """Q = H_1 ... H_k E (E: the first n columns of I);  with P_i, S_i the products before
    and after H_i and G_i = P_i^T g S_i^T: dtau_i = -v_i^T G_i v_i,
    dv_i = -tau_i (G_i + G_i^T) v_i"""

    node_name = "LinalgHouseholderProductBackward0"
    saved_names = ("self", "tau", "result")

    @staticmethod
    def forward(ctx, A, tau):
        _check(A, tau)
        Q = column_major(_product_arrays(A, tau))
        ctx.save_for_backward(A, tau, Q)
        return Q

    @staticmethod
    def backward(ctx, grad):
        A, tau, _Q = ctx.saved_tensors
        return householder_backward(A, tau, grad)


def householder_backward(A: Tensor, tau: Tensor, grad: Tensor) -> tuple:
    """(dA, dtau) for Q = householder_product(A, tau), a loop over the k reflectors."""
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


def _square(A: Tensor, size: int) -> Tensor:
    """A's reflector columns in a size x size matrix (zero columns after them)."""
    extra = size - A.shape[-1]
    if extra <= 0:
        return A[..., :size]
    return cat([A, Tensor._make(np.zeros(A._data.shape[:-1] + (extra,), A._data.dtype))], -1)


class Ormqr(Op):
    """Q C, Q^T C, C Q or C Q^T with Q the full product of the reflectors;  dC by the same
    product transposed, dQ by the product rule, then householder_backward"""

    node_name = "OrmqrBackward0"
    saved_names = ("self", "input2", "input3", "result")

    @staticmethod
    def forward(ctx, A, tau, C, left, transpose):
        op = "torch.ormqr"
        if A.ndim < 2 or C.ndim < 2:
            raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
        size = C.shape[-2] if left else C.shape[-1]
        if A.shape[-2] != size:
            raise RuntimeError(f"{op}: other.shape[{-2 if left else -1}] must be equal to "
                               f"input.shape[-2]")
        if tau.shape[-1] != min(size, A.shape[-1]):
            raise RuntimeError(f"{op}: tau.shape[-1] must be equal to min(other.shape"
                               f"[{-2 if left else -1}], input.shape[-1])")
        for name, value in (("tau", tau), ("other", C)):
            if value.dtype != A.dtype:
                raise RuntimeError(f"{op}: Expected input and {name} to have the same dtype, "
                                   f"but input has dtype {_dtype.scalar_type_name(A.dtype)} "
                                   f"and {name} has dtype "
                                   f"{_dtype.scalar_type_name(value.dtype)}")
        ctx._saved_left, ctx._saved_transpose = left, transpose
        square = np.zeros(A.shape[:-1] + (size,), A.dtype)
        columns = min(size, A.shape[-1])
        square[..., :columns] = A[..., :columns]
        Q = _product_arrays(square, tau)
        Q = Q.swapaxes(-1, -2) if transpose else Q
        result = column_major(Q @ C if left else C @ Q)
        ctx.save_for_backward(A, tau, C, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        A, tau, C, _result = ctx.saved_tensors
        left, transpose = ctx._saved_left, ctx._saved_transpose
        size = C.shape[-2] if left else C.shape[-1]
        square = _square(A, size)
        Q = householder_product(square, tau)
        applied = Q.mT if transpose else Q
        grad_C = applied.mT @ grad if left else grad @ applied.mT
        grad_applied = grad @ C.mT if left else C.mT @ grad
        grad_Q = grad_applied.mT if transpose else grad_applied
        grad_square, grad_tau = householder_backward(square, tau, grad_Q)
        columns = min(size, A.shape[-1])
        grad_A = grad_square[..., :columns]
        if A.shape[-1] > columns:
            zeros = np.zeros(A._data.shape[:-1] + (A.shape[-1] - columns,), A._data.dtype)
            grad_A = cat([grad_A, Tensor._make(zeros)], -1)
        return grad_A, grad_tau, grad_C, None, None


def ormqr(input: Tensor, input2: Tensor, input3: Tensor, left: bool = True,
          transpose: bool = False, *, out=None) -> Tensor:
    """torch.ormqr: ``input3`` multiplied by the full Q of geqrf's reflectors (``input``,
    ``input2``), from the left or right, Q transposed when ``transpose``."""
    return Ormqr.apply(input, input2, input3, bool(left), bool(transpose))


METHODS = {"geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr}
