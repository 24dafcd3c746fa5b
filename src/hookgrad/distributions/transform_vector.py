"""Transforms on whole vectors and matrices: softmax, stick-breaking, Cholesky factors."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .transform_base import Transform
from .transform_pointwise import _clipped_sigmoid

__all__ = ["LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftmaxTransform",
           "StickBreakingTransform"]


def _shape_at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """Reals to the simplex by exp and normalise (not bijective: the inverse is ``log``)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        """The same shape (at least one dimension)."""
        _shape_at_least_1d(shape)
        return shape

    def inverse_shape(self, shape):
        """The same shape (at least one dimension)."""
        _shape_at_least_1d(shape)
        return shape


class StickBreakingTransform(Transform):
    """R^(K-1) to the K-simplex by breaking a stick: each sigmoid takes its share of what is
    left. Bijective, unlike the softmax."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        pad = torch.nn.functional.pad
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        remaining = torch.clamp(1 - y_crop.cumsum(-1), min=torch.finfo(y.dtype).tiny)
        return y_crop.log() - remaining.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        """sum(-x' + logsigmoid(x') + log y[:-1]), x' the offset input."""
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        return (-x + torch.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        """One more entry in the last dimension."""
        _shape_at_least_1d(shape)
        return torch.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        """One fewer entry in the last dimension."""
        _shape_at_least_1d(shape)
        return torch.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Square matrices to lower Cholesky factors: keep the strict lower triangle, exp the
    diagonal."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive definite ones, L L^T of the lower Cholesky transform."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(torch.linalg.cholesky(y))
