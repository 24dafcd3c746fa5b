"""The Bernoulli distribution, given by ``probs`` or ``logits``."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _CoinOdds, broadcast_all

__all__ = ["Bernoulli"]


def _bce_with_logits(logits, target):
    return torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")


class Bernoulli(_CoinOdds, ExponentialFamily):
    """Bernoulli distribution on {0, 1}; exactly one of ``probs`` (P(1)) or ``logits`` (its
    log-odds) is given and the other is derived on first use. ``sample`` is
    ``torch.bernoulli`` of the expanded probabilities, as torch draws it."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
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
        """Bernoulli with its given parameter expanded to ``batch_shape``."""
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(Bernoulli, batch_shape, names, _instance)
        new._param = getattr(new, names[-1])
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self):
        """probs."""
        return self.probs

    @property
    def mode(self):
        """1 where probs > 1/2, 0 below, NaN at exactly 1/2."""
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self):
        """probs (1 - probs)."""
        return self.probs * (1 - self.probs)

    @property
    def param_shape(self):
        """The shape of the parameter the distribution was built from."""
        return self._param.size()

    def sample(self, sample_shape=()):
        """``torch.bernoulli`` of the probabilities expanded to the sample's shape."""
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """x log p + (1 - x) log(1 - p), computed stably from the logits."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_bce_with_logits(logits, value)

    def entropy(self):
        """-p log p - (1 - p) log(1 - p)."""
        return _bce_with_logits(self.logits, self.probs)

    def enumerate_support(self, expand: bool = True):
        """[0, 1] along dimension 0, broadcast over the batch."""
        values = torch.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))
