"""The half-normal distribution: |X| for X ~ Normal(0, scale)."""
from __future__ import annotations

import math

from ._folded import Folded
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Folded):
    """|X| for X ~ Normal(0, scale)."""

    base = Normal

    def expand(self, batch_shape, _instance=None):
        """HalfNormal with the base Normal expanded to ``batch_shape``."""
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """scale sqrt(2 / pi)."""
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        """scale^2 (1 - 2 / pi)."""
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def log_prob(self, value):
        """The Normal's log density plus log 2 for x >= 0, -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        return self._folded_log_prob(value)
