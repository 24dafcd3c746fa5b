"""The normal (Gaussian) distribution N(loc, scale^2)."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _loc_scale_batch, _standard_normal

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """Normal distribution with mean ``loc`` and standard deviation ``scale``.

    ``rsample`` is loc + eps * scale with eps drawn by ``normal_`` on a fresh tensor, and
    ``sample`` calls ``torch.normal(loc, scale)`` on the expanded parameters, as torch does, so
    seeded draws agree with torch's.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None) -> None:
        super().__init__(_loc_scale_batch(self, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Normal with loc and scale expanded to ``batch_shape``."""
        return self._expanded(Normal, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def stddev(self):
        """scale."""
        return self.scale

    @property
    def variance(self):
        """scale^2."""
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        """``torch.normal`` on the parameters expanded to the sample's shape."""
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        """loc + eps * scale, eps standard normal."""
        shape = self._extended_shape(sample_shape)
        return self.loc + _standard_normal(shape, dtype=self.loc.dtype) * self.scale

    def log_prob(self, value):
        """-(x - loc)^2 / (2 scale^2) - log scale - log sqrt(2 pi)."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = math.log(self.scale) if isinstance(self.scale, Number) else self.scale.log()
        return (-((value - self.loc) ** 2) / (2 * var) - log_scale
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        """(1 + erf((x - loc) / (scale sqrt 2))) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal()
                                    / math.sqrt(2)))

    def icdf(self, value):
        """loc + scale sqrt(2) erfinv(2p - 1)."""
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """1/2 + log(2 pi)/2 + log scale."""
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)
