"""The planner's timings: what the chosen plan costs on the model itself, which turns the
decision weights of ``_work`` into the seconds the plan estimates.

Where the time goes: a policy costs something before it saves anything (module hooks that
track the running module, a pack hook per saved tensor), and a saver's cost inside a model
(dispatch, its tables, offload's thread and files) is far above what a chain of small ops
shows. Nor is it the same per tensor on every module: offload on a few tensors does not cost
a share of offload on all of them (its writer thread overlaps forward more or less, reads
ahead find their file written or not). So the plan is timed in parts, each the way the plan
uses it: its saver on the modules the plan gives it (``planner._parts``), against a step with
no policy, the contexts taking turns (every other round in reverse order) so that load from
other processes falls on all alike, after a warm-up (each policy up to ``WARM_STEPS`` steps:
the plan's check finds its savers warm, so the parts are timed warm too), as medians of
``rounds`` steps and more while a difference is not yet known to 10 % (``time_contexts``).

Costs are seconds of process CPU time by default (``clock="cpu"``): on a machine shared with
other jobs, CPU time swings far less than wall time (``clock="wall"`` measures wall time).

Timings steer no choice (``_work``), so plans repeat whatever they measure. They are kept for
the process (per model, inputs, plan and clock), so two ``plan`` calls on one model
estimate alike; ``plan(..., recalibrate=True)`` measures again. With ``plan(...,
costs_file=path)`` the costs measured once are written to a JSON file and read back by later
runs (same model structure, shapes, candidates, plan, clock, host and version), which then
estimate alike too. ``snap`` puts the rates of a saver the reference table does not know on a
grid.
"""
from __future__ import annotations

import gc
import json
import math
import os
import platform
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from ._backend import Backend
from .ledger import Ledger
from .savers import Saver
from ._work import reference_rates

SAVER_RATES: Dict[tuple, tuple] = {}
MODEL_COSTS: Dict[tuple, "ModelCosts"] = {}
GRID = 2 ** 0.5
CLOCKS: Dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def snap(seconds: float) -> float:
    """``seconds`` on the decision grid (0 stays 0): the bucket a cost falls in."""
    if seconds <= 0:
        return 0.0
    return GRID ** round(math.log(seconds, GRID))


def clock_of(name: str) -> Callable[[], float]:
    if name not in CLOCKS:
        raise ValueError(f"clock must be 'cpu' or 'wall', got {name!r}")
    return CLOCKS[name]


class ModelCosts:
    """Seconds measured on the model (medians, contexts in turns): ``baseline`` the step
    without a policy; ``savers`` what each part of the plan that stores with one saver adds
    to it (keyed by the saver's repr: the plan's policy with every other entry set to None),
    ``recompute`` what its part of recomputes adds (None when the plan recomputes nothing).
    Each part includes the policy's own work (its hooks): that part is small, and timed
    alone on a large model it drowns in the noise, so it is shared out by weight instead."""

    def __init__(self, baseline: float, savers: Dict[str, float], recompute: Optional[float]):
        self.baseline = baseline
        self.savers = savers
        self.recompute = recompute


# a small model's steps are short and their medians noisy: it gets more rounds, up to about
# this many seconds of timed steps (never fewer rounds than asked, never more than MAX_ROUNDS)
MEASURE_SECONDS = 4.0
MAX_ROUNDS = 60
# A saver's steps cost less right after steps without it: on the benchmark CNN (offload,
# 14 MiB a step to files), the first 9 offload steps after a run of steps without a policy
# added 14.6 ms against 19.2 ms for the next 27 (docs/memory.md, "Warming up"), and the cost
# settled after about 20. The plan's check follows the parts' timing, so it finds its savers
# in that steady state; the parts (and the check, when the parts came from a file) are
# timed there too: each policy runs up to this many steps before the timed rounds, for up to
# ``MEASURE_SECONDS`` (untimed, in turns).
WARM_STEPS = 20


def time_contexts(step: Callable[[Any], None], contexts: Dict[str, Callable[[], Any]],
                  rounds: int, clock: str = "cpu", settle_seconds: float = 0.0,
                  spread: Optional[Dict[str, float]] = None,
                  warm_steps: int = 1, warm_seconds: float = 0.0) -> Dict[str, float]:
    """Seconds of ``step(context)`` per named context: one warm-up step each (the contexts after
    the first, the policies, up to ``warm_steps`` each while the warm-up fits in
    ``warm_seconds``: see ``WARM_STEPS``), then rounds in which the contexts take turns:
    ``rounds`` at least, more while they fit in ``MEASURE_SECONDS``; the garbage collector is
    paused meanwhile (a collection's pause would land on one step at random). With
    ``settle_seconds``, rounds go on for up to that much longer while a context's difference
    from the reference is not yet known to within ``PRECISION`` of itself (``_settled``): a
    large model's few rounds leave its small differences to chance.

    The first context is the reference: its figure is its median, and every other context's
    is that median times the median of its ratios to the reference in the same round. Steps
    of one round run moments apart, so load from other processes that comes and goes over
    seconds scales both alike and cancels in the ratio; every other round runs the contexts
    in reverse order, and the rounds come in pairs, so what a step gains or loses from its
    place in a round (a drift, what the step before left in the caches) falls on each
    context as often. (Pairing the ratios themselves would cancel that exactly, but halves
    the samples the median has: on the deep MLP, whose steps showed no such effect, it made
    the figure swing more.) ``spread``, when given, receives each context's
    standard error (seconds: that of its median difference from the reference)."""
    now = clock_of(clock)
    made = {name: make for name, make in contexts.items()}
    start = time.perf_counter()
    for make in made.values():
        step(make())
    one_round = max(1e-6, time.perf_counter() - start)
    policies = list(made.values())[1:]
    warmed = 1
    while warmed < warm_steps and time.perf_counter() - start < warm_seconds:
        for make in policies:
            step(make())
        warmed += 1
    rounds = max(1, rounds, min(MAX_ROUNDS, int(MEASURE_SECONDS / one_round)))
    times: Dict[str, List[float]] = {name: [] for name in made}
    order = list(made.items())
    collecting = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        begun = time.perf_counter()
        done = 0
        while done < rounds or done % 2 or (
                done < 4 * MAX_ROUNDS and time.perf_counter() - begun < settle_seconds
                and not _settled(times)):
            for name, make in (order if done % 2 == 0 else order[::-1]):
                context = make()
                begin = now()
                step(context)
                times[name].append(now() - begin)
            done += 1
    finally:
        if collecting:
            gc.enable()
    names = list(made)
    base = float(np.median(times[names[0]]))
    ratios = {name: _ratios(times, name) for name in names[1:]}
    if spread is not None:
        spread.update({name: base * _error(ratios[name]) for name in names[1:]})
    result = {names[0]: base}
    result.update({name: base * float(np.median(ratios[name])) for name in names[1:]})
    return result


def _ratios(times: Dict[str, List[float]], name: str) -> np.ndarray:
    """``name``'s ratio to the reference (the first context) in each round."""
    reference = np.maximum(np.array(times[next(iter(times))]), 1e-9)
    return np.array(times[name]) / reference


PRECISION = 0.1


def _error(ratios: np.ndarray) -> float:
    """The standard error of the median of ``ratios``, from their spread (robust: the median
    absolute deviation, so one step hit by a burst of load does not widen it)."""
    if len(ratios) < 2:
        return math.inf
    spread = 1.4826 * float(np.median(np.abs(ratios - np.median(ratios))))
    return 1.2533 * spread / math.sqrt(len(ratios))


def _settled(times: Dict[str, List[float]]) -> bool:
    """Whether every context's median ratio to the first is known to within ``PRECISION`` of
    its distance from 1 (the standard error of a median, from the ratios' spread)."""
    for name in list(times)[1:]:
        ratios = _ratios(times, name)
        if _error(ratios) > PRECISION * abs(float(np.median(ratios)) - 1):
            return False
    return True


def calibrate(saver: Saver, backend: Backend, recalibrate: bool = False) -> tuple:
    """(bytes kept per byte, seconds per saved tensor, seconds per byte) of a saver: the ratio
    from a chain of small ops under it (a count: the same on every run), the rates from the
    reference table (``_work.REFERENCE_RATES``) or, for a saver it does not know, measured
    on the chain and snapped to the grid. The rates weigh the saver's units in decisions and
    share out its cost measured on the model in the estimate."""
    key = (backend.name, repr(saver), type(saver))
    if key not in SAVER_RATES or recalibrate:
        known = reference_rates(saver)
        if known is not None:
            SAVER_RATES[key] = (_kept(saver, backend), *known)
        else:
            _measure(saver, 1 << 10, backend, rounds=1)  # warm up
            kept, small = _measure(saver, 1 << 10, backend)
            _, large = _measure(saver, 1 << 18, backend)
            per_byte = max(0.0, (large - small) / ((1 << 18) - (1 << 10)) / 4)
            per_tensor = max(0.0, small - per_byte * (1 << 10) * 4)
            SAVER_RATES[key] = (kept, snap(per_tensor), snap(per_byte))
    return SAVER_RATES[key]


def _kept(saver: Saver, backend: Backend, size: int = 1 << 10, length: int = 6) -> float:
    """Bytes ``saver`` keeps per byte of float32 activations, on a chain of ``length`` ops."""
    source = backend.randn(size)
    with Ledger(backend.name, measure=False) as led:
        with _SaverHooks(saver, backend):
            value = source
            for _ in range(length):
                value = value.sin()  # saves its input: an activation (but the first)
            loss = value.sum()
        loss.backward()
    source.grad = None
    return led.total / (size * 4 * (length - 1))


def signature(model: Any, inputs: tuple, backend: Backend) -> tuple:
    """What a module's forward time depends on: the module tree, parameter shapes, inputs."""
    modules = tuple((name, type(module).__name__) for name, module in model.named_modules())
    shapes = tuple((tuple(p.shape), str(p.dtype)) for p in model.parameters())
    given = tuple((tuple(a.shape), str(a.dtype)) if backend.is_tensor(a) else repr(a)
                  for a in inputs)
    return backend.name, id(model), modules, shapes, given


def stable_signature(model: Any, inputs: tuple, backend: Backend, savers: list,
                     allow_recompute: bool, clock: str) -> str:
    """``signature`` without the model's identity, plus the candidates, clock, host and
    version: what a costs file's entry is filed under."""
    import hookgrad
    _, _, modules, shapes, given = signature(model, inputs, backend)
    return json.dumps([backend.name, modules, shapes, given, [repr(s) for s in savers],
                       allow_recompute, clock, platform.node(), hookgrad.__version__,
                       "costs of the plan's parts, warmed up"])


def load_costs(path: Any, key: str) -> Optional[dict]:
    """The entry filed under ``key`` in the costs file at ``path`` (plain JSON: reading it runs
    nothing), or None when there is no file or no such entry."""
    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle).get("entries", {})
    except FileNotFoundError:
        return None
    except (ValueError, AttributeError) as error:
        raise ValueError(f"plan(): {path} is not a costs file ({error})") from None
    entry = entries.get(key)
    return entry if isinstance(entry, dict) else None


def save_costs(path: Any, key: str, entry: dict) -> None:
    """File ``entry`` under ``key`` in the costs file at ``path`` (others kept), written to a
    temporary file beside it and moved in place, so a reader never sees half a file."""
    try:
        with open(path, encoding="utf-8") as handle:
            entries = json.load(handle).get("entries", {})
    except (FileNotFoundError, ValueError, AttributeError):
        entries = {}
    entries[key] = entry
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".costs-", suffix=".json", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"format": "hookgrad plan costs", "version": 1, "entries": entries}, out,
                      indent=1)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _measure(saver: Saver, size: int, backend: Backend, length: int = 6,
             rounds: int = 5) -> tuple:
    """(bytes kept per byte, seconds added per saved tensor) on a chain of ops that each save
    a float32 activation of ``size`` elements, forward and backward, against no saver."""
    source = backend.randn(size)
    hooks = _SaverHooks(saver, backend)

    def chain(context) -> float:
        start = time.perf_counter()
        with context:
            value = source
            for _ in range(length):
                value = value.sin()  # saves its input: an activation (but the first)
            loss = value.sum()
        loss.backward()
        return time.perf_counter() - start

    saved = size * 4 * (length - 1)  # the first sin saves the leaf: not an activation
    with Ledger(backend.name, measure=False) as led:
        chain(hooks)
    plain, timed = [], []
    for _ in range(rounds):  # in turns: load from other processes falls on both alike
        plain.append(chain(_Nothing()))
        timed.append(chain(hooks))
    source.grad = None
    extra = float(np.median(timed)) - float(np.median(plain))
    return led.total / saved, max(0.0, extra) / (length - 1)


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _SaverHooks:
    """A saver's hooks set through ``backend`` (the saver may have been made for the other
    framework's contexts: packing serves both)."""

    def __init__(self, saver: Saver, backend: Backend):
        self.saver, self.backend, self.contexts = saver, backend, []

    def __enter__(self):
        context = self.backend.saved_tensors_hooks(self.saver.pack, self.saver.unpack)
        context.__enter__()
        self.contexts.append(context)
        return self

    def __exit__(self, *exc):
        self.contexts.pop().__exit__(*exc)
        return False
