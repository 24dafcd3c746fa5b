"""Per-op overhead and an MLP training step, hookgrad against torch, in one run.

Run by hand: ``.venv/bin/python benchmarks/overhead.py``. Prints the time of each workload under
both libraries and the ratio (hookgrad / torch). torch uses as many threads as NumPy's BLAS.
"""
from __future__ import annotations

import os
import time

import numpy as np
import torch

import hookgrad


def blas_threads() -> int:
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(name):
            return int(os.environ[name])
    return os.cpu_count() or 1


def best_of(fn, repeat: int = 7, number: int = 1) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def small_op_chain(lib, length: int = 100):
    x = lib.ones(8, requires_grad=True)

    def step():
        y = x
        for _ in range(length):
            y = (y * 1.0001 + 0.001).tanh()
        y.sum().backward()

    return step


def forward_only_chain(lib, length: int = 100):
    x = lib.ones(8)

    def step():
        y = x
        for _ in range(length):
            y = (y * 1.0001 + 0.001).tanh()

    return step


def mlp_step(lib, batch: int = 128, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = [784, 512, 512, 10]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = lib.tensor(rng.standard_normal((fan_in, fan_out)).astype(np.float32) / fan_in ** 0.5,
                       requires_grad=True)
        b = lib.tensor(np.zeros(fan_out, np.float32), requires_grad=True)
        params += [w, b]
    x = lib.tensor(rng.standard_normal((batch, 784)).astype(np.float32))
    target = lib.tensor(rng.standard_normal((batch, 10)).astype(np.float32))

    def step():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            if i < len(params) - 2:
                h = h.relu()
        loss = ((h - target) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    return step


WORKLOADS = [
    ("100 small ops, forward+backward", small_op_chain, 20, 5),
    ("100 small ops, forward only", forward_only_chain, 20, 5),
    ("MLP 784-512-512-10 train step, batch 128", mlp_step, 7, 1),
]


def main() -> None:
    threads = blas_threads()
    torch.set_num_threads(threads)
    print(f"threads: {threads} (torch.set_num_threads), numpy {np.__version__}, "
          f"torch {torch.__version__}")
    print(f"{'workload':46s} {'hookgrad':>12s} {'torch':>12s} {'ratio':>8s}")
    for name, make, repeat, number in WORKLOADS:
        ours = best_of(make(hookgrad), repeat, number)
        theirs = best_of(make(torch), repeat, number)
        print(f"{name:46s} {ours * 1e3:10.3f}ms {theirs * 1e3:10.3f}ms {ours / theirs:7.2f}x")
    per_op = best_of(small_op_chain(hookgrad), 20, 5) / 300
    per_op_torch = best_of(small_op_chain(torch), 20, 5) / 300
    print(f"per-op cost (fwd+bwd, 3 ops x 100): hookgrad {per_op * 1e6:.1f} us, "
          f"torch {per_op_torch * 1e6:.1f} us")


if __name__ == "__main__":
    main()
