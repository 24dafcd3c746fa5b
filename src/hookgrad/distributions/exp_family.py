"""``ExponentialFamily``: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)).

Subclasses give the natural parameters ``theta`` and the log normaliser ``F``; the generic
entropy follows from them with one gradient (the Bregman divergence identity), which is what
``kl_divergence`` falls back on between two members of the same family.
"""
from __future__ import annotations

import hookgrad as torch

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of the exponential family, known by its natural parameters."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """-E[log p] = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        natural = [p.detach().requires_grad_() for p in self._natural_params]
        log_normalizer = self._log_normalizer(*natural)
        gradients = torch.autograd.grad(log_normalizer.sum(), natural, create_graph=True)
        result = result + log_normalizer
        for param, gradient in zip(natural, gradients):
            result = result - (param * gradient).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
