"""torch's CPU binomial sampler on hookgrad's generator, draw for draw.

Elements are visited in order; each takes as many 53-bit uniforms as its method needs: where
the mean of the rarer outcome is below 10, inversion (geometric waiting times until they pass
the count, one uniform each), otherwise Hoermann's BTRS (two uniforms an attempt). The sums
torch forms in the parameters' type are rounded to it (``rnd``) at the same places.
"""
from __future__ import annotations

import math

import numpy as np

from ._distributions import Tape as _Tape, exact_log

F32, F64 = np.float32, np.float64


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


def _btrs_shared(tape: _Tape, count: float, prob: float, total: int, rnd) -> np.ndarray:
    """``total`` BTRS draws with one (count, prob): every attempt takes two uniforms, so the
    attempts sit at fixed places on the tape and the draws are the accepted attempts' values,
    in order; the tests are evaluated for a block of attempts at once."""
    spread = rnd(math.sqrt(rnd(rnd(count * prob) * rnd(1 - prob))))
    b = 1.15 + 2.53 * spread
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = rnd(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    odds = rnd(prob / rnd(1 - prob))
    alpha = (2.83 + 5.1 / b) * spread
    m = math.floor(rnd(rnd(count + 1) * prob))
    cast = (lambda x: x) if rnd is float else (lambda x: x.astype(F32).astype(F64))
    draws: list = []
    have = 0
    while have < total:
        attempts = int((total - have) * 1.3) + 16
        tape.reach(tape.used + 2 * attempts)
        pairs = tape.values[tape.used:tape.used + 2 * attempts]
        u, v = pairs[0::2] - 0.5, pairs[1::2]
        us = 0.5 - np.abs(u)
        with np.errstate(all="ignore"):
            k = cast(np.floor((2 * a / us + b) * u + c))
            inside = (k >= 0) & (k <= count)
            accept = inside & (us >= 0.07) & (v <= v_r)
            doubt = np.flatnonzero(inside & ~accept)
            if doubt.size:
                kd, ud, vd = k[doubt], us[doubt], v[doubt]
                left = cast(cast(count - kd) + 1)
                bound = (((m + 0.5) * math.log((m + 1) / (odds * (count - m + 1)))
                          + cast(np.float64(count) + 1) * exact_log((count - m + 1) / left)
                          + (kd + 0.5) * exact_log(odds * left / cast(kd + 1))
                          + _stirling_tail(m) + _stirling_tail(count - m))
                         - _stirling_tails(kd) - _stirling_tails(cast(count - kd)))
                accept[doubt] = exact_log(vd * alpha / (a / (ud * ud) + b)) <= bound
        chosen = np.flatnonzero(accept)[:total - have]
        draws.append(k[chosen])
        have += chosen.size
        tape.used += 2 * (int(chosen[-1]) + 1 if have == total else attempts)
    return np.concatenate(draws)


def _stirling_tails(k: np.ndarray) -> np.ndarray:
    square = (k + 1) * (k + 1)
    far = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / square) / square) / (k + 1)
    near = np.asarray(_STIRLING_TAIL)[np.clip(k, 0, 9).astype(np.int64)]
    return np.where(k <= 9, near, far)


def _inversion_shared(tape: _Tape, count: float, prob: float, total: int, rnd) -> np.ndarray:
    """``total`` inversion draws with one (count, prob): the waiting times are computed for
    a stretch of tape at once, and each draw ends where its running sum first passes count."""
    log_q = rnd(math.log1p(-prob))
    draws = np.empty(total, F64)
    done = 0
    while done < total:
        length = int((total - done) * (count * prob + 1) * 1.2) + 64
        tape.reach(tape.used + length)
        stretch = tape.values[tape.used:tape.used + length]
        with np.errstate(all="ignore"):
            ratio = np.log(stretch) / log_q
            # NumPy's log may differ from the C library's in the last bit: that moves the
            # ceiling only for a ratio within a hair of an integer, so those are redone
            close = np.flatnonzero(np.abs(ratio - np.rint(ratio)) <= 1e-9 * np.abs(ratio))
            ratio[close] = exact_log(stretch[close]) / log_q
            waits = np.ceil(ratio)
        if not np.all(np.isfinite(waits)):
            return None
        sums = np.cumsum(waits)
        before = np.concatenate([[0.0], sums[:-1]])
        ends = np.searchsorted(sums, before + count, side="right").tolist()
        position = 0
        while done < total and ends[position] < length:
            end = ends[position]
            draws[done] = end - position
            done += 1
            position = end + 1
            if position >= length:
                break
        tape.used += position
    return draws


def binomial(generator, counts: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """torch's ``binomial`` on C-ordered, same-shaped ``counts`` and ``probs``: inversion where
    the mean (of the rarer outcome) is below 10, BTRS above. One shared (count, prob) is drawn
    in blocks; otherwise one element after another."""
    dtype = counts.dtype
    rnd = float if dtype == F64 else (lambda value: float(F32(value)))
    out = np.empty(counts.size, F64)
    tape = _Tape(generator)
    if counts.size > 1 and np.all(counts == counts.flat[0]) and np.all(probs == probs.flat[0]):
        shared = _binomial_shared(tape, float(counts.flat[0]), float(probs.flat[0]),
                                  counts.size, rnd)
        if shared is not None:
            tape.close()
            return shared.astype(dtype).reshape(counts.shape)
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


def _binomial_shared(tape: _Tape, count: float, prob: float, total: int, rnd):
    """All ``total`` draws of one (count, prob), or None to go element by element."""
    if count <= 0 or prob <= 0:
        return np.zeros(total)
    if prob >= 1:
        return np.full(total, count)
    if not prob <= 0.5 and not prob > 0.5:
        return np.full(total, math.nan)
    rare = prob if prob <= 0.5 else rnd(1.0 - prob)
    sampler = _btrs_shared if rnd(count * rare) >= 10 else _inversion_shared
    start = tape.used
    draws = sampler(tape, count, rare, total, rnd)
    if draws is None:
        tape.used = start
        return None
    if prob > 0.5:
        draws = count - draws if rnd is float else (F32(count) - draws.astype(F32)).astype(F64)
    return draws
