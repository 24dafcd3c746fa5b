"""The generalized Pareto distribution (location, scale, shape ``concentration``)."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


def _near_zero_swapped(concentration, near_zero):
    """The concentration with entries treated as zero replaced by one, so the general formula
    (which divides by it) stays finite there and gives them no gradient."""
    return torch.where(near_zero, torch.ones_like(concentration), concentration)


class GeneralizedPareto(Distribution):
    """Generalized Pareto: survival (1 + xi z)^(-1/xi), z = (x - loc) / scale, with the
    exponential tail exp(-z) where xi (``concentration``) is zero. ``rsample`` is the icdf of a
    uniform draw."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None) -> None:
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """GeneralizedPareto with every parameter expanded to ``batch_shape``."""
        return self._expanded(GeneralizedPareto, batch_shape,
                              ("loc", "scale", "concentration"), _instance)

    def rsample(self, sample_shape=()):
        """icdf(U), U uniform on [0, 1)."""
        shape = self._extended_shape(sample_shape)
        return self.icdf(torch.rand(shape, dtype=self.loc.dtype))

    def _log_survival(self, value, near_zero):
        z = (value - self.loc) / self.scale
        xi = _near_zero_swapped(self.concentration, near_zero)
        return torch.where(near_zero, -z, -torch.log1p(xi * z) / xi)

    def log_prob(self, value):
        """-log scale - (1/xi + 1) log(1 + xi z); -log scale - z where xi is zero."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        near_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        xi = _near_zero_swapped(self.concentration, near_zero)
        general = -(xi.reciprocal() + 1) * torch.log1p(xi * z)
        return torch.where(near_zero, -z, general) - self.scale.log()

    def log_survival_function(self, value):
        """log(1 - cdf)."""
        if self._validate_args:
            self._validate_sample(value)
        near_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        return self._log_survival(value, near_zero)

    def log_cdf(self, value):
        """log cdf = log(1 - exp(log survival))."""
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        """1 - (1 + xi z)^(-1/xi), or 1 - exp(-z) where xi is zero."""
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        """loc + scale ((1 - p)^(-xi) - 1) / xi, or loc - scale log(1 - p) where xi is zero."""
        log_tail = torch.log1p(-value)
        near_zero = torch.isclose(self.concentration, torch.zeros_like(self.concentration))
        xi = _near_zero_swapped(self.concentration, near_zero)
        general = self.loc + self.scale * torch.expm1(-xi * log_tail) / xi
        return torch.where(near_zero, self.loc - self.scale * log_tail, general)

    @property
    def mean(self):
        """loc + scale / (1 - xi) for xi < 1, NaN otherwise."""
        xi = self.concentration
        return torch.where(xi < 1, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """scale^2 / ((1 - xi)^2 (1 - 2 xi)) for xi < 1/2, NaN otherwise."""
        xi = self.concentration
        variance = self.scale.pow(2) / ((1 - xi).pow(2) * (1 - 2 * xi))
        return torch.where(xi < 0.5, variance, math.nan)

    def entropy(self):
        """log scale + xi + 1."""
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[loc, loc - scale / xi] for xi < 0, [loc, inf) otherwise."""
        xi = self.concentration
        upper = torch.where(xi < 0, self.loc - self.scale / xi, math.inf)
        lower = self.loc
        if not self._batch_shape:
            lower, upper = lower.item(), upper.item()
        return constraints.interval(lower, upper)
