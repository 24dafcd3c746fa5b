"""The multinomial distribution: category counts of ``total_count`` categorical draws."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts over the last dimension of ``probs``/``logits`` after ``total_count`` draws.
    ``sample`` draws the Categorical ``total_count`` times and counts with ``scatter_add_``,
    torch's calls, so seeded draws agree."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs=None, logits=None,
                 validate_args=None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Multinomial with the categorical expanded to ``batch_shape``."""
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        """Non-negative counts summing to at most total_count."""
        return constraints.multinomial(self.total_count)

    @property
    def mean(self):
        """n p."""
        return self.probs * self.total_count

    @property
    def variance(self):
        """n p (1 - p)."""
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def logits(self):
        """The categorical's normalised logits."""
        return self._categorical.logits

    @property
    def probs(self):
        """The categorical's probabilities."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """total_count categorical draws, counted per category."""
        shape = torch.Size(sample_shape)
        # one categorical draw per trial, trials moved last, then counted per category
        trials = self._categorical.sample(torch.Size((self.total_count,)) + shape)
        trials = trials.movedim(0, -1)
        counts = torch.zeros(self._extended_shape(shape), dtype=trials.dtype)
        counts.scatter_add_(-1, trials, torch.ones_like(trials))
        return counts.type_as(self.probs)

    def entropy(self):
        """n H(categorical) - log n! + sum_i E[log x_i!] (the marginals are binomial)."""
        n = torch.tensor(self.total_count)
        # E[log x_i!] over each binomial marginal; k = 0 adds nothing, so it is left out
        ks = self._binomial.enumerate_support(expand=False)[1:]
        expected_log_fact = (torch.lgamma(ks + 1) * self._binomial.log_prob(ks).exp()).sum([0, -1])
        return n * self._categorical.entropy() - torch.lgamma(n + 1) + expected_log_fact

    def log_prob(self, value):
        """log n! - sum log x_i! + sum x_i log p_i."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # an impossible category that was never drawn adds 0 (not 0 * -inf = nan)
        unused = (logits == -math.inf) & (value == 0)
        logits = torch.where(unused, torch.zeros_like(logits), logits)
        coefficient = torch.lgamma(value.sum(-1) + 1) - torch.lgamma(value + 1).sum(-1)
        return coefficient + (value * logits).sum(-1)
