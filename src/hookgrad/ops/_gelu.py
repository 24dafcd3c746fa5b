"""Exact GELU's kernels on float32 arrays: x Phi(x) and its derivative Phi(x) + x phi(x).

torch's float32 GELU is a vectorised kernel with its own erf, far cheaper than the float64
series ``torch.erf`` needs to be correctly rounded (``_erf.py``), so GELU here does not go
through that erf either. Both kernels work with u = |x| and the scaled complementary error
function, which has no cancellation in either tail and is smooth in t = 1 / (u / 2 + k):

    g(u) = 2 Q(u) exp(u^2 / 2) = erfcx(u / sqrt 2),  Q(u) = 1 - Phi(u), the upper tail
    x Phi(x) = relu(x) - (u / 2) g(u) exp(-x^2 / 2)
    Phi(x) + x phi(x) = V(u) for x < 0 and 1 - V(u) for x > 0, where
    V(u) = Q(u) - u phi(u) = (g(u) / 2 - (2 / sqrt(2 pi)) (u / 2)) exp(-x^2 / 2)

Each kernel evaluates one polynomial in T = lambda t (g for the forward, g / 2 for the slope),
monic through the choice of lambda, so Horner's rule starts with an add and no pass multiplies
by a leading constant, and T = lambda / (|x| / 2 + k) is one add and one division. The
polynomial is only needed for |x| up to ~14 (beyond, exp(-x^2 / 2) underflows), so it keeps a
free constant term rather than vanishing at t = 0 as g does. u phi(u) stays outside the
polynomial: folded in (one polynomial times |x| / 2 + k) it saved a pass, but the rounding of T
then reached u phi(u) and the slope erred by 3e-7. The Gaussian factor is ``np.exp2`` of
-log2(e) x^2 / 2: NumPy's float32 exp2 takes half the time of its exp (~28 against ~60 us per
chunk) and errs by under 1 ulp against exp's 2.4. The slope folds log2(e) into its magnitude
(its k and lambda are in those units); the forward needs -x / 2 exactly for relu, so it scales
-x^2 / 2 by log2(e) in one more (cheap, in-place) pass, whose rounding doubles the error of the
exponent: up to 6e-8 more relative error in x Phi(x) per unit of x^2 / 2, which shows only in
the far negative tail.

How the coefficients were found (offline, numpy and scipy, neither needed here): for each k on
a fine grid, a linear programme gave the polynomial in t with the least maximum weighted error
against scipy's erfcx on float32 magnitudes |x| <= 13.5 (forward: relative error against a
budget 1e-7 (1 + (|x| / 7)^6.4), which lets the far negative tail, where float32 rounding of
x^2 / 2 dominates anyway, err more; slope: absolute error times exp(-x^2 / 2)). lambda was then
rounded to float32, the lower coefficients refitted with T computed in float32 as here, and
every combination of rounding each coefficient down or up (and lambda a few steps either way)
evaluated with this very code against float64 references; the best was kept, for the slope
after stepping its constant so that Phi(0) is 1/2 exactly. Forward: degree 7, k = 1.99;
slope: degree 5, k = 1.58 (its error weight vanishes with the density, so it needs no
relative accuracy in the tail).

Accuracy in float32 against float64 references on a dense grid and millions of random values:
x Phi(x) within 2.4e-7 absolute everywhere (torch's float32 AVX-512 kernel: 1.1e-6), relative
error 3e-7 for tiny x, 8e-7 for x down to -3, 2.1e-6 to -6, 4.2e-6 to -9 and 1e-5 to -13
(exact GELU underflows float32 near -14; torch's float32 errs by 2e-3 relative at -4, 0.17 at -5);
the slope within 2.3e-7 absolute (the earlier kernel: 3.3e-7 near 0).

Neither formula selects between the signs of x (a masked copy or np.where costs as much as
ten plain passes): see ``_gelu_chunk`` and ``_slope_chunk``. Arrays are cut into chunks that
stay in the last-level cache across the ~20 passes, and the chunks are shared out over the
intra-op threads (NumPy releases the GIL in its loops). A chunk is large (``_CHUNK``): each
NumPy call lets go of the GIL and takes it back, and two threads making many short calls each
spend their time handing the GIL to each other rather than computing.

What bounds the cost (one thread, 128K-element chunks): a pass over a chunk costs ~6 us when it
only updates one array in place with a constant and ~12 us when it reads or writes a second
array, float32 ``np.exp2`` ~28 us; the forward makes 24 passes and the slope (with the product
by the incoming gradient) 22, besides one exp2 each (before: 24 and 29 and one exp).
Alternatives measured and rejected: the logistic form x / (1 + exp(-x P(x^2))) needs a degree-14
polynomial P for 2e-7 on |x| <= 6 alone (degree 6 errs by 1e-3 in the exponent) and cannot keep
the negative tail's relative accuracy once x^2 is clamped; a degree-6 forward polynomial errs by
4e-5 or more relative in x Phi(x) for x < -6; a rational function in u needs as many passes for
the same error; exp built from a polynomial and exponent bits takes ~20 passes; ``np.copysign``
costs as much as six passes (the sign goes in by integer ops instead); interpolating a uniform
table needs two gathers (``take``, ~8 passes each); smaller chunks that stay in L2 gain
under 10 % on one thread.
"""
from __future__ import annotations

import math

import numpy as np

from .._parallel import parallel_for

_F32 = np.float32
_HALF = _F32(0.5)
# forward: g(u) ~ T^7 + a_6 T^6 + ... + a_0 with T = lambda / (|x| / 2 + k) (a_0 first)
_FORWARD_K = _F32(1.99)
_FORWARD_SCALE = _F32(-1.569876790046692)
_FORWARD = tuple(_F32(c) for c in (
    0.000364429724868387, -0.24600882828235626, 0.39852479100227356, 0.014600707218050957,
    1.6623097658157349, 1.9521715641021729, 2.935309648513794))
# slope: g(u) / 2 ~ T^5 + b_4 T^4 + ... + b_0, its own k and lambda, both in units of
# log2(e) |x| / 2 (the magnitude it computes, k = 1.58 log2(e))
_SLOPE_K = _F32(2.2794580459594727)
_SLOPE_SCALE = _F32(-1.5234538316726685)
_SLOPE = tuple(_F32(c) for c in (
    0.006505082827061415, -0.10116636753082275, 0.7727040648460388, 1.049014687538147,
    2.642542839050293))
_LOG2_E = _F32(1 / math.log(2))
_MINUS_HALF_LOG2_E = _F32(-0.5 / math.log(2))
_TWO_OVER_SQRT_2PI_LOG2_E = _F32(2 / math.sqrt(2 * math.pi) * math.log(2))
_SIGN_BIT = np.int32(-2 ** 31)
_INF = _F32(np.inf)
# float32s per chunk. Its buffers (512 KiB each) fall out of L2, which costs one thread little;
# chunks of 32768 (in L2) made ~28 calls of a few microseconds per chunk and thread, and two
# threads were no faster than one (futex wake-ups at each GIL handoff).
_CHUNK = 131072


def _series(x: np.ndarray, half: np.ndarray, magnitude: np.ndarray, t: np.ndarray,
            series: np.ndarray, factor: np.float32, k: np.float32, scale: np.float32,
            coefficients: tuple) -> None:
    """For a float32 chunk ``x``: ``factor`` x into ``half`` (factor < 0), its magnitude into
    ``magnitude``, T into ``t`` and the monic polynomial in T into ``series``."""
    np.multiply(x, factor, out=half)
    np.abs(half, out=magnitude)
    np.add(magnitude, k, out=t)
    np.divide(scale, t, out=t)
    np.add(t, coefficients[-1], out=series)
    for coefficient in coefficients[-2::-1]:
        series *= t
        series += coefficient


def _gelu_chunk(x: np.ndarray, out: np.ndarray, half: np.ndarray, t: np.ndarray,
                series: np.ndarray) -> None:
    """x Phi(x) = relu(x) - (|x|/2) g exp(-x^2/2), relu(x) as |x|/2 - (-x/2): no select between
    the two signs, and relu is exactly 0 for x < 0, so the tail keeps its relative accuracy.
    Only +inf needs a repair (|x| g exp is inf * 0 there), found by one reduction."""
    _series(x, half, out, t, series, _F32(-0.5), _FORWARD_K, _FORWARD_SCALE, _FORWARD)
    series *= out
    np.subtract(out, half, out=out)  # relu(x)
    half *= x  # -x^2 / 2
    half *= _LOG2_E
    np.exp2(half, out=half)
    series *= half  # |x| Q(|x|)
    out -= series
    if not x.max() < _INF:  # an inf or a nan: +inf gives inf (-inf and nan give nan already)
        np.copyto(out, x, where=np.isposinf(x))


def _slope_chunk(x: np.ndarray, magnitude: np.ndarray, half: np.ndarray, t: np.ndarray,
                 series: np.ndarray) -> np.ndarray:
    """Phi(x) + x phi(x) into ``series`` (returned), as 1/2 + s (1/2 - V(|x|)) for s the sign
    of x: no select between the signs. s times a float is its sign bit XORed with x's: two
    integer passes. At x = 0, V is 1/2 exactly; at +-inf, inf * 0 gives torch's NaN."""
    _series(x, half, magnitude, t, series, _MINUS_HALF_LOG2_E, _SLOPE_K, _SLOPE_SCALE, _SLOPE)
    magnitude *= _TWO_OVER_SQRT_2PI_LOG2_E  # |x| / sqrt(2 pi)
    series -= magnitude
    half *= x  # -log2(e) x^2 / 2
    np.exp2(half, out=half)
    series *= half  # V(|x|)
    np.subtract(_HALF, series, out=series)
    sign = t.view(np.int32)
    np.bitwise_and(x.view(np.int32), _SIGN_BIT, out=sign)
    bits = series.view(np.int32)
    bits ^= sign
    series += _HALF
    return series


def _quiet(body):
    """``body`` with NumPy's floating-point warnings off in whichever thread runs it (exp
    underflows in the tails, inf * 0 gives the nan torch gives; errstate is per thread)."""
    def quiet_body(first: int, last: int) -> None:
        with np.errstate(all="ignore"):
            body(first, last)
    return quiet_body


def _scratch(size: int, count: int) -> tuple:
    return tuple(np.empty(min(size, _CHUNK), _F32) for _ in range(count))


def gelu_float32(x: np.ndarray) -> np.ndarray:
    """x Phi(x) of a float32 array, as a new C-ordered array."""
    flat = np.ascontiguousarray(x).reshape(-1)  # (ascontiguousarray makes 0-d 1-d)
    result = np.empty_like(flat)

    @_quiet
    def part(first: int, last: int) -> None:
        half, t, series = _scratch(last - first, 3)
        for start in range(first, last, _CHUNK):
            size = min(_CHUNK, last - start)
            _gelu_chunk(flat[start:start + size], result[start:start + size], half[:size],
                        t[:size], series[:size])

    parallel_for(flat.size, _CHUNK // 2, part)
    return result.reshape(x.shape)


def gelu_backward_float32(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """grad (Phi(x) + x phi(x)) into ``out`` (may be ``grad`` itself); all C-contiguous
    float32 arrays of one shape."""
    flat_grad, flat_x, flat_out = grad.reshape(-1), x.reshape(-1), out.reshape(-1)

    @_quiet
    def part(first: int, last: int) -> None:
        magnitude, half, t, series = _scratch(last - first, 4)
        for start in range(first, last, _CHUNK):
            size = min(_CHUNK, last - start)
            chunk = slice(start, start + size)
            slope = _slope_chunk(flat_x[chunk], magnitude[:size], half[:size], t[:size],
                                 series[:size])
            np.multiply(flat_grad[chunk], slope, out=flat_out[chunk])

    parallel_for(flat_x.size, _CHUNK // 2, part)
    return out
