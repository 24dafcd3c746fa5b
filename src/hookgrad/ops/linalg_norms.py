"""Matrix norms and products built from other ops, as torch composes them (so their graphs
carry torch's nodes): torch.linalg.matrix_norm / norm / vecdot / multi_dot / matrix_power /
diagonal / cond / matrix_rank, and the older torch.nuclear_norm, frobenius_norm, chain_matmul.

matrix_norm's orders: 'fro' is a vector norm over the two dims; 'nuc' and +-2 come from the
singular values (sum, largest, smallest); +-1 and +-inf are the largest or smallest column or
row sum of |A|.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from .._warnings import warn_once
from ..tensor import Tensor
from ._linalg_common import check_matrix, check_square
from ._reduce_util import reduce_dims
from .diagonal import diagonal as _diagonal
from .linalg import matmul
from .linalg_decomp import eigvalsh, svdvals
from .linalg_det import inverse
from .join import cat
from .linalg_solve import inv_ex, solve
from .norms import norm as _vector_or_fro_norm, norm_dim, vector_norm

_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def _matrix_dims(dim, ndim: int) -> tuple:
    dim = tuple(dim) if not isinstance(dim, int) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    first, second = (d % ndim if -ndim <= d < ndim else d for d in dim)
    if not (0 <= first < ndim and 0 <= second < ndim):
        reduce_dims(dim, ndim)  # torch's out-of-range message
    if first == second:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return first, second


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out=None) -> Tensor:
    """torch.linalg.matrix_norm over the two dims ``dim``: 'fro', 'nuc', 1, -1, 2, -2, inf,
    -inf."""
    if ord in ("nuc", 2, -2) and A._data.dtype.kind in "fV" and A._data.dtype.itemsize == 2:
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{_dtype.scalar_type_name(A._data.dtype)}")  # singular values
    if A._data.ndim < 2 or A._data.dtype.kind not in "fV" or ord in ("nuc", 2, -2):
        check_matrix(A._data, "linalg.matrix_norm")
    first, second = _matrix_dims(dim, A._data.ndim)
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord == "fro":
        return vector_norm(A, 2, (first, second), keepdim, dtype=dtype)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "nuc" or abs(ord) == 2:
        rest = [d for d in range(A._data.ndim) if d not in (first, second)]
        values = svdvals(A.permute(*rest, first, second))
        if ord == "nuc":
            result = values.sum(-1)
        else:
            result = _largest(values, -1, False) if ord > 0 else values.amin(-1)
        if keepdim:  # back to A's dims: the two reduced ones as size 1
            order = np.argsort(rest + [first, second])
            result = result.unsqueeze(-1).unsqueeze(-1).permute(*order.tolist())
        return result
    if math.isinf(ord):
        first, second = second, first
    if not keepdim and first < second:
        second -= 1
    sums = vector_norm(A, 1, first, keepdim)
    return _largest(sums, second, keepdim) if ord > 0 else sums.amin(second, keepdim)


def _largest(values: Tensor, dim: int, keepdim: bool) -> Tensor:
    """The largest of non-negative values over ``dim``; 0 over none, as torch's matrix norms
    give for an empty matrix (their smallest-value orders refuse it as amin does)."""
    if values._data.shape[dim] == 0:
        return values.sum(dim, keepdim)
    return values.amax(dim, keepdim)


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None,
         out=None) -> Tensor:
    """torch.linalg.norm: a vector norm over one dim (or all, when neither ord nor dim is
    given), a matrix norm over two; a 1-D or 2-D A decides by its own dims."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    ndim = A._data.ndim
    if ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {ndim}D.")
    if ndim == 1:
        if isinstance(ord, str):
            raise RuntimeError(f"linalg.vector_norm: ord must be a number. Got {ord}")
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


def torch_norm(input: Tensor, p="fro", dim=None, keepdim: bool = False,
               dtype=None) -> Tensor:
    """torch.norm and Tensor.norm: 'nuc' is the nuclear matrix norm (over ``dim`` or the last
    two dims of a 2-D input); 'fro' and numbers are vector norms."""
    if p == "nuc":
        if dim is None:  # torch takes every dim: only a 2-D input passes
            dim = tuple(range(input._data.ndim))
        return matrix_norm(input, "nuc", dim, keepdim, dtype=dtype)
    return _vector_or_fro_norm(input, p, dim, keepdim, dtype)


torch_norm.__name__ = torch_norm.__qualname__ = "norm"  # what modes and tracebacks show


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out=None) -> Tensor:
    """sum(conj(x) * y) over ``dim``, the two broadcast together."""
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_dtype.scalar_type_name(x._data.dtype)} and y of type "
                           f"{_dtype.scalar_type_name(y._data.dtype)} instead")
    return (x * y).sum(dim)


def _chain_order(shapes: list) -> list:
    """The cheapest parenthesisation of a matrix chain (dynamic programming on the sizes):
    split[i][j] is where the product of matrices i..j divides."""
    sizes = [shapes[0][0]] + [shape[1] for shape in shapes]
    count = len(shapes)
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                total = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if total < cost[i][j]:
                    cost[i][j], split[i][j] = total, k
    return split


def multi_dot(tensors, *, out=None) -> Tensor:
    """The product of a chain of matrices in the cheapest order; the first may be a row vector
    and the last a column vector (their dim is dropped from the result)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_dim, last_dim = tensors[0]._data.ndim, tensors[-1]._data.ndim
    if first_dim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first_dim}D")
    if last_dim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last_dim}D")
    for index, tensor in enumerate(tensors[1:-1], 1):
        if tensor._data.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {index} must be 2D but got "
                               f"{tensor._data.ndim}D")
    matrices = list(tensors)
    if first_dim == 1:
        matrices[0] = matrices[0].unsqueeze(0)
    if last_dim == 1:
        matrices[-1] = matrices[-1].unsqueeze(-1)
    dtype = matrices[0]._data.dtype
    for index, (left, right) in enumerate(zip(matrices, matrices[1:])):
        if right._data.dtype != dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_dtype.scalar_type_name(dtype).lower()} and tensor "
                               f"{index + 1} {_dtype.scalar_type_name(right._data.dtype).lower()}")
        if left._data.shape[1] != right._data.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {index} and {index + 1} with shapes "
                               f"{list(tensors[index]._data.shape)} and "
                               f"{list(tensors[index + 1]._data.shape)} cannot be multiplied")
    split = _chain_order([m._data.shape for m in matrices])

    def product(i: int, j: int) -> Tensor:
        if i == j:
            return matrices[i]
        k = split[i][j]
        return product(i, k).mm(product(k + 1, j))

    result = product(0, len(matrices) - 1)
    shape = ((matrices[0]._data.shape[0],) if first_dim == 2 else ()) + \
        ((matrices[-1]._data.shape[1],) if last_dim == 2 else ())
    return result.view(shape)


def chain_matmul(*matrices, out=None) -> Tensor:
    """torch.chain_matmul (deprecated in torch for ``multi_dot``): the product of 2-D
    matrices."""
    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
              "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
              "more tensors rather than multiple parameters.")
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


def matrix_power(A: Tensor, n: int, *, out=None) -> Tensor:
    """A^n by repeated squaring; a negative n inverts A first, n = 0 gives identities."""
    if A._data.ndim < 2 or A._data.shape[-1] != A._data.shape[-2]:
        if A._data.ndim < 2:
            raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                               "dimensions.")
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A._data.shape[-2]} by {A._data.shape[-1]} matrices")
    n = int(n)
    if n == 0:
        identity = np.broadcast_to(np.eye(A._data.shape[-1], dtype=A._data.dtype),
                                   A._data.shape)
        return A.clone().copy_(Tensor._make(identity.copy()))
    if n < 0:
        A, n = inverse(A), -n
    if n == 1:
        return A.clone()
    result = square = None
    while n:
        bit, n = n % 2, n // 2
        square = A if square is None else matmul(square, square)
        if bit:
            result = square if result is None else matmul(result, square)
    return result


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """torch.linalg.diagonal: torch.diagonal with the last two dims as defaults."""
    return _diagonal(A, offset, dim1, dim2)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False, *, out=None) -> Tensor:
    """torch.nuclear_norm (deprecated in torch): the sum of the singular values."""
    if isinstance(dim, bool):
        dim, keepdim = (-2, -1), dim
    warn_once("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
              "will be removed in a future PyTorch release. Please use "
              "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    return matrix_norm(input, "nuc", dim, keepdim)


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False, *, out=None) -> Tensor:
    """torch.frobenius_norm (deprecated in torch): the 2-norm over at most two dims."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    warn_once("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It "
              "will be removed in a future PyTorch release. Please use "
              "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    return norm_dim(input, 2.0, dims, keepdim)


def cond(A: Tensor, p=None, *, out=None) -> Tensor:
    """The condition number ||A|| ||A^-1|| in norm ``p``; None, 2 and -2 from the singular
    values (any shape), the others on square matrices (inf where A is singular)."""
    if p not in (None,) + _MATRIX_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p is None or p in (2, -2):
        check_matrix(A._data, "linalg.cond")
        values = svdvals(A)
        if p == -2:
            return (values[..., -1:] / values[..., :1]).squeeze(-1)
        return (values[..., :1] / values[..., -1:]).squeeze(-1)
    check_square(A._data, f"linalg.cond(ord={p})")
    inverse_A, info = inv_ex(A)
    if np.any(info._data):  # singular: torch's result is inf, whatever LU left in the inverse
        inverse_A = inverse_A.masked_fill((info._data != 0)[..., None, None], math.inf)
    result = matrix_norm(A, p) * matrix_norm(inverse_A, p)
    return result.nan_to_num(math.inf, math.inf, -math.inf)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None,
                out=None) -> Tensor:
    """How many singular values exceed max(atol, rtol * largest); by default rtol is the
    dtype's eps times max(m, n) (0 when only atol is given). ``tol`` is the older atol."""
    check_matrix(A._data, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    data = A._data
    if hermitian:
        values = np.abs(eigvalsh(A.detach())._data)
    else:
        values = svdvals(A.detach())._data
    threshold = _threshold(values, data, atol, rtol)
    return Tensor._make((values > threshold).sum(-1).astype(np.int64))


def _threshold(values: np.ndarray, data: np.ndarray, atol, rtol) -> np.ndarray:
    """max(atol, rtol * largest singular value), each matrix by its own largest."""
    atol = 0.0 if atol is None else _number_or_array(atol)
    if rtol is None:
        rtol = 0.0 if np.any(atol) else np.finfo(data.dtype).eps * max(data.shape[-2:])
    rtol = _number_or_array(rtol)
    largest = np.abs(values).max(-1, initial=0.0)
    return np.maximum(atol, rtol * largest)[..., None]


def _number_or_array(value):
    return value._data if isinstance(value, Tensor) else value


def tensorinv(A: Tensor, ind: int = 2, *, out=None) -> Tensor:
    """The inverse of A read as a linear map from its first ``ind`` dims to the rest."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inverse(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out=None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B; ``dims`` of A move to the end first."""
    if dims is not None:
        dims = [d % A._data.ndim for d in dims]
        rest = [d for d in range(A._data.ndim) if d not in dims]
        A = A.permute(*rest, *dims)
    result_shape = A._data.shape[B._data.ndim:]
    rows = int(np.prod(B._data.shape))
    cols = int(np.prod(result_shape))
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).view(result_shape)


def vander(x: Tensor, *, N=None) -> Tensor:
    """Columns x^0, x^1, ..., x^(N-1) (N defaults to x's last size)."""
    if x._data.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    N = x._data.shape[-1] if N is None else int(N)
    if N <= 1:
        raise RuntimeError("N must be greater than 1.")
    ones = Tensor._make(np.ones(x._data.shape + (1,), x._data.dtype))
    powers = x.unsqueeze(-1).expand(*x._data.shape, N - 1).cumprod(-1)
    return cat([ones, powers], -1)


METHODS = {"matrix_power": matrix_power}
