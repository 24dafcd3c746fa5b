"""Transforms on whole vectors and matrices: softmax, stick-breaking, Cholesky factors."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .transform_base import Transform
from .transform_pointwise import _clipped_sigmoid
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "SoftmaxTransform", "StickBreakingTransform"]


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


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) to Cholesky factors of D x D correlation matrices.

    Each input is squashed by tanh to a partial correlation r_ij in (-1, 1), laid out row by row
    below the diagonal; row i of the factor is then built by stick breaking, each entry taking
    its share r_ij of the unit length the earlier entries of the row left over:
    L_ij = r_ij sqrt(prod_{k<j} (1 - r_ik^2)) and L_ii = sqrt(prod_{k<i} (1 - r_ik^2)), so
    every row has unit norm.
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        partial = vec_to_tril_matrix(torch.tanh(x), diag=-1)
        n = partial.shape[-1]
        with_diagonal = partial + torch.eye(n, dtype=x.dtype)
        left_over = torch.cumprod(1 - partial.pow(2), dim=-1)
        # the share before entry j is what columns 0..j-1 left: shift the product right by one
        before = torch.nn.functional.pad(left_over[..., :-1], [1, 0], value=1.0)
        return with_diagonal * before.sqrt()

    def _inverse(self, y):
        taken = torch.cumsum(y.pow(2), dim=-1)
        before = torch.nn.functional.pad(1 - taken[..., :-1], [1, 0], value=1.0)
        # only the strict lower triangle is divided: on and above the diagonal what is left
        # over is zero and 0 / 0 would poison the gradient
        partial = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(before, diag=-1).sqrt()
        return torch.atanh(partial)

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        """sum over i > j of log(1 - r_ij^2) + log(prod_{k<j} (1 - r_ik^2)) / 2."""
        left_over = 1 - torch.cumsum(y.pow(2), dim=-1)
        # the product before column j, for j >= 1 only in the strict lower triangle below the
        # first subdiagonal: tril index -2 keeps exactly the entries with 1 <= j < i
        shares = tril_matrix_to_vec(left_over, diag=-2)
        tanh_part = 2.0 * (math.log(2.0) - x - torch.nn.functional.softplus(-2.0 * x))
        return tanh_part.sum(-1) + 0.5 * torch.log(shares).sum(-1)

    def forward_shape(self, shape):
        """(..., N) to (..., D, D) with N = D (D - 1) / 2."""
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        count = shape[-1]
        side = round((0.25 + 2 * count) ** 0.5 + 0.5)
        if side * (side - 1) // 2 != count:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (side, side)

    def inverse_shape(self, shape):
        """(..., D, D) to (..., D (D - 1) / 2)."""
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        side = shape[-1]
        return shape[:-2] + (side * (side - 1) // 2,)
