"""Relaxed one-hot categorical (Concrete / Gumbel-softmax) distributions: points of the simplex
whose draws are differentiable in the probabilities."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transform_pointwise import ExpTransform
from .transformed_distribution import TransformedDistribution
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical: log_softmax((logits + Gumbel noise) / t)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # really a submanifold of it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The same temperature over the categorical expanded to ``batch_shape``."""
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._categorical.param_shape

    @property
    def logits(self):
        """The categorical's normalised logits."""
        return self._categorical.logits

    @property
    def probs(self):
        """The categorical's probabilities."""
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        """log_softmax((logits + g) / t), g = -log(-log u), u = clamp(rand)."""
        shape = self._extended_shape(sample_shape)
        uniforms = clamp_probs(torch.rand(shape, dtype=self.logits.dtype))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        """The Concrete density of the log-simplex point ``value``."""
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (torch.full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        return (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """exp of an ExpRelaxedCategorical: points of the simplex that approach one-hot vectors as
    the temperature goes to zero."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """RelaxedOneHotCategorical with the base expanded to ``batch_shape``."""
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature."""
        return self.base_dist.temperature

    @property
    def logits(self):
        """The categorical's normalised logits."""
        return self.base_dist.logits

    @property
    def probs(self):
        """The categorical's probabilities."""
        return self.base_dist.probs
