"""The planner's timings: what the chosen plan costs on the model itself, which turns the
decision weights of ``_work`` into the seconds the plan estimates.

Where the time goes: a policy costs something before it saves anything (module hooks that
track the running module, a pack hook per saved tensor), and a saver's cost inside a model
(dispatch, its tables, offload's thread and files) is far above what a chain of small ops
shows. Nor is it the same per tensor on every module: offload on a few tensors does not cost
a share of offload on all of them (its writer thread overlaps forward more or less, reads
ahead find their file written or not). So the plan is timed in parts, each the way the plan
uses it: its saver on the modules the plan gives it (``planner._parts``), against a step with
no policy, each policy step paired with a step without one, after a warm-up (each policy up
to ``WARM_STEPS`` steps: the plan's check finds its savers warm, so the parts are timed warm
too), as the trimmed mean of the paired differences, sampled until its standard error is
within 10 % of it or a time limit passes (``_timing.time_contexts``, which the check uses
too). Each part keeps its standard error, and the estimate carries them (``Plan``). A plan
of several parts is also timed whole in the same rounds (``TOGETHER``): parts active at once
share caches, the allocator and offload's writer thread, so they do not simply add up; that
figure is the plan's estimate, and the parts share it out.

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

import json
import math
import os
import platform
import tempfile
import time
from typing import Any, Dict, Optional

import numpy as np

from ._backend import Backend
from .ledger import Ledger
from .savers import Saver
from ._work import reference_rates
from ._timing import CLOCKS, clock_of  # noqa: F401  (where the planner has them from)

SAVER_RATES: Dict[tuple, tuple] = {}
MODEL_COSTS: Dict[tuple, "ModelCosts"] = {}
# the name the whole plan is timed under, beside its parts (no saver's repr reads so)
TOGETHER = "the parts together"
GRID = 2 ** 0.5


def snap(seconds: float) -> float:
    """``seconds`` on the decision grid (0 stays 0): the bucket a cost falls in."""
    if seconds <= 0:
        return 0.0
    return GRID ** round(math.log(seconds, GRID))


class ModelCosts:
    """Seconds measured on the model (paired steps, ``_timing``): ``baseline`` the step
    without a policy; ``savers`` what each part of the plan that stores with one saver adds
    to it (keyed by the saver's repr: the plan's policy with every other entry set to None),
    ``recompute`` what its part of recomputes adds (None when the plan recomputes nothing);
    ``together`` what the whole plan adds, timed in the same rounds as its parts (None for
    a plan of one part: that part is the plan); ``errors`` the standard error of each
    figure (keyed alike, ``"recompute"`` for the recomputes, ``TOGETHER`` for the whole
    plan; empty when they were not known).
    Each part includes the policy's own work (its hooks): that part is small, and timed
    alone on a large model it drowns in the noise, so it is shared out by weight instead."""

    def __init__(self, baseline: float, savers: Dict[str, float], recompute: Optional[float],
                 errors: Optional[Dict[str, float]] = None, together: Optional[float] = None):
        self.baseline = baseline
        self.savers = savers
        self.recompute = recompute
        self.errors = dict(errors or {})
        self.together = together


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
                       "costs of the plan's parts and of the parts together, warmed up, "
                       "paired steps"])


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


def rate_key(saver: Any, backend: Backend) -> tuple:
    """Where a saver's calibrated rates are filed: per framework and saver."""
    return backend.name, repr(saver), type(saver)



def install_rates(stored: dict, backend: Backend, savers: list) -> None:
    """Saver rates read from a costs file (they weigh the savers the reference table does
    not know), put where this process's calibrations are kept."""
    try:
        for saver in savers:
            SAVER_RATES[rate_key(saver, backend)] = tuple(
                float(v) for v in stored["rates"][repr(saver)])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ValueError(f"plan(): the costs file's entry for this model is malformed "
                         f"({error!r}); delete the file to measure again") from None


def install_costs(stored: dict, key: tuple, rules_text: str) -> None:
    """The costs of this plan read from a costs file, filed under ``key`` (another budget
    gives another plan: that one is measured)."""
    try:
        model_costs = stored.get("plans", {}).get(rules_text)
        if model_costs is None:
            return
        rerun = None if model_costs["recompute"] is None else float(model_costs["recompute"])
        MODEL_COSTS[key] = ModelCosts(
            float(model_costs["baseline"]),
            {str(k): float(v) for k, v in model_costs["savers"].items()}, rerun,
            {str(k): float(v) for k, v in model_costs.get("errors", {}).items()},
            None if model_costs.get("together") is None else float(model_costs["together"]))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ValueError(f"plan(): the costs file's entry for this model is malformed "
                         f"({error!r}); delete the file to measure again") from None
