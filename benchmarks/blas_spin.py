"""What the pool does right after a threaded BLAS product, three ways, paired (run by hand)

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 PYTHONPATH=src \
        .venv/bin/python benchmarks/blas_spin.py [workload] [rounds]

BLAS's workers spin for ~0.1 s after a threaded product. One process builds a ``workloads.py``
workload (default: transformer) and alternates, round by round and in rotating order, steps
where the pool then (a) stops BLAS's workers and splits its work (``_blas.release_workers``,
the default), (b) leaves its work on the calling thread until they sleep, or (c) splits it
anyway, beside them. Each round times the best of 5 steps per setting after 2 untimed ones;
printed are the medians and the median of the rounds' paired ratios to (a) with their
quartiles: a drift of the machine between rounds moves every setting alike.
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
    spin, release = _parallel.BLAS_SPIN, _parallel._release_blas_workers
    settings = {"release and split": (spin, release), "wait": (spin, lambda: False),
                "split beside them": (0.0, release)}
    times: dict = {label: [] for label in settings}
    try:
        for index in range(rounds):
            labels = list(settings)
            shift = index % len(labels)
            for label in labels[shift:] + labels[:shift]:
                _parallel.BLAS_SPIN, _parallel._release_blas_workers = settings[label]
                step()
                step()
                times[label].append(best_of(step))
    finally:
        _parallel.BLAS_SPIN, _parallel._release_blas_workers = spin, release
    first = times["release and split"]
    print(f"{name}, {hookgrad.get_num_threads()} pool threads, best of 5 steps, median over "
          f"{rounds} rounds:")
    for label, seconds in times.items():
        ratios = sorted(a / b for a, b in zip(seconds, first))
        print(f"  {label}: {statistics.median(seconds) * 1e3:.2f} ms; paired ratio to release "
              f"{statistics.median(ratios):.3f} [{ratios[len(ratios) // 4]:.3f}, "
              f"{ratios[3 * len(ratios) // 4]:.3f}]")


if __name__ == "__main__":
    main()
