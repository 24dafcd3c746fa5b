"""Weight normalization's kernel: ``w = v * g / ||v||``, the norm taken over every dim but
``dim`` (torch's ``_weight_norm`` and ``norm_except_dim``)."""
from __future__ import annotations

import numpy as np

from ...autograd.grad_mode import is_grad_enabled
from ...ops._base import Op
from ...tensor import Tensor


def _norm_shape(shape: tuple, dim: int) -> tuple:
    return tuple(size if axis == dim else 1 for axis, size in enumerate(shape))


def _check_dim(tensor: Tensor, dim: int) -> int:
    ndim = max(tensor.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept with size-1 dims (a scalar
    norm of the whole tensor when ``dim == -1``)."""
    if dim == -1:
        return v.norm(pow)
    dim = _check_dim(v, dim) % v.ndim
    moved = v.movedim(dim, 0) if dim else v
    norms = moved.reshape(v.shape[dim], -1).norm(pow, 1)
    return norms.view(_norm_shape(v.shape, dim))


class WeightNormInterface(Op):
    """w = v g / n,  n = ||v|| over all dims but ``dim``;
    dg = sum(grad v) / n,  dv = g / n (grad - v sum(grad v) / n^2)"""

    node_name = "WeightNormInterfaceBackward0"
    saved_names = ("v", "g", "result1")
    saved_values = {"dim": "dim"}

    @staticmethod
    def forward(ctx, v, g, dim):
        axes = tuple(axis for axis in range(v.ndim) if axis != dim)
        norms = np.sqrt(np.sum(v * v, axis=axes, keepdims=True))
        ctx.dim = dim
        ctx.save_for_backward(v, g, norms)
        return v * (g / norms)

    @staticmethod
    def backward(ctx, grad):
        v, g, norms = ctx.saved_tensors
        axes = [axis for axis in range(v.ndim) if axis != ctx.dim]
        if is_grad_enabled():  # a graph of backward is wanted: the norms must depend on v
            norms = (v * v).sum(axes, keepdim=True).sqrt()
        along = (grad * v).sum(axes, keepdim=True)
        grad_g = along / norms
        grad_v = (g / norms) * (grad - v * (along / (norms * norms)))
        return grad_v, grad_g


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * g / norm_except_dim(v, 2, dim)``: one fused node when ``dim`` is the first or the
    last dim (torch's ``WeightNormInterfaceBackward0``), plain ops otherwise."""
    if dim < -1 or dim >= max(v.ndim, 1):
        _check_dim(v, dim)
    if v.ndim > 0 and (dim == 0 or dim == v.ndim - 1) and g.numel() == v.shape[dim]:
        shape = _norm_shape(v.shape, dim)
        return WeightNormInterface.apply(v, g if g.shape == shape else g.reshape(shape), dim)
    return v * (g / norm_except_dim(v, 2, dim))
