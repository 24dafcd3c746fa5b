"""torch.special's entropy and normal-distribution functions: entr, erfcx, log_ndtr, ndtri and
xlog1py, in float64 with NumPy only (float32 and half results are rounded from it).

erfcx(x) = exp(x^2) erfc(x) takes Laplace's continued fraction for erfc divided by its
``exp(-x^2)`` from x = 2 on (no overflow, no cancellation), and ``exp(x^2) (1 - erf(x))`` below,
with x^2 split so the exponent is exact. log_ndtr is ``log1p(-erfc(x / sqrt2) / 2)`` from
x = -1 up and ``log(erfcx(-x / sqrt2) / 2) - x^2 / 2`` below, so the far left tail keeps its
digits. ndtri is ``sqrt2 erfinv(2p - 1)`` for p in [1/4, 3/4] (where 2p - 1 is exact); in the
tails it starts from Abramowitz and Stegun's 26.2.23 estimate (error < 4.5e-4) and takes Newton
steps on ``log_ndtr(x) = log(p)``, which double the digits each time.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._base import Op, _binary_apply, as_operand, compute, finish, promote
from ._erf import erf
from .bessel_erfinv import _erfinv
from .pointwise_binary import _float_pair
from .pointwise_more import _erfc
from .unary import _apply_float

_SQRT_PI = math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT_HALF = math.sqrt(0.5)
_SQRT_2PI = math.sqrt(2 * math.pi)
_FRACTION_FROM = 2.0
_FRACTION_TERMS = 64


def _exp_square(x: np.ndarray) -> np.ndarray:
    """exp(x^2) with x^2 split into an exactly squared upper half and the rest."""
    high = x * 134217729.0 - (x * 134217729.0 - x)  # finite x only
    low = x - high
    return np.exp(high * high) * np.exp(low * (x + high))


def _erfcx(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    size = np.abs(x)
    far = size >= _FRACTION_FROM
    t = np.where(far, size, _FRACTION_FROM)
    fraction = t.copy()
    for k in range(_FRACTION_TERMS, 0, -1):
        fraction = t + (k / 2) / fraction
    tail = 1 / (_SQRT_PI * fraction)  # erfcx(|x|) for |x| >= 2
    near_size = np.where(far, 0.0, size)
    near = _exp_square(near_size) * (1.0 - erf(near_size))
    positive = np.where(far, tail, near)  # erfcx(|x|)
    negative = 2 * _exp_square(np.where(x < 0, np.minimum(size, 30.0), 0.0)) - positive
    return np.where(x < 0, negative, np.where(np.isnan(x), np.nan, positive))


def _log_ndtr(x: np.ndarray) -> np.ndarray:
    scaled = np.asarray(x, np.float64) * _SQRT_HALF  # torch's rounding of x / sqrt(2)
    left = scaled < -_SQRT_HALF
    right = np.log1p(-_erfc(np.where(left, 0.0, scaled)) / 2)
    far = np.where(left, scaled, -1.0)
    far_left = np.log(_erfcx(-far) / 2) - far * far
    return np.where(left, far_left, right)


def _ndtri(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, np.float64)
    central = np.abs(p - 0.5) <= 0.25
    middle = _SQRT2 * _erfinv(np.where(central, 2 * p - 1, 0.0))
    q = np.where(central, 0.25, np.minimum(p, 1 - p))  # 1 - p is exact for p >= 1/2
    q = np.where((q > 0) & (q <= 0.25), q, 0.25)
    t = np.sqrt(-2 * np.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_q = np.log(q)
    for _ in range(5):
        log_cdf = _log_ndtr(x)
        slope = np.exp(-x * x / 2 - log_cdf) / _SQRT_2PI  # d log_ndtr / dx
        x = x - (log_cdf - log_q) / slope
    tails = np.where(p > 0.5, -x, x)
    result = np.where(central, middle, tails)
    result = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, result))
    return np.where((p >= 0) & (p <= 1), result, np.nan)


def _entr(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    positive = -x * np.log(np.where(x > 0, x, 1))
    return np.where(x > 0, positive, np.where(x == 0, 0, np.where(x < 0, -np.inf, x)))


def _float_kernel(kernel):
    """``kernel`` in float64 for any float dtype, rounded back to it."""
    def run(x: np.ndarray) -> np.ndarray:
        return kernel(x.astype(np.float64, copy=False)).astype(x.dtype, copy=False)
    return run


class Entr(Op):
    """entr(x) = -x log x (0 at 0, -inf below);  d x = -(1 + log x)"""

    node_name = "SpecialEntrBackward0"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self):
        ctx.save_for_backward(self)
        return _apply_float(_entr, self)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return grad * -(1 + self.log())


class Erfcx(Op):
    """erfcx(x) = exp(x^2) erfc(x);  d x = 2 x erfcx(x) - 2 / sqrt(pi)"""

    node_name = "SpecialErfcxBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_float_kernel(_erfcx), self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        return (2.0 * self * result - 2 / _SQRT_PI) * grad


class LogNdtr(Op):
    """log_ndtr(x) = log(Phi(x));  d x = exp(-x^2 / 2 - log_ndtr(x)) / sqrt(2 pi)"""

    node_name = "SpecialLogNdtrBackward0"
    saved_names = ("self", "result")

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_float_kernel(_log_ndtr), self)
        ctx.save_for_backward(self, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        self, result = ctx.saved_tensors
        return grad / _SQRT_2PI * (result + self.pow(2) / 2).neg().exp()


class Ndtri(Op):
    """ndtri(p) = Phi^-1(p);  d p = sqrt(2 pi) exp(ndtri(p)^2 / 2)"""

    node_name = "SpecialNdtriBackward0"
    saved_names = ("result",)

    @staticmethod
    def forward(ctx, self):
        result = _apply_float(_float_kernel(_ndtri), self)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        return grad * _SQRT_2PI * (result.pow(2) / 2).exp()


def _xlog1py(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((a == 0) & ~np.isnan(b), np.zeros((), a.dtype), a * np.log1p(b))


def _grad_self(grad: Tensor, self: Tensor, other) -> Tensor:
    """d self = log1p(other), 0 where self is 0 and other <= -1 (where log1p is -inf or NaN)"""
    if isinstance(other, Tensor):
        return (grad * other.log1p()).masked_fill((self == 0) & (other <= -1), 0.0)
    result = grad * math.log1p(other) if other > -1 else grad * (
        -math.inf if other == -1 else math.nan)
    return result.masked_fill(self == 0, 0.0) if other <= -1 else result


class Xlog1py(Op):
    """xlog1py(x, y) = x log1p(y), 0 where x is 0;  d x = log1p(y), d y = x / (1 + y)"""

    node_name = "SpecialXlog1PyBackward0"
    saved_names = ("other", "self")

    @staticmethod
    def forward(ctx, self, other, dtype, number):
        ctx.save_for_backward(other, self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlog1py", _xlog1py, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        other, self = ctx.saved_tensors
        grad_self = grad_other = None
        if ctx.needs_input_grad[0]:
            grad_self = _grad_self(grad, self, other)
        if ctx.needs_input_grad[1]:
            grad_other = grad * self / (other + 1)
        return grad_self, grad_other


class Xlog1pyNumberOther(Op):
    """xlog1py(tensor, number)"""

    node_name = "SpecialXlog1PyBackward2"
    saved_names = ("self",)

    @staticmethod
    def forward(ctx, self, other, dtype):
        ctx._saved_other = other
        ctx.save_for_backward(self)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlog1py", _xlog1py, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        (self,) = ctx.saved_tensors
        return _grad_self(grad, self, float(ctx._saved_other)), None, None


class Xlog1pyNumberSelf(Op):
    """xlog1py(number, tensor)"""

    node_name = "SpecialXlog1PyBackward1"
    saved_names = ("other",)

    @staticmethod
    def forward(ctx, other, self, dtype):
        ctx._saved_self = self
        ctx.save_for_backward(other)
        a, b, out = _float_pair(self, other, dtype)
        return _layout.pointwise(finish(compute("xlog1py", _xlog1py, a, b), out), self, other,
                                 common=out)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_tensors
        return grad * ctx._saved_self / (other + 1), None, None


def entr(input: Tensor, *, out=None) -> Tensor:
    """The elementwise entropy ``-x log(x)``: 0 at 0, ``-inf`` for negative x."""
    return Entr.apply(input)


def erfcx(input: Tensor, *, out=None) -> Tensor:
    """The scaled complementary error function ``exp(x^2) erfc(x)``, finite far right."""
    return Erfcx.apply(input)


def log_ndtr(input: Tensor, *, out=None) -> Tensor:
    """The log of the standard normal CDF, accurate in both tails."""
    return LogNdtr.apply(input)


def ndtri(input: Tensor, *, out=None) -> Tensor:
    """The standard normal quantile (the inverse of ndtr); NaN outside [0, 1]."""
    return Ndtri.apply(input)


def xlog1py(input, other, *, out=None) -> Tensor:
    """``input * log1p(other)``, and 0 where input is 0 (unless other is NaN)."""
    input, other = as_operand(input, "special_xlog1py", 1), as_operand(other, "special_xlog1py")
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return _binary_apply(Xlog1py, "special_xlog1py", input, other)
    if isinstance(input, Tensor):
        return Xlog1pyNumberOther.apply(input, other, promote(input, other))
    if isinstance(other, Tensor):
        return Xlog1pyNumberSelf.apply(other, input, promote(other, input))
    raise TypeError("special_xlog1py(): expected at least one Tensor argument")
