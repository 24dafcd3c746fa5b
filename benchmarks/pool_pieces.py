"""How many pieces per thread should the intra-op pool cut its work into? (run by hand)

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 PYTHONPATH=src \
        .venv/bin/python benchmarks/pool_pieces.py [workload] [rounds] [pieces ...]

One process builds a ``workloads.py`` workload (default: cnn) and alternates, round by round
and in rotating order, steps with ``_parallel.parallel_for`` cutting its work into each given
number of pieces per thread (default: 1, the default, against 4, the earlier one). Every
caller that does not ask for a count of its own takes the setting. Each round times the best
of 5 steps per setting after 2 untimed ones; printed are the medians and the median of the
rounds' paired ratios to the first setting, with their quartiles: a drift of the machine
between rounds moves every setting alike.
"""
from __future__ import annotations

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hookgrad  # noqa: E402
import workloads  # noqa: E402
from blas_spin import best_of  # noqa: E402
from hookgrad import _parallel  # noqa: E402


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "cnn"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    settings = [int(value) for value in sys.argv[3:]] or [1, 4]
    step = getattr(workloads, name)(hookgrad)
    for _ in range(10):
        step()
    default = _parallel.parallel_for.__defaults__
    times: dict = {pieces: [] for pieces in settings}
    try:
        for index in range(rounds):
            shift = index % len(settings)
            for pieces in settings[shift:] + settings[:shift]:
                _parallel.parallel_for.__defaults__ = (pieces,)
                step()
                step()
                times[pieces].append(best_of(step))
    finally:
        _parallel.parallel_for.__defaults__ = default
    first = times[settings[0]]
    print(f"{name}, {hookgrad.get_num_threads()} pool threads, best of 5 steps, median over "
          f"{rounds} rounds:")
    for pieces, seconds in times.items():
        ratios = sorted(a / b for a, b in zip(seconds, first))
        print(f"  {pieces} piece(s) per thread: {statistics.median(seconds) * 1e3:.2f} ms; "
              f"paired ratio to {settings[0]}: {statistics.median(ratios):.3f} "
              f"[{ratios[len(ratios) // 4]:.3f}, {ratios[3 * len(ratios) // 4]:.3f}]")


if __name__ == "__main__":
    main()
