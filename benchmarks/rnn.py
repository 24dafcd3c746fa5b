"""RNN, LSTM and GRU forward + backward, hookgrad against torch.

Run by hand: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/rnn.py``. Prints the best time
of a two-layer model over a (50, 32, 64) batch under both libraries and the ratio. torch uses as
many threads as NumPy's BLAS; on a shared machine set the BLAS threads to 1, or NumPy's small
matmuls can wait on busy threads.
"""
from __future__ import annotations

import os
import time

import torch

import hookgrad


def blas_threads() -> int:
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(name):
            return int(os.environ[name])
    return os.cpu_count() or 1


def best_time(lib, kind: str, steps=50, batch=32, features=64, hidden=128, layers=2) -> float:
    lib.manual_seed(0)
    model = getattr(lib.nn, kind)(features, hidden, layers)
    x = lib.randn(steps, batch, features, requires_grad=True)
    best = float("inf")
    for _ in range(4):
        start = time.perf_counter()
        output, _ = model(x)
        output.sum().backward()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    torch.set_num_threads(blas_threads())
    for kind in ("RNN", "LSTM", "GRU"):
        ours, theirs = best_time(hookgrad, kind), best_time(torch, kind)
        print(f"{kind:5s} hookgrad {ours * 1e3:8.1f} ms   torch {theirs * 1e3:8.1f} ms   "
              f"ratio {ours / theirs:5.1f}x")


if __name__ == "__main__":
    main()
