"""``cdist`` and ``pdist``: p-norm distances between rows, with torch's two ways of computing
the Euclidean case.

torch computes ``cdist`` directly from the row differences, except for p = 2 with more than 25
rows on either side (or when asked by ``compute_mode``), where it expands
``|a - b|^2 = |a|^2 - 2 a.b + |b|^2`` into one matrix product. The two differ in rounding and
in their graphs (``CdistBackward0``, whose derivative torch does not implement, against a
``EuclideanDistBackward0`` that is twice differentiable), so hookgrad follows the same rule.
The gradients of the direct form use torch's subgradients: zero where a distance is zero, and
for p < 1 also where a single difference is zero.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ... import _dtype
from ...ops._base import Op
from ...ops._util import broadcast_error, quiet_errors
from ...tensor import Tensor

_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def _norm(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm of ``diff`` along its last axis (p = 0 counts the non-zero entries)."""
    size = diff.shape[-1]
    if p == 0:
        return np.count_nonzero(diff, axis=-1).astype(diff.dtype)
    if p == 1:
        return np.abs(diff).sum(-1)
    if p == 2:
        return np.sqrt(np.einsum("...i,...i->...", diff, diff))
    if math.isinf(p):
        if size == 0:
            return np.zeros(diff.shape[:-1], diff.dtype)
        return np.abs(diff).max(-1)
    return (np.abs(diff) ** diff.dtype.type(p)).sum(-1) ** diff.dtype.type(1 / p)


def _norm_grad(diff: np.ndarray, dist: np.ndarray, grad: np.ndarray, p: float) -> np.ndarray:
    """d dist / d diff times ``grad``, with torch's choices where the norm is not smooth."""
    dist, grad = dist[..., None], grad[..., None]
    t = diff.dtype.type
    if p == 0:
        return np.zeros_like(diff)
    if p == 1:
        return np.sign(diff) * grad
    if math.isinf(p):
        return np.sign(diff) * (np.abs(diff) == dist) * grad
    if p == 2:
        result = diff * grad / dist
    elif p < 2:
        result = np.sign(diff) * np.abs(diff) ** t(p - 1) * grad / dist ** t(p - 1)
        if p < 1:
            result = np.where(diff == 0, t(0), result)
    else:
        result = diff * np.abs(diff) ** t(p - 2) * grad / dist ** t(p - 1)
    return np.where(dist == 0, t(0), result)


class _Derivative(Op):
    """A gradient that torch cannot differentiate again: backward through it raises torch's
    error naming the function."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, value, *inputs_and_name):
        ctx.name = inputs_and_name[-1]
        return value

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError(f"the derivative for '{ctx.name}' is not implemented.")


def _once(value: np.ndarray, name: str, *inputs: Tensor) -> Tensor:
    return _Derivative.apply(value, *inputs, name)


def _sum_to(array: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast gradient back to ``shape``."""
    extra = array.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(i + extra for i, n in enumerate(shape)
                                       if n == 1 and array.shape[i + extra] != 1)
    return array.sum(axes).reshape(shape) if axes else array


class Cdist(Op):
    """Distances from the direct differences; batch dims broadcast inside the op."""

    node_name = "CdistBackward0"
    saved_names = ("x1", "x2", "result")

    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.p = p
        with quiet_errors():
            result = _norm(x1[..., :, None, :] - x2[..., None, :, :], p)
        ctx.save_for_backward(x1, x2, result)
        return np.ascontiguousarray(result)

    @staticmethod
    def backward(ctx, grad):
        x1, x2, result = ctx.saved_tensors
        a, b = x1._data, x2._data
        with quiet_errors():
            d = _norm_grad(a[..., :, None, :] - b[..., None, :, :], result._data, grad._data,
                           ctx.p)
        g1 = _sum_to(d.sum(-2), a.shape) if ctx.needs_input_grad[0] else None
        g2 = _sum_to(-d.sum(-3), b.shape) if ctx.needs_input_grad[1] else None
        return tuple(None if g is None else _once(np.ascontiguousarray(g), "_cdist_backward",
                                                   grad, x1, x2, result)
                     for g in (g1, g2))


class EuclideanDist(Op):
    """Euclidean distances by one matrix product of rows extended with their squared norms,
    clamped at zero before the square root."""

    node_name = "EuclideanDistBackward0"
    saved_names = ("x1", "x2", "result")

    @staticmethod
    def forward(ctx, x1, x2):
        t = x1.dtype.type
        n1 = np.einsum("...i,...i->...", x1, x1)[..., None]
        n2 = np.einsum("...i,...i->...", x2, x2)[..., None]
        left = np.concatenate([x1 * t(-2), n1, np.ones_like(n1)], -1)
        right = np.concatenate([x2, np.ones_like(n2), n2], -1)
        result = np.sqrt(np.maximum(left @ np.swapaxes(right, -1, -2), t(0)))
        ctx.save_for_backward(x1, x2, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        x1, x2, result = ctx.saved_tensors
        ratio = (grad / result).masked_fill(result == 0, 0)
        return (x1 * ratio.sum(-1, keepdim=True) - ratio.matmul(x2),
                x2 * ratio.sum(-2).unsqueeze(-1) - ratio.mT.matmul(x1))


def _type_name(t: Tensor) -> str:
    return _dtype.scalar_type_name(t.dtype)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: Optional[str] = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2``
    (..., R, M): a (..., P, R) tensor; the leading dims broadcast."""
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. "
                           f"X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_name(x)}")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x1)} but found {_type_name(x2)}")
    p = float(p)
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    left, right = tuple(x1.shape[:-2]), tuple(x2.shape[:-2])
    try:
        batch = tuple(np.broadcast_shapes(left, right))
    except ValueError:
        raise broadcast_error("cdist", left, right) from None
    rows1, rows2, mode = x1.shape[-2], x2.shape[-2], _MODES[compute_mode]
    if p == 2 and (mode == 1 or (mode == 0 and (rows1 > 25 or rows2 > 25))):
        size = math.prod(batch)
        a = x1.expand(batch + tuple(x1.shape[-2:])).reshape(size, rows1, -1)
        b = x2.expand(batch + tuple(x2.shape[-2:])).reshape(size, rows2, -1)
        return EuclideanDist.apply(a, b).view(batch + (rows1, rows2))
    return Cdist.apply(x1, x2, p)


class Pdist(Op):
    """Distances between every pair of rows i < j, in row-major order of the pairs."""

    node_name = "PdistBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self, p):
        ctx.p = p
        first, second = np.triu_indices(self.shape[0], 1)
        with quiet_errors():
            result = _norm(self[first] - self[second], p)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        x = self._data
        first, second = np.triu_indices(x.shape[0], 1)
        with quiet_errors():
            d = _norm_grad(x[first] - x[second], result._data, grad._data, ctx.p)
        out = np.zeros_like(x)
        np.add.at(out, first, d)
        np.add.at(out, second, -d)
        return _once(out, "_pdist_backward", grad, self, result)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """p-norm distance between every pair of rows of a 2-D ``input``: the upper triangle of
    ``cdist(input, input)`` without its diagonal, flattened row by row."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = float(p)
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return Pdist.apply(input, p)
