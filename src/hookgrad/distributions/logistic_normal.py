"""The logistic-normal distribution: a Normal vector pushed onto the simplex by stick breaking."""
from __future__ import annotations

from . import constraints
from .normal import Normal
from .transform_vector import StickBreakingTransform
from .transformed_distribution import TransformedDistribution

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform()(X) for X ~ Normal(loc, scale) over the last dimension, so a
    K-vector of locations gives draws on the (K+1)-simplex."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        normal = Normal(loc, scale, validate_args=validate_args)
        if not normal.batch_shape:
            normal = normal.expand([1])  # one dimension at least, to break into two pieces
        super().__init__(normal, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """LogisticNormal with the base expanded to ``batch_shape``."""
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The underlying Normal's loc."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """The underlying Normal's scale."""
        return self.base_dist.base_dist.scale
