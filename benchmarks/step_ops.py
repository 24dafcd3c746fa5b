"""Where a hookgrad training step's CPU time goes, op by op: the exclusive CPU time of each
built-in Function's ``forward`` and ``backward`` over a workload of ``workloads.py``, and what
is left for the engine, the modules and the Python around them.

Run by hand, once per source tree (alternate the runs on a busy machine)::

    PYTHONPATH=src python benchmarks/step_ops.py transformer
    PYTHONPATH=src python benchmarks/step_ops.py cnn --steps 10 --top 15

Each ``forward``/``backward`` is wrapped in a timer that subtracts the time of the calls nested
in it (a backward formula applying other ops), so the rows add up to the ops' share of the
step. The timers add a few microseconds per op call, which land in the ops' rows; BLAS and
hookgrad run on one thread (``time.process_time`` counts every thread of the process).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy loads its BLAS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


class OpTimer:
    """Exclusive CPU seconds and call counts per ``Class.forward`` / ``Class.backward``."""

    def __init__(self, clock=time.process_time) -> None:
        self.clock = clock
        self.seconds: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()
        self._nested: list = []  # per open call: seconds spent in the calls it made

    def wrap(self, cls, name: str) -> None:
        function = cls.__dict__[name].__func__
        key = f"{cls.__name__}.{name}"

        def timed(*args, **kwargs):
            start = self.clock()
            self._nested.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = self.clock() - start
                self.seconds[key] += elapsed - self._nested.pop()
                self.calls[key] += 1
                if self._nested:
                    self._nested[-1] += elapsed

        setattr(cls, name, staticmethod(timed))

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", nargs="?", default="transformer",
                        help="a torch-API function of workloads.py (transformer, cnn, mlp, ...)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()

    import hookgrad
    from hookgrad.ops._base import Op

    timer = OpTimer()
    for cls in set(_subclasses(Op)):
        for name in ("forward", "backward"):
            if isinstance(cls.__dict__.get(name), staticmethod):
                timer.wrap(cls, name)
    hookgrad.manual_seed(0)
    step = getattr(workloads, args.workload)(hookgrad)
    for _ in range(3):
        step()  # warm up
    timer.reset()
    start = time.process_time()
    for _ in range(args.steps):
        step()
    whole = (time.process_time() - start) / args.steps * 1e3
    ops = sum(timer.seconds.values()) / args.steps * 1e3
    print(f"{args.workload}: {whole:.2f} CPU ms per step; op forward/backward {ops:.2f} ms; "
          f"engine, modules and the rest {whole - ops:.2f} ms\n")
    print("| op | CPU ms per step | calls per step |\n|---|---|---|")
    for key, seconds in timer.seconds.most_common(args.top):
        print(f"| {key} | {seconds / args.steps * 1e3:.3f} | {timer.calls[key] / args.steps:g} |")


if __name__ == "__main__":
    main()
