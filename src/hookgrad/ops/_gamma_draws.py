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


# -- binomial -----------------------------------------------------------------------------------
# Stirling's series tail log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2] for k < 10
_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    square = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / square) / square) / (k + 1)


def _inversion(tape: _Tape, count: float, prob: float, rnd) -> float:
    """Count geometric waiting times (ceil(log U / log(1 - p))) until they pass ``count``."""
    log_q = rnd(math.log1p(-prob))
    total, successes = 0.0, 0.0
    while True:
        total += math.ceil(math.log(tape.take()) / log_q)
        if total > count:
            return successes
        successes = rnd(successes + 1)


def _btrs(tape: _Tape, count: float, prob: float, rnd) -> float:
    """Hoermann's transformed rejection with squeeze; sums of the parameter type are rounded
    to it (``rnd``) where torch computes them in that type."""
    spread = rnd(math.sqrt(rnd(rnd(count * prob) * rnd(1 - prob))))
    b = 1.15 + 2.53 * spread
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = rnd(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    odds = rnd(prob / rnd(1 - prob))
    alpha = (2.83 + 5.1 / b) * spread
    m = math.floor(rnd(rnd(count + 1) * prob))
    while True:
        u = tape.take() - 0.5
        v = tape.take()
        us = 0.5 - abs(u)
        k = rnd(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        left = rnd(rnd(count - k) + 1)
        bound = ((m + 0.5) * math.log((m + 1) / (odds * (count - m + 1)))
                 + rnd(count + 1) * math.log((count - m + 1) / left)
                 + (k + 0.5) * math.log(odds * left / rnd(k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
                 - _stirling_tail(k) - _stirling_tail(rnd(count - k)))
        if math.log(v * alpha / (a / (us * us) + b)) <= bound:
            return k


def binomial(generator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """torch's ``binomial`` on C-ordered, same-shaped ``counts`` and ``probs``: inversion where
    the mean (of the rarer outcome) is below 10, BTRS above; one element after another."""
    dtype = counts.dtype
    rnd = float if dtype == F64 else (lambda value: float(F32(value)))
    out = np.empty(counts.size, F64)
    tape = _Tape(generator)
    for index, (count, prob) in enumerate(zip(counts.reshape(-1).tolist(),
                                              probs.reshape(-1).tolist())):
        if count <= 0 or prob <= 0:
            out[index] = 0.0
        elif prob >= 1:
            out[index] = count
        elif prob <= 0.5:
            sampler = _btrs if rnd(count * prob) >= 10 else _inversion
            out[index] = sampler(tape, count, prob, rnd)
        elif prob > 0.5:
            rest = rnd(1.0 - prob)
            sampler = _btrs if rnd(count * rest) >= 10 else _inversion
            out[index] = rnd(count - sampler(tape, count, rest, rnd))
        else:
            out[index] = math.nan
    tape.close()
    return out.astype(dtype).reshape(counts.shape)
