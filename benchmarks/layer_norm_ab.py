"""Layer norm, forward and forward+backward, under two versions of hookgrad's normalization
module in one process: a paired A/B of a kernel change.

Run by hand, from a worktree (B is the tree on ``PYTHONPATH``, A that file at a git revision)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src \\
        python benchmarks/layer_norm_ab.py --baseline main --rounds 40

The module at ``--baseline`` is loaded beside the current one, and ``F.layer_norm`` is pointed
at one version's ``NativeLayerNorm`` or the other's, alternately (which goes first alternates
too). Each round times a few calls of each version in thread CPU time; the table gives each
version's median and the median over rounds of the round's ratio B / A, which a shared
machine's drift between rounds does not blur.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import hookgrad
from hookgrad.nn.ops import normalization

MODULE = "src/hookgrad/nn/ops/normalization.py"
CASES = {"transformer (16, 64, 128)": ((16, 64, 128), 1), "(256, 1024)": ((256, 1024), 1),
         "(4, 8)": ((4, 8), 1)}


def _baseline(revision: str):
    """The normalization module as it was at ``revision``, imported inside hookgrad's package."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, check=True).stdout.strip()
    source = subprocess.run(["git", "show", f"{revision}:{MODULE}"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    name = "hookgrad.nn.ops._normalization_baseline"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "hookgrad.nn.ops"
    exec(compile(source, f"{revision}:{MODULE}", "exec"), module.__dict__)
    sys.modules[name] = module
    return module


def _steps(shape, dtype, normalized_ndim):
    rng = np.random.default_rng(0)
    normalized = shape[len(shape) - normalized_ndim:]
    x = hookgrad.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True)
    layer = hookgrad.nn.LayerNorm(normalized, dtype=getattr(hookgrad, np.dtype(dtype).name))
    grad = hookgrad.tensor(rng.standard_normal(shape).astype(dtype))
    detached = x.detach()

    def forward():
        with hookgrad.no_grad():
            layer(detached)

    def forward_backward():
        layer(x).backward(grad)
        x.grad = layer.weight.grad = layer.bias.grad = None
    return {"forward": forward, "fwd+bwd": forward_backward}


def _time(step, number: int, clock=time.thread_time) -> float:
    start = clock()
    for _ in range(number):
        step()
    return (clock() - start) / number * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision of version A")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--threads", type=int, default=None, help="hookgrad.set_num_threads")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="the calling thread's CPU time (one thread), or the wall clock")
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    if args.threads is not None:
        hookgrad.set_num_threads(args.threads)
    versions = {"A": _baseline(args.baseline).NativeLayerNorm, "B": normalization.NativeLayerNorm}
    print(f"A = {args.baseline}, B = working tree; {args.dtype}, "
          f"{os.environ.get('OMP_NUM_THREADS', '?')} thread(s), {args.clock} ms per call, "
          f"median over {args.rounds} rounds\n")
    print("| case | A | B | B / A |\n|---|---|---|---|")
    for case, (shape, normalized_ndim) in CASES.items():
        for kind, step in _steps(shape, np.dtype(args.dtype), normalized_ndim).items():
            number = max(5, int(3e6 // (np.prod(shape) + 2e4)))
            samples = {"A": [], "B": []}
            for version in versions.values():  # warm up both
                normalization.NativeLayerNorm = version
                _time(step, number, clock)
            for round_ in range(args.rounds):
                order = "AB" if round_ % 2 == 0 else "BA"
                for key in order:
                    normalization.NativeLayerNorm = versions[key]
                    samples[key].append(_time(step, number, clock))
            normalization.NativeLayerNorm = versions["B"]
            ratio = statistics.median(b / a for a, b in zip(samples["A"], samples["B"]))
            print(f"| {case} {kind} | {statistics.median(samples['A']):.4f} | "
                  f"{statistics.median(samples['B']):.4f} | {ratio:.3f} |")


if __name__ == "__main__":
    main()
