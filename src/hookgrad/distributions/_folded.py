"""What the half-normal and half-Cauchy distributions share: |X| for X symmetric about 0 with a
scale, whose density on x >= 0 is twice X's and whose cdf, icdf and entropy follow from X's."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .transform_pointwise import AbsTransform
from .transformed_distribution import TransformedDistribution


class Folded(TransformedDistribution):
    """|X| for X = ``base(0, scale)``; a subclass names ``base`` and its own moments."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base = None  # the symmetric distribution folded at 0 (Normal, Cauchy)

    def __init__(self, scale, validate_args=None) -> None:
        super().__init__(self.base(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self):
        """The underlying distribution's scale."""
        return self.base_dist.scale

    @property
    def mode(self):
        """0."""
        return torch.zeros_like(self.scale)

    def _folded_log_prob(self, value):
        """X's log density plus log 2 for x >= 0, -inf below."""
        doubled = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, doubled, -math.inf)

    def cdf(self, value):
        """2 F(x) - 1, F the cdf of X."""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """X's icdf at (p + 1) / 2."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """X's entropy minus log 2."""
        return self.base_dist.entropy() - math.log(2)
