"""The Cauchy (Lorentz) distribution."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import _loc_scale_batch

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy distribution with median ``loc`` and half width ``scale``; it has no mean and an
    infinite variance. rsample scales a ``cauchy_`` fill, as torch does."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        super().__init__(_loc_scale_batch(self, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Cauchy with loc and scale expanded to ``batch_shape``."""
        return self._expanded(Cauchy, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        """NaN: the mean is undefined."""
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """inf."""
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        """loc + eps * scale, eps standard Cauchy."""
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new(shape).cauchy_() * self.scale

    def log_prob(self, value):
        """-log pi - log scale - log(1 + ((x - loc) / scale)^2)."""
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        """atan((x - loc) / scale) / pi + 1/2."""
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        """tan(pi (p - 1/2)) scale + loc."""
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        """log(4 pi) + log scale."""
        return math.log(4 * math.pi) + self.scale.log()
