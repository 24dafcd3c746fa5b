"""The half-Cauchy distribution: |X| for X ~ Cauchy(0, scale)."""
from __future__ import annotations

import math

import hookgrad as torch

from ._folded import Folded
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(Folded):
    """|X| for X ~ Cauchy(0, scale)."""

    base = Cauchy

    def expand(self, batch_shape, _instance=None):
        """HalfCauchy with the base Cauchy expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """Infinite."""
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        """Infinite."""
        return self.base_dist.variance

    def log_prob(self, value):
        """The Cauchy's log density plus log 2 for x >= 0, -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(torch.as_tensor(value, dtype=self.scale.dtype))
