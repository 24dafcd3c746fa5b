"""scatter_reduce: ``src`` reduced into a copy of ``input`` at ``index`` along ``dim`` (sum, prod,
mean, amax, amin), with or without ``input``'s own values, and torch's gradients (ties of
amax/amin share the gradient equally; prod handles zeros without dividing by them)."""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .creation import ones_like, zeros_like
from .gather_scatter import _along, _check_scatter, _index_data
from .inplace import inplace
from .padding import pad

_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum,
               "amin": np.minimum}
_ALIASES = {"max": "amax", "min": "amin"}


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    floating = dtype.kind in "fV"  # "V": bfloat16, which NumPy sees as a user type
    big = np.inf if floating else np.iinfo(dtype).max if dtype.kind in "iu" else True
    low = -np.inf if floating else np.iinfo(dtype).min if dtype.kind in "iu" else False
    return low if reduce == "amax" else big


def _reduce_into(self: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, reduce: str,
                 include_self: bool) -> np.ndarray:
    out = np.array(self, copy=True, order="C")
    if index.size == 0:
        return out
    key = _along(index, dim)
    used = src[tuple(slice(0, n) for n in index.shape)]
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    _REDUCTIONS[reduce].at(out, key, used)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, np.int64)
        np.add.at(count, key, 1)
        count = np.maximum(count, 1)
        if out.dtype.kind in "fV":
            out = (out / count).astype(out.dtype)
        else:
            out = np.floor_divide(out, count).astype(out.dtype)
    return out


class ScatterReduce(Op):
    _operand_overlap = "any"  # torch refuses a source sharing any of self's memory
    node_name = "ScatterReduceBackward0"
    saved_names = ("self", "index", "src", "result")
    saved_values = {"reduce": "reduce", "include_self": "include_self"}

    @staticmethod
    def forward(ctx, self, dim, index, src, reduce, include_self):
        # ``dim`` as the caller gave it, which torch's node shows (negative read back unsigned)
        ctx._saved_dim, dim = shown_dim(dim), normalize_dim(dim, self.ndim)
        _check_scatter(self, dim, index, src)
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        ctx.src_shape = src.shape
        result = _reduce_into(self, dim, index, src, reduce, include_self)
        if reduce in ("amax", "amin", "prod"):
            ctx.save_for_backward(self, index, src, result)
        else:
            ctx.save_for_backward(None, index, None, None)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, index, src, result = ctx.saved_tensors
        if src is not None:
            src = src[tuple(slice(0, n) for n in index.shape)]
        grad_self, grad_src = reduce_grads(grad, self, index, src, result, ctx.dim, ctx.reduce,
                                           ctx.include_self)
        if tuple(grad_src.shape) != tuple(ctx.src_shape):  # the part of src the index did not use
            widths = []
            for have, want in zip(reversed(grad_src.shape), reversed(ctx.src_shape)):
                widths += [0, want - have]
            grad_src = pad(grad_src, widths)
        return (grad_self if ctx.needs_input_grad[0] else None, None, None,
                grad_src if ctx.needs_input_grad[3] else None, None, None)


def reduce_grads(grad, self, index, src, result, dim: int, reduce: str, include_self: bool):
    """The gradients for self and src of ``src`` reduced into ``self`` at ``index`` (scatter
    style, index as large as the part of src it uses); shared with index_reduce."""
    if reduce == "sum":
        grad_self, grad_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        count = (ones_like(grad) if include_self else zeros_like(grad)).scatter_add(
            dim, index, ones_like(grad.gather(dim, index)))
        count = count.masked_fill(count == 0, 1)
        grad_self, grad_src = grad / count, grad.gather(dim, index) / count.gather(dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _prod_grads(grad, self, index, src, result, dim, include_self)
    else:
        value = result.gather(dim, index)
        self_is_result = (self == result).to(grad.dtype)
        src_is_result = (src == value).to(grad.dtype)
        share = grad / self_is_result.scatter_add(dim, index, src_is_result)
        grad_self = self_is_result * share
        grad_src = src_is_result * share.gather(dim, index)
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


def _prod_grads(grad, self, index, src, result, dim, include_self):
    """torch's: the product of the others, computed without dividing by a zero."""
    masked_self = self.masked_fill(self == 0, 1)
    masked_result = ScatterReduce.apply(masked_self, dim, index._data, src, "prod", include_self)
    grad_self = grad * masked_result / masked_self
    src_zero = src == 0
    zeros_at = zeros_like(grad).scatter_add(dim, index, src_zero.to(grad.dtype)).gather(dim, index)
    single_zero = src_zero & (zeros_at == 1)
    masked_src = src.masked_fill(single_zero, 1)
    others = ScatterReduce.apply(self, dim, index._data, masked_src, "prod", include_self)
    grad_src = (grad * others).gather(dim, index).where(
        single_zero, (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    return grad_self, grad_src


def _arguments(input: Tensor, dim: int, index: Tensor, reduce: str, op: str):
    reduce = _ALIASES.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if isinstance(index, Tensor) and index._data.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    return (normalize_dim(dim, input.ndim), _index_data(index, op).astype(np.int64, copy=False),
            reduce)  # int64 passes as the index tensor's own array (saved as the tensor)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` with ``src`` reduced in at ``index`` along ``dim`` by ``reduce``
    (sum, prod, mean, amax, amin); ``include_self=False`` leaves input's own values out where
    something is scattered."""
    _, index, reduce = _arguments(input, dim, index, reduce, "scatter_reduce")
    return ScatterReduce.apply(input, dim, index, src, reduce, include_self)


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In place ``scatter_reduce``."""
    _, index, reduce = _arguments(input, dim, index, reduce, "scatter_reduce_")
    return inplace(ScatterReduce, input, dim, index, src, reduce, include_self)


METHODS = {"scatter_reduce": scatter_reduce, "scatter_reduce_": scatter_reduce_}
