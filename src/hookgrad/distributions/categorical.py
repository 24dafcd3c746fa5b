"""The categorical distribution over {0, ..., K - 1}."""
from __future__ import annotations

import math

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Categorical distribution over the last dimension of ``probs`` (normalised to sum to one)
    or ``logits`` (normalised by logsumexp). ``sample`` draws with ``torch.multinomial`` with
    replacement on the flattened rows and transposes, the calls torch makes."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else torch.Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Categorical with its parameter expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = torch.Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(param_shape))
                new._param = getattr(new, name)
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers 0 .. K - 1."""
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """Normalised log-probabilities."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """Probabilities, a softmax of the logits."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._param.size()

    @property
    def mean(self):
        """NaN: the categories have no order."""
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        """The most probable category."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """NaN: the categories have no order."""
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        """Category indices (int64) of shape ``sample_shape + batch_shape``."""
        sample_shape = torch.Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = torch.multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        """The normalised logit of category ``value``."""
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = torch.broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        """-sum p log p, with -inf logits clamped so 0 * log 0 counts as 0."""
        logits = torch.clamp(self.logits, min=torch.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        """0 .. K - 1 along dimension 0, broadcast over the batch."""
        values = torch.arange(self._num_events, dtype=torch.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
