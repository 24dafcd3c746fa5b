"""The Wishart distribution over positive definite matrices.

``rsample`` is Bartlett's decomposition: A lower triangular with sqrt(chi-squared) diagonal
(df - i degrees of freedom in row i, drawn through Gamma's sampler, see ``gamma``'s note) and
standard normals below it; then X = (L A)(L A)^T. As torch does, each sample is then screened
and redrawn up to ``max_try_correction`` times with a "Singular sample detected." warning; in
torch 2.13 that screen flags samples that pass the positive-definite check, so the first draw
is always replaced by a second one, and this does the same to give torch's numbers.
"""
from __future__ import annotations

import math
import warnings
from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_DEFAULT_TRIES = 3


def _mvdigamma(x, p: int):
    """sum_{i=0}^{p-1} digamma(x - i/2)."""
    steps = torch.arange(p, dtype=x.dtype) / 2
    return torch.digamma(x.unsqueeze(-1) - steps).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma): the distribution of sum_{k=1}^{df} x_k x_k^T for x_k ~ N(0, Sigma),
    with Sigma given as exactly one of ``covariance_matrix``, ``precision_matrix`` or
    ``scale_tril``."""

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        """The matrices' sets, and df > p - 1."""
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None) -> None:
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = torch.Size(matrix.shape[:-2])
            df_tensor = torch.tensor(df, dtype=matrix.dtype)
        else:
            batch_shape = torch.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape))
            df_tensor = df
        event_shape = torch.Size(matrix.shape[-2:])
        if bool((df_tensor <= event_shape[-1] - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        setattr(self, name, matrix.expand(batch_shape + event_shape))
        self.df = df_tensor.expand(batch_shape)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(i + 1) for i in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = torch.linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)
        p = event_shape[-1]
        self._dist_chi2 = Chi2(df=self.df.unsqueeze(-1)
                               - torch.arange(p, dtype=self._unbroadcasted_scale_tril.dtype))

    def expand(self, batch_shape, _instance=None):
        """Wishart with df and the matrices expanded to ``batch_shape``."""
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = torch.Size(batch_shape)
        matrix_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(i + 1) for i in range(len(batch_shape))]
        for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        p = self.event_shape[-1]
        new._dist_chi2 = Chi2(df=new.df.unsqueeze(-1) - torch.arange(
            p, dtype=new._unbroadcasted_scale_tril.dtype))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        """The lower Cholesky factor L of Sigma."""
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        """Sigma = L L^T."""
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        """Sigma^-1, from the Cholesky factor."""
        identity = torch.eye(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype)
        return torch.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape)

    @property
    def mean(self):
        """df Sigma."""
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) Sigma where df > p + 1, NaN elsewhere."""
        factor = self.df - self._event_shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        """Var X_ij = df (Sigma_ij^2 + Sigma_ii Sigma_jj)."""
        sigma = self.covariance_matrix
        diagonal = sigma.diagonal(dim1=-2, dim2=-1)
        outer = torch.einsum("...i,...j->...ij", diagonal, diagonal)
        return self.df.view(self._batch_shape + (1, 1)) * (sigma.pow(2) + outer)

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        shape = self._extended_shape(sample_shape)
        noise = self._dist_chi2.rsample(sample_shape).sqrt().diag_embed(dim1=-2, dim2=-1)
        rows, cols = torch.tril_indices(p, p, offset=-1)
        noise[..., rows, cols] = torch.randn(tuple(shape[:-2]) + (p * (p - 1) // 2,),
                                             dtype=noise.dtype)
        factor = self._unbroadcasted_scale_tril @ noise
        return factor @ factor.mT

    def _screen(self, sample):
        """torch 2.13's screen: True for samples in the support (see the module's note),
        reduced over the batch dimensions."""
        flagged = self.support.check(sample)
        if self._batch_shape:
            flagged = flagged.amax(self._batch_dims)
        return flagged

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws, screened and redrawn as torch does (see the module's note)."""
        tries = _DEFAULT_TRIES if max_try_correction is None else max_try_correction
        sample_shape = torch.Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        flagged = self._screen(sample)
        if bool(flagged.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(tries):
                redraw = self._bartlett_sampling(torch.Size((int(flagged.sum()),)))
                # a copy as the index: the mask is updated in place below, and the assignment's
                # backward must still see the entries it wrote
                sample[flagged.clone()] = redraw
                still_bad = ~self.support.check(redraw)
                if self._batch_shape:
                    still_bad = still_bad.amax(self._batch_dims)
                flagged[flagged.clone()] = still_bad
                if not bool(flagged.any()):
                    break
        return sample

    def log_prob(self, value):
        """(df - p - 1)/2 log|X| - tr(Sigma^-1 X)/2 - df p/2 log 2 - df/2 log|Sigma|
        - log Gamma_p(df/2)."""
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        trace = torch.cholesky_solve(value, self._unbroadcasted_scale_tril)
        trace = trace.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * math.log(2) / 2 + half_log_det_sigma)
                - torch.special.multigammaln(nu / 2, p)
                + (nu - p - 1) / 2 * torch.linalg.slogdet(value).logabsdet
                - trace / 2)

    def entropy(self):
        """(p+1)/2 log|Sigma| + p(p+1)/2 log 2 + log Gamma_p(df/2)
        - (df-p-1)/2 psi_p(df/2) + df p / 2."""
        nu, p = self.df, self._event_shape[-1]
        half_log_det_sigma = self._unbroadcasted_scale_tril.diagonal(
            dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * math.log(2) / 2 + half_log_det_sigma)
                + torch.special.multigammaln(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return (-0.5 * self.precision_matrix, 0.5 * (self.df - p - 1))

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        nu = 2 * y + p + 1
        return (nu * (p * math.log(2) / 2 - 0.5 * torch.linalg.slogdet(-2 * x).logabsdet)
                + torch.special.multigammaln(nu / 2, p))
