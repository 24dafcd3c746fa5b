"""The continuous uniform distribution on [low, high)."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform distribution on the half-open interval [low, high); rsample is
    low + rand * (high - low) with ``torch.rand`` of the sample's shape."""

    has_rsample = True

    def __init__(self, low, high, validate_args=None) -> None:
        self.low, self.high = broadcast_all(low, high)
        both_numbers = isinstance(low, Number) and isinstance(high, Number)
        batch_shape = torch.Size() if both_numbers else self.low.size()
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def arg_constraints(self):
        """low below high, and high above low."""
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def expand(self, batch_shape, _instance=None):
        """Uniform with low and high expanded to ``batch_shape``."""
        return self._expanded(Uniform, batch_shape, ("low", "high"), _instance)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[low, high]."""
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        """(low + high) / 2."""
        return (self.high + self.low) / 2

    @property
    def mode(self):
        """NaN: every point of the interval is equally likely."""
        return math.nan * self.high

    @property
    def stddev(self):
        """(high - low) / sqrt 12."""
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        """(high - low)^2 / 12."""
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """low + rand * (high - low)."""
        shape = self._extended_shape(sample_shape)
        rand = torch.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        """-log(high - low) inside [low, high), -inf outside."""
        if self._validate_args:
            self._validate_sample(value)
        inside_low = self.low.le(value).type_as(self.low)
        inside_high = self.high.gt(value).type_as(self.low)
        return torch.log(inside_low.mul(inside_high)) - torch.log(self.high - self.low)

    def cdf(self, value):
        """(x - low) / (high - low), clamped to [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        """p (high - low) + low."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """log(high - low)."""
        return torch.log(self.high - self.low)
