"""How often a training step changes OpenBLAS's thread count, and what never changing it does.

Run by hand, on a quiet machine (with other processes on the cores, a threaded GEMM waits for
its descheduled worker and the step's wall clock says nothing about the dispatch)::

    PYTHONPATH=src python benchmarks/blas_switching.py --workload mlp --threads 2

While its pool is at work (``_parallel.split_recently``), hookgrad lowers BLAS to one thread
for mid-size products (``_blas.SMALL_GEMM``) and long axpy updates, and gives the count back
afterwards. This counts those changes per step (through
threadpoolctl's controller, the only door they take), then times the step in one process,
alternating round by round between the usual dispatch and one that never changes the count
(``_blas.available`` answering False: every product and update keeps BLAS's threads), and
prints the median over rounds of the paired ratio (wall clock: with several threads, CPU time
would count the workers' spinning too).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="mlp")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--number", type=int, default=10, help="steps per sample")
    args = parser.parse_args()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(args.threads)  # before NumPy loads its BLAS
    import workloads
    from hookgrad import _blas

    step = workloads.build(args.workload, "hookgrad")
    for _ in range(5):
        step()
    controllers = _blas._blas_controllers()
    if not controllers:
        print("threadpoolctl found no OpenBLAS: hookgrad never changes BLAS's thread count here")
        return
    changes = [0]
    controller = controllers[0]
    original = controller.set_num_threads

    def counting(count):
        changes[0] += 1
        return original(count)

    controller.set_num_threads = counting
    for _ in range(10):
        step()
    controller.set_num_threads = original
    print(f"{args.workload}, {args.threads} thread(s): {changes[0] / 10:g} changes of OpenBLAS's "
          "thread count per step")

    usual = _blas.available
    samples: dict = {"usual": [], "never changed": []}
    for index in range(args.rounds):
        order = ("usual", "never changed") if index % 2 == 0 else ("never changed", "usual")
        for variant in order:
            _blas.available = usual if variant == "usual" else (lambda: False)
            step()
            start = time.perf_counter()
            for _ in range(args.number):
                step()
            samples[variant].append((time.perf_counter() - start) / args.number * 1e3)
    _blas.available = usual
    for variant, values in samples.items():
        print(f"{variant:14s} median {statistics.median(values):8.2f} ms per step, "
              f"best {min(values):8.2f} ms")
    ratios = [b / a for a, b in zip(samples["usual"], samples["never changed"])]
    print(f"never changed / usual: median of paired ratios {statistics.median(ratios):.3f} "
          f"({args.rounds} rounds)")


if __name__ == "__main__":
    main()
