"""The exponential distribution with a rate."""
from __future__ import annotations

from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exponential distribution, density rate * exp(-rate x) on x >= 0; rsample divides an
    ``exponential_`` fill by the rate, the draw torch makes."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Exponential with the rate expanded to ``batch_shape``."""
        return self._expanded(Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def mode(self):
        """0."""
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        """1 / rate."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """rate^-2."""
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """Exp(1) draws divided by the rate."""
        shape = self._extended_shape(sample_shape)
        return self.rate.new(shape).exponential_() / self.rate

    def log_prob(self, value):
        """log rate - rate x."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """1 - exp(-rate x)."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value):
        """-log(1 - p) / rate."""
        return -torch.log1p(-value) / self.rate

    def entropy(self):
        """1 - log rate."""
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -torch.log(-x)
