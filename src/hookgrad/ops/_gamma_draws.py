"""torch's CPU gamma sampler on hookgrad's generator, draw for draw (binomial: see
``_binomial_draws``).

The kernel visits the elements in order and ask the generator, per element, for as many 53-bit
uniforms and standard normals as its rejection loop needs. A normal is the
scalar Box-Muller pair of ``_distributions.scalar_normals``: a fresh pair takes two uniforms,
returns ``r cos`` and leaves ``r sin`` in the generator for the next normal. So the whole call
reads one stream of uniforms, and every decision depends on the ones before it.

``_distributions.Tape`` reads uniforms ahead of the generator in bulk and, when the call is
over, moves the generator to exactly where torch's would be: the uniforms used, and the cached
normal.

Gamma (Marsaglia and Tsang, with concentration < 1 raised by one and the draw scaled by
``U ** (1 / alpha)``) is vectorised speculatively. Most attempts pass the squeeze test, which
does not involve the concentration, so for every tape position it is known in advance (in one
vectorised pass) whether an attempt starting there is accepted whatever the element. Windows of
elements are laid on the tape as if each accepted its first attempt; the doubtful attempts are
tested exactly, in order, and only a real rejection ends a window (that element runs the full
loop on its own). The accepted draws' values are computed together at the end.

Transcendental functions come from ``math`` (the C library, as torch's kernels call it) wherever
a decision or a value depends on them bit for bit; NumPy's vectorised ``log``/``log1p``/``pow``
round differently in the last place on some processors. NumPy's ``sin``/``cos``/``sqrt`` agree.
"""
from __future__ import annotations

import math

import numpy as np

from ._distributions import Tape as _Tape, exact_log1p, exact_pow

F32, F64 = np.float32, np.float64
_THIRD32 = float(F32(1.0) / F32(3.0))  # torch subtracts the float constant 1.0f / 3.0f
_SQUEEZE = float(F32(0.0331))
_TWO_PI = 2.0 * math.pi


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
        while True:  # torch loops while y <= 0, so a NaN y goes on to the tests
            x = tape.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1.0 - tape.take()
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


# An attempt whose normal x exceeds _SAFE_X has y = 1 + c x > 0 for every element with c up to
# _SAFE_C (every concentration that is not negative: c is at most 1/sqrt(6), at d = 2/3); one
# whose uniform also clears the squeeze by the relative _MARGIN clears it for the C library's x
# too. Such an attempt is accepted whatever its element.
_SAFE_X, _SAFE_C = -2.44, 0.4083
_MARGIN = 1.0 - 1e-9


def standard_gamma(generator, alpha: np.ndarray, result_dtype) -> np.ndarray:
    """torch's ``_standard_gamma`` on the C-ordered ``alpha``: one Gamma(alpha, 1) draw per
    element in ``result_dtype``, at least the dtype's smallest normal number (zero for a zero
    concentration, which takes no draw)."""
    flat = np.ascontiguousarray(alpha).reshape(-1)
    count = flat.size
    out = np.zeros(count, F64)
    if count:
        tape = _Tape(generator)
        _gamma_walk(tape, flat, out)
        tape.close()
    with np.errstate(over="ignore"):
        values = out.astype(result_dtype)
    tiny = np.finfo(result_dtype).tiny  # std::max(tiny, value): a NaN draw gives tiny
    return np.where(values > tiny, values, tiny).astype(result_dtype).reshape(alpha.shape)


class _Layout:
    """Where each element's draws sit, relative to the first element, if every element accepts
    its first attempt: the drawing elements' normals then alternate fresh / cached, the first
    one fresh for ``parity`` 0 and cached for 1. A window starting anywhere is this layout
    shifted by one offset (for the parity that fits its first normal)."""

    def __init__(self, drawing: np.ndarray, lift: np.ndarray, parity: int):
        before = np.cumsum(drawing) - drawing
        self.fresh = drawing & ((before + parity) % 2 == 0)
        self.slots = np.where(drawing, lift + 1 + 2 * self.fresh, 0)
        self.begin = np.cumsum(self.slots) - self.slots
        self.start = self.begin + lift
        order = np.arange(drawing.size)
        self.previous = np.maximum.accumulate(np.where(self.fresh, order, -1))
        pair = self.start[np.maximum(self.previous, 0)]
        distance = np.where(self.fresh, 0, self.start - pair)
        # which column of the ``_sure_attempts`` table decides the element's first attempt
        self.column = np.select([~drawing, self.fresh, distance == 3, distance == 4],
                                [0, 1, 2, 3], 4)

    def unsure(self, safe: np.ndarray) -> None:
        """Elements whose first attempt the table cannot decide go to column 4 (never sure)."""
        self.column = np.where(safe | (self.column == 0), self.column, 4)


def _gamma_walk(tape: _Tape, flat: np.ndarray, out: np.ndarray) -> None:
    """Windows of elements placed on the tape by a ``_Layout``, as if each accepted its first
    attempt. Attempts the squeeze flags leave in doubt are tested in full, in order; the first
    that is rejected ends the run and goes through ``_gamma_one``, and the next run starts after
    it. The accepted draws' values are computed together at the end."""
    boosted, exponent, d, c = _gamma_constants(flat)
    drawing, lift = flat != 0, boosted.astype(np.int64)
    layouts = (_Layout(drawing, lift, 0), _Layout(drawing, lift, 1))
    for layout in layouts:  # c <= _SAFE_C is False for NaN and for negative concentrations
        layout.unsure(c <= _SAFE_C)
    drawn_before = np.cumsum(drawing) - drawing
    last_drawing = np.maximum.accumulate(np.where(drawing, np.arange(flat.size), -1))
    runs: list = []  # (first element, end, offset, parity, pair before the run)
    position, pair = tape.used, -1  # pair: where the cached normal's pair sits (-1: none)
    element, count, window, covered = 0, flat.size, 64, 0
    table, outside = None, tape.cached is not None  # a normal cached before this call
    while element < count:
        if outside:
            waiting = np.flatnonzero(drawing[element:])
            if not waiting.size:
                break
            element += int(waiting[0])
            position, pair = _gamma_slow(tape, position, -2, element, boosted, exponent, d, c,
                                         out)
            element, outside = element + 1, False
            continue
        parity = int(drawn_before[element] + (pair >= 0)) % 2
        layout = layouts[parity]
        offset = position - int(layout.begin[element])
        stop = min(count, element + window)
        start = offset + layout.start[element:stop]
        if int(start[-1]) + 12 > covered:
            tape.reach(int(start[-1]) + 4 * (count - stop) + 64)
            table, covered = _sure_attempts(tape.values), tape.values.size - 8
        fresh = layout.fresh[element:stop]
        sure = table[start, layout.column[element:stop]]
        opening = element + int(np.argmax(drawing[element:stop]))
        if pair >= 0 and drawing[opening]:  # its normal is the pair before this window
            sure[opening - element] = False
        kept = stop - element
        for j in np.flatnonzero(~sure).tolist():
            here = element + j
            source = None if fresh[j] else (pair if layout.previous[here] < element
                                            else offset + int(layout.start[layout.previous[here]]))
            if not _first_attempt_accepted(tape.values, int(start[j]), source, float(d[here]),
                                           float(c[here])):
                kept = j
                break
        end = element + kept
        if kept:
            runs.append((element, end, offset, parity, pair))
            position = offset + int(layout.begin[end - 1] + layout.slots[end - 1])
            last = int(last_drawing[end - 1])
            if last >= element:
                pair = offset + int(layout.start[last]) if layout.fresh[last] else -1
        element = end
        if element < stop:
            position, pair = _gamma_slow(tape, position, pair, element, boosted, exponent, d,
                                         c, out)
            element += 1
        window = min(4096, max(32, 2 * kept))
    tape.used = position
    if not outside:
        tape.cached = (None if pair < 0
                       else float(_pair_normals(tape.values, np.array([pair]))[1][0]))
    if runs:
        _gamma_fill(tape.values, out, _run_draws(runs, layouts, drawing, lift), exponent, d, c)


def _run_draws(runs, layouts, drawing, lift):
    """For every element of the runs that draws: its index, its boost uniform (or -1), the pair
    of its normal, whether that normal is the pair's cosine, and its uniform."""
    first, end, offset, parity, pair = (np.array(column) for column in zip(*runs))
    lengths = end - first
    run = np.repeat(np.arange(first.size), lengths)
    index = first[run] + np.arange(run.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    keep = drawing[index]
    run, index = run[keep], index[keep]
    odd = parity[run] == 1

    def pick(name):
        return np.where(odd, getattr(layouts[1], name)[index], getattr(layouts[0], name)[index])

    shift = offset[run]
    start, fresh, previous = shift + pick("start"), pick("fresh"), pick("previous")
    begin = shift + pick("begin")
    earlier = np.where(odd, layouts[1].start[np.maximum(previous, 0)],
                       layouts[0].start[np.maximum(previous, 0)]) + shift
    source = np.where(fresh, start, np.where(previous >= first[run], earlier, pair[run]))
    boost = np.where(lift[index] == 1, begin, -1)
    return index, boost, source, fresh, np.where(fresh, start + 2, start)


def _gamma_slow(tape: _Tape, position: int, pair: int, element: int, boosted, exponent, d, c,
                out) -> tuple:
    """Run one element's whole rejection loop from ``position`` (the cached normal being the
    sine of the pair at ``pair``, none for -1, the tape's own for -2); return the position
    and pair after it."""
    tape.used = position
    if pair != -2:
        tape.cached = (None if pair < 0
                       else float(_pair_normals(tape.values, np.array([pair]))[1][0]))
    out[element] = _gamma_one(tape, bool(boosted[element]), float(exponent[element]),
                              float(d[element]), float(c[element]))
    return tape.used, (tape.last_pair if tape.cached is not None else -1)


def _first_attempt_accepted(values, start: int, pair, d: float, c: float) -> bool:
    """The whole test of an element's first attempt at ``start`` (its normal fresh from the
    pair at ``start`` when ``pair`` is None, else the sine of that pair), in exact arithmetic."""
    first = float(values[start if pair is None else pair])
    radius = math.sqrt(-2.0 * math.log1p(-float(values[(start if pair is None else pair) + 1])))
    if pair is None:
        x, u = radius * math.cos(_TWO_PI * first), 1.0 - float(values[start + 2])
    else:
        x, u = radius * math.sin(_TWO_PI * first), 1.0 - float(values[start])
    y = 1.0 + c * x
    if y <= 0:
        return False
    v = y * y * y
    xx = x * x
    return (u < 1.0 - _SQUEEZE * xx * xx
            or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)))


def _pair_normals(values: np.ndarray, pairs: np.ndarray):
    """(r cos, r sin) of the Box-Muller pairs starting at ``pairs``, as the C library rounds."""
    radius = np.sqrt(-2.0 * exact_log1p(-values[pairs + 1]))
    angle = _TWO_PI * values[pairs]
    return radius * np.cos(angle), radius * np.sin(angle)


def _sure_attempts(values: np.ndarray):
    """A table, per tape position p, of whether an attempt with a fresh pair at p (its uniform
    at p + 2), or a cached normal from the pair at p - 3 or p - 4 (its uniform at p), is
    accepted by the squeeze for any concentration. NumPy's log1p suffices here: the margins
    absorb its last bit, and a doubtful attempt only costs the slow path."""
    size = values.size
    with np.errstate(all="ignore"):
        radius = np.sqrt(-2.0 * np.log1p(-values[1:]))
        angle = _TWO_PI * values[:-1]
        cosine, sine = radius * np.cos(angle), radius * np.sin(angle)
    uniform = 1.0 - values

    def squeezed(x, u):
        xx = x * x
        return (x > _SAFE_X) & (u < (1.0 - _SQUEEZE * xx * xx) * _MARGIN)

    table = np.zeros((size, 5), bool)  # columns: no draw, fresh, cached at 3, at 4, never
    table[:, 0] = True
    table[:size - 2, 1] = squeezed(cosine[:size - 2], uniform[2:])
    table[3:, 2] = squeezed(sine[:size - 3], uniform[3:])
    table[4:, 3] = squeezed(sine[:size - 4], uniform[4:])
    return table


def _gamma_fill(values, out, draws, exponent, d, c) -> None:
    """The values of the elements the walk accepted at their first attempt."""
    index, boost, pair, fresh, uniform = draws
    cosine, sine = _pair_normals(values, pair)
    x = np.where(fresh, cosine, sine)
    y = 1.0 + c[index] * x
    v = y * y * y
    scale = np.ones(index.size)
    lifted = boost >= 0
    if lifted.any():
        scale[lifted] = exact_pow(1.0 - values[boost[lifted]], exponent[index[lifted]])
    out[index] = scale * d[index] * v
