"""Fixed Python cost per training step: CPU time and Python call counts of the steps where it
dominates (``mlp_b16`` and ``small_ops`` of ``workloads.py``, and the tiny transformer block of
``transformer_ops.py``), for one source tree at a time.

Run by hand, once per tree to compare two of them (alternate the runs on a busy machine)::

    PYTHONPATH=src python benchmarks/step_overhead.py
    PYTHONPATH=/path/to/other/src python benchmarks/step_overhead.py --rounds 50

The call counts come from cProfile and do not depend on the machine's load; the CPU time
(``time.process_time``, BLAS and hookgrad on one thread) is the best over ``--rounds`` rounds
of ``--number`` steps each, so a loaded machine inflates it less than the wall clock.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")  # before NumPy loads its BLAS

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def tiny_block(torch):
    """The tiny block of ``transformer_ops.py`` (d8 h2 s4 b1, GELU): one SGD training step."""
    torch.manual_seed(0)
    block = torch.nn.TransformerEncoderLayer(8, 2, 32, dropout=0.0, activation="gelu",
                                             batch_first=True)
    optimizer = torch.optim.SGD(block.parameters(), lr=1e-3)
    inputs = torch.tensor(np.random.default_rng(0).standard_normal((1, 4, 8))
                          .astype(np.float32))

    def step():
        optimizer.zero_grad()
        block(inputs).square().mean().backward()
        optimizer.step()
    return step


def calls_per_step(step, steps: int = 20) -> float:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(steps):
        step()
    profile.disable()
    return pstats.Stats(profile).total_calls / steps


def cpu_ms_per_step(step, rounds: int, number: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(number):
            step()
        best = min(best, (time.process_time() - start) / number)
    return best * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--number", type=int, default=20, help="steps per round")
    args = parser.parse_args()
    import hookgrad
    hookgrad.set_num_threads(1)
    steps = {"mlp_b16": workloads.build("mlp_b16", "hookgrad"),
             "small_ops": workloads.build("small_ops", "hookgrad"),
             "tiny block (d8 s4 b1)": tiny_block(hookgrad)}
    print(f"hookgrad from {os.path.dirname(hookgrad.__file__)}")
    print("| step | CPU ms / step | Python calls / step |\n|---|---|---|")
    for name, step in steps.items():
        for _ in range(10):
            step()  # warm up
        calls = calls_per_step(step)
        print(f"| {name} | {cpu_ms_per_step(step, args.rounds, args.number):.3f} | "
              f"{calls:.0f} |")


if __name__ == "__main__":
    main()
