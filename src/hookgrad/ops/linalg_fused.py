"""Fused scaled products (addmv, addr, addbmm) and the norms built on a difference or a slice
(dist, renorm), each one node with torch's name and torch's saved tensors.

The products follow addmm (``nn/ops/linear.py``): ``beta * input + alpha * product``, where
``beta == 0`` ignores ``input`` entirely (its NaNs too) and a factor of 1 records no multiply in
backward. The norms' gradients share ``linalg.norm_grad`` with ``vector_norm``.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from . import _layout
from ..tensor import Tensor
from ._base import Op, _check_sub, promote, tensor_operand
from ._util import broadcast_error
from .inplace import inplace
from ._reduce_util import shown_dim
from .norms import _shown_ord, norm_grad, vector_norm
from .pointwise import where

_RENORM_EPS = 1e-7  # torch divides by (norm + 1e-7) so a norm at the limit stays finite


def _name(dtype: np.dtype) -> str:
    return _dtype.scalar_type_name(dtype)


def _scaled(grad: Tensor, factor) -> Tensor:
    return grad if factor == 1 else grad * factor


def _combine(self: np.ndarray, product: np.ndarray, beta, alpha) -> np.ndarray:
    """``beta * self + alpha * product`` broadcast to the product's shape; a bfloat16
    product (which NumPy gives in float32) is combined there and rounded once to self's
    dtype."""
    if product.dtype != self.dtype:
        return _combine(self.astype(product.dtype), product, beta, alpha).astype(self.dtype)
    if alpha != 1:
        product = product * product.dtype.type(alpha)
    if beta != 0:
        product = product + (self if beta == 1 else self * self.dtype.type(beta))
    return np.ascontiguousarray(np.broadcast_to(product, product.shape))


def _check_expand(op: str, self: np.ndarray, shape: tuple) -> None:
    try:
        if np.broadcast_shapes(self.shape, shape) == shape:
            return
    except ValueError:
        pass
    raise RuntimeError(f"{op}: the input of size {list(self.shape)} cannot be broadcast to the "
                       f"product's size {list(shape)}")


class Addmv(Op):
    """beta self + alpha (mat @ vec);  d mat = alpha grad vec^T, d vec = alpha mat^T grad"""

    node_name = "AddmvBackward0"
    saved_names = ("mat", "vec")

    @staticmethod
    def forward(ctx, self, mat, vec, beta=1, alpha=1):
        if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
            raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, "
                               f"{mat.ndim}, {vec.ndim}")
        if mat.shape[1] != vec.shape[0] or self.shape not in ((), (1,), (mat.shape[0],)):
            raise RuntimeError(f"size mismatch, got input ({'x'.join(map(str, self.shape))}), "
                               f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
        if not self.dtype == mat.dtype == vec.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{_name(self.dtype)}, {_name(mat.dtype)}, and {_name(vec.dtype)}")
        ctx.beta, ctx.alpha = beta, alpha
        _need_self, need_mat, need_vec = ctx.needs_input_grad[:3]
        ctx.save_for_backward(mat if need_vec else None, vec if need_mat else None)
        return _combine(self, mat @ vec, beta, alpha)

    @staticmethod
    def backward(ctx, grad):
        mat, vec = ctx.saved_tensors
        grad_self = _scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None
        grad_mat = _scaled(grad.outer(vec), ctx.alpha) if vec is not None else None
        grad_vec = _scaled(mat.t().mv(grad), ctx.alpha) if mat is not None else None
        return grad_self, grad_mat, grad_vec


class Addr(Op):
    """beta self + alpha outer(vec1, vec2);  d vec1 = alpha grad vec2, d vec2 = alpha grad^T vec1"""

    node_name = "AddrBackward0"
    saved_names = ("vec1", "vec2")

    @staticmethod
    def forward(ctx, self, vec1, vec2, beta, alpha, dtype):
        for name, vec in (("vec1", vec1), ("vec2", vec2)):
            if vec.ndim != 1:
                raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {vec.ndim}-D")
        shape = (vec1.shape[0], vec2.shape[0])
        _check_expand("addr", self, shape)
        if dtype.kind == "b" and not (isinstance(beta, bool) and isinstance(alpha, bool)) \
                and (beta not in (0, 1) or alpha not in (0, 1)):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
        ctx.beta, ctx.alpha = beta, alpha
        _need_self, need_vec1, need_vec2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(vec1 if need_vec2 else None, vec2 if need_vec1 else None)
        self, vec1, vec2 = (a.astype(dtype, copy=False) for a in (self, vec1, vec2))
        if dtype.kind == "b":
            product = np.logical_and.outer(vec1, vec2) & bool(alpha)
            return np.ascontiguousarray(product | (self & bool(beta)))
        result = _combine(self, np.multiply.outer(vec1, vec2), beta, alpha)
        # torch adds the outer product to self elementwise, so self's layout carries over
        return _layout.pointwise(result, np.broadcast_to(self, shape)) if beta != 0 else result

    @staticmethod
    def backward(ctx, grad):
        vec1, vec2 = ctx.saved_tensors
        grad_self = _scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None
        grad_vec1 = _scaled(grad.mv(vec2), ctx.alpha) if vec2 is not None else None
        grad_vec2 = _scaled(grad.t().mv(vec1), ctx.alpha) if vec1 is not None else None
        return grad_self, grad_vec1, grad_vec2, None, None, None


class Addbmm(Op):
    """beta self + alpha sum_b batch1[b] @ batch2[b];  each batch's gradient is addmm's"""

    node_name = "AddbmmBackward0"
    saved_names = ("batch1", "batch2")

    @staticmethod
    def forward(ctx, self, batch1, batch2, beta=1, alpha=1):
        for name, batch in (("batch1", batch1), ("batch2", batch2)):
            if batch.ndim != 3:
                raise RuntimeError(f"{name} must be a 3D tensor")
        if batch1.shape[0] != batch2.shape[0]:
            raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                               f"{batch1.shape[0]} and {batch2.shape[0]}")
        if batch1.shape[2] != batch2.shape[1]:
            raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                               f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
        if not self.dtype == batch1.dtype == batch2.dtype:
            raise RuntimeError(f"addbmm: expected self, batch1 and batch2 to have the same dtype,"
                               f" but got {_name(self.dtype)}, {_name(batch1.dtype)} and "
                               f"{_name(batch2.dtype)}")
        batches, rows, inner = batch1.shape
        shape = (rows, batch2.shape[2])
        _check_expand("addbmm", self, shape)
        ctx.beta, ctx.alpha = beta, alpha
        _need_self, need_batch1, need_batch2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(batch1 if need_batch2 else None, batch2 if need_batch1 else None)
        # the sum over batches is one product over the joined (batch, inner) axis
        left = batch1.transpose(1, 0, 2).reshape(rows, batches * inner)
        product = left @ batch2.reshape(batches * inner, shape[1])
        return _combine(self, product, beta, alpha)

    @staticmethod
    def backward(ctx, grad):
        batch1, batch2 = ctx.saved_tensors
        grad_self = _scaled(grad, ctx.beta) if ctx.needs_input_grad[0] else None
        source = batch1 if batch1 is not None else batch2
        every = grad.unsqueeze(0).expand(source.shape[0], *grad.shape)
        grad_batch1 = (_scaled(every.bmm(batch2.transpose(1, 2)), ctx.alpha)
                       if batch2 is not None else None)
        grad_batch2 = (_scaled(batch1.transpose(1, 2).bmm(every), ctx.alpha)
                       if batch1 is not None else None)
        return grad_self, grad_batch1, grad_batch2


def _norm_of(values: np.ndarray, p: float, axis, keepdims: bool = False) -> np.ndarray:
    """The p-norm of ``values`` over ``axis`` (p = 0 counts non-zeros, +-inf take max / min)."""
    size = np.abs(values)
    if p == 0:
        return (size != 0).sum(axis=axis, keepdims=keepdims).astype(values.dtype)
    if math.isinf(p):
        if size.size == 0:
            return np.zeros(np.sum(size, axis=axis, keepdims=keepdims).shape, values.dtype)
        return (size.max if p > 0 else size.min)(axis=axis, keepdims=keepdims)
    if p == 1:
        return size.sum(axis=axis, keepdims=keepdims)
    if p == 2:
        return np.sqrt(np.square(size).sum(axis=axis, keepdims=keepdims))
    with np.errstate(all="ignore"):
        total = np.power(size, values.dtype.type(p)).sum(axis=axis, keepdims=keepdims)
        return np.power(total, values.dtype.type(1.0 / p))


def _check_float(dtype: np.dtype, op: str) -> None:
    if dtype.kind not in "fV":
        raise RuntimeError(f"{op}: input dtype should be either floating point or complex. "
                           f"Got {_name(dtype)} instead.")


class Dist(Op):
    """||self - other||_p;  d self = norm's gradient at the difference, d other its negative"""

    node_name = "DistBackward0"
    saved_names = ("other", "self", "result")  # in save order: torch packs other first

    @staticmethod
    def forward(ctx, self, other, p, dtype, shown_p=None):
        _check_float(dtype, "norm()")
        try:
            np.broadcast_shapes(self.shape, other.shape)
        except ValueError:
            raise broadcast_error("dist", self.shape, other.shape) from None
        difference = self.astype(dtype, copy=False) - other.astype(dtype, copy=False)
        ctx.p = p
        ctx._saved_p = p if shown_p is None else shown_p  # the number given, as torch keeps it
        if dtype.itemsize == 2:  # half precision: torch accumulates the norm in float32
            difference = difference.astype(np.float32)
        result = np.asarray(_norm_of(difference, p, axis=None)).astype(dtype)
        ctx.save_for_backward(other, self, result)  # torch packs other first
        return result

    @staticmethod
    def backward(ctx, grad):
        other, self, result = ctx.saved_tensors
        difference = self - other
        grad_self = norm_grad(grad, difference, result, ctx.p, tuple(range(difference.ndim)),
                              False)
        return grad_self, -grad_self, None, None


class Renorm(Op):
    """each slice along ``dim`` whose p-norm passes maxnorm is scaled to maxnorm / (norm + 1e-7)"""

    node_name = "RenormBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, p, dim, maxnorm, shown=None):
        if p <= 0:
            raise RuntimeError("renorm: non-positive-norm not supported")
        if maxnorm < 0:
            raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
        if self.ndim <= 1:
            raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} "
                               f"dimensions")
        _check_float(self.dtype, "renorm")
        ctx.p, ctx.maxnorm = p, maxnorm
        # p, dim and maxnorm as given, as torch's node keeps them (``_saved_p`` ...)
        ctx._saved_p, ctx._saved_dim, ctx._saved_maxnorm = (p, dim, maxnorm) if shown is None \
            else shown
        ctx.dims = tuple(axis for axis in range(self.ndim) if axis != dim)
        ctx.save_for_backward(self)
        norm = _norm_of(self, p, ctx.dims, keepdims=True)
        limit = self.dtype.type(maxnorm)
        with np.errstate(all="ignore"):
            factor = np.where(norm > limit, limit / (norm + self.dtype.type(_RENORM_EPS)),
                              self.dtype.type(1))
        return np.ascontiguousarray(self * factor, dtype=self.dtype)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        p, dims, maxnorm = ctx.p, ctx.dims, ctx.maxnorm
        norm = vector_norm(self, p, dims, keepdim=True)
        over = norm > maxnorm
        shifted = norm + _RENORM_EPS
        factor = where(over, maxnorm / shifted, 1.0)
        # d factor / d norm = -maxnorm / shifted^2 on the slices that were scaled
        slope = where(over, -maxnorm / (shifted * shifted), 0.0)
        inner = (grad * self).sum(dims, keepdim=True)
        return grad * factor + norm_grad(inner * slope, self, norm, p, dims, True), \
            None, None, None


# -- torch functions ------------------------------------------------------------------------------
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta input + alpha (mat @ vec)"""
    return Addmv.apply(input, mat, vec, beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta input + alpha outer(vec1, vec2), in the promoted dtype of the three"""
    return Addr.apply(input, vec1, vec2, beta, alpha, _addr_dtype(input, vec1, vec2))


def _addr_dtype(input: Tensor, vec1: Tensor, vec2: Tensor) -> np.dtype:
    vectors = promote(vec1, vec2)
    if input._data.dtype == vectors:
        return vectors
    return promote(input, Tensor._make(np.empty(1, vectors)))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
           out=None) -> Tensor:
    """beta input + alpha sum over b of batch1[b] @ batch2[b]"""
    return Addbmm.apply(input, batch1, batch2, beta, alpha)


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """the p-norm of input - other (broadcast), a 0-d tensor"""
    other = tensor_operand(other, "dist")
    _check_sub(input._data, other._data, None)  # torch subtracts first: bool refused
    return Dist.apply(input, other, float(p), promote(input, other), _shown_ord(p))


def renorm(input: Tensor, p: float, dim: int, maxnorm: float, *, out=None) -> Tensor:
    """input with each slice along ``dim`` scaled down to p-norm ``maxnorm`` if it is above"""
    shown = (_shown_ord(p), shown_dim(dim), _shown_ord(maxnorm))
    return Renorm.apply(input, float(p), _dim(input, dim), float(maxnorm), shown)


def _dim(input: Tensor, dim: int) -> int:
    ndim = max(input.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``addmv``."""
    return inplace(Addmv, input, mat, vec, beta, alpha)


def addr_(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``addr``."""
    return inplace(Addr, input, vec1, vec2, beta, alpha, _addr_dtype(input, vec1, vec2))


def addbmm_(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """In place ``addbmm``."""
    return inplace(Addbmm, input, batch1, batch2, beta, alpha)


def renorm_(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """In place ``renorm``."""
    return inplace(Renorm, input, float(p), _dim(input, dim), float(maxnorm))


METHODS = {"addmv": addmv, "addmv_": addmv_, "addr": addr, "addr_": addr_, "addbmm": addbmm,
           "addbmm_": addbmm_, "dist": dist, "renorm": renorm, "renorm_": renorm_}
