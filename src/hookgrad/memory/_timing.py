"""How the planner times a policy: paired steps, a robust statistic of their differences, and
sampling until that statistic is known well enough (or a time limit passes).

What is timed, for the plan's parts and for its check alike, is the extra time per step a
policy adds to the same step without a policy. On a large model that extra is a small share of
a long step (the deep MLP of ``benchmarks/memory.py``: 25-40 ms on a step of about 370 ms), and
the step itself swings by more than that from one run to the next (other jobs share the cores
and the caches). Three things make the figure precise enough to check an estimate with:

1. *Pairs.* Every step under a policy runs right next to a step without one, its partner;
   the partner comes first in every other pair, and the policies' order reverses from one
   round to the next. Load that comes and goes over seconds falls on both steps of a pair
   alike and cancels in their difference; what a step gains or loses from its place (first
   or second) falls on the policy as often as on its partner.
2. *A robust statistic of the differences:* their 20 % trimmed mean (the mean of the middle
   60 %), with the standard error that the spread of the winsorized differences gives
   (Tukey and McLaughlin's). A pair hit by a burst of load moves it no more than a pair at
   the edge of the trimmed part; on well-behaved differences it is nearly as precise as
   their mean, where their median needs about half as many pairs again for the same
   standard error. Neighbouring pairs are alike when the policy's cost moves with the
   machine's load, so the error is widened by their correlation (``correlation_factor``).
3. *Sampling until it is known:* after a minimum (``rounds``, and more for short steps, up to
   ``MEASURE_SECONDS``), rounds go on until each policy's standard error is at most
   ``PRECISION`` (10 %) of its extra time (or of ``FLOOR`` of the step, for an extra too small
   to matter), or until ``time_limit`` seconds have passed: on a loaded machine, a large
   model's steps may never give 10 % in a time anyone wants to wait, and the standard error
   says how far the figure can be trusted.

The garbage collector is paused while steps are timed (a collection's pause would land on one
step at random). Policies warm up before the timed rounds (``WARM_STEPS``). Which clock a step
is timed with is ``clock`` (process CPU time or wall time, ``CLOCKS``); the time limit is on
wall time (``WALL``), the wait a user sees. Tests replace both with fake clocks.
"""
from __future__ import annotations

import gc
import math
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

CLOCKS: Dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}
# what the time limit and the minimum sampling are measured with: the wait a user sees
WALL: Callable[[], float] = time.perf_counter

# a small model's steps are short: it gets more rounds, up to about this many seconds of them,
# before its standard error is looked at (never fewer rounds than asked, never more than
# MAX_ROUNDS this way)
MEASURE_SECONDS = 4.0
MAX_ROUNDS = 60
# how long a timing may go on (wall seconds, after the minimum) while a standard error is above
# PRECISION of its extra time; plan(..., time_limit=...) overrides it
TIME_LIMIT = 20.0
PRECISION = 0.1
# an extra time below this share of the step is known well enough at PRECISION of this share
FLOOR = 0.01
# the fewest pairs whose spread is trusted to stop sampling: a standard error from a handful
# can come out small by chance (the deep MLP's parts, allowed to stop from 6 pairs on, once
# reported +47.7 ± 0.7 ms where its check right after read +41.8 ± 3.9 ms)
SETTLE_PAIRS = 16
# the trimmed mean leaves out this share of the differences at each end
TRIM = 0.2
# the most correlation between neighbouring pairs' differences that widens an error
MAX_CORRELATION = 0.8
# A saver's steps cost less right after steps without it: on the benchmark CNN (offload,
# 14 MiB a step to files), the first 9 offload steps after a run of steps without a policy
# added 14.6 ms against 19.2 ms for the next 27 (docs/memory.md, "Warming up"), and the cost
# settled after about 20. The plan's check follows the parts' timing, so it finds its savers
# in that steady state; the parts (and the check, when the parts came from a file) are
# timed there too: each policy runs up to this many steps before the timed rounds, for up to
# ``MEASURE_SECONDS`` (untimed, in turns).
WARM_STEPS = 20


def clock_of(name: str) -> Callable[[], float]:
    if name not in CLOCKS:
        raise ValueError(f"clock must be 'cpu' or 'wall', got {name!r}")
    return CLOCKS[name]


def trimmed_mean(values: Any, trim: float = TRIM) -> tuple:
    """(trimmed mean, its standard error) of ``values``: the mean of what is left when
    ``trim`` of them are cut at each end, and the standard deviation of the values
    winsorized at those ends over ``(1 - 2 * trim) * sqrt(n)`` (Tukey and McLaughlin).
    The error is infinite for fewer than two values."""
    ordered = np.sort(np.asarray(values, dtype=np.float64))
    count = len(ordered)
    if count == 0:
        return math.nan, math.inf
    cut = int(math.floor(trim * count))
    kept = ordered[cut:count - cut]
    mean = float(np.mean(kept))
    if count < 2:
        return mean, math.inf
    winsorized = np.clip(ordered, ordered[cut], ordered[count - 1 - cut])
    spread = float(np.std(winsorized, ddof=1))
    return mean, spread / ((1 - 2 * trim) * math.sqrt(count))


def correlation_factor(values: Any, trim: float = TRIM) -> float:
    """How much wider a standard error is than independent values would make it, when each
    value is correlated with the next: ``sqrt((1 + r) / (1 - r))`` for a lag-1
    autocorrelation ``r`` of the winsorized values (taken between 0 and ``MAX_CORRELATION``;
    1 for fewer than 8 values). A policy's extra time itself moves with the machine's load
    over tens of seconds (docs/memory.md, the planner's check), so neighbouring pairs are
    alike and the spread of the pairs alone promises more than they hold."""
    ordered = np.asarray(values, dtype=np.float64)
    count = len(ordered)
    if count < 8:
        return 1.0
    low, high = np.sort(ordered)[[int(trim * count), count - 1 - int(trim * count)]]
    centred = np.clip(ordered, low, high)
    centred = centred - centred.mean()
    total = float(np.dot(centred, centred))
    if total <= 0:
        return 1.0
    r = min(MAX_CORRELATION, max(0.0, float(np.dot(centred[:-1], centred[1:])) / total))
    return math.sqrt((1 + r) / (1 - r))


def settled(extra: float, error: float, step: float, precision: float = PRECISION) -> bool:
    """Whether an extra time of ``extra`` seconds with standard error ``error`` is known well
    enough: the error at most ``precision`` of the extra, or of ``FLOOR`` of the ``step`` when
    the extra is smaller than that (such an extra matters little beside the step)."""
    return error <= precision * max(abs(extra), FLOOR * step)


class Pairs:
    """The timed steps of one timing: the reference's (no policy) steps, and per policy the
    differences from the partner step run next to each of its steps."""

    def __init__(self, names: List[str]):
        self.reference: List[float] = []
        self.differences: Dict[str, List[float]] = {name: [] for name in names}

    def add(self, name: str, seconds: float, partner: float) -> None:
        self.reference.append(partner)
        self.differences[name].append(seconds - partner)

    @property
    def step(self) -> float:
        """The step without a policy: the median of the partners' times."""
        return float(np.median(self.reference)) if self.reference else math.nan

    def extra(self, name: str) -> tuple:
        """(extra seconds of policy ``name``, their standard error): the trimmed mean of its
        differences, its error widened by their correlation from pair to pair
        (``correlation_factor``)."""
        differences = self.differences[name]
        mean, error = trimmed_mean(differences)
        return mean, error * correlation_factor(differences)

    def settled(self, precision: float = PRECISION) -> bool:
        step = self.step
        return all(settled(*self.extra(name), step, precision) for name in self.differences)


def time_contexts(step: Callable[[Any], None], contexts: Dict[str, Callable[[], Any]],
                  rounds: int, clock: str = "cpu", time_limit: float = 0.0,
                  spread: Optional[Dict[str, float]] = None, warm_steps: int = 1,
                  warm_seconds: float = 0.0, precision: float = PRECISION) -> Dict[str, float]:
    """Seconds of ``step(context)`` per named context; the first context is the reference (no
    policy), the others policies timed against it.

    One warm-up step each, then each policy up to ``warm_steps`` in all while the warm-up fits
    in ``warm_seconds``. Then rounds: in each, every policy runs one step paired with a
    reference step beside it (the reference first in even rounds, second in odd ones; the
    policies in reverse order in odd rounds). At least ``rounds`` rounds, more while they fit
    in ``MEASURE_SECONDS`` (up to ``MAX_ROUNDS``), always an even number; then on, for up to
    ``time_limit`` more seconds, until every policy's extra time is known to ``precision``
    (``Pairs.settled``, trusted from ``SETTLE_PAIRS`` pairs on). The reference's figure is
    the median of its steps; a policy's is that plus the trimmed mean of its paired
    differences. ``spread``, when given, receives each policy's standard error (seconds)."""
    now = clock_of(clock)
    names = list(contexts)
    reference, policies = names[0], names[1:]
    start = WALL()
    for name in names:
        step(contexts[name]())
    one_round = max(1e-6, (WALL() - start) * max(1, 2 * len(policies)) / len(names))
    warmed = 1
    while warmed < warm_steps and WALL() - start < warm_seconds:
        for name in policies:
            step(contexts[name]())
        warmed += 1
    least = max(1, rounds, min(MAX_ROUNDS, int(MEASURE_SECONDS / one_round)))
    least += least % 2
    pairs = Pairs(policies)

    def timed(name: str) -> float:
        context = contexts[name]()
        begin = now()
        step(context)
        return now() - begin

    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        done = 0
        begun = None
        while True:
            if done >= least and done % 2 == 0:
                if begun is None:
                    begun = WALL()
                if (done >= SETTLE_PAIRS and pairs.settled(precision)) or (
                        WALL() - begun >= time_limit):
                    break
            if not policies:
                pairs.reference.append(timed(reference))
            for name in (policies if done % 2 == 0 else policies[::-1]):
                if done % 2 == 0:
                    partner = timed(reference)
                    seconds = timed(name)
                else:
                    seconds = timed(name)
                    partner = timed(reference)
                pairs.add(name, seconds, partner)
            done += 1
    finally:
        if collecting:
            gc.enable()
    base = pairs.step
    result = {reference: base}
    for name in policies:
        extra, error = pairs.extra(name)
        result[name] = base + extra
        if spread is not None:
            spread[name] = error
    return result
