"""Exact GELU's float32 kernels (``ops/_gelu.py``) of two source trees, paired in one process.

Run by hand, one thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/gelu_kernels.py OLD_SRC NEW_SRC

Both trees' ``_gelu`` modules are loaded side by side (under their own names, with the package
of NEW_SRC around them). Each round times the forward and the backward kernel of A and of B on
the same input, which goes first alternating, as the best of a few CPU-time samples; the table
gives each kernel's median time and the median over rounds of the paired ratio B / A.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import step_overhead  # noqa: E402  (benchmarks/step_overhead.py: its CPU-time loop)


def load(src: str, name: str):
    path = os.path.join(src, "hookgrad", "ops", "_gelu.py")
    spec = importlib.util.spec_from_file_location(f"hookgrad.ops.{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_of(call, number: int, repeats: int) -> float:
    """Seconds of CPU per call: the best of ``repeats`` runs of ``number`` calls."""
    return step_overhead.cpu_ms_per_step(call, repeats, number) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, args.b)
    import hookgrad
    hookgrad.set_num_threads(1)
    kernels = {"A": load(args.a, "_gelu_a"), "B": load(args.b, "_gelu_b")}
    rng = np.random.default_rng(0)
    print(f"{'shape':>14} {'kernel':>8} {'A ms':>9} {'B ms':>9} {'B/A':>7}")
    for shape in ((1024, 512), (16, 64, 512), (8, 8)):
        x = rng.standard_normal(shape).astype(np.float32)
        grad = rng.standard_normal(shape).astype(np.float32)
        out = np.empty_like(x)
        number = max(1, 200_000 // x.size) * 5
        calls = {
            "forward": {k: (lambda m=m: m.gelu_float32(x)) for k, m in kernels.items()},
            "backward": {k: (lambda m=m: m.gelu_backward_float32(grad, x, out))
                         for k, m in kernels.items()},
        }
        for kind, pair in calls.items():
            times = {"A": [], "B": []}
            for round_ in range(args.rounds):
                order = ("A", "B") if round_ % 2 == 0 else ("B", "A")
                for key in order:
                    times[key].append(best_of(pair[key], number, args.repeats))
            ratio = statistics.median(b / a for a, b in zip(times["A"], times["B"]))
            print(f"{str(shape):>14} {kind:>8} {statistics.median(times['A']) * 1e3:9.4f} "
                  f"{statistics.median(times['B']) * 1e3:9.4f} {ratio:7.3f}")


if __name__ == "__main__":
    main()
