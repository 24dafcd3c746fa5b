"""The Laplace (double exponential) distribution."""
from __future__ import annotations


import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import _loc_scale_batch

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace distribution, density exp(-|x - loc| / scale) / (2 scale); rsample inverts the
    CDF at ``uniform_(eps - 1, 1)`` draws, as torch does."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        super().__init__(_loc_scale_batch(self, loc, scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Laplace with loc and scale expanded to ``batch_shape``."""
        return self._expanded(Laplace, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        """loc."""
        return self.loc

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def variance(self):
        """2 scale^2."""
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """sqrt 2 * scale."""
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=()):
        """loc - scale sign(u) log(1 - |u|), u uniform on (-1, 1)."""
        shape = self._extended_shape(sample_shape)
        eps = torch.finfo(self.loc.dtype).eps
        u = self.loc.new(shape).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value):
        """-log(2 scale) - |x - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value):
        """1/2 - sign(x - loc) expm1(-|x - loc| / scale) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        centred = value - self.loc
        return 0.5 - 0.5 * centred.sign() * torch.expm1(-centred.abs() / self.scale)

    def icdf(self, value):
        """loc - scale sign(p - 1/2) log(1 - 2|p - 1/2|)."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self):
        """1 + log(2 scale)."""
        return 1 + torch.log(2 * self.scale)
