"""The Kumaraswamy distribution on [0, 1], a Beta look-alike with a closed-form cdf."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .transform_pointwise import AffineTransform, PowerTransform
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _raw_moment(a, b, n: int):
    """E[X^n] = b B(1 + n/a, b)."""
    shifted = 1 + n / a
    return b * torch.exp(torch.lgamma(shifted) + torch.lgamma(b) - torch.lgamma(shifted + b))


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(a = concentration1, b = concentration0): cdf 1 - (1 - x^a)^b, drawn as
    (1 - U^(1/b))^(1/a) for U uniform on [0, 1)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        unit = Uniform(torch.full_like(self.concentration0, 0),
                       torch.full_like(self.concentration0, 1), validate_args=validate_args)
        steps = [PowerTransform(exponent=self.concentration0.reciprocal()),
                 AffineTransform(loc=1.0, scale=-1.0),
                 PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(unit, steps, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Kumaraswamy with both concentrations and the base expanded to ``batch_shape``."""
        new = self._get_checked_instance(Kumaraswamy, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """b B(1 + 1/a, b)."""
        return _raw_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """NaN everywhere, as torch's (its log-space formula is undefined for every valid
        parameter, and entries with a concentration below one are set to NaN)."""
        a, b = self.concentration1, self.concentration0
        log_mode = (torch.log1p(-a) - torch.log1p(-a * b)) / a
        log_mode[(b < 1) | (a < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        """E[X^2] - E[X]^2."""
        a, b = self.concentration1, self.concentration0
        return _raw_moment(a, b, 2) - torch.pow(self.mean, 2)

    def entropy(self):
        """(1 - 1/b) + (1 - 1/a) H_b - log(a b), H_b = digamma(b + 1) + gamma."""
        a, b = self.concentration1, self.concentration0
        harmonic = torch.digamma(b + 1) + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - torch.log(a * b)
