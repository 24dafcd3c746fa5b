"""erfinv and the modified Bessel functions i0, i1 and the scaled i0e, i1e, in float64 with NumPy
only.

erfinv starts from Winitzki's closed-form estimate (about 2e-3 relative) and takes Halley steps on
``erf(x) - y`` with hookgrad's float64 erf; each step cubes the error, so three reach float64's
rounding. i0 is NumPy's; i1 (i0's derivative) sums its power series
``sum_k (x/2)^(2k+1) / (k! (k+1)!)``, whose terms are all positive, so it keeps full relative
accuracy; the number of terms grows like |x| / 2, cheap next to the gradient it serves. The
scaled ``e^-|x| I(x)`` use those below |x| = 30 and the asymptotic series in 1 / x above.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._erf import erf
from .pointwise_more import _erfc
from .unary import _apply_float
from ._base import Op
from .inplace import inplace

_WINITZKI_A = 0.147
_HALF_SQRT_PI = math.sqrt(math.pi) / 2
_I1_OVERFLOW = 715.0  # i1 passes float64's largest value near here: the series would only give inf


def _erfinv(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    inside = np.abs(y) < 1
    target = np.where(inside, y, 0.0)
    # Winitzki's estimate, with 1 - y^2 written so it keeps its digits near |y| = 1
    log_term = np.log1p(-target) + np.log1p(target)
    centre = 2 / (math.pi * _WINITZKI_A) + log_term / 2
    size = np.abs(target)
    x = np.sqrt(np.sqrt(centre * centre - log_term / _WINITZKI_A) - centre)
    tail = size > 0.5  # there 1 - |y| is exact, and erfc keeps the digits erf(x) - |y| loses
    for _ in range(3):
        slope = np.exp(-x * x) / _HALF_SQRT_PI
        residual = np.where(tail, (1 - size) - _erfc(x), erf(x) - size)
        step = residual / slope
        x = x - step / (1 + x * step)
    x = np.copysign(x, target)
    ends = np.where(np.abs(y) == 1, np.copysign(np.inf, y), np.nan)  # NaN above 1 and for NaN
    return np.where(inside, x, ends)


def _i0(x: np.ndarray) -> np.ndarray:
    return np.i0(np.asarray(x, dtype=np.float64))


def _i1(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    size = np.minimum(np.abs(x), _I1_OVERFLOW)
    quarter_square = (size / 2) ** 2
    term = size / 2
    total = term.copy()
    for k in range(1, 100_000):
        term = term * quarter_square / (k * (k + 1))
        total += term
        if not np.any(term > total * 1e-17):
            break
    total = np.where(np.abs(x) >= _I1_OVERFLOW, np.inf, total)
    total[np.isinf(x)] = np.nan  # as torch's i1 answers at +-inf
    return np.where(x < 0, -total, total)  # odd, but +0 at -0 as torch's


_SCALED_SWITCH = 30.0  # from here the asymptotic series of e^-x I_v(x) reaches rounding


def _scaled_asymptotic(order: int, size: np.ndarray) -> np.ndarray:
    """e^-x I_order(x) for x >= 30: ``sum_k (-1)^k prod_j (4 v^2 - (2j - 1)^2) / (k! (8x)^k)``
    over sqrt(2 pi x); the terms shrink until k ~ 2x, and 25 of them are below rounding."""
    four_v_square = 4.0 * order * order
    term = np.ones_like(size)
    total = term.copy()
    for k in range(1, 26):
        term = -term * (four_v_square - (2 * k - 1) ** 2) / (k * 8 * size)
        total = total + term
    return total / np.sqrt(2 * math.pi * size)


def _scaled(order: int, x: np.ndarray) -> np.ndarray:
    """e^-|x| I_order(x): the power series below |x| = 30, the asymptotic series above"""
    x = np.asarray(x, dtype=np.float64)
    size = np.abs(x)
    low = size < _SCALED_SWITCH
    with np.errstate(all="ignore"):
        small = np.where(low, x, 0.0)
        direct = np.exp(-np.abs(small)) * (_i0(small) if order == 0 else _i1(small))
        far = _scaled_asymptotic(order, np.where(low, _SCALED_SWITCH, size))
        far = np.where(np.isinf(size), 0.0, far)
        if order == 1:
            far = np.where(x < 0, -far, far)
    return np.where(low, direct, np.where(np.isnan(x), np.nan, far))


def _i0e(x: np.ndarray) -> np.ndarray:
    return _scaled(0, x)


def _i1e(x: np.ndarray) -> np.ndarray:
    return _scaled(1, x)


class Erfinv(Op):
    """d erfinv(y) = sqrt(pi)/2 exp(erfinv(y)^2)"""

    node_name = "ErfinvBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(_erfinv, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _HALF_SQRT_PI * self.erfinv().pow(2).exp() * grad


class I0(Op):
    """d i0(x) = i1(x)"""

    node_name = "I0Backward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(_i0, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * I1.apply(self)


def _not_tiny(self: Tensor) -> tuple:
    """torch's guard for the ``1 / x`` of the i1 and i1e gradients: where ``|x| > eps`` fails
    (|x| at most the dtype's epsilon, and NaN) the derivative is the limit 1/2 at 0; elsewhere
    ``x`` itself, the rest replaced by eps so no NaN is made there."""
    eps = float(np.finfo(self._data.dtype).eps)
    not_tiny = self.abs() > eps
    return not_tiny, self.masked_fill(~not_tiny, eps)


class I1(Op):
    """d i1(x) = i0(x) - i1(x) / x  (1/2 where |x| <= eps or x is NaN, as torch)"""

    node_name = "SpecialI1Backward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_i1, self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        not_tiny, safe = _not_tiny(self)
        derivative = I0.apply(safe) - result * safe.reciprocal()
        return grad * derivative.masked_fill(~not_tiny, 0.5)


class I0e(Op):
    """d i0e(x) = i1e(x) - sgn(x) i0e(x)"""

    node_name = "SpecialI0EBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_i0e, self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        return grad * (I1e.apply(self) - self.sgn() * result)


class I1e(Op):
    """d i1e(x) = i0e(x) - i1e(x) (sgn(x) + 1 / x); 1/2 where |x| > eps fails (tiny and NaN),
    as torch"""

    node_name = "SpecialI1EBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_i1e, self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        not_tiny, safe = _not_tiny(self)
        derivative = I0e.apply(safe) - result * (safe.sgn() + safe.reciprocal())
        return grad * derivative.masked_fill(~not_tiny, 0.5)


def i0e(input: Tensor, *, out=None) -> Tensor:
    """``exp(-|x|) i0(x)``, finite where i0 overflows."""
    return I0e.apply(input)


def i1e(input: Tensor, *, out=None) -> Tensor:
    """``exp(-|x|) i1(x)``, finite where i1 overflows."""
    return I1e.apply(input)


def erfinv(input: Tensor, *, out=None) -> Tensor:
    """The inverse of erf on (-1, 1): +-inf at +-1, NaN beyond."""
    return Erfinv.apply(input)


def i0(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind, order 0."""
    return I0.apply(input)


def i1(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind, order 1."""
    return I1.apply(input)


def erfinv_(input: Tensor) -> Tensor:
    """In place ``erfinv``."""
    return inplace(Erfinv, input)


def i0_(input: Tensor) -> Tensor:
    """In place ``i0``."""
    return inplace(I0, input)


METHODS = {"erfinv": erfinv, "erfinv_": erfinv_, "i0": i0, "i0_": i0_}
