"""Student's t distribution."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .gamma import Chi2
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``; a draw
    is loc + scale * N / sqrt(V / df) with N standard normal, then V ~ Chi2(df)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """StudentT with every parameter expanded to ``batch_shape``."""
        new = self._expanded(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return new

    @property
    def mean(self):
        """loc where df > 1, NaN elsewhere."""
        mean = self.loc.clone(memory_format=torch.contiguous_format)
        mean[self.df <= 1] = math.nan
        return mean

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) where df > 2, inf for 1 < df <= 2, NaN below."""
        big = self.df > 2
        variance = self.df.clone(memory_format=torch.contiguous_format)
        variance[big] = self.scale[big].pow(2) * self.df[big] / (self.df[big] - 2)
        variance[(self.df <= 2) & (self.df > 1)] = math.inf
        variance[self.df <= 1] = math.nan
        return variance

    def rsample(self, sample_shape=()):
        """The normals are drawn first, then the chi-squared variates, as torch draws them."""
        shape = self._extended_shape(sample_shape)
        normal = _standard_normal(shape, dtype=self.df.dtype)
        chi2 = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (normal * torch.rsqrt(chi2 / self.df))

    def log_prob(self, value):
        """-(df + 1)/2 log(1 + y^2/df) - log(scale sqrt(df pi) B(df/2, 1/2))."""
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        normaliser = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                      + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - normaliser

    def entropy(self):
        """log scale + (df + 1)/2 (digamma((df+1)/2) - digamma(df/2)) + log(df)/2 + log B."""
        lbeta = (torch.lgamma(0.5 * self.df) + math.lgamma(0.5)
                 - torch.lgamma(0.5 * (self.df + 1)))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (torch.digamma(0.5 * (self.df + 1))
                                         - torch.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
