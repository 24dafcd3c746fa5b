"""The Dirichlet distribution over the simplex.

A draw is ``_sample_dirichlet`` (torch's sampler and stream). Its gradient to the concentration
goes through ``_dirichlet_grad``: each coordinate's Beta pathwise derivative g, combined with
the incoming gradient v as g * (v - sum(x * v)) over the last dimension.
"""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class _Dirichlet(torch.autograd.Function):
    """The draw as a node: forward samples, backward applies the Beta derivatives."""

    @staticmethod
    def forward(ctx, concentration):
        draw = torch._sample_dirichlet(concentration)
        ctx.save_for_backward(draw, concentration)
        return draw

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        draw, concentration = ctx.saved_tensors
        totals = concentration.sum(-1, True).expand_as(concentration)
        pathwise = torch._dirichlet_grad(draw, concentration, totals)
        return pathwise * (grad_output - (draw * grad_output).sum(-1, True))


class Dirichlet(ExponentialFamily):
    """Dirichlet distribution with ``concentration`` over the last dimension."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """Dirichlet with the concentration expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = torch.Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        """A draw on the simplex with pathwise gradients to the concentration."""
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        """sum (a_i - 1) log x_i + lgamma(sum a) - sum lgamma(a_i)."""
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration - 1.0, value).sum(-1)
                + torch.lgamma(self.concentration.sum(-1))
                - torch.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        """a / sum a."""
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        """(a - 1)+ normalised; a vertex where every a < 1."""
        shifted = (self.concentration - 1).clamp(min=0.0)
        mode = shifted / shifted.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = torch.nn.functional.one_hot(mode[mask].argmax(dim=-1),
                                                 shifted.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        """a (a0 - a) / (a0^2 (a0 + 1)), a0 = sum a."""
        total = self.concentration.sum(-1, True)
        return (self.concentration * (total - self.concentration)
                / (total.pow(2) * (total + 1)))

    def entropy(self):
        """log B(a) + (a0 - K) digamma(a0) - sum (a_i - 1) digamma(a_i)."""
        k = self.concentration.size(-1)
        total = self.concentration.sum(-1)
        return (torch.lgamma(self.concentration).sum(-1) - torch.lgamma(total)
                - (k - total) * torch.digamma(total)
                - ((self.concentration - 1.0) * torch.digamma(self.concentration)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))
