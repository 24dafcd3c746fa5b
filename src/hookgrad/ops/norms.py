"""Vector norms: ``torch.linalg.vector_norm``, ``torch.norm`` and ``aten::norm`` over a dim, with
the gradient torch gives each ``ord`` (shared with dist and renorm through ``norm_grad``) and the
settings torch's nodes keep as the caller gave them."""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from .._dtype import to_numpy_dtype
from . import _layout
from ._reduce_util import (_accumulator, _const, _restore, reduce_dims, shown_dims,
                           torch_type_name)
from ._base import Op


# -- vector norms -------------------------------------------------------------------------------
class LinalgVectorNorm(Op):
    """||x||_ord over ``dim``; the gradient follows torch's case analysis on ``ord``"""

    node_name = "LinalgVectorNormBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, ord, dims, keepdim, dtype=None, shown=None):
        if self.dtype.kind not in "fcV":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                               f"as input. Got {torch_type_name(self)}")
        if (ord < 0 or math.isinf(ord)) and self.size == 0:
            _check_identity(self.shape, ord, dims, shown is None or shown[1] not in (None, ()))
        # ord and dims as computed with; ``shown`` is (ord, dim) as the caller gave them, which
        # torch's node keeps (``grad_fn._saved_ord`` / ``_saved_dim``)
        ctx.ord, ctx.dims, ctx._saved_keepdim = ord, dims, keepdim
        ctx._saved_ord, ctx._saved_dim = (ord, dims) if shown is None else shown
        out_dtype = dtype if dtype is not None else self.dtype
        x = np.abs(self.astype(_accumulator(out_dtype), copy=False))
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            if ord == 2:
                result = np.sqrt(np.sum(x * x, axis=dims, keepdims=keepdim))
            elif ord == 1:
                result = np.sum(x, axis=dims, keepdims=keepdim)
            elif ord == math.inf:
                result = np.max(x, axis=dims, keepdims=keepdim)
            elif ord == -math.inf:
                result = np.min(x, axis=dims, keepdims=keepdim)
            elif ord == 0:
                result = np.sum(x != 0, axis=dims, keepdims=keepdim).astype(x.dtype)
            else:
                power = np.sum(x ** x.dtype.type(ord), axis=dims, keepdims=keepdim)
                result = power ** x.dtype.type(1.0 / ord)
        result = _layout.contiguous(np.asarray(result).astype(out_dtype, copy=False))
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        return _vector_norm_grad(ctx, grad), None, None, None, None, None


def _check_identity(shape: tuple, ord, dims: tuple, dims_given: bool) -> None:
    """A negative or infinite order has no value over nothing: torch refuses an empty input
    (without dims) or a reduced dim of size 0 (other dims may be empty)."""
    if not dims_given:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty "
                           f"tensor because the operation does not have an identity")
    for d in dims:
        if shape[d] == 0:  # torch's message has no space before "because"
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on the "
                               f"dimension {d}because this dimension is empty and the "
                               f"operation does not have an identity")


class NormDim(LinalgVectorNorm):
    """``aten::norm`` with ``p`` and ``dim``, which torch's C++ composites call (pairwise
    distance): the same norm and gradient, recorded as ``NormBackward1`` with ``p`` a float"""

    node_name = "NormBackward1"

    @staticmethod
    def forward(ctx, self, ord, dims, keepdim, dtype=None):
        ctx._saved_p = float(ord)
        return LinalgVectorNorm.forward(ctx, self, ord, dims, keepdim, dtype)


def norm_dim(input: Tensor, p: float, dim: int, keepdim: bool = False) -> Tensor:
    """The ``p``-norm over ``dim`` as ``aten::norm`` records it (``NormBackward1``)."""
    p = float(p)
    return NormDim.apply(input, int(p) if p.is_integer() else p,
                         reduce_dims(dim, input._data.ndim), keepdim, None)


def _vector_norm_grad(ctx, grad: Tensor) -> Tensor:
    """torch's case analysis: sign for ord 1, x / norm for 2, shared ties for inf."""
    self, norm = ctx.saved_tensors
    return norm_grad(grad, self, norm, ctx.ord, ctx.dims, ctx._saved_keepdim)


def norm_grad(grad: Tensor, self: Tensor, norm: Tensor, ord, dims, keepdim: bool) -> Tensor:
    """The gradient of ``vector_norm(self, ord, dims, keepdim) = norm`` (also dist's, renorm's)."""
    shape = self._data.shape
    grad = _restore(grad, shape, dims, keepdim)
    norm = _restore(norm, shape, dims, keepdim)
    if ord == 0:
        return _const(np.zeros_like(self._data))
    if ord == 1:
        return self.sgn() * grad
    if ord == 2:  # torch's self * (grad / norm, 0 where norm is 0): laid out by self
        return self * (grad / norm).masked_fill_((norm == 0)._data, 0.0)
    if math.isinf(ord):
        size = np.abs(self._data)
        mask = (size == norm._data) | np.isnan(size)
        count = mask.sum(axis=dims, keepdims=True)
        return self.sgn() * ((grad / _const(count)) * _const(mask))
    if ord < 1:
        scaled = self.sgn() * self.abs().pow(ord - 1).masked_fill(self._data == 0, 0.0)
        return scaled * grad * norm.pow(1 - ord)
    scaled = self.sgn() * self.abs().pow(ord - 1) if ord < 2 else self * self.abs().pow(ord - 2)
    scale = (grad / norm.pow(ord - 1)).masked_fill((norm == 0)._data, 0.0)
    return scaled * scale


def _shown_ord(ord):
    """``ord`` as torch's node keeps it: the Python number given (2 stays 2, 2.0 stays 2.0,
    True stays True)."""
    if type(ord) in (bool, int, float):
        return ord
    value = float(ord)  # a NumPy number (np.float64 is a float too) or a 0-dim tensor
    return int(value) if isinstance(ord, (np.integer, np.bool_)) else value


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """torch.linalg.vector_norm: (sum |x|^ord)^(1/ord) over ``dim`` (all dims by default)."""
    shown = (_shown_ord(ord), shown_dims(dim))
    ord = float(ord)
    dims = reduce_dims(dim, x._data.ndim)
    np_dtype = None if dtype is None else to_numpy_dtype(dtype)
    if np_dtype is not None and x._data.dtype.kind in "fV" and \
            np.promote_types(x._data.dtype, np_dtype) != np_dtype:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                           f"({torch_type_name(x._data)}) should be convertible without "
                           f"narrowing to the specified dtype "
                           f"({torch_type_name(np.empty(0, np_dtype))})")
    return LinalgVectorNorm.apply(x, int(ord) if ord.is_integer() else ord, dims, keepdim,
                                  np_dtype, shown)


def norm(input: Tensor, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch.norm: 'fro' (over at most two dims) and numeric ``p`` are vector norms."""
    if isinstance(p, str):
        if p != "fro":
            raise RuntimeError(f"norm(): p='{p}' needs a matrix norm, which hookgrad does not "
                               f"implement; only 'fro' and numeric p are supported")
        if dim is not None and not isinstance(dim, int) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in dim)}")
        p = 2
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)
