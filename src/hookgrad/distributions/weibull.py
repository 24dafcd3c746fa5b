"""The Weibull distribution: scale * E^(1 / concentration) for E ~ Exponential(1)."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .exponential import Exponential
from .transform_pointwise import AffineTransform, PowerTransform
from .transformed_distribution import TransformedDistribution
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull with ``scale`` and shape ``concentration`` (k): cdf 1 - exp(-(x / scale)^k)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None) -> None:
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        unit = Exponential(torch.ones_like(self.scale), validate_args=validate_args)
        steps = [PowerTransform(exponent=self.concentration_reciprocal),
                 AffineTransform(loc=0, scale=self.scale)]
        super().__init__(unit, steps, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Weibull with its parameters and base expanded to ``batch_shape``."""
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = torch.Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        unit = self.base_dist.expand(batch_shape)
        steps = [PowerTransform(exponent=new.concentration_reciprocal),
                 AffineTransform(loc=0, scale=new.scale)]
        TransformedDistribution.__init__(new, unit, steps, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """scale Gamma(1 + 1/k)."""
        return self.scale * torch.exp(torch.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        """scale ((k - 1) / k)^(1/k)."""
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        """scale^2 (Gamma(1 + 2/k) - Gamma(1 + 1/k)^2)."""
        first = torch.lgamma(1 + self.concentration_reciprocal)
        second = torch.lgamma(1 + 2 * self.concentration_reciprocal)
        return self.scale.pow(2) * (torch.exp(second) - torch.exp(2 * first))

    def entropy(self):
        """gamma (1 - 1/k) + log(scale / k) + 1."""
        return (euler_constant * (1 - self.concentration_reciprocal)
                + torch.log(self.scale * self.concentration_reciprocal) + 1)
