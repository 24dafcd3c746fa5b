"""Exact GELU's kernels on float32 arrays: x Phi(x) and its derivative Phi(x) + x phi(x).

torch's float32 GELU is a vectorised kernel with its own erf, far cheaper than the float64
series ``torch.erf`` needs to be correctly rounded (``_erf.py``), so GELU here does not go
through that erf either. It writes Phi through the upper tail of the normal distribution,
which has no cancellation in either tail:

    Q(u) = 1 - Phi(u) = t R(t) exp(-u^2 / 2),   u = |x|,  t = 1 / (u + k)
    Phi(x) = Q(|x|) for x < 0, else 1 - Q(|x|);  phi(x) = exp(-x^2 / 2) / sqrt(2 pi)

R(t) = erfc(u / sqrt 2) exp(u^2 / 2) / (2 t) is smooth in t. A degree-7 polynomial in t was
fitted against scipy's erfcx on |x| <= 14 (linear programming for the least maximum error in Q
relative to Q + 1e-9, k = 4.35), then written in T = lambda t with lambda chosen so that the
polynomial is monic: Horner's rule then starts with an add and no pass multiplies by a leading
constant, and T = lambda / (|x| / 2 + k / 2) is one division. Forward and slope each have their
own lambda (|x| Q and Q differ by |x| / 2, folded the same way), their coefficients rounded to
float32 one at a time from the highest with the rest refitted, the constant then nudged a few
float32 steps (the slope's so that Phi(0) is 1/2 exactly). Evaluated in float32, the slope
Phi + x phi is within 2.6e-7 of the exact value everywhere and x Phi(x) within 2.4e-7 (torch's
float32 GELU errs by up to 3.7e-7); x Phi(x) keeps 4e-7 relative accuracy for tiny x, 1.3e-6
for x down to -6, 3e-6 to -9 and 1.3e-5 to -13 (exact GELU underflows float32 near -14).
Phi and phi share one exponential, whose argument -x^2 / 2 is (-x / 2) x from the -x / 2
already made for relu and |x| / 2.

Neither formula selects between the signs of x (a masked copy or np.where costs as much as
ten plain passes): see ``_gelu_chunk`` and ``_slope_chunk``. Arrays are cut into chunks that
stay in the last-level cache across the ~25 passes, and the chunks are shared out over the
intra-op threads (NumPy releases the GIL in its loops). A chunk is large (``_CHUNK``): each
NumPy call lets go of the GIL and takes it back, and two threads making many short calls each
spend their time handing the GIL to each other rather than computing.

What bounds the cost (one thread, 128K-element chunks): a plain pass costs ~0.15 ns per
element, float32 ``np.exp`` ~1.3-2 ns (about ten passes), so the 24 (forward) and 29 (slope
and product) passes, not the one exp, are most of the time. Alternatives measured and
rejected: a degree-6 polynomial either leaves Phi near 0 outside the budget above or 4e-5
relative error in x Phi(x) for x < -6; a rational function in u or in t needs as many passes
for the same error (degrees (4, 5) in u); exp built from a
polynomial and exponent bits takes ~20 passes; interpolating a uniform table needs two
gathers (``take``, ~8 passes each) and ``np.interp`` costs ~100 ns per element; smaller
chunks that stay in L2 gain under 10 % on one thread.
"""
from __future__ import annotations

import math

import numpy as np

from .._parallel import parallel_for

_F32 = np.float32
_HALF = _F32(0.5)
# T = lambda / (|x| / 2 + K): K is 4.35 / 2, lambda scales T so that each polynomial is monic
_K = _F32(2.175)
# |x| Q(|x|) = -(|x| / 2) T M(T) exp(-x^2 / 2), M(T) = T^7 + a_6 T^6 + ... + a_0 (a_0 first)
_FORWARD_SCALE = _F32(1.722791314125061)
_FORWARD = tuple(_F32(c) for c in (
    -0.2321982979774475, -0.2800554037094116, -0.4531950354576111, 0.0990157201886177,
    -1.8285071849822998, 2.154081344604492, -2.91865611076355))
# Q(|x|) = -T N(T) exp(-x^2 / 2), N monic as M, with its own lambda
_SLOPE_SCALE = _F32(1.5798065662384033)
_SLOPE = tuple(_F32(c) for c in (
    -0.12659986317157745, -0.16661669313907623, -0.2933540344238281, 0.06860607117414474,
    -1.4078165292739868, 1.8096333742141724, -2.6758532524108887))
_MINUS_INV_SQRT_2PI_TWICE = _F32(-2 / math.sqrt(2 * math.pi))
_SIGN_BIT = np.int32(-2 ** 31)
_INF = _F32(np.inf)
# float32s per chunk. Its buffers (512 KiB each) fall out of L2, which costs one thread little;
# chunks of 32768 (in L2) made ~28 calls of a few microseconds per chunk and thread, and two
# threads were no faster than one (futex wake-ups at each GIL handoff).
_CHUNK = 131072


def _tail(x: np.ndarray, half: np.ndarray, magnitude: np.ndarray, t: np.ndarray,
          series: np.ndarray, scale: np.float32, coefficients: tuple) -> None:
    """For a float32 chunk ``x``: -x/2 into ``half``, |x|/2 into ``magnitude``, T into ``t``
    and T times the monic polynomial into ``series``."""
    np.multiply(x, _F32(-0.5), out=half)
    np.abs(half, out=magnitude)
    np.add(magnitude, _K, out=t)
    np.divide(scale, t, out=t)
    np.add(t, coefficients[-1], out=series)
    for coefficient in coefficients[-2::-1]:
        series *= t
        series += coefficient
    series *= t


def _gelu_chunk(x: np.ndarray, out: np.ndarray, half: np.ndarray, t: np.ndarray,
                series: np.ndarray) -> None:
    """x Phi(x) = relu(x) - |x| Q(|x|), relu(x) as |x|/2 - (-x/2): no select between the two
    signs. Only +inf needs a repair (|x| T is inf * 0 there), found by one reduction."""
    _tail(x, half, out, t, series, _FORWARD_SCALE, _FORWARD)
    series *= out
    np.subtract(out, half, out=out)  # relu(x)
    half *= x  # -x^2 / 2
    np.exp(half, out=half)
    series *= half  # -|x| Q(|x|)
    out += series
    if not x.max() < _INF:  # an inf or a nan: +inf gives inf (-inf and nan give nan already)
        np.copyto(out, x, where=np.isposinf(x))


def _slope_chunk(x: np.ndarray, out: np.ndarray, half: np.ndarray, t: np.ndarray,
                 series: np.ndarray) -> None:
    """Phi(x) + x phi(x), with Phi = 1/2 + s (1/2 - Q(|x|)) for s the sign of x: no select
    between the signs. 1/2 - Q is >= 0 (0 at x = 0, where Q is 1/2 exactly), so s times it is
    x's sign bit ORed into its bits: two integer passes (np.copysign and dividing by |x| cost
    several float passes)."""
    _tail(x, half, out, t, series, _SLOPE_SCALE, _SLOPE)
    np.multiply(half, x, out=out)
    np.exp(out, out=out)
    series *= out  # -Q(|x|)
    series += _HALF
    sign = t.view(np.int32)
    np.bitwise_and(x.view(np.int32), _SIGN_BIT, out=sign)
    bits = series.view(np.int32)
    bits |= sign  # Phi - 1/2
    out *= half
    out *= _MINUS_INV_SQRT_2PI_TWICE  # x phi(x)
    out += series
    out += _HALF


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

    parallel_for(flat.size, _CHUNK // 2, part, pieces_per_thread=2)
    return result.reshape(x.shape)


def gelu_backward_float32(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """grad (Phi(x) + x phi(x)) into ``out`` (may be ``grad`` itself); all C-contiguous
    float32 arrays of one shape."""
    flat_grad, flat_x, flat_out = grad.reshape(-1), x.reshape(-1), out.reshape(-1)

    @_quiet
    def part(first: int, last: int) -> None:
        half, t, series, slope = _scratch(last - first, 4)
        for start in range(first, last, _CHUNK):
            size = min(_CHUNK, last - start)
            chunk = slice(start, start + size)
            _slope_chunk(flat_x[chunk], slope[:size], half[:size], t[:size], series[:size])
            np.multiply(flat_grad[chunk], slope[:size], out=flat_out[chunk])

    parallel_for(flat_x.size, _CHUNK // 2, part, pieces_per_thread=2)
    return out
