"""Elementwise transforms: exp, power, sigmoid, softplus, tanh, abs and affine maps."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .transform_base import Transform
from .utils import broadcast_all, lazy_property

__all__ = ["AbsTransform", "AffineTransform", "CumulativeDistributionTransform", "ExpTransform",
           "PowerTransform", "SigmoidTransform", "SoftplusTransform", "TanhTransform"]

_LOG_2 = math.log(2.0)


def _softplus(x):
    return torch.nn.functional.softplus(x)


def _unit_bounds(dtype):
    """The closed range kept inside (0, 1) for ``dtype``: [tiny, 1 - eps]."""
    info = torch.finfo(dtype)
    return info.tiny, 1.0 - info.eps


def _clipped_sigmoid(x):
    low, high = _unit_bounds(x.dtype)
    return torch.clamp(torch.sigmoid(x), min=low, max=high)


def _equal_by_kind(cls):
    """Parameterless transforms: any instance of ``cls`` (or a subclass) is equal to another."""
    cls.__eq__ = lambda self, other: isinstance(other, cls)
    cls.__hash__ = Transform.__hash__
    return cls


def _recached(transform: Transform, cache_size: int, rebuild):
    """``transform`` itself when the cache size already matches, else ``rebuild()``."""
    return transform if cache_size == transform._cache_size else rebuild()


class _IncreasingBijection(Transform):
    """Shared by the strictly increasing one-to-one maps below."""

    bijective = True
    sign = 1


@_equal_by_kind
class ExpTransform(_IncreasingBijection):
    """y = exp(x); log-det x."""

    codomain = constraints.positive
    domain = constraints.real

    def _call(self, x):
        return torch.exp(x)

    def _inverse(self, y):
        return torch.log(y)

    def log_abs_det_jacobian(self, x, y):
        """x."""
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    bijective = True
    domain = codomain = constraints.positive

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.exponent = broadcast_all(exponent)[0]

    def with_cache(self, cache_size: int = 1):
        """The same power with that cache size."""
        return _recached(self, cache_size, lambda: PowerTransform(self.exponent, cache_size))

    @lazy_property
    def sign(self):  # type: ignore[override]
        """The exponent's sign."""
        return torch.sign(self.exponent)

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(self.exponent.eq(other.exponent).all().item())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return torch.pow(x, self.exponent)

    def _inverse(self, y):
        return torch.pow(y, 1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        """log |exponent y / x|."""
        return torch.log(torch.abs(self.exponent * y / x))

    def _broadcast(self, shape):
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def forward_shape(self, shape):
        """``shape`` broadcast with the exponent's."""
        return self._broadcast(shape)

    def inverse_shape(self, shape):
        """``shape`` broadcast with the exponent's."""
        return self._broadcast(shape)


@_equal_by_kind
class SigmoidTransform(_IncreasingBijection):
    """y = sigmoid(x), kept inside [tiny, 1 - eps] so the inverse stays finite."""

    codomain = constraints.unit_interval
    domain = constraints.real

    _call = staticmethod(_clipped_sigmoid)

    def _inverse(self, y):
        low, high = _unit_bounds(y.dtype)
        p = torch.clamp(y, min=low, max=high)
        return torch.log(p) - torch.log1p(-p)  # logit

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x) - softplus(x)."""
        return -_softplus(-x) - _softplus(x)


@_equal_by_kind
class SoftplusTransform(_IncreasingBijection):
    """y = log(1 + exp(x))."""

    codomain = constraints.positive
    domain = constraints.real

    _call = staticmethod(_softplus)

    def _inverse(self, y):
        # log(exp(y) - 1) written as y + log(1 - exp(-y)), which neither overflows nor cancels.
        return torch.log(torch.neg(torch.expm1(-y))) + y

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x)."""
        return -_softplus(-x)


@_equal_by_kind
class TanhTransform(_IncreasingBijection):
    """y = tanh(x); its log-det written stably as 2 (log 2 - x - softplus(-2x))."""

    codomain = constraints.interval(-1.0, 1.0)
    domain = constraints.real

    def _call(self, x):
        return torch.tanh(x)

    def _inverse(self, y):
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        """2 (log 2 - x - softplus(-2x))."""
        return 2.0 * (_LOG_2 - x - _softplus(-2.0 * x))


@_equal_by_kind
class AbsTransform(Transform):
    """y = |x| (not injective: its inverse picks the positive root)."""

    codomain = constraints.positive
    domain = constraints.real

    def _call(self, x):
        return torch.abs(x)

    def _inverse(self, y):
        return y


def _same_values(a, b) -> bool:
    """Equality of two loc or scale values, plain numbers or tensors."""
    if isinstance(a, Number) and isinstance(b, Number):
        return bool(a == b)
    return bool((a == b).all().item())


class AffineTransform(Transform):
    """y = loc + scale * x, pointwise, over ``event_dim`` event dimensions."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        self.loc, self.scale = loc, scale
        self._event_ndim = event_dim
        super().__init__(cache_size=cache_size)

    @property
    def event_dim(self) -> int:
        """The event dimensions given at construction."""
        return self._event_ndim

    def _reals(self):
        ndim = self._event_ndim
        return constraints.independent(constraints.real, ndim) if ndim else constraints.real

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The reals, independent over ``event_dim`` dimensions."""
        return self._reals()

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The reals, independent over ``event_dim`` dimensions."""
        return self._reals()

    def with_cache(self, cache_size: int = 1):
        """The same map with that cache size."""
        return _recached(self, cache_size, lambda: AffineTransform(
            self.loc, self.scale, self._event_ndim, cache_size=cache_size))

    def __eq__(self, other):
        return (isinstance(other, AffineTransform)
                and _same_values(self.loc, other.loc)
                and _same_values(self.scale, other.scale))

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        """The sign of scale."""
        scale = self.scale
        if not isinstance(scale, Number):
            return scale.sign()
        value = float(scale)
        return int(value > 0) - int(value < 0)

    def _call(self, x):
        shift, stretch = self.loc, self.scale
        return shift + stretch * x

    def _inverse(self, y):
        shift, stretch = self.loc, self.scale
        return (y - shift) / stretch

    def log_abs_det_jacobian(self, x, y):
        """log |scale|, summed over the event dimensions, expanded to the batch."""
        scale, ndim = self.scale, self._event_ndim
        if isinstance(scale, Number):
            log_scale = torch.full_like(x, math.log(abs(scale)))
        else:
            log_scale = torch.log(torch.abs(scale))
        batch_shape = x.shape
        if ndim:
            lead = tuple(log_scale.shape[:-ndim])
            log_scale = log_scale.view(lead + (-1,)).sum(-1)
            batch_shape = batch_shape[:-ndim]
        return log_scale.expand(batch_shape)

    def forward_shape(self, shape):
        """``shape`` broadcast with loc's and scale's."""
        extra = [getattr(v, "shape", ()) for v in (self.loc, self.scale)]
        return torch.broadcast_shapes(shape, *extra)

    def inverse_shape(self, shape):
        """``shape`` broadcast with loc's and scale's."""
        return self.forward_shape(shape)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x): a distribution's support onto [0, 1] (the inverse is its icdf,
    the log-Jacobian its log-density)."""

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        """The distribution's support."""
        return self.distribution.support

    def _call(self, x):
        """x to its probability under the distribution (the cdf)."""
        return self.distribution.cdf(x)

    def _inverse(self, y):
        """A probability back to the value with that cdf (the icdf)."""
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        """log p(x)."""
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size: int = 1):
        """The same transform with that cache size."""
        return _recached(self, cache_size,
                         lambda: CumulativeDistributionTransform(self.distribution, cache_size))
