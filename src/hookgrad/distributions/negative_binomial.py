"""The negative binomial distribution: failures before ``total_count`` successes.

A draw is Poisson(G) with G ~ Gamma(total_count, (1 - p) / p), drawn through Gamma's sampler
(see ``gamma``'s note) and then ``torch.poisson``, as torch draws it."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _CoinOdds, broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_CoinOdds, Distribution):
    """NegativeBinomial(total_count r, probs p or logits): P(k) = C(k + r - 1, k) p^k
    (1 - p)^r, ``probs`` being the probability of each counted event (a "success" here)."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
            self._param = self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """NegativeBinomial with total_count and the given parameter expanded."""
        names = ["total_count"] + [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(NegativeBinomial, batch_shape, names, _instance)
        new._param = getattr(new, names[-1])
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._param.size()

    @property
    def mean(self):
        """r exp(logits) = r p / (1 - p)."""
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        """floor((r - 1) p / (1 - p)), at least 0."""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        """mean / (1 - p)."""
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        """Gamma(r, (1 - p) / p), the Poisson rate's mixing distribution."""
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        """Poisson draws at Gamma-drawn rates."""
        with torch.no_grad():
            rate = self._gamma.sample(sample_shape=sample_shape)
            return torch.poisson(rate)

    def log_prob(self, value):
        """r log(1 - p) + k log p - log B-like normaliser, zero where r + k = 0."""
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = torch.nn.functional.logsigmoid
        unnormalised = (self.total_count * logsigmoid(-self.logits)
                        + value * logsigmoid(self.logits))
        normaliser = (-torch.lgamma(self.total_count + value) + torch.lgamma(1.0 + value)
                      + torch.lgamma(self.total_count))
        normaliser = normaliser.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalised - normaliser
