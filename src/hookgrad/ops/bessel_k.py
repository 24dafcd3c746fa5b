"""torch.special's Bessel functions without derivatives: the modified Bessel functions of the
second kind K0, K1 (and their scaled ``e^x K(x)``), modified_bessel_i0/i1 (the values of i0
and i1, but recording no node, as torch) and spherical_bessel_j0 = sin(x) / x.

K0 and K1 come from their power series below x = 2 (``-(log(x/2) + gamma) I0(x)`` plus a
positive series weighted by harmonic numbers, and its K1 relative), from Steed's continued
fraction (Temme's form) between 2 and 30, and from the asymptotic series in 1 / (8x) above,
each within a few units in the last place in float64. Negative x gives NaN, 0 gives inf.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._util import quiet_errors
from .bessel_erfinv import _i0, _i1
from .unary import _apply_float

_EULER_GAMMA = 0.5772156649015329
_SERIES_BELOW = 2.0
_ASYMPTOTIC_FROM = 30.0
_SERIES_TERMS = 40  # (x^2/4)^k / (k!)^2 at x = 2 falls below rounding long before this
_ASYMPTOTIC_TERMS = 40
_FRACTION_LIMIT = 200


def _k_series(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """K0 and K1 for 0 < x <= 2 from the series of I0, I1 and the digamma-weighted sums"""
    quarter_square = x * x / 4
    even = np.ones_like(x)  # (x^2/4)^k / (k!)^2
    odd = x / 2  # (x/2) (x^2/4)^k / (k! (k+1)!)
    i0, i1 = even.copy(), odd.copy()
    harmonic = 0.0
    sum0 = np.zeros_like(x)
    sum1 = odd * (1.0 - 2 * _EULER_GAMMA)  # psi(1) + psi(2) at k = 0
    for k in range(1, _SERIES_TERMS):
        even = even * quarter_square / (k * k)
        odd = odd * quarter_square / (k * (k + 1))
        harmonic += 1.0 / k
        i0 += even
        i1 += odd
        sum0 += even * harmonic
        sum1 += odd * (2 * harmonic + 1.0 / (k + 1) - 2 * _EULER_GAMMA)
    log_half = np.log(x / 2)
    return -(log_half + _EULER_GAMMA) * i0 + sum0, 1 / x + log_half * i1 - sum1 / 2


def _k_fraction(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """e^x K0 and e^x K1 for x >= 2 by Steed's continued fraction for K_1 / K_0"""
    b = 2 * (1 + x)
    d = 1 / b
    h, step = d.copy(), d.copy()
    q_previous, q_current = np.zeros_like(x), np.ones_like(x)
    a1 = 0.25
    q = np.full_like(x, a1)
    c = np.full_like(x, a1)
    a = -a1
    total = 1 + q * step
    for i in range(2, _FRACTION_LIMIT):
        a -= 2 * (i - 1)
        c = -a * c / i
        q_next = (q_previous - b * q_current) / a
        q_previous, q_current = q_current, q_next
        q = q + c * q_next
        b = b + 2
        d = 1 / (b + a * d)
        step = (b * d - 1) * step
        h = h + step
        change = q * step
        total = total + change
        if not np.any(np.abs(change) > 1e-17 * np.abs(total)):
            break
    k0 = np.sqrt(math.pi / (2 * x)) / total
    return k0, k0 * (x + 0.5 - a1 * h) / x


def _k_asymptotic(order: int, x: np.ndarray) -> np.ndarray:
    """e^x K_order(x) for x >= 30: sqrt(pi / 2x) sum_k prod_j (4v^2 - (2j-1)^2) / (k! (8x)^k)"""
    four_v_square = 4.0 * order * order
    term = np.ones_like(x)
    total = term.copy()
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (four_v_square - (2 * k - 1) ** 2) / (k * 8 * x)
        total = total + term
    return total * np.sqrt(math.pi / (2 * x))


def _k(order: int, x: np.ndarray, scaled: bool) -> np.ndarray:
    x = np.asarray(x, np.float64)
    low = (x > 0) & (x <= _SERIES_BELOW)
    middle = (x > _SERIES_BELOW) & (x < _ASYMPTOTIC_FROM)
    high = x >= _ASYMPTOTIC_FROM
    series = _k_series(np.where(low, x, 1.0))[order]
    fraction = _k_fraction(np.where(middle, x, 3.0))[order]
    asymptotic = _k_asymptotic(order, np.where(high & np.isfinite(x), x, _ASYMPTOTIC_FROM))
    if scaled:
        series = series * np.exp(np.where(low, x, 0.0))
    else:
        far = np.where(low, 0.0, x)
        fraction, asymptotic = fraction * np.exp(-far), asymptotic * np.exp(-far)
    result = np.where(low, series, np.where(middle, fraction, asymptotic))
    result = np.where(x == np.inf, 0.0, result)
    return np.where(x == 0, np.inf, np.where(x < 0, np.nan, np.where(np.isnan(x), x, result)))


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    safe = np.where((x == 0) | np.isinf(x), 1.0, x)
    result = np.sin(safe) / safe
    return np.where(x == 0, 1.0, np.where(np.isinf(x), 0.0, result))


def _in_float64(kernel):
    def run(x: np.ndarray) -> np.ndarray:
        return kernel(x.astype(np.float64, copy=False)).astype(x.dtype, copy=False)
    return run


def _untracked(kernel, input: Tensor) -> Tensor:
    """torch records no node for these: the result never requires grad"""
    with quiet_errors():
        return Tensor._make(_apply_float(_in_float64(kernel), input._data))


def spherical_bessel_j0(input: Tensor, *, out=None) -> Tensor:
    """The spherical Bessel function of the first kind of order 0, ``sin(x) / x``."""
    return _untracked(_spherical_j0, input)


def modified_bessel_i0(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind I0 (no gradient, unlike ``i0``)."""
    return _untracked(_i0, input)


def modified_bessel_i1(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the first kind I1 (no gradient, unlike ``i1``)."""
    return _untracked(_i1, input)


def modified_bessel_k0(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the second kind K0; NaN for negative x."""
    return _untracked(lambda x: _k(0, x, False), input)


def modified_bessel_k1(input: Tensor, *, out=None) -> Tensor:
    """The modified Bessel function of the second kind K1; NaN for negative x."""
    return _untracked(lambda x: _k(1, x, False), input)


def scaled_modified_bessel_k0(input: Tensor, *, out=None) -> Tensor:
    """``exp(x) K0(x)``, finite where K0 underflows."""
    return _untracked(lambda x: _k(0, x, True), input)


def scaled_modified_bessel_k1(input: Tensor, *, out=None) -> Tensor:
    """``exp(x) K1(x)``, finite where K1 underflows."""
    return _untracked(lambda x: _k(1, x, True), input)
