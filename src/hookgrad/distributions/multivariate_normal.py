"""The multivariate normal distribution, given by a covariance, precision or Cholesky factor."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(matrix, vector):
    """Batched matrix-vector product with broadcasting."""
    return torch.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril, x):
    """|L^-1 x|^2 over the last dimension, L broadcast against x's batch."""
    batch = torch.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(x.shape[:-1]))
    n = x.size(-1)
    solved = torch.linalg.solve_triangular(scale_tril.expand(batch + (n, n)),
                                           x.expand(batch + (n,)).unsqueeze(-1), upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor of P^-1, without inverting P: factor P with its rows and
    columns reversed, flip back, and invert the triangular result."""
    flipped_factor = torch.linalg.cholesky(torch.flip(precision, (-2, -1)))
    inverse_factor = torch.transpose(torch.flip(flipped_factor, (-2, -1)), -2, -1)
    identity = torch.eye(precision.shape[-1], dtype=precision.dtype)
    return torch.linalg.solve_triangular(inverse_factor, identity, upper=False)


class MultivariateNormal(Distribution):
    """Normal distribution over R^n with mean ``loc`` and exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor of the covariance). Every
    computation goes through the Cholesky factor; rsample is loc + L eps."""

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril),
                                           ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            described = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{described} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        """MultivariateNormal with loc and the given matrix expanded to ``batch_shape``."""
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(batch_shape + self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor L of the covariance."""
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        """L L^T."""
        factor = self._unbroadcasted_scale_tril
        return torch.matmul(factor, factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """(L L^T)^-1, from the factor."""
        return torch.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """The covariance's diagonal, the row sums of L^2."""
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """loc + L eps, eps standard normal of the sample's shape."""
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        """-(n log 2 pi + |L^-1 (x - loc)|^2) / 2 - log det L."""
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis)
                - half_log_det)

    def entropy(self):
        """n (1 + log 2 pi) / 2 + log det L."""
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return entropy if len(self._batch_shape) == 0 else entropy.expand(self._batch_shape)
