"""``TransformedDistribution``: a base distribution pushed through a list of transforms.

A sample is ``t_n(...t_1(base sample))``; the log-density of ``y`` walks the transforms
backwards, subtracting each log-Jacobian (change of variables), then adds the base's.
"""
from __future__ import annotations

import functools
import operator

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transform_base import ComposeTransform, Transform
from .utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


def _transform_list(transforms) -> list:
    """``transforms`` as a list of Transform, or the ValueError torch raises for anything else."""
    if isinstance(transforms, Transform):
        return [transforms]
    if not isinstance(transforms, list):
        raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
    if any(not isinstance(t, Transform) for t in transforms):
        raise ValueError("transforms must be a Transform or a list of Transforms")
    return transforms


class TransformedDistribution(Distribution):
    """The distribution of ``transforms`` applied in order to draws of ``base_distribution``."""

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None) -> None:
        self.transforms = _transform_list(transforms)
        chain = ComposeTransform(self.transforms)
        needed = chain.domain.event_dim
        base_event_ndim = len(base_distribution.event_shape)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        if needed > len(base_shape):
            raise ValueError("base_distribution needs to have shape with size at least "
                             f"{needed}, but got {base_shape}.")
        # Transforms that broadcast (e.g. an affine map with a batched scale) may need a bigger
        # base: push the shape forward, pull it back, and expand the base to what comes back.
        out_shape = chain.forward_shape(base_shape)
        pulled_back = chain.inverse_shape(out_shape)
        if pulled_back != base_shape:
            base_distribution = base_distribution.expand(
                pulled_back[:len(pulled_back) - base_event_ndim])
        if needed > base_event_ndim:
            base_distribution = Independent(base_distribution, needed - base_event_ndim)
        self.base_dist = base_distribution
        produced = chain.codomain.event_dim
        event_ndim = max(produced, base_event_ndim + produced - needed)
        split = len(out_shape) - event_ndim
        super().__init__(out_shape[:split], out_shape[split:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same transforms over the base expanded to the matching batch shape."""
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = torch.Size(batch_shape)
        base_shape = functools.reduce(lambda s, t: t.inverse_shape(s), self.transforms[::-1],
                                      batch_shape + self.event_shape)
        base_batch_ndim = len(base_shape) - len(self.base_dist.event_shape)
        new.base_dist = self.base_dist.expand(base_shape[:base_batch_ndim])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        """The last transform's codomain (the base support without transforms)."""
        if not self.transforms:
            return self.base_dist.support
        last = self.transforms[-1].codomain
        missing = len(self.event_shape) - last.event_dim
        return constraints.independent(last, missing) if missing > 0 else last

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        """As the base distribution."""
        return self.base_dist.has_rsample

    def _push_forward(self, x):
        return functools.reduce(lambda value, t: t(value), self.transforms, x)

    def sample(self, sample_shape=()):
        """A base sample pushed through the transforms, without a graph."""
        with torch.no_grad():
            return self._push_forward(self.base_dist.sample(sample_shape))

    def rsample(self, sample_shape=()):
        """A base rsample pushed through the transforms."""
        return self._push_forward(self.base_dist.rsample(sample_shape))

    def log_prob(self, value):
        """Base log_prob at the pulled-back value minus each transform's log-Jacobian."""
        if self._validate_args:
            self._validate_sample(value)
        ndim = len(self.event_shape)
        corrections = []
        y = value
        for t in self.transforms[::-1]:
            x = t.inv(y)
            ndim += t.domain.event_dim - t.codomain.event_dim
            corrections.append(_sum_rightmost(t.log_abs_det_jacobian(x, y),
                                              ndim - t.domain.event_dim))
            y = x
        base_part = _sum_rightmost(self.base_dist.log_prob(y),
                                   ndim - len(self.base_dist.event_shape))
        return functools.reduce(operator.sub, corrections, 0.0) + base_part

    def _flip_if_decreasing(self, p):
        """A cdf value as seen through the transforms: ``1 - p`` where they reverse order."""
        sign = functools.reduce(operator.mul, (t.sign for t in self.transforms), 1)
        if isinstance(sign, int) and sign == 1:
            return p
        return sign * (p - 0.5) + 0.5

    def cdf(self, value):
        """The base cdf of the pulled-back value, flipped for decreasing transforms."""
        x = functools.reduce(lambda v, t: t.inv(v), self.transforms[::-1], value)
        if self._validate_args:
            self.base_dist._validate_sample(x)
        return self._flip_if_decreasing(self.base_dist.cdf(x))

    def icdf(self, value):
        """The base icdf pushed through the transforms."""
        return self._push_forward(self.base_dist.icdf(self._flip_if_decreasing(value)))
