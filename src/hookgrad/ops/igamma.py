"""The regularized incomplete gamma functions ``igamma`` (P) and ``igammac`` (Q = 1 - P), in
float64 with NumPy only; float32 and half results are rounded from it.

Below ``x = a + 1`` P's power series ``sum_n x^n / ((a+1) ... (a+n))`` has positive terms that
shrink quickly, so it keeps full relative accuracy; above, Q's continued fraction (evaluated by
Lentz's method) converges fast, and the other function is one minus it where that loses nothing.
For a < 1 and x <= 1.1, where 1 - P would cancel, Q has its own alternating series, with
lgamma(1 + a) from its zeta series; beyond a = 1e7 the leading terms of Temme's uniform expansion
(within about 1 / a) replace the series, which would need ~sqrt(a) terms. Elements iterate
together and leave the working set once converged: the loop runs over terms, not elements.

As torch: only ``other`` (x) has a derivative, ``exp((a - 1) log x - x - lgamma(a))`` (negated for
igammac); backward through ``input`` (a) raises NotImplementedError. Both operands must be
tensors and the promoted dtype floating.

Differs from torch: torch's own float64 values drift by ~1e-9 for a beyond ~20, for igammac with
tiny a, and by percents in the far tails at a ~ 1e7 and more, and exceed 1 at a = 1e-300; here
they stay within ~1e-13 (relative error growing like a * 1e-16 from the prefactor up to a = 1e7).
Denormal results are kept, where torch flushes some to 0.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from . import _layout
from ._base import Op, cast, compute, finish, not_implemented, work_dtype
from ._util import quiet_errors
from .inplace import inplace
from .pointwise_more import _erfc
from .special import _lgamma

_EPS = 1e-16
_TINY = 1e-300
_MAX_TERMS = 50_000
_HUGE_A = 1e7  # from here the asymptotic expansion is within about 1 / a
_EULER_GAMMA = 0.5772156649015329


def _zeta(k: int) -> float:
    """Riemann zeta(k), k >= 2: fifty terms, then Euler-Maclaurin's tail to rounding"""
    n = 50.0
    head = math.fsum(m ** -k for m in range(1, 50))
    rising = k * (k + 1) * (k + 2)
    return head + (n ** (1 - k) / (k - 1) + n ** -k / 2 + k * n ** (-k - 1) / 12
                   - rising * n ** (-k - 3) / 720
                   + rising * (k + 3) * (k + 4) * n ** (-k - 5) / 30240)


# lgamma(1 + a) = -gamma a + sum_k (-1)^k zeta(k) / k a^k, for |a| <= 1/2 to rounding in 50 terms
_LGAMMA1P = np.array([(-1) ** k * _zeta(k) / k for k in range(2, 52)])


def _lgamma1p(a: np.ndarray) -> np.ndarray:
    """lgamma(1 + a) with full relative accuracy for small a (where lgamma(1 + a) is near 0)"""
    near = np.abs(a) <= 0.5
    series = np.zeros_like(a)
    for coefficient in _LGAMMA1P[::-1]:
        series = (series + coefficient) * a
    series = (series - _EULER_GAMMA) * a
    return np.where(near, series, _lgamma(np.where(near, 1.0, 1 + a)))


def _prefactor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x^a e^-x / Gamma(a)"""
    return np.exp(a * np.log(x) - x - _lgamma(a))


def _lower_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) for 0 < x < a + 1, as ``x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a+1)...(a+n))``
    (Gamma(a + 1) rather than Gamma(a) keeps a tiny a from overflowing)"""
    total = np.ones_like(x)
    active = np.arange(a.size)
    ka, kx, kterm, ktotal = a, x, total.copy(), total.copy()
    for n in range(1, _MAX_TERMS):
        kterm = kterm * kx / (ka + n)
        ktotal = ktotal + kterm
        going = kterm > ktotal * _EPS
        if not going.all():
            total[active[~going]] = ktotal[~going]
            active, ka, kx, kterm, ktotal = (v[going] for v in (active, ka, kx, kterm, ktotal))
            if active.size == 0:
                break
    total[active] = ktotal
    return total * np.exp(a * np.log(x) - x - _lgamma1p(a))


def _asymptotic(a: np.ndarray, x: np.ndarray) -> tuple:
    """(P, Q) for huge a, by the leading terms of Temme's uniform expansion:
    ``Q = erfc(eta sqrt(a / 2)) / 2 + R``, ``P = erfc(-eta sqrt(a / 2)) / 2 - R``,
    ``R = exp(-a eta^2 / 2) / sqrt(2 pi a) * (1 / (lambda - 1) - 1 / eta)``, where
    ``eta^2 / 2 = lambda - 1 - log(lambda)`` and lambda = x / a; the next term is O(1 / a)."""
    shift = (x - a) / a
    # lambda - 1 - log(lambda) by its series where the difference would cancel
    small = np.abs(shift) < 1e-2
    tail = np.zeros_like(shift)
    for k in range(12, 1, -1):
        tail = (tail + (-1) ** k / k) * shift
    half_eta_square = np.where(small, tail * shift, shift - np.log1p(shift))
    eta = np.copysign(np.sqrt(2 * half_eta_square), shift)
    near = np.abs(shift) < 1e-4
    safe_shift = np.where(near, 1.0, shift)
    safe_eta = np.where(near, 1.0, eta)
    c0 = np.where(near, -1 / 3 + eta / 12, 1 / safe_shift - 1 / safe_eta)
    correction = np.exp(-a * half_eta_square) / np.sqrt(2 * math.pi * a) * c0
    scaled = eta * np.sqrt(a / 2)
    return _erfc(-scaled) / 2 - correction, _erfc(scaled) / 2 + correction


def _upper_small(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for a < 1 and x <= 1.1, where 1 - P would cancel: from
    ``P = x^a / Gamma(a + 1) + x^a / Gamma(a) sum_{n>=1} (-x)^n / (n! (a + n))``,
    ``Q = -expm1(a log x - lgamma(a + 1)) - x^a / Gamma(a) * sum``; the sum alternates with
    terms falling at least like 1.1^n / n!, so forty of them reach rounding."""
    term = np.ones_like(x)
    total = np.zeros_like(x)
    for n in range(1, 40):
        term = -term * x / n
        total = total + term / (a + n)
    log_power = a * np.log(x)
    log_scale = log_power - _lgamma1p(a)  # x^a / Gamma(a + 1)
    return -np.expm1(log_scale) - np.exp(log_scale) * a * total


def _upper_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for x >= a + 1 > 1, by the continued fraction
    ``1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...)))``"""
    b = x + 1 - a
    c = np.full_like(x, 1 / _TINY)
    d = 1 / b
    h = d.copy()
    result = h.copy()
    active = np.arange(a.size)
    ka = a
    for i in range(1, _MAX_TERMS):
        step = -i * (i - ka)
        b = b + 2
        d = step * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + step / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        going = np.abs(delta - 1) > _EPS
        if not going.all():
            result[active[~going]] = h[~going]
            active, ka, b, c, d, h = (v[going] for v in (active, ka, b, c, d, h))
            if active.size == 0:
                break
    result[active] = h
    return result * _prefactor(a, x)


def regularized_gamma(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """P(a, x) (``upper`` False) or Q(a, x), elementwise in float64 with torch's edge values."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    with quiet_errors():
        # torch's edge values, checked in its order: negative -> NaN; a = 0 -> 1 (x > 0);
        # x = 0 -> 0 (whatever a); infinite a -> 0 (finite x); infinite x -> 1
        lower = np.full(a.shape, np.nan)
        valid = ~((x < 0) | (a < 0))
        zero_a = valid & (a == 0)
        lower[zero_a & (x > 0)] = 1.0
        zero_x = valid & ~zero_a & (x == 0)
        lower[zero_x] = 0.0
        rest = valid & ~zero_a & ~zero_x
        lower[rest & np.isinf(a) & ~np.isinf(x)] = 0.0
        lower[rest & ~np.isinf(a) & np.isinf(x)] = 1.0
        upper_value = 1 - lower
        inner = rest & (a < np.inf) & (x < np.inf)  # and neither is NaN
        huge = inner & (a > _HUGE_A)
        if huge.any():
            lower[huge], upper_value[huge] = _asymptotic(a[huge], x[huge])
        inner &= ~huge
        series = inner & (x < a + 1)
        fraction = inner & ~series
        if series.any():
            p = _lower_series(a[series], x[series])
            lower[series], upper_value[series] = p, 1 - p
            small = series & (a < 1) & (x <= 1.1)
            if small.any():
                upper_value[small] = _upper_small(a[small], x[small])
        if fraction.any():
            q = _upper_fraction(a[fraction], x[fraction])
            lower[fraction], upper_value[fraction] = 1 - q, q
    return upper_value if upper else lower


def _lower(a, x):
    return regularized_gamma(a, x, False)


def _upper(a, x):
    return regularized_gamma(a, x, True)


def _result_dtype(name: str, self: Tensor, other: Tensor) -> np.dtype:
    dtype = _dtype.result_type(self, other).numpy
    if dtype.kind not in "fV":
        raise not_implemented(f"{name}_cpu", dtype)
    return dtype


class Igamma(Op):
    """d other = exp((self - 1) log(other) - other - lgamma(self)); self has none"""

    node_name = "IgammaBackward0"
    saved_names = ("other", "self")
    _kernel = staticmethod(_lower)
    _name = "igamma"
    _sign = 1.0

    @classmethod
    def forward(cls, ctx, self, other, dtype, number=None):
        ctx.save_for_backward(other, self)
        work = work_dtype(dtype)
        a, x = cast(self, work), cast(other, work)
        result = finish(compute(cls._name, cls._kernel, a, x), dtype)
        return _layout.pointwise(result, self, other, common=dtype)

    @classmethod
    def backward(cls, ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative for '{cls._name}: input' is not "
                                      f"implemented.")
        other, self = ctx.saved_tensors
        grad_other = None
        if ctx.needs_input_grad[1]:
            density = ((self - 1) * other.log() - other - self.lgamma()).exp()
            grad_other = grad * (density if cls._sign > 0 else -density)
        return None, grad_other


class Igammac(Igamma):
    """d other = -exp((self - 1) log(other) - other - lgamma(self)); self has none"""

    node_name = "IgammacBackward0"
    _kernel = staticmethod(_upper)
    _name = "igammac"
    _sign = -1.0


def _operands(name: str, input, other) -> None:
    for position, (label, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{label}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def igamma(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other), in [0, 1]; NaN for a
    negative argument. Differentiable in ``other`` only, as torch."""
    _operands("igamma", input, other)
    return Igamma.apply(input, other, _result_dtype("igamma", input, other))


def igammac(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other)."""
    _operands("igammac", input, other)
    return Igammac.apply(input, other, _result_dtype("igammac", input, other))


def gammainc(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.special.gammainc``: the same function as ``igamma``."""
    _operands("special_gammainc", input, other)
    return Igamma.apply(input, other, _result_dtype("igamma", input, other))


def gammaincc(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """``torch.special.gammaincc``: the same function as ``igammac``."""
    _operands("special_gammaincc", input, other)
    return Igammac.apply(input, other, _result_dtype("igammac", input, other))


def _in_place(cls, name: str):
    def method(self: Tensor, other: Tensor) -> Tensor:
        _operands(name, self, other)
        return inplace(cls, self, other, _result_dtype(name[:-1], self, other), None)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In place ``{name[:-1]}`` with ``other`` broadcast to this tensor's shape."
    return method


igamma_ = _in_place(Igamma, "igamma_")
igammac_ = _in_place(Igammac, "igammac_")

METHODS = {"igamma": igamma, "igammac": igammac, "igamma_": igamma_, "igammac_": igammac_}
