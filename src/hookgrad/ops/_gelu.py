"""Exact GELU's kernels on float32 arrays: x Phi(x) and its derivative Phi(x) + x phi(x).

torch's float32 GELU is a vectorised kernel with its own erf, far cheaper than the float64
series ``torch.erf`` needs to be correctly rounded (``_erf.py``), so GELU here does not go
through that erf either. It writes Phi through the upper tail of the normal distribution,
which has no cancellation in either tail:

    Q(u) = 1 - Phi(u) = t R(t) exp(-u^2 / 2) / 2,   u = |x|,  t = 1 / (1 + p u)
    Phi(x) = Q(|x|) for x < 0, else 1 - Q(|x|);     phi(x) = exp(-x^2 / 2) / sqrt(2 pi)

R(t) = erfc(u / sqrt 2) exp(u^2 / 2) / t is smooth in t; the degree-7 polynomial below was
fitted against mpmath on |x| <= 9 (Lawson-weighted least squares for the least maximum
relative error, p = 0.23 searched on a grid, coefficients rounded to float32 one at a time
from the highest with the rest refitted, the constant then nudged by 5 float32 steps so that
Phi(0) is 1/2 exactly): relative error 4e-8 in Q there. Since it follows the 1/u asymptote of
the Mills ratio, it stays within 0.3 % of Q out to |x| = 1e4, where Q is far below float32's
range: no clipping is needed. Evaluated in float32, Phi is within
2.5e-7 of the exact value everywhere (torch's float32 GELU errs by up to 3.7e-7), and Phi and
phi share one exponential.

Neither formula selects between the signs of x (a masked copy or np.where costs as much as
ten plain passes): see ``_gelu_chunk`` and ``_slope_chunk``. Arrays are cut into chunks that
stay in the last-level cache across the ~28 passes, and the chunks are shared out over the
intra-op threads (NumPy releases the GIL in its loops). A chunk is large (``_CHUNK``): each
NumPy call lets go of the GIL and takes it back, and two threads making many short calls each
spend their time handing the GIL to each other rather than computing.

What bounds the cost (one thread, 128K-element chunks): a plain pass costs ~0.15 ns per
element, float32 ``np.exp`` ~1.3 ns (about nine passes), so the ~27 passes, not the one exp,
are most of the time. Alternatives measured and rejected: a degree-6 R leaves 3.7e-7 relative
error in Q (degree 7 is the least that keeps Phi within the budget above); exp built from a
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
_P = _F32(0.23)
# R's coefficients from t^0 up, halved (Q carries the factor 1/2)
_R = tuple(_F32(0.5 * c) for c in (
    0.18394462764263153, 0.17659039795398712, 0.22144663333892822, -0.028641197830438614,
    0.5537760257720947, -0.5165594816207886, 0.5629122853279114, -0.1534692645072937))
_INV_SQRT_2PI = _F32(1 / math.sqrt(2 * math.pi))
_SIGN_BIT = np.int32(-2 ** 31)
_INF = _F32(np.inf)
# float32s per chunk. Its buffers (512 KiB each) fall out of L2, which costs one thread little;
# chunks of 32768 (in L2) made ~28 calls of a few microseconds per chunk and thread, and two
# threads were no faster than one (futex wake-ups at each GIL handoff).
_CHUNK = 131072


def _series(x: np.ndarray, magnitude: np.ndarray, t: np.ndarray, series: np.ndarray,
            density: np.ndarray) -> None:
    """t = 1 / (1 + p |x|), R(t) into ``series`` and exp(-x^2 / 2) into ``density``, for a
    float32 chunk ``x`` and its ``magnitude`` |x|."""
    np.multiply(magnitude, _P, out=t)
    t += 1
    np.reciprocal(t, out=t)
    np.multiply(t, _R[-1], out=series)
    for coefficient in _R[-2:0:-1]:
        series += coefficient
        series *= t
    series += _R[0]
    np.multiply(x, x, out=density)
    density *= -0.5
    np.exp(density, out=density)


def _gelu_chunk(x: np.ndarray, out: np.ndarray, t: np.ndarray, series: np.ndarray,
                density: np.ndarray) -> None:
    """x Phi(x) = relu(x) - |x| Q(|x|): no select between the two signs. Only +inf needs a
    repair (|x| t is inf * 0 there), found by one reduction of the chunk."""
    np.abs(x, out=out)
    _series(x, out, t, series, density)
    series *= t
    series *= out
    series *= density  # |x| Q(|x|)
    out += x
    out *= _HALF
    out -= series
    if not x.max() < _INF:  # an inf or a nan: +inf gives inf (-inf and nan give nan already)
        np.copyto(out, x, where=np.isposinf(x))


def _slope_chunk(x: np.ndarray, out: np.ndarray, t: np.ndarray, series: np.ndarray,
                 density: np.ndarray) -> None:
    """Phi(x) + x phi(x), with Phi = 1/2 + s (1/2 - Q(|x|)) for s the sign of x: no select
    between the signs. 1/2 - Q is >= 0 (0 at x = 0, where Q is 1/2 exactly), so s times it is
    x's sign bit ORed into its bits: two integer passes (np.copysign and dividing by |x| cost
    several float passes)."""
    np.abs(x, out=out)
    _series(x, out, t, series, density)
    series *= t
    series *= density  # Q(|x|)
    np.subtract(_HALF, series, out=series)
    sign = t.view(np.int32)
    np.bitwise_and(x.view(np.int32), _SIGN_BIT, out=sign)
    bits = series.view(np.int32)
    bits |= sign  # Phi - 1/2
    density *= x
    density *= _INV_SQRT_2PI  # x phi(x)
    np.add(series, density, out=out)
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
        t, series, density = _scratch(last - first, 3)
        for start in range(first, last, _CHUNK):
            size = min(_CHUNK, last - start)
            _gelu_chunk(flat[start:start + size], result[start:start + size], t[:size],
                        series[:size], density[:size])

    parallel_for(flat.size, _CHUNK // 2, part, pieces_per_thread=2)
    return result.reshape(x.shape)


def gelu_backward_float32(grad: np.ndarray, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """grad (Phi(x) + x phi(x)) into ``out`` (may be ``grad`` itself); all C-contiguous
    float32 arrays of one shape."""
    flat_grad, flat_x, flat_out = grad.reshape(-1), x.reshape(-1), out.reshape(-1)

    @_quiet
    def part(first: int, last: int) -> None:
        t, series, density, slope = _scratch(last - first, 4)
        for start in range(first, last, _CHUNK):
            size = min(_CHUNK, last - start)
            chunk = slice(start, start + size)
            _slope_chunk(flat_x[chunk], slope[:size], t[:size], series[:size], density[:size])
            np.multiply(flat_grad[chunk], slope[:size], out=flat_out[chunk])

    parallel_for(flat_x.size, _CHUNK // 2, part, pieces_per_thread=2)
    return out
