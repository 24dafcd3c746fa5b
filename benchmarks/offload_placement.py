"""Does offload's cost depend on which core its worker thread runs on? (run by hand, Linux)

    .venv/bin/python benchmarks/offload_placement.py [--rounds N] [--old PATH] [--free]

On the benchmark CNN of benchmarks/memory.py (batch 64) under the policy the planner gives it
at a quarter of the saved bytes (offload on five modules, 14 MiB a step), the main thread is
pinned to core 0 and offload's worker thread to core 0 ("same") or core 1 ("other"). Each
round times every variant's step next to a step without policy (partner first in every other
round, the variants' order reversed each round), in process CPU time and wall time, and
prints the 20 % trimmed mean of the differences with its standard error. Variants: offload as
it is (writes on the saving thread, reads ahead on the worker), ``non_blocking=True`` (writes
on the worker too) and ``prefetch=0`` (no worker at all); ``--old PATH`` adds an older
``offload.py`` (say, main's), loaded beside this one. ``--free`` leaves every thread free to
run anywhere (the scheduler places them). One BLAS thread. On a machine shared with other
jobs, compare the variants of one run with each other, not runs with runs.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import hookgrad  # noqa: E402
from hookgrad import memory  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory as benchmark  # noqa: E402  (benchmarks/memory.py: the same CNN)

PLAN_MODULES = ["0.1", "0.2", "1.0", "1.1", "1.2"]  # the planner's choice at a quarter


def load_old(path: str):
    """An older offload.py as a sibling module of this one (it shares base.py, _backend.py)."""
    spec = importlib.util.spec_from_file_location("hookgrad.memory.savers._offload_old", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.offload


def variant(make, core):
    """A policy factory; the first call after the store exists moves its worker to ``core``."""
    saver = make()
    rules = memory.policy({name: saver for name in PLAN_MODULES})
    placed = []

    def context():
        store = saver._store_obj
        if core is not None and not placed and store is not None:
            store.pool.submit(os.sched_setaffinity, 0, {core}).result()
            placed.append(core)
        return rules

    return context


def trimmed(values) -> tuple:
    values = np.sort(np.asarray(values))
    cut = int(0.2 * len(values))
    kept = values[cut:len(values) - cut]
    winsorized = np.clip(values, values[cut], values[len(values) - 1 - cut])
    return kept.mean(), winsorized.std(ddof=1) / (0.6 * np.sqrt(len(values)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--old", help="an older offload.py to compare with")
    parser.add_argument("--free", action="store_true", help="pin no thread")
    args = parser.parse_args()
    if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
        sys.exit("needs Linux and two cores")
    if not args.free:
        os.sched_setaffinity(0, {0})  # the calling thread only; threads made later inherit it
    hookgrad.manual_seed(0)
    model, x = benchmark.cnn(), hookgrad.randn(64, 3, 32, 32)
    places = [(None, "")] if args.free else [(0, " same"), (1, " other")]
    makers = {"offload()": memory.offload,
              "non_blocking=True": lambda: memory.offload(non_blocking=True)}
    if args.old:
        makers["old offload()"] = load_old(args.old)
    variants = {f"{name}{where}": variant(make, core)
                for name, make in makers.items() for core, where in places}
    variants["prefetch=0"] = variant(lambda: memory.offload(prefetch=0), None)

    def step(context) -> tuple:
        cpu, wall = time.process_time(), time.perf_counter()
        if context is None:
            loss = benchmark.loss_of(model(x))
        else:
            with context():
                loss = benchmark.loss_of(model(x))
        loss.backward()
        for parameter in model.parameters():
            parameter.grad = None
        return time.process_time() - cpu, time.perf_counter() - wall

    for _ in range(5):  # warm up: stores made, workers placed, allocator settled
        for context in variants.values():
            step(context)
            step(None)
    names = list(variants)
    differences: dict = {name: [] for name in names}
    gc.disable()
    try:
        for index in range(args.rounds):
            for name in names if index % 2 == 0 else names[::-1]:
                if index % 2 == 0:
                    timed, partner = step(variants[name]), step(None)
                else:
                    partner, timed = step(None), step(variants[name])
                differences[name].append(np.subtract(timed, partner))
            gc.collect()
    finally:
        gc.enable()
    print(f"{args.rounds} rounds, main thread {'free' if args.free else 'on core 0'}, "
          f"load {os.getloadavg()[0]:.1f}; extra per step, ± standard error")
    for name in names:
        values = np.asarray(differences[name])
        cpu, cpu_error = trimmed(values[:, 0])
        wall, wall_error = trimmed(values[:, 1])
        print(f"  {name:24s} CPU {cpu * 1e3:+6.1f} ± {cpu_error * 1e3:4.1f} ms   "
              f"wall {wall * 1e3:+6.1f} ± {wall_error * 1e3:4.1f} ms")


if __name__ == "__main__":
    main()
