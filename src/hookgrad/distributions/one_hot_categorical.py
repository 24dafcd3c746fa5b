"""The categorical distribution with one-hot samples."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A Categorical whose samples are one-hot vectors of length K (its event shape)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """OneHotCategorical with its parameter expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The category probabilities."""
        return self._categorical.probs

    @property
    def logits(self):
        """The normalised log-probabilities."""
        return self._categorical.logits

    @property
    def mean(self):
        """probs."""
        return self._categorical.probs

    @property
    def mode(self):
        """The one-hot vector of the most probable category."""
        probs = self._categorical.probs
        mode = probs.argmax(dim=-1)
        return torch.nn.functional.one_hot(mode, num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        """probs (1 - probs)."""
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """Categorical draws turned into one-hot vectors of the probabilities' dtype."""
        probs = self._categorical.probs
        indices = self._categorical.sample(torch.Size(sample_shape))
        return torch.nn.functional.one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value):
        """The Categorical log-probability of the hot index."""
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        """The Categorical entropy."""
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        """The K one-hot vectors along dimension 0, broadcast over the batch."""
        n = self.event_shape[0]
        values = torch.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical with a straight-through gradient: rsample is the one-hot sample in the
    forward pass and carries the gradient of ``probs`` backward."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        """sample + (probs - probs.detach())."""
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
