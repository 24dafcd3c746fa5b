"""The Gamma distribution and its special case Chi2.

A draw is ``_standard_gamma(concentration) / rate`` (torch's sampler and stream, so a seeded
draw equals torch's), differentiable in both parameters; it is kept above zero by the dtype's
smallest normal number.
"""
from __future__ import annotations

from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Chi2", "Gamma"]


class Gamma(ExponentialFamily):
    """Gamma distribution with shape ``concentration`` and ``rate`` (inverse scale)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        both_numbers = isinstance(concentration, Number) and isinstance(rate, Number)
        batch_shape = torch.Size() if both_numbers else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Gamma with concentration and rate expanded to ``batch_shape``."""
        return self._expanded(Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        """concentration / rate."""
        return self.concentration / self.rate

    @property
    def mode(self):
        """(concentration - 1) / rate, at least 0."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        """concentration / rate^2."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """Gamma(concentration, 1) draws divided by the rate (pathwise gradients)."""
        shape = self._extended_shape(sample_shape)
        value = (torch._standard_gamma(self.concentration.expand(shape))
                 / self.rate.expand(shape))
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        """a log b + (a - 1) log x - b x - lgamma(a)."""
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def entropy(self):
        """a - log b + lgamma(a) + (1 - a) digamma(a)."""
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    def cdf(self, value):
        """The regularised lower incomplete gamma P(a, b x)."""
        if self._validate_args:
            self._validate_sample(value)
        return torch.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())


class Chi2(Gamma):
    """Chi-squared with ``df`` degrees of freedom, Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None) -> None:
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Chi2 with df expanded to ``batch_shape``."""
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        """Degrees of freedom, twice the concentration."""
        return self.concentration * 2
