"""The inverse-gamma distribution: 1 / X for X ~ Gamma(concentration, rate).

Drawing goes through Gamma's sampler (see ``gamma``'s note)."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .gamma import Gamma
from .transform_pointwise import PowerTransform
from .transformed_distribution import TransformedDistribution

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """1 / X for X ~ Gamma(concentration, rate): density
    rate^a / Gamma(a) x^(-a - 1) exp(-rate / x)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        gamma = Gamma(concentration, rate, validate_args=validate_args)
        flip = PowerTransform(gamma.rate.new_tensor(-1.0))
        super().__init__(gamma, flip, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """InverseGamma with the base Gamma expanded to ``batch_shape``."""
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """The Gamma's concentration (a)."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """The Gamma's rate, the scale of this distribution."""
        return self.base_dist.rate

    @property
    def mean(self):
        """rate / (a - 1) for a > 1, infinite otherwise."""
        mean = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, mean, math.inf)

    @property
    def mode(self):
        """rate / (a + 1)."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """rate^2 / ((a - 1)^2 (a - 2)) for a > 2, infinite otherwise."""
        a = self.concentration
        variance = self.rate.square() / ((a - 1).square() * (a - 2))
        return torch.where(a > 2, variance, math.inf)

    def entropy(self):
        """a + log rate + lgamma(a) - (1 + a) digamma(a)."""
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
