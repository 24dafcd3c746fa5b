"""The geometric distribution: failures before the first success."""
from __future__ import annotations

from numbers import Number

import hookgrad as torch

from . import constraints
from .distribution import Distribution
from .utils import _CoinOdds, broadcast_all

__all__ = ["Geometric"]


class Geometric(_CoinOdds, Distribution):
    """Geometric distribution on {0, 1, ...}: P(k) = (1 - p)^k p, given ``probs`` or
    ``logits``. ``sample`` is floor(log u / log(1 - p)) with u from ``uniform_(tiny, 1)``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = torch.Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but found "
                    f"invalid values:\n{value.data[~valid]}")

    def expand(self, batch_shape, _instance=None):
        """Geometric with its given parameter expanded to ``batch_shape``."""
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        return self._expanded(Geometric, batch_shape, names, _instance)

    @property
    def mean(self):
        """1/p - 1."""
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        """0."""
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        """(1/p - 1) / p."""
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """Inverse-CDF draws from uniforms on [tiny, 1)."""
        p = self.probs
        # The smallest normal number keeps log(u) finite while staying below any useful draw.
        low = torch.finfo(p.dtype).tiny
        with torch.no_grad():
            u = p.new_empty(self._extended_shape(sample_shape)).uniform_(low, 1)
            return torch.floor(torch.log(u) / torch.log1p(-p))

    def log_prob(self, value):
        """k log(1 - p) + log p (with 0 * log 0 = 0 at p = 1)."""
        if self._validate_args:
            self._validate_sample(value)
        k, p = broadcast_all(value, self.probs)
        # At p = 1 all mass sits on k = 0, where k * log(1 - p) must count as 0, not nan.
        p_fail = torch.where((k == 0) & (p == 1), torch.zeros_like(p), p)
        return k * torch.log1p(-p_fail) + torch.log(self.probs)

    def entropy(self):
        """The Bernoulli entropy divided by p."""
        return torch.nn.functional.binary_cross_entropy_with_logits(
            self.logits, self.probs, reduction="none") / self.probs
