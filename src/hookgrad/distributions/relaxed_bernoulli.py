"""Relaxed (Concrete / Gumbel-softmax) Bernoulli distributions: continuous stand-ins for a coin
flip whose samples are differentiable in the probabilities, sharper as the temperature falls."""
from __future__ import annotations

from numbers import Number

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .transform_pointwise import SigmoidTransform
from .transformed_distribution import TransformedDistribution
from .utils import _CoinOdds, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_CoinOdds, Distribution):
    """The logit of a RelaxedBernoulli: (logit u + logit p) / temperature, u uniform."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = torch.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same temperature, the given parameter expanded to ``batch_shape``."""
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, names, _instance)
        new.temperature = self.temperature
        new._param = getattr(new, names[-1])
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._param.size()

    def rsample(self, sample_shape=()):
        """(logit u + logit p) / temperature with u = clamp(rand), clamped p."""
        shape = self._extended_shape(sample_shape)
        p = clamp_probs(self.probs.expand(shape))
        # logistic noise logit(u), u uniform; both clamped so neither logit is infinite
        u = clamp_probs(torch.rand(shape, dtype=p.dtype))
        return (_logit(u) + _logit(p)) / self.temperature

    def log_prob(self, value):
        """log t + d - 2 log(1 + exp d), d = logits - t x."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        d = logits - self.temperature * value
        return torch.log(self.temperature) + d - 2 * torch.log1p(torch.exp(d))


def _logit(x):
    return torch.log(x) - torch.log1p(-x)


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach {0, 1} as the
    temperature goes to zero."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """RelaxedBernoulli with the base expanded to ``batch_shape``."""
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """Log-odds of the underlying coin."""
        return self.base_dist.logits

    @property
    def probs(self):
        """Probability of heads of the underlying coin."""
        return self.base_dist.probs
