"""The planner's cost model: what a saver keeps and costs, and how long each module's forward
takes, calibrated from repeated measurements.

Costs come from a calibrated model, not from single timings: medians of repeated runs after a
warm-up, snapped to a grid of quarter-octaves (hysteresis: timing noise of a few per cent moves
no cost), and kept for the process, so two plans of one model and inputs cost alike and choose
alike. ``plan(..., recalibrate=True)`` measures again.
"""
from __future__ import annotations

import math
import time
from typing import Any, Dict

import numpy as np

from ._backend import Backend
from .ledger import Ledger
from .savers import Saver

SAVER_RATES: Dict[tuple, tuple] = {}
MODULE_SECONDS: Dict[tuple, Dict[str, float]] = {}
GRID = 2 ** 0.25


def snap(seconds: float) -> float:
    """``seconds`` on the cost grid (0 stays 0)."""
    if seconds <= 0:
        return 0.0
    return GRID ** round(math.log(seconds, GRID))


def calibrate(saver: Saver, backend: Backend, recalibrate: bool = False) -> tuple:
    """(bytes kept per byte, seconds per saved tensor, seconds per byte) of a saver."""
    key = (backend.name, repr(saver), type(saver))
    if key not in SAVER_RATES or recalibrate:
        _measure(saver, 1 << 10, backend, rounds=1)  # warm up
        kept, small = _measure(saver, 1 << 10, backend)
        _, large = _measure(saver, 1 << 18, backend)
        per_byte = max(0.0, (large - small) / ((1 << 18) - (1 << 10)) / 4)
        per_tensor = max(0.0, small - per_byte * (1 << 10) * 4)
        SAVER_RATES[key] = (kept, snap(per_tensor), snap(per_byte))
    return SAVER_RATES[key]


def signature(model: Any, inputs: tuple, backend: Backend) -> tuple:
    """What a module's forward time depends on: the module tree, parameter shapes, inputs."""
    modules = tuple((name, type(module).__name__) for name, module in model.named_modules())
    shapes = tuple((tuple(p.shape), str(p.dtype)) for p in model.parameters())
    given = tuple((tuple(a.shape), str(a.dtype)) if backend.is_tensor(a) else repr(a)
                  for a in inputs)
    return backend.name, id(model), modules, shapes, given


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
