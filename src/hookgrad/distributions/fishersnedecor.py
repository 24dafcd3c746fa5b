"""The Fisher-Snedecor (F) distribution: the ratio of two scaled chi-squared variables.

Drawing goes through Gamma's sampler (see ``gamma``'s note)."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F(df1, df2): (X1 / df1) / (X2 / df2) for independent chi-squared X1, X2; each scaled
    chi-squared is a Gamma(df / 2, df / 2) drawn, first then second, by rsample."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None) -> None:
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        both_numbers = isinstance(df1, Number) and isinstance(df2, Number)
        batch_shape = torch.Size() if both_numbers else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """FisherSnedecor with both degrees of freedom expanded to ``batch_shape``."""
        new = self._expanded(FisherSnedecor, batch_shape, ("df1", "df2"), _instance)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @property
    def mean(self):
        """df2 / (df2 - 2) where df2 > 2, NaN elsewhere."""
        mean = self.df2.clone(memory_format=torch.contiguous_format)
        mean[self.df2 <= 2] = math.nan
        return mean / (mean - 2)

    @property
    def mode(self):
        """(df1 - 2) / df1 * df2 / (df2 + 2) where df1 > 2, NaN elsewhere."""
        mode = (self.df1 - 2) / self.df1
        mode[self.df1 <= 2] = math.nan
        return mode * self.df2 / (self.df2 + 2)

    @property
    def variance(self):
        """2 df2^2 (df1 + df2 - 2) / (df1 (df2 - 2)^2 (df2 - 4)) where df2 > 4, NaN elsewhere."""
        df2 = self.df2.clone(memory_format=torch.contiguous_format)
        df2[self.df2 <= 4] = math.nan
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=()):
        """The ratio of the two Gamma draws, both kept at least the smallest normal number."""
        shape = torch.Size(self._extended_shape(sample_shape))
        numerator = self._gamma1.rsample(sample_shape).view(shape)
        denominator = self._gamma2.rsample(sample_shape).view(shape)
        tiny = torch.finfo(denominator.dtype).tiny
        return (numerator / denominator.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        """log of Gamma((d1+d2)/2) / (Gamma(d1/2) Gamma(d2/2)) (d1/d2)^(d1/2) x^(d1/2 - 1)
        (1 + d1 x / d2)^(-(d1+d2)/2)."""
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        normaliser = torch.lgamma(half1 + half2) - torch.lgamma(half1) - torch.lgamma(half2)
        body = half1 * torch.log(ratio) + (half1 - 1) * torch.log(value)
        tail = (half1 + half2) * torch.log1p(ratio * value)
        return normaliser + body - tail
