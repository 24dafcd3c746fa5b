"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019).

Its density is C(lam) lam^x (1 - lam)^(1 - x) with C(lam) = 2 atanh(1 - 2 lam) / (1 - 2 lam).
Near lam = 1/2 that ratio (and the moments) is 0/0, so inside the interval ``lims`` every
formula switches to a Taylor expansion in lam - 1/2, and the closed form is evaluated at a safe
stand-in so neither branch produces NaN gradients.
"""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _CoinOdds, broadcast_all, clamp_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_CoinOdds, ExponentialFamily):
    """Continuous Bernoulli with ``probs`` (lam) or ``logits`` (its log-odds), exactly one of
    them; ``rsample`` is the icdf of a uniform draw."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (value,) = broadcast_all(given)
        if probs is not None:
            # kept inside [eps, 1 - eps] (before validation, so 0 and 1, and even values
            # beyond them, are accepted as torch accepts them)
            value = clamp_probs(value)
            self.probs = value
        else:
            self.logits = value
        self._param = value
        batch_shape = torch.Size() if isinstance(given, Number) else value.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """ContinuousBernoulli with its given parameter expanded to ``batch_shape``."""
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(ContinuousBernoulli, batch_shape, names, _instance)
        new._param = getattr(new, names[-1])
        new._lims = self._lims
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def param_shape(self):
        """The shape of the given parameter."""
        return self._param.size()

    def _outside_unstable_region(self):
        low, high = self._lims
        return (self.probs <= low) | (self.probs > high)

    def _cut_probs(self):
        """probs where the closed forms are used, the lower limit elsewhere."""
        return torch.where(self._outside_unstable_region(), self.probs,
                           self._lims[0] * torch.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log C(lam) = log|log(1 - lam) - log lam| - log|1 - 2 lam|; near 1/2
        log 2 + (4/3 + 104/45 x^2) x^2 with x = lam - 1/2."""
        cut = self._cut_probs()
        closed = (torch.log(torch.abs(torch.log1p(-cut) - torch.log(cut)))
                  - torch.log(torch.abs(1 - 2 * cut)))
        x = self.probs - 0.5
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x.pow(2)) * x.pow(2)
        return torch.where(self._outside_unstable_region(), closed, taylor)

    @property
    def mean(self):
        """lam / (2 lam - 1) + 1 / (log(1 - lam) - log lam); 1/2 + (1/3 + 16/45 x^2) x."""
        cut = self._cut_probs()
        closed = cut / (2 * cut - 1) + 1 / (torch.log1p(-cut) - torch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return torch.where(self._outside_unstable_region(), closed, taylor)

    @property
    def stddev(self):
        """sqrt(variance)."""
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        """lam (lam - 1) / (1 - 2 lam)^2 + 1 / (log(1 - lam) - log lam)^2;
        1/12 - (1/15 - 128/945 x^2) x^2 near 1/2."""
        cut = self._cut_probs()
        closed = (cut * (cut - 1) / (1 - 2 * cut).pow(2)
                  + 1 / (torch.log1p(-cut) - torch.log(cut)).pow(2))
        x = self.probs - 0.5
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x.pow(2)) * x.pow(2)
        return torch.where(self._outside_unstable_region(), closed, taylor)

    def sample(self, sample_shape=()):
        """icdf(U) without a graph, U uniform on [0, 1)."""
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return self.icdf(torch.rand(shape, dtype=self.probs.dtype))

    def rsample(self, sample_shape=()):
        """icdf(U), U uniform on [0, 1)."""
        shape = self._extended_shape(sample_shape)
        return self.icdf(torch.rand(shape, dtype=self.probs.dtype))

    def log_prob(self, value):
        """log C(lam) + x log lam + (1 - x) log(1 - lam)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        cross_entropy = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, value, reduction="none")
        return -cross_entropy + self._cont_bern_log_norm()

    def cdf(self, value):
        """(lam^x (1 - lam)^(1 - x) + lam - 1) / (2 lam - 1), x near 1/2; 0 below 0, 1 above 1."""
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        powered = cut.pow(value) * (1 - cut).pow(1 - value)
        closed = (powered + cut - 1) / (2 * cut - 1)
        inside = torch.where(self._outside_unstable_region(), closed, value)
        return torch.where(value <= 0, torch.zeros_like(inside),
                           torch.where(value >= 1, torch.ones_like(inside), inside))

    def icdf(self, value):
        """(log(1 - lam + p (2 lam - 1)) - log(1 - lam)) / (log lam - log(1 - lam)); p near 1/2."""
        cut = self._cut_probs()
        closed = ((torch.log1p(-cut + value * (2 * cut - 1)) - torch.log1p(-cut))
                  / (torch.log(cut) - torch.log1p(-cut)))
        return torch.where(self._outside_unstable_region(), closed, value)

    def entropy(self):
        """-log C(lam) - E[x] log lam - (1 - E[x]) log(1 - lam)."""
        log_probs0 = torch.log1p(-self.probs)
        log_probs1 = torch.log(self.probs)
        return (self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm()
                - log_probs0)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log((e^x - 1) / x), x/2 + x^2/24 - x^4/2880 near zero."""
        low, high = self._lims
        outside = (x <= low - 0.5) | (x > high - 0.5)
        cut = torch.where(outside, x, (low - 0.5) * torch.ones_like(x))
        closed = torch.log(torch.abs(torch.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return torch.where(outside, closed, taylor)
