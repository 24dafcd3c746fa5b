"""The binomial distribution: successes in ``total_count`` independent trials.

Drawing uses torch's ``torch.binomial`` kernel, which hookgrad does not have, so ``sample``
raises NotImplementedError rather than give a stream that differs from torch's; scores,
moments, support enumeration and entropy are here.
"""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import _CoinOdds, broadcast_all

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    # max(x, 0) with a gradient of 1/2 at 0
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_CoinOdds, Distribution):
    """Binomial distribution with ``total_count`` trials of success probability ``probs``
    (or log-odds ``logits``)."""

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Binomial with total_count and its parameter expanded to ``batch_shape``."""
        names = ["total_count"] + [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(Binomial, batch_shape, names, _instance)
        new._param = getattr(new, names[-1])
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. total_count."""
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        """n p."""
        return self.total_count * self.probs

    @property
    def mode(self):
        """floor((n + 1) p), at most n."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        """n p (1 - p)."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._param.size()

    def sample(self, sample_shape=()):
        """Counts from torch's binomial sampler (no gradient)."""
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        """log C(n, k) + k logit - n log(1 + exp(logit)), computed stably."""
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torch.lgamma(self.total_count + 1)
        log_factorial_k = torch.lgamma(value + 1)
        log_factorial_rest = torch.lgamma(self.total_count - value + 1)
        normaliser = (self.total_count * _clamp_by_zero(self.logits)
                      + self.total_count * torch.log1p(torch.exp(-torch.abs(self.logits)))
                      - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_rest - normaliser

    def _homogeneous_count(self, what: str) -> int:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return total_count

    def entropy(self):
        """-sum_k P(k) log P(k) over the support (one total_count for the whole batch)."""
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        """0 .. n along dimension 0 (one total_count for the whole batch)."""
        total_count = self._homogeneous_count("enumerate_support")
        values = torch.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
