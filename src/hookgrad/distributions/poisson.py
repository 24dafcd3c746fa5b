"""The Poisson distribution."""
from __future__ import annotations

from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """Poisson distribution with ``rate``: P(k) = rate^k exp(-rate) / k!. ``sample`` calls
    ``torch.poisson`` on the expanded rate, whose draws follow torch's."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None) -> None:
        (self.rate,) = broadcast_all(rate)
        batch_shape = torch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Poisson with the rate expanded to ``batch_shape``."""
        return self._expanded(Poisson, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        """rate."""
        return self.rate

    @property
    def mode(self):
        """floor(rate)."""
        return self.rate.floor()

    @property
    def variance(self):
        """rate."""
        return self.rate

    def sample(self, sample_shape=()):
        """``torch.poisson`` of the rate expanded to the sample's shape."""
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        """k log rate - rate - log k!."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (torch.log(self.rate),)

    def _log_normalizer(self, x):
        return torch.exp(x)
