"""lgamma, digamma and polygamma in NumPy alone (no SciPy): each argument is shifted up by the
recurrence until an asymptotic (Stirling) series is accurate to float64 rounding, and negative
arguments go through the reflection formulas. Gradients chain: lgamma' = digamma,
digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1).

Differs from torch: polygamma(n >= 1) at negative integers or huge negative arguments, where
torch's answers are rounding artefacts, is inf or computed honestly here; and at negative
arguments the shift costs one array pass per unit of distance to +10.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._base import Op
from ._util import quiet_errors
from .inplace import inplace
from .unary import _apply_float

_SHIFT_TO = 10.0  # the series below are at float64 rounding from here on
_HALF_LOG_TWO_PI = 0.5 * math.log(2 * math.pi)
# Bernoulli numbers B_2k, k = 1..8 (facts of arithmetic)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _shift_count(x: np.ndarray) -> int:
    finite = x[np.isfinite(x)]
    if finite.size == 0:
        return 0
    return int(max(0.0, math.ceil(_SHIFT_TO - float(finite.min()))))


def _lgamma_positive(x: np.ndarray) -> np.ndarray:
    """log Gamma(x) for x > 0: shift to y >= 10, then Stirling's series."""
    y = x.copy()
    log_product = np.zeros_like(x)
    for _ in range(_shift_count(x)):
        low = y < _SHIFT_TO
        log_product += np.where(low, np.log(np.where(low, y, 1.0)), 0.0)
        y = np.where(low, y + 1, y)
    inverse = 1 / y
    square = inverse * inverse
    series = inverse * (1 / 12 + square * (-1 / 360 + square * (1 / 1260 + square * (
        -1 / 1680 + square * (1 / 1188 + square * (-691 / 360360))))))
    return (y - 0.5) * np.log(y) - y + _HALF_LOG_TWO_PI + series - log_product


def _lgamma(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    with quiet_errors():
        result = np.full(x.shape, np.inf)
        positive = x > 0
        result[positive] = _lgamma_positive(x[positive])
        negative = (x < 0) & np.isfinite(x) & (x != np.floor(x))
        if negative.any():
            v = x[negative]
            sine = np.abs(np.sin(math.pi * (v - np.round(v))))  # sin(pi x), reduced exactly
            result[negative] = math.log(math.pi) - np.log(sine) - _lgamma_positive(1 - v)
        result[np.isnan(x)] = np.nan
        result[x == np.inf] = np.inf
    return result


def _polygamma_positive(n: int, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) for x > 0 (or any non-integer x, shifting further): recurrence, then the
    asymptotic series."""
    y = x.copy()
    total = np.zeros_like(x)
    sign = -1.0 if n % 2 == 0 else 1.0  # (-1)^(n+1)
    factorial = math.factorial(n)
    for _ in range(_shift_count(x)):
        low = y < _SHIFT_TO
        if n == 0:
            total -= np.where(low, 1 / np.where(low, y, 1.0), 0.0)
        else:
            total += np.where(low, sign * factorial / np.where(low, y, 1.0) ** (n + 1), 0.0)
        y = np.where(low, y + 1, y)
    inverse = 1 / y
    if n == 0:
        series = np.log(y) - 0.5 * inverse
        power = inverse * inverse
        for k, bernoulli in enumerate(_BERNOULLI, 1):
            series -= bernoulli / (2 * k) * power
            power = power * inverse * inverse
        return total + series
    series = math.factorial(n - 1) * inverse ** n + factorial / 2 * inverse ** (n + 1)
    power = inverse ** (n + 2)
    for k, bernoulli in enumerate(_BERNOULLI, 1):
        series += bernoulli * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * power
        power = power * inverse * inverse
    return total + sign * series


def _digamma(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    with quiet_errors():
        result = np.full(x.shape, np.nan)
        positive = (x > 0) & np.isfinite(x)
        result[positive] = _polygamma_positive(0, x[positive])
        negative = (x < 0) & np.isfinite(x) & (x != np.floor(x))
        if negative.any():
            v = x[negative]
            cotangent = 1 / np.tan(math.pi * (v - np.round(v)))
            result[negative] = _polygamma_positive(0, 1 - v) - math.pi * cotangent
        result[x == np.inf] = np.inf
        zero = x == 0
        result[zero] = np.where(np.signbit(x[zero]), np.inf, -np.inf)
        result[positive & (x < 1e-300)] = -np.inf  # -1/x overflows, as in torch
    return result


def _polygamma(n: int, x: np.ndarray) -> np.ndarray:
    if n == 0:
        return _digamma(x)
    x = np.asarray(x, np.float64)
    with quiet_errors():
        result = np.full(x.shape, np.nan)
        regular = np.isfinite(x) & (x != np.floor(x)) | (np.isfinite(x) & (x > 0))
        result[regular] = _polygamma_positive(n, x[regular])
        poles = np.isfinite(x) & (x <= 0) & (x == np.floor(x))
        result[poles] = np.inf if n % 2 else -np.inf
        result[x == np.inf] = 0.0 if n % 2 else np.nan
    return result


def _float(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` computed in float64, answered in x's float dtype (the default one for integers)."""
    return _apply_float(lambda a: fn(a).astype(a.dtype, copy=False), x)


class Lgamma(Op):
    """d lgamma(x) = digamma(x)"""

    node_name = "LgammaBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _float(_lgamma, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * digamma(self)


class Digamma(Op):
    """d digamma(x) = polygamma(1, x)"""

    node_name = "DigammaBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _float(_digamma, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * polygamma(1, self)


class Polygamma(Op):
    """d polygamma(n, x) = polygamma(n + 1, x)"""

    node_name = "PolygammaBackward0"
    saved_names = ("self",)
    saved_values = {"n": "n"}

    @staticmethod
    def forward(ctx, self, n):
        ctx.n = n
        ctx.save_for_backward(self)
        return _float(lambda a: _polygamma(n, a), self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * polygamma(ctx.n + 1, self), None


class PolygammaInplace(Polygamma):
    node_name = "PolygammaBackward1"


def lgamma(input: Tensor, *, out=None) -> Tensor:
    """``log |Gamma(input)|`` (inf at the poles 0, -1, -2, ...)."""
    return Lgamma.apply(input)


def digamma(input: Tensor, *, out=None) -> Tensor:
    """``d/dx log Gamma(x)``: -inf at 0 (inf at -0), NaN at negative integers, as torch."""
    return Digamma.apply(input)


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """The ``n``-th derivative of digamma (``n = 0`` is digamma itself)."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return Digamma.apply(input) if n == 0 else Polygamma.apply(input, n)


class Mvlgamma(Op):
    """sum_i lgamma(x - i/2) + p (p - 1) / 4 log(pi);  d = grad sum_i digamma(x - i/2)"""

    node_name = "MvlgammaBackward0"
    saved_names = ("self",)
    saved_values = {"p": "p"}

    @staticmethod
    def forward(ctx, self, p):
        ctx.p = p
        ctx.save_for_backward(self)
        steps = -np.arange(p, dtype=np.float64) / 2
        constant = p * (p - 1) / 4 * math.log(math.pi)
        result = _float(lambda a: _lgamma(a[..., None] + steps).sum(-1) + constant, self)
        return _layout.contiguous(result)  # row-major whatever self's layout, as torch's

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        steps = Tensor._make(-np.arange(ctx.p, dtype=self._data.dtype) / 2)
        return grad * digamma(self.unsqueeze(-1) + steps).sum(-1), None


def mvlgamma(input: Tensor, p: int, *, out=None) -> Tensor:
    """The multivariate log-gamma of dimension ``p``: ``sum_i lgamma(x - i/2)`` plus
    ``p (p - 1) / 4 log(pi)`` (defined for elements above ``(p - 1) / 2``)."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return Mvlgamma.apply(input, p)


METHODS = {"lgamma": lgamma, "digamma": digamma,
           "polygamma": lambda self, n: polygamma(n, self), "mvlgamma": mvlgamma}
METHODS["polygamma"].__doc__ = "``polygamma(n, self)``: the n-th derivative of digamma."


def _in_place(cls, name: str):
    def op(self: Tensor, *args) -> Tensor:
        return inplace(cls, self, *args)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In place ``{name[:-1]}``."
    return op


def polygamma_(self: Tensor, n: int) -> Tensor:
    """In place ``polygamma(n, self)``."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return METHODS["digamma_"](self) if n == 0 else inplace(PolygammaInplace, self, n)


def mvlgamma_(self: Tensor, p: int) -> Tensor:
    """In place ``mvlgamma``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return inplace(Mvlgamma, self, p)


METHODS.update({"lgamma_": _in_place(Lgamma, "lgamma_"),
                "digamma_": _in_place(Digamma, "digamma_"), "polygamma_": polygamma_,
                "mvlgamma_": mvlgamma_})
