"""``MixtureSameFamily``: a Categorical mixture over the rightmost batch dimension of a
component distribution (a Gaussian mixture is a Categorical over a batch of Normals)."""
from __future__ import annotations

import hookgrad as torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Mixture whose ``mixture_distribution`` (a Categorical over K) picks one of the K
    components along ``component_distribution``'s last batch dimension. log_prob is the
    logsumexp of component scores plus mixture weights; sample draws the categories first,
    then every component, and gathers (torch's order of draws)."""

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution,
                 validate_args=None) -> None:
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        mixture_batch = mixture_distribution.batch_shape
        component_batch = component_distribution.batch_shape[:-1]
        for size1, size2 in zip(reversed(mixture_batch), reversed(component_batch)):
            if size1 != 1 and size2 != 1 and size1 != size2:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mixture_batch}) is not "
                                 "compatible with `component_distribution.batch_shape`"
                                 f"({component_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=component_batch, event_shape=event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """The mixture and components expanded to ``batch_shape`` (plus K for components)."""
        batch_shape = torch.Size(batch_shape)
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        Distribution.__init__(new, batch_shape, new._component_distribution.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property
    def support(self):
        """The components' support."""
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        """The Categorical over components."""
        return self._mixture_distribution

    @property
    def component_distribution(self):
        """The batch of components."""
        return self._component_distribution

    @property
    def mean(self):
        """sum_k w_k mean_k."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return torch.sum(probs * self.component_distribution.mean, dim=-1 - self._event_ndims)

    @property
    def variance(self):
        """The law of total variance: E[Var] + Var[E]."""
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        mean_of_variance = torch.sum(probs * self.component_distribution.variance, dim=dim)
        spread = (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)
        return mean_of_variance + torch.sum(probs * spread, dim=dim)

    def cdf(self, x):
        """sum_k w_k F_k(x)."""
        component_cdf = self.component_distribution.cdf(self._pad(x))
        return torch.sum(component_cdf * self.mixture_distribution.probs, dim=-1)

    def log_prob(self, x):
        """logsumexp_k (log p_k(x) + log w_k)."""
        if self._validate_args:
            self._validate_sample(x)
        component_log_prob = self.component_distribution.log_prob(self._pad(x))
        log_weights = torch.log_softmax(self.mixture_distribution.logits, dim=-1)
        return torch.logsumexp(component_log_prob + log_weights, dim=-1)

    def sample(self, sample_shape=()):
        """Categories first, then every component's draw, then the chosen ones gathered."""
        shape = torch.Size(sample_shape)
        event = tuple(self.event_shape)
        k_dim = len(shape) + len(self.batch_shape)  # where the components sit in a draw
        with torch.no_grad():
            # this order keeps the random stream aligned with torch's
            which = self.mixture_distribution.sample(shape)
            every = self.component_distribution.sample(shape)
            index = which.reshape(tuple(which.shape) + (1,) * (1 + len(event)))
            index = index.expand(tuple(which.shape) + (1,) + event)
            return every.gather(k_dim, index).squeeze(k_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        # x ends in the component axis; put it where the component draws keep theirs
        mix_ndims = len(self.mixture_distribution.batch_shape)
        gap = 0 if mix_ndims == 1 else len(self.batch_shape) - mix_ndims
        *lead, k = tuple(x.shape)
        return x.reshape(tuple(lead) + (1,) * gap + (k,) + (1,) * self._event_ndims)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")
