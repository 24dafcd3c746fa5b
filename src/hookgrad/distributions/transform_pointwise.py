"""Elementwise transforms: exp, power, sigmoid, softplus, tanh, abs and affine maps."""
from __future__ import annotations

import math
from numbers import Number

import hookgrad as torch

from . import constraints
from .transform_base import Transform
from .utils import broadcast_all, lazy_property

__all__ = ["AbsTransform", "AffineTransform", "ExpTransform", "PowerTransform",
           "SigmoidTransform", "SoftplusTransform", "TanhTransform"]


def _softplus(x):
    return torch.nn.functional.softplus(x)


class ExpTransform(Transform):
    """y = exp(x); log-det x."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        """x."""
        return x


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size: int = 1):
        """The same power with that cache size."""
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):  # type: ignore[override]
        """The exponent's sign."""
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and self.exponent.eq(other.exponent).all().item()

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        """log |exponent y / x|."""
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        """``shape`` broadcast with the exponent's."""
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        """``shape`` broadcast with the exponent's."""
        return torch.broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x):
    finfo = torch.finfo(x.dtype)
    return torch.clamp(torch.sigmoid(x), min=finfo.tiny, max=1.0 - finfo.eps)


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside [tiny, 1 - eps] so the inverse stays finite."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        finfo = torch.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x) - softplus(x)."""
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x))."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        """-softplus(-x)."""
        return -_softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x); its log-det written stably as 2 (log 2 - x - softplus(-2x))."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return torch.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        """2 (log 2 - x - softplus(-2x))."""
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: its inverse picks the positive root)."""

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, pointwise, over ``event_dim`` event dimensions."""

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        """The event dimensions given at construction."""
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        """The reals, independent over ``event_dim`` dimensions."""
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        """The reals, independent over ``event_dim`` dimensions."""
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size: int = 1):
        """The same map with that cache size."""
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for mine, theirs in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(mine, Number) and isinstance(theirs, Number):
                if mine != theirs:
                    return False
            elif not (mine == theirs).all().item():
                return False
        return True

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        """The sign of scale."""
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        """log |scale|, summed over the event dimensions, expanded to the batch."""
        shape = x.shape
        if isinstance(self.scale, Number):
            result = torch.full_like(x, math.log(abs(self.scale)))
        else:
            result = torch.abs(self.scale).log()
        if self.event_dim:
            result = result.view(tuple(result.size()[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        """``shape`` broadcast with loc's and scale's."""
        return torch.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                      getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape):
        """``shape`` broadcast with loc's and scale's."""
        return self.forward_shape(shape)
