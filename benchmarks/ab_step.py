"""One workload of ``workloads.py`` under two hookgrad source trees, in paired, alternating rounds.

Run by hand::

    python benchmarks/ab_step.py /path/to/main/src src --workload mlp_b16 --rounds 20

Each round starts one fresh process per tree (which goes first alternates), each builds the
workload, warms it up and reports the best of ``--repeats`` samples of ``--number`` steps;
the table gives each tree's median and the median over rounds of the round's ratio B / A. On a
shared machine the load drifts between rounds but hits both processes of a round alike, so the
paired ratio is steadier than either column. CPU time (``time.process_time``, the default) suits
one thread; ``--clock wall`` is for several.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import os, sys, time
sys.path.insert(0, sys.argv[1])
import workloads, hookgrad
hookgrad.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
step = workloads.build(sys.argv[2], "hookgrad")
number, repeats = int(sys.argv[3]), int(sys.argv[4])
clock = time.process_time if sys.argv[5] == "cpu" else time.perf_counter
for _ in range(max(3, number // 4)):
    step()
best = float("inf")
for _ in range(repeats):
    start = clock()
    for _ in range(number):
        step()
    best = min(best, (clock() - start) / number)
print(best * 1e3)
"""


def sample(src: str, args) -> float:
    """ms per step of ``args.workload`` in a fresh process with ``src`` first on the path."""
    threads = str(args.threads)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src), OMP_NUM_THREADS=threads,
               OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    out = subprocess.run([sys.executable, "-c", CHILD, HERE, args.workload, str(args.number),
                          str(args.repeats), args.clock], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="source tree A (the baseline)")
    parser.add_argument("b", help="source tree B")
    parser.add_argument("--workload", default="mlp_b16")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--number", type=int, default=30, help="steps per sample")
    parser.add_argument("--repeats", type=int, default=5, help="samples per process")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    times: dict = {"a": [], "b": []}
    for index in range(args.rounds):
        for tree in (("a", "b") if index % 2 == 0 else ("b", "a")):
            times[tree].append(sample(getattr(args, tree), args))
    ratios = [b / a for a, b in zip(times["a"], times["b"])]
    print(f"{args.workload}, {args.threads} thread(s), {args.clock} ms per step, "
          f"{args.rounds} rounds\n\n| A | B | B / A (median of pairs) | least, most |\n"
          "|---|---|---|---|\n"
          f"| {statistics.median(times['a']):.3f} | {statistics.median(times['b']):.3f} | "
          f"{statistics.median(ratios):.3f} | {min(ratios):.3f}, {max(ratios):.3f} |")


if __name__ == "__main__":
    main()
