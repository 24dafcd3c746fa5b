"""Does the pool's pause after a threaded BLAS product pay? (run by hand)

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 PYTHONPATH=src \
        .venv/bin/python benchmarks/blas_spin.py [workload] [rounds]

One process builds a ``workloads.py`` workload (default: transformer) and alternates, round by
round and in rotating order, steps with ``_parallel.BLAS_SPIN`` at 0.1 s (the pool leaves work
on the calling thread while BLAS's workers spin after a threaded product) and at 0 (the pool
splits whenever it would). Each round times the best of 5 steps per setting after 2 untimed
ones; printed are the medians and the median of the rounds' paired ratios (on / off) with its
quartiles: a drift of the machine between rounds moves both settings alike.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hookgrad  # noqa: E402
import workloads  # noqa: E402
from hookgrad import _parallel  # noqa: E402


def best_of(step, count: int = 5) -> float:
    best = float("inf")
    for _ in range(count):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "transformer"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    step = getattr(workloads, name)(hookgrad)
    for _ in range(20):
        step()
    settings = (_parallel.BLAS_SPIN, 0.0)
    times: dict = {value: [] for value in settings}
    try:
        for index in range(rounds):
            for value in settings if index % 2 else settings[::-1]:
                _parallel.BLAS_SPIN = value
                step()
                step()
                times[value].append(best_of(step))
    finally:
        _parallel.BLAS_SPIN = settings[0]
    on, off = times[settings[0]], times[0.0]
    ratios = sorted(a / b for a, b in zip(on, off))
    print(f"{name}, {hookgrad.get_num_threads()} pool threads: pause on "
          f"{statistics.median(on) * 1e3:.2f} ms, off {statistics.median(off) * 1e3:.2f} ms; "
          f"median paired ratio on / off {statistics.median(ratios):.3f} "
          f"[{ratios[len(ratios) // 4]:.3f}, {ratios[3 * len(ratios) // 4]:.3f}]")


if __name__ == "__main__":
    main()
