"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .cauchy import Cauchy
from .transform_pointwise import AbsTransform
from .transformed_distribution import TransformedDistribution

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """|X| for X ~ Cauchy(0, scale)."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None) -> None:
        folded = Cauchy(0, scale, validate_args=False)
        super().__init__(folded, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """HalfCauchy with the base Cauchy expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The underlying Cauchy's scale."""
        return self.base_dist.scale

    @property
    def mean(self):
        """Infinite."""
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self):
        """0."""
        return torch.zeros_like(self.scale)

    @property
    def variance(self):
        """Infinite."""
        return self.base_dist.variance

    def log_prob(self, value):
        """The Cauchy's log density plus log 2 for x >= 0, -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.scale.dtype)
        doubled = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, doubled, -math.inf)

    def cdf(self, value):
        """2 F(x) - 1, F the Cauchy's cdf."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """The Cauchy's icdf at (p + 1) / 2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The Cauchy's entropy minus log 2."""
        return self.base_dist.entropy() - math.log(2)
