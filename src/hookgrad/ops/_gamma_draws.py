"""torch's CPU gamma and binomial samplers on hookgrad's generator, draw for draw.

Both kernels visit the elements in order and ask the generator, per element, for as many 53-bit
uniforms (and, for gamma, standard normals) as their rejection loops need. A normal is the
scalar Box-Muller pair of ``_distributions.scalar_normals``: a fresh pair takes two uniforms,
returns ``r cos`` and leaves ``r sin`` in the generator for the next normal. So the whole call
reads one stream of uniforms, and every decision depends on the ones before it.

``_Tape`` reads uniforms ahead of the generator in bulk and, when the call is over, moves the
generator to exactly where torch's would be: the uniforms used, and the cached normal.

Gamma (Marsaglia and Tsang, with concentration < 1 raised by one and the draw scaled by
``U ** (1 / alpha)``) is vectorised speculatively: a window of elements is evaluated at once as
if each accepted its first candidate; the elements before the first one that did not are kept,
that one is run on its own, and the next window starts after it.

Transcendental functions come from ``math`` (the C library, as torch's kernels call it) wherever
a decision or a value depends on them bit for bit; NumPy's vectorised ``log``/``log1p``/``pow``
round differently in the last place on some processors. NumPy's ``sin``/``cos``/``sqrt`` agree.
"""
from __future__ import annotations

import math

import numpy as np

from ._distributions import exact_log, exact_log1p, exact_pow, unit_floats

F32, F64 = np.float32, np.float64
_THIRD32 = float(F32(1.0) / F32(3.0))  # torch subtracts the float constant 1.0f / 3.0f
_SQUEEZE = float(F32(0.0331))
_TWO_PI = 2.0 * math.pi

class _Tape:
    """Uniforms read ahead of ``generator``; ``close`` leaves the generator where torch's would
    be after ``used`` uniforms, with the cached Box-Muller value ``cached`` (or None)."""

    def __init__(self, generator):
        self.generator = generator
        self._state = generator._engine.state
        self._fresh = generator._fresh
        self.values = np.empty(0, F64)
        self.used = 0
        self.cached = generator._double_normal
        generator._double_normal = None

    def reach(self, end: int) -> None:
        """Make sure uniforms up to index ``end`` (excluded) are on the tape."""
        have = self.values.size
        if end > have:
            more = max(end - have, have, 1024)
            self.values = np.concatenate([self.values,
                                          unit_floats(self.generator, more, True)])

    def take(self) -> float:
        self.reach(self.used + 1)
        value = float(self.values[self.used])
        self.used += 1
        return value

    def normal(self) -> float:
        """One standard normal as torch's scalar ``normal_distribution<double>`` gives it."""
        if self.cached is not None:
            value, self.cached = self.cached, None
            return value
        first, second = self.take(), self.take()
        radius = math.sqrt(-2.0 * math.log1p(-second))
        self.cached = radius * math.sin(_TWO_PI * first)
        return radius * math.cos(_TWO_PI * first)

    def close(self) -> None:
        generator = self.generator
        generator._engine.state = self._state
        generator._fresh = self._fresh
        if self.used:
            generator._random(2 * self.used)
        generator._double_normal = self.cached


# -- gamma --------------------------------------------------------------------------------------
def _gamma_constants(alpha: np.ndarray):
    """Per element: whether it is boosted (0 < alpha < 1), 1/alpha for the boost, d and c of
    Marsaglia-Tsang; d is formed in the parameter's own precision, as torch forms it."""
    work = alpha.dtype.type
    boosted = (alpha < 1) & (alpha != 0)
    with np.errstate(all="ignore"):
        exponent = (work(1.0) / alpha).astype(F64)
        raised = np.where(boosted, alpha + work(1.0), alpha)
        if alpha.dtype == F64:
            d = raised - _THIRD32
        else:
            d = (raised - F32(_THIRD32)).astype(F64)
        c = 1.0 / np.sqrt(9.0 * d)
    return boosted, exponent, d, c


def _gamma_one(tape: _Tape, boosted: bool, exponent: float, d: float, c: float) -> float:
    """One element the plain way (the fix-up for a window's first rejection)."""
    scale = 1.0
    if boosted:
        scale = math.pow(1.0 - tape.take(), exponent)
    while True:
        while True:
            x = tape.normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - tape.take()
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(generator, alpha: np.ndarray, result_dtype) -> np.ndarray:
    """torch's ``_standard_gamma`` on the C-ordered ``alpha``: one Gamma(alpha, 1) draw per
    element in ``result_dtype``, at least the dtype's smallest normal number (zero for a zero
    concentration, which takes no draw)."""
    flat = np.ascontiguousarray(alpha).reshape(-1)
    count = flat.size
    out = np.zeros(count, F64)
    if count == 0:
        return out.astype(result_dtype).reshape(alpha.shape)
    boosted, exponent, d, c = _gamma_constants(flat)
    drawing = flat != 0
    tape = _Tape(generator)
    start, window = 0, 64
    while start < count:
        stop = min(count, start + window)
        done = _gamma_window(tape, slice(start, stop), boosted, exponent, d, c, drawing, out)
        start += done
        if start < stop:  # element `start` rejected its first candidate
            out[start] = _gamma_one(tape, bool(boosted[start]), float(exponent[start]),
                                    float(d[start]), float(c[start]))
            start += 1
        window = min(4096, max(32, 2 * done))
    tape.close()
    values = out.astype(result_dtype)
    tiny = np.finfo(result_dtype).tiny
    return np.maximum(values, tiny).reshape(alpha.shape)


def _gamma_window(tape: _Tape, span: slice, boosted, exponent, d, c, drawing, out) -> int:
    """Evaluate the elements of ``span`` as if each accepted its first candidate; write the
    ones before the first that did not, advance the tape past them, and return their number."""
    boost = boosted[span].astype(np.int64)
    draws = drawing[span]
    normals_before = np.cumsum(draws) - draws  # this window's normals before each element
    has_cache = tape.cached is not None
    fresh = draws & ((normals_before + has_cache) % 2 == 0)
    slots = np.where(draws, boost + 2 * fresh + 1, 0)
    begin = tape.used + np.cumsum(slots) - slots
    tape.reach(int(begin[-1] + slots[-1]) + 1)
    values = tape.values
    pair = begin + boost  # where a fresh normal's two uniforms sit
    angle = _TWO_PI * values[np.where(fresh, pair, 0)]
    radius = np.sqrt(-2.0 * exact_log1p(-values[np.where(fresh, pair + 1, 0)]))
    cosine, sine = radius * np.cos(angle), radius * np.sin(angle)
    # a cached normal is the sine of the previous drawing element's pair (or the tape's cache)
    previous = np.maximum.accumulate(np.where(fresh, np.arange(fresh.size), -1))
    x = np.where(fresh, cosine, sine[np.maximum(previous, 0)])
    if has_cache:
        x = np.where(draws & ~fresh & (previous < 0), tape.cached, x)
    dd, cc = d[span], c[span]
    y = 1.0 + cc * x
    positive = y > 0
    v = y * y * y
    u = 1.0 - values[begin + boost + 2 * fresh]
    xx = x * x
    with np.errstate(all="ignore"):
        accept = positive & (u < 1.0 - _SQUEEZE * xx * xx)
        doubtful = positive & ~accept & draws
        if doubtful.any():
            where = np.flatnonzero(doubtful)
            lhs = exact_log(u[where])
            rhs = 0.5 * xx[where] + dd[where] * (1.0 - v[where] + exact_log(v[where]))
            accept[where] = lhs < rhs
    ok = accept | ~draws
    failed = np.flatnonzero(~ok)
    done = int(failed[0]) if failed.size else ok.size
    if done == 0:
        return 0
    scale = np.ones(done)
    lifted = np.flatnonzero(boost[:done])
    if lifted.size:
        scale[lifted] = exact_pow(1.0 - values[begin[lifted]], exponent[span][lifted])
    kept = slice(span.start, span.start + done)
    out[kept] = np.where(draws[:done], scale * dd[:done] * v[:done], 0.0)
    tape.used = int(begin[done - 1] + slots[done - 1])
    used_normals = int(draws[:done].sum())
    if used_normals:
        last = int(np.flatnonzero(draws[:done])[-1])
        tape.cached = float(sine[last]) if fresh[last] else None
    return done
