"""The multivariate normal with a low-rank-plus-diagonal covariance W W^T + diag(D).

Everything goes through the m x m "capacitance" matrix K = I + W^T D^-1 W (m the rank), so
scores cost O(n m^2) rather than O(n^3): the Woodbury identity gives the Mahalanobis term and
the matrix determinant lemma the log-determinant.
"""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _add_identity(matrix):
    return matrix + torch.eye(matrix.shape[-1], dtype=matrix.dtype)


def _capacitance_tril(factor, diag):
    """The Cholesky factor of I + W^T D^-1 W."""
    scaled = factor.mT / diag.unsqueeze(-2)
    return torch.linalg.cholesky(_add_identity(torch.matmul(scaled, factor)))


def _lowrank_logdet(factor, diag, capacitance_tril):
    """log det(W W^T + D) = log det K + sum log D (the matrix determinant lemma)."""
    log_det_k = 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    return log_det_k + diag.log().sum(-1)


def _lowrank_mahalanobis(factor, diag, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |L^-1 W^T D^-1 x|^2 (Woodbury)."""
    projected = _batch_mv(factor.mT, x / diag)
    return (x.pow(2) / diag).sum(-1) - _batch_mahalanobis(capacitance_tril, projected)


class LowRankMultivariateNormal(Distribution):
    """Normal over R^n with mean ``loc`` and covariance cov_factor cov_factor^T +
    diag(cov_diag); rsample is loc + W eps_W + sqrt(D) eps_D (eps_W drawn first)."""

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_col, factor, diag_col = torch.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as error:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from error
        self.loc = loc_col[..., 0]
        self.cov_diag = diag_col[..., 0]
        self.cov_factor = factor
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same covariance with loc, cov_factor and cov_diag expanded to ``batch_shape``."""
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = torch.Size(batch_shape)
        vector_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(vector_shape)
        new.cov_diag = self.cov_diag.expand(vector_shape)
        new.cov_factor = self.cov_factor.expand(vector_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @lazy_property
    def variance(self):
        """The covariance's diagonal, sum_j W_ij^2 + D_i."""
        spread = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return spread.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """The Cholesky factor of the covariance, sqrt(D) chol(I + D^-1/2 W W^T D^-1/2)."""
        n = self._event_shape[0]
        diag_sqrt = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        whitened = self._unbroadcasted_cov_factor / diag_sqrt
        inner = _add_identity(torch.matmul(whitened, whitened.mT))
        tril = diag_sqrt * torch.linalg.cholesky(inner)
        return tril.expand(self._batch_shape + (n, n))

    @lazy_property
    def covariance_matrix(self):
        """W W^T + diag(D)."""
        n = self._event_shape[0]
        factor = self._unbroadcasted_cov_factor
        covariance = (torch.matmul(factor, factor.mT)
                      + torch.diag_embed(self._unbroadcasted_cov_diag))
        return covariance.expand(self._batch_shape + (n, n))

    @lazy_property
    def precision_matrix(self):
        """D^-1 - D^-1 W K^-1 W^T D^-1 (Woodbury)."""
        n = self._event_shape[0]
        factor, diag = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        scaled = factor.mT / diag.unsqueeze(-2)
        solved = torch.linalg.solve_triangular(self._capacitance_tril, scaled, upper=False)
        precision = torch.diag_embed(diag.reciprocal()) - torch.matmul(solved.mT, solved)
        return precision.expand(self._batch_shape + (n, n))

    def rsample(self, sample_shape=()):
        """loc + W eps_W + sqrt(D) eps_D."""
        shape = self._extended_shape(sample_shape)
        rank = self.cov_factor.shape[-1]
        eps_factor = _standard_normal(shape[:-1] + (rank,), dtype=self.loc.dtype)
        eps_diag = _standard_normal(shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_factor)
                + self._unbroadcasted_cov_diag.sqrt() * eps_diag)

    def log_prob(self, value):
        """-(n log 2 pi + log det + Mahalanobis) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                           self._unbroadcasted_cov_diag, diff,
                                           self._capacitance_tril)
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor,
                                  self._unbroadcasted_cov_diag, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + log_det + mahalanobis)

    def entropy(self):
        """(n (1 + log 2 pi) + log det) / 2, one per batch entry."""
        log_det = _lowrank_logdet(self._unbroadcasted_cov_factor,
                                  self._unbroadcasted_cov_diag, self._capacitance_tril)
        entropy = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + log_det)
        if not self._batch_shape:
            return entropy
        return entropy.expand(self._batch_shape)
