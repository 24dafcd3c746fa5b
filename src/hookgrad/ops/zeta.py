"""torch.special.zeta: the Hurwitz zeta function ``sum_k (k + q)^-x``, in float64 with NumPy
only (float32 results are rounded from it).

The first terms are summed directly (at least nine, and until the running term ``a`` passes 9;
an element stops as soon as its term falls below float64's rounding of the sum); the rest of
the series is the Euler-Maclaurin tail ``a^(1-x) / (x-1) - a^-x / 2`` plus up to twelve
Bernoulli corrections ``B_2j / (2j)! * x (x+1) ... (x+2j-2) a^(-x-2j+1)``, again stopping
once a correction is below rounding. As torch: x = 1 gives inf, x < 1 NaN; a q that is zero or
a negative integer gives inf, a negative non-integer q NaN unless x is an integer.

Gradients, as torch's: through ``other`` (q), ``-x zeta(x + 1, q)``; through ``input`` (x)
backward raises NotImplementedError.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._base import Op, as_operand, cast, finish, promote, work_dtype
from ._util import quiet_errors
from .arithmetic import _true_dtype

_ROUNDING = 2.0 ** -53


def _bernoulli_even(count: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2count by the recurrence sum_{j<m} C(m+1, j) B_j = -(m+1) B_m"""
    numbers = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        numbers.append(-sum(math.comb(m + 1, j) * numbers[j] for j in range(m)) / (m + 1))
    return [numbers[2 * j] for j in range(1, count + 1)]


# (2j)! / B_2j for j = 1..12: the Euler-Maclaurin correction divisors
_DIVISORS = [float(math.factorial(2 * j) / b)
             for j, b in enumerate(_bernoulli_even(12), start=1)]


def _zeta(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    x, q = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(q, np.float64))
    pole = (q <= 0) & (q == np.floor(q))
    undefined = (x < 1) | ((q <= 0) & ~pole & (x != np.floor(x)))
    live = ~(undefined | pole | (x == 1) | np.isnan(x) | np.isnan(q))
    x_live, q_live = np.where(live, x, 2.0), np.where(live, q, 1.0)
    total = q_live ** -x_live
    a = q_live.copy()
    term = np.zeros_like(total)
    result = np.full_like(total, np.nan)
    done = ~live
    i = 0
    while True:
        running = ~done & ((i < 9) | (a <= 9))
        if not running.any():
            break
        i += 1
        a = np.where(running, a + 1, a)
        term = np.where(running, a ** -x_live, term)
        total = np.where(running, total + term, total)
        converged = running & (np.abs(term / total) < _ROUNDING)
        result = np.where(converged, total, result)
        done |= converged
    # the Euler-Maclaurin tail for the rest
    width = a
    total = total + term * width / (x_live - 1) - 0.5 * term
    rising = np.ones_like(total)
    k = 0.0
    for divisor in _DIVISORS:
        rising = rising * (x_live + k)
        term = term / width
        correction = rising * term / divisor
        total = np.where(done, total, total + correction)
        converged = ~done & (np.abs(correction / total) < _ROUNDING)
        result = np.where(converged, total, result)
        done |= converged
        k += 1
        rising = rising * (x_live + k)
        term = term / width
        k += 1
    result = np.where(done, result, total)
    result = np.where(live, result, np.nan)
    return np.where(live, result,
                    np.where((x == 1) | (pole & ~np.isnan(x) & (x >= 1)), np.inf, np.nan))


def _compute(self, other, dtype) -> np.ndarray:
    out = _true_dtype(dtype)
    work = work_dtype(out)
    x, q = cast(self, work), cast(other, work)
    with quiet_errors():
        result = _zeta(x, q)
    return _layout.pointwise(finish(result.astype(work, copy=False), out), self, other,
                             common=out)


def _no_input_derivative() -> NotImplementedError:
    return NotImplementedError("the derivative for 'zeta' is not implemented.")


class Zeta(Op):
    """d other = -self zeta(self + 1, other); self has none"""

    node_name = "SpecialZetaBackward0"
    saved_names = ("self", "other")

    @staticmethod
    def forward(ctx, self, other, dtype):
        ctx.save_for_backward(self, other)
        return _compute(self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise _no_input_derivative()
        self, other = ctx.saved_tensors
        return None, grad * -self * zeta(self + 1, other)


class ZetaNumberOther(Op):
    """zeta(tensor, number): only the tensor x, which has no derivative"""

    node_name = "SpecialZetaBackward2"
    saved_names = ()

    @staticmethod
    def forward(ctx, self, other, dtype):
        return _compute(self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        raise _no_input_derivative()


class ZetaNumberSelf(Op):
    """zeta(number, tensor): d other = -x zeta(x + 1, other)"""

    node_name = "SpecialZetaBackward1"
    saved_names = ("other",)

    @staticmethod
    def forward(ctx, other, self, dtype):
        ctx._saved_self = self
        ctx.save_for_backward(other)
        return _compute(self, other, dtype)

    @staticmethod
    def backward(ctx, grad):
        (other,) = ctx.saved_tensors
        x = ctx._saved_self
        return grad * -x * zeta(x + 1, other), None, None


def zeta(input, other, *, out=None) -> Tensor:
    """The Hurwitz zeta function ``sum_{k>=0} (k + other)^-input``; other = 1 is Riemann's."""
    input, other = as_operand(input, "special_zeta", 1), as_operand(other, "special_zeta")
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        return Zeta.apply(input, other, promote(input, other))
    if isinstance(input, Tensor):
        return ZetaNumberOther.apply(input, other, promote(input, other))
    if isinstance(other, Tensor):
        return ZetaNumberSelf.apply(other, input, promote(other, input))
    raise TypeError("special_zeta(): expected at least one Tensor argument")
