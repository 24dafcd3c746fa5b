"""erf in float64 without SciPy: one Taylor polynomial per short interval, no masks.

[0, 6] is cut into intervals of width 1/32 centred on c = k/32. On each, erf is its Taylor
series about c, whose coefficients come from the closed form of erf's derivatives,
erf^(n)(c) = 2/sqrt(pi) (-1)^(n-1) H_(n-1)(c) exp(-c^2) (H: physicists' Hermite polynomials),
computed once at import. An element looks up its interval (k = round(32 |x|)) and every
element runs the same Horner recurrence with its own interval's coefficients (one gather per
coefficient): no boolean masks, whose gathers and scatters cost far more than the arithmetic.
|x - c| <= 1/64, so 10 terms leave an error at the rounding level of float64; float32 and half
inputs, whose results are rounded to 24 bits or fewer, need only 6 (error below 1e-12). The
interval at 0 has centre 0 and only odd terms, so erf(x) ~ 2x/sqrt(pi) keeps full relative
accuracy for tiny x. Beyond 6, erf is 1 in float64 (|x| is clipped there). Accuracy: within
1-2 ulp of a 40-digit reference in float64; float32 results are correctly rounded nearly
everywhere. (erfc for large |x| would need a relative-accuracy form with exp(-x^2); hookgrad
has no erfc.)"""
from __future__ import annotations

import math

import numpy as np

from .._parallel import parallel_for

_STEPS_PER_UNIT = 32
_LIMIT = 6.0
_TERMS_FLOAT64 = 10
_TERMS_SHORT = 6


def _accurate_erf(c: float) -> float:
    """erf at an interval centre, for the tables (math.erf is correctly rounded or 1 ulp)."""
    return math.erf(c)


def _taylor_tables(terms: int) -> np.ndarray:
    """(terms, intervals): row n holds erf^(n)(c) / n! for each centre c."""
    centres = np.arange(int(_LIMIT * _STEPS_PER_UNIT) + 1) / _STEPS_PER_UNIT
    table = np.empty((terms, centres.size))
    table[0] = [_accurate_erf(c) for c in centres]
    scale = 2 / math.sqrt(math.pi) * np.exp(-centres * centres)
    hermite_prev, hermite = np.zeros_like(centres), np.ones_like(centres)  # H_-1, H_0
    factorial = 1.0
    for n in range(1, terms):
        factorial *= n
        table[n] = (-1) ** (n - 1) * hermite * scale / factorial
        # H_n = 2 c H_(n-1) - 2 (n-1) H_(n-2)
        hermite_prev, hermite = hermite, 2 * centres * hermite - 2 * (n - 1) * hermite_prev
    table[0::2, 0] = 0.0  # erf is odd: only odd powers about 0, exactly
    return table


_TABLE = _taylor_tables(_TERMS_FLOAT64)
_CENTRES = np.arange(_TABLE.shape[1]) / _STEPS_PER_UNIT
_ROUNDER = 1.5 * 2.0 ** 52
_ROUNDER_BITS = np.float64(_ROUNDER).view(np.int64)


def erf(x: np.ndarray) -> np.ndarray:
    """erf of an array: float32 and float64 keep their dtype, anything else gives float64.
    The series is summed in float64; float32 results are rounded once from it, and use the
    shorter series."""
    dtype = x.dtype if x.dtype in _OWN_DTYPES else _FLOAT64
    terms = _TERMS_FLOAT64 if x.dtype == _FLOAT64 else _TERMS_SHORT
    shape = np.shape(x)
    flat = np.asarray(x).reshape(-1)
    result = np.empty(flat.size, dtype)
    has_nan = bool(np.isnan(flat).any())  # once here, not in every chunk

    def part(first: int, last: int) -> None:
        # each NumPy call lets go of the GIL and takes it back: chunks as large as a piece, so
        # that each thread makes few calls (see _CHUNK)
        scratch = tuple(np.empty(min(last - first, _CHUNK)) for _ in range(5))
        for start in range(first, last, _CHUNK):
            stop = min(start + _CHUNK, last)
            _erf_chunk(flat[start:stop], result[start:stop], terms, scratch, has_nan)

    parallel_for(flat.size, _CHUNK // 2, part)
    return result.reshape(shape)


_FLOAT64 = np.dtype(np.float64)
_OWN_DTYPES = (np.dtype(np.float32), _FLOAT64)
# float64s per chunk (five scratch buffers of 512 KiB: in L3, not L2, which costs one thread
# little).
# Every NumPy call in a chunk releases the GIL and takes it back; with chunks of 8192, two
# threads made ~25 short calls per chunk each and spent their time handing the GIL to each
# other (a futex wake-up per handoff), so a second thread gained nothing.
_CHUNK = 65536


def _erf_chunk(x: np.ndarray, out: np.ndarray, terms: int, scratch: tuple,
               has_nan: bool) -> None:
    """erf of a 1-d chunk into ``out``, using five float64 scratch buffers."""
    size = x.size
    x64, ax, u, result, index = (buffer[:size] for buffer in scratch)
    np.copyto(x64, x)
    np.abs(x64, out=ax)
    np.minimum(ax, _LIMIT, out=ax)  # a nan stays nan: its index is clipped, its result replaced
    # k = round(32 |x|) without a float-to-int cast (slow in NumPy): adding 1.5 * 2^52 leaves
    # the rounded integer in the low bits of the float64's pattern
    np.multiply(ax, _STEPS_PER_UNIT, out=index)
    index += _ROUNDER
    index = index.view(np.int64)
    index -= _ROUNDER_BITS
    # mode="clip": no bounds check per element (and a nan's index lands inside the table)
    _CENTRES.take(index, out=u, mode="clip")
    np.subtract(ax, u, out=u)
    coefficient = ax  # |x| is no longer needed: its buffer takes each coefficient in turn
    _TABLE[terms - 1].take(index, out=result, mode="clip")
    for n in range(terms - 2, -1, -1):
        result *= u
        result += _TABLE[n].take(index, out=coefficient, mode="clip")
    np.copysign(result, x64, out=result)
    if has_nan:
        np.copyto(result, x64, where=np.isnan(x64))
    np.copyto(out, result, casting="same_kind")
