"""The Gumbel (type-I extreme value) distribution."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .transform_pointwise import AffineTransform, ExpTransform
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale) = loc - scale log(-log U), U uniform on [tiny, 1 - eps], built as
    torch builds it (so seeded draws agree)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torch.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(torch.full_like(self.loc, finfo.tiny),
                                torch.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv,
                      AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv,
                      AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Gumbel with loc, scale and the base expanded to ``batch_shape``."""
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """z - exp(z) - log scale with z = (loc - x) / scale."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        """loc + scale * Euler's constant."""
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        """loc."""
        return self.loc

    @property
    def stddev(self):
        """pi scale / sqrt 6."""
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        """stddev^2."""
        return self.stddev.pow(2)

    def entropy(self):
        """log scale + 1 + Euler's constant."""
        return self.scale.log() + (1 + euler_constant)
