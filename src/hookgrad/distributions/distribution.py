"""``Distribution``, the base every distribution shares: shapes, validation, sampling API.

A distribution has a ``batch_shape`` (independent, differently-parameterised copies) and an
``event_shape`` (the shape of one draw). ``sample(sample_shape)`` returns
``sample_shape + batch_shape + event_shape``; ``log_prob(value)`` scores a value of that shape,
one number per batch entry. With validation on (the default, like torch's, unless Python runs
with ``-O``) parameters are checked against ``arg_constraints`` when built, and values against
``support`` when scored, with torch's ValueError messages.
"""
from __future__ import annotations

import warnings

import hookgrad as torch

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    """The base class of probability distributions, torch's ``distributions.Distribution``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for distributions built from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters(self._constraints_or_warn())
        super().__init__()

    def _constraints_or_warn(self) -> dict:
        # A subclass that never declared its parameters' sets gets a warning, not an error:
        # there is simply nothing to validate.  (stacklevel: this helper, __init__, caller.)
        try:
            return self.arg_constraints
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                          "`arg_constraints = {}` or initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=3)
            return {}

    def _check_parameters(self, declared: dict) -> None:
        # Parameters still waiting to be derived from another one (a lazy probs from logits,
        # say) are skipped: the one they come from is checked instead.
        cls = type(self)
        for name, allowed in declared.items():
            if constraints.is_dependent(allowed):
                continue
            if name not in self.__dict__ and isinstance(getattr(cls, name), lazy_property):
                continue
            given = getattr(self, name)
            if bool(allowed.check(given).all()):
                continue
            raise ValueError(
                f"Expected parameter {name} ({type(given).__name__} of shape "
                f"{tuple(given.shape)}) of distribution {self!r} to satisfy the "
                f"constraint {allowed!r}, but found invalid values:\n{given}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with parameters expanded (as views) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single draw."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Parameter name -> the Constraint its value must satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The Constraint every sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self):
        """The expected value."""
        raise NotImplementedError

    @property
    def mode(self):
        """The most likely value."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation, the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """Draw ``sample_shape`` samples without a graph to the parameters."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """Draw ``sample_shape`` reparameterised samples: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n: int):
        """Deprecated spelling of ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True):
        """All values of a discrete support along dimension 0, batched in lock-step; with
        ``expand=False`` the batch dimensions are left as ones."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, one value per batch entry."""
        raise NotImplementedError

    def perplexity(self):
        """exp(entropy)."""
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if value.size()[event_start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not bool(support.check(value).all()):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _expanded(self, cls, batch_shape, names, _instance=None):
        """The shared body of ``expand``: ``names`` expanded as views onto ``batch_shape``."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        shown = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return f"{self.__class__.__name__}({shown})"
