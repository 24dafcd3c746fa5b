"""The Pareto (type I) distribution: scale * exp(E) for E ~ Exponential(alpha)."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .exponential import Exponential
from .transform_pointwise import AffineTransform, ExpTransform
from .transformed_distribution import TransformedDistribution
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """Pareto with minimum ``scale`` and tail index ``alpha``: density
    alpha scale^alpha / x^(alpha + 1) on [scale, inf)."""

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None) -> None:
        self.scale, self.alpha = broadcast_all(scale, alpha)
        exponential = Exponential(self.alpha, validate_args=validate_args)
        stretch = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(exponential, stretch, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Pareto with scale, alpha and the base Exponential expanded to ``batch_shape``."""
        new = self._get_checked_instance(Pareto, _instance)
        batch_shape = torch.Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """alpha scale / (alpha - 1); infinite for alpha <= 1."""
        alpha = self.alpha.clamp(min=1)
        return alpha * self.scale / (alpha - 1)

    @property
    def mode(self):
        """scale."""
        return self.scale

    @property
    def variance(self):
        """scale^2 alpha / ((alpha - 1)^2 (alpha - 2)); infinite for alpha <= 2."""
        alpha = self.alpha.clamp(min=2)
        return self.scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[scale, inf)."""
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        """log(scale / alpha) + 1 / alpha + 1."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
