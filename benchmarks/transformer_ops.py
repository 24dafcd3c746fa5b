"""The ops of the transformer workload one by one, hookgrad against torch, in one run.

Run by hand::

    python benchmarks/transformer_ops.py --threads 1
    python benchmarks/transformer_ops.py --threads 2 --rounds 7

Each op of ``workloads.transformer`` (d128 h4 s64 b16) is timed alone, forward and
forward+backward, at the block's own shapes: where the block's extra time over torch goes.
The last rows are the whole training step, and the same step on a tiny block, whose time is
nearly all per-op cost in Python (what stays the same whatever the thread count).
Each framework runs in its own process, started with the BLAS/OpenMP thread variables set
(as ``compare.py`` does); the parent asks them in turn for one sample of each op, round after
round, and prints the median over rounds of each sample's best step, and hookgrad / torch.
``--cpu-time`` times the calling thread's CPU time instead of the wall clock: on a loaded
machine it leaves out the time the process waited for a core (use it with ``--threads 1``).
``--against /other/src`` runs a second hookgrad, from that source tree, in the same rounds and
adds its column and the median over rounds of each round's ratio of the two (an A/B of a change
that a busy machine's drift between rounds does not blur)::

    PYTHONPATH=src python benchmarks/transformer_ops.py --threads 1 --cpu-time --against ../main/src
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

BATCH, SEQ, DIM, HEADS = 16, 64, 128, 4
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def _data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _ops(torch) -> dict:
    """name -> step() for each op of the block, in ``torch``'s API (torch or hookgrad)."""
    F = torch.nn.functional
    rows = BATCH * SEQ

    def leaf(*shape, seed=0):
        return torch.tensor(_data(*shape, seed=seed), requires_grad=True)

    def with_backward(forward, *inputs):
        grad = None

        def step():
            nonlocal grad
            out = forward()
            if grad is None:
                grad = torch.tensor(_data(*out.shape, seed=9))
            out.backward(grad)
            for tensor in inputs:
                tensor.grad = None
        return step

    hidden, inner = leaf(BATCH, SEQ, DIM), leaf(BATCH, SEQ, 4 * DIM, seed=1)
    weight, bias = leaf(4 * DIM, DIM, seed=2), leaf(4 * DIM, seed=3)
    norm_weight, norm_bias = leaf(DIM, seed=4), leaf(DIM, seed=5)
    heads = [leaf(BATCH, HEADS, SEQ, DIM // HEADS, seed=6 + i) for i in range(3)]
    block = torch.nn.TransformerEncoderLayer(DIM, HEADS, 4 * DIM, dropout=0.0,
                                             activation="gelu", batch_first=True)
    optimizer = torch.optim.SGD(block.parameters(), lr=1e-3)
    block(hidden).square().mean().backward()

    def layer_norm():
        return F.layer_norm(hidden, (DIM,), norm_weight, norm_bias)

    def attention():
        return F.scaled_dot_product_attention(*heads)

    def linear():
        return F.linear(hidden.reshape(rows, DIM), weight, bias)

    def train_step(block, optimizer, inputs):  # forward, backward and the SGD update
        def step():
            optimizer.zero_grad()
            block(inputs).square().mean().backward()
            optimizer.step()
        return step

    # the same block on 4 tokens of width 8: what is left is the per-op cost in Python
    tiny = torch.nn.TransformerEncoderLayer(8, 2, 32, dropout=0.0, activation="gelu",
                                            batch_first=True)
    tiny_step = train_step(tiny, torch.optim.SGD(tiny.parameters(), lr=1e-3),
                           torch.tensor(_data(1, 4, 8)))

    return {
        "gelu forward": lambda: F.gelu(inner.detach()),
        "gelu fwd+bwd": with_backward(lambda: F.gelu(inner), inner),
        "layer_norm forward": lambda: F.layer_norm(hidden.detach(), (DIM,),
                                                   norm_weight.detach(), norm_bias.detach()),
        "layer_norm fwd+bwd": with_backward(layer_norm, hidden, norm_weight, norm_bias),
        "attention forward": lambda: F.scaled_dot_product_attention(
            *(h.detach() for h in heads)),
        "attention fwd+bwd": with_backward(attention, *heads),
        "linear 128->512 fwd+bwd": with_backward(linear, hidden, weight, bias),
        "sgd step (block)": optimizer.step,
        "block train step": train_step(block, optimizer, hidden.detach()),
        "tiny block train step (d8 s4 b1)": tiny_step,
    }


def serve(framework: str, threads: int, cpu_time: bool, number: int) -> None:
    """Build the ops, then answer each request (an op's name) with its best step's seconds."""
    if framework == "torch":
        import torch
        torch.set_num_threads(threads)
    else:
        import hookgrad as torch
    torch.manual_seed(0)
    clock = time.thread_time if cpu_time else time.perf_counter
    ops = _ops(torch)
    for op in ops.values():
        op()  # warm up
    print(json.dumps(list(ops)), flush=True)
    for line in sys.stdin:
        op = ops[line.strip()]
        best = float("inf")
        for _ in range(number):
            start = clock()
            op()
            best = min(best, clock() - start)
        print(json.dumps(best), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=20, help="steps per sample")
    parser.add_argument("--cpu-time", action="store_true")
    parser.add_argument("--against", metavar="SRC", help="another hookgrad source tree to time")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        serve(args.child, args.threads, args.cpu_time, args.number)
        return
    env = dict(os.environ, **{name: str(args.threads) for name in THREAD_VARIABLES})
    children = {}
    runs = [("torch", "torch", env), ("hookgrad", "hookgrad", env)]
    if args.against:
        other = dict(env, PYTHONPATH=os.path.abspath(args.against))
        runs.append(("against", "hookgrad", other))
    for label, framework, child_env in runs:
        command = [sys.executable, os.path.abspath(__file__), "--child", framework,
                   "--threads", str(args.threads), "--number", str(args.number),
                   *(["--cpu-time"] if args.cpu_time else [])]
        children[label] = subprocess.Popen(command, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, env=child_env, text=True)
    names = None
    for child in children.values():
        names = json.loads(child.stdout.readline())
    samples = {(framework, name): [] for framework in children for name in names}
    for round_ in range(args.rounds):
        order = list(children) if round_ % 2 == 0 else list(children)[::-1]
        for name in names:
            for framework in order:
                child = children[framework]
                child.stdin.write(name + "\n")
                child.stdin.flush()
                samples[framework, name].append(json.loads(child.stdout.readline()))
    for child in children.values():
        child.stdin.close()
        child.wait()
    clock = "thread CPU" if args.cpu_time else "wall"
    print(f"{args.threads} thread(s), {clock} ms, median over {args.rounds} rounds of the best "
          f"of {args.number} steps\n")
    if not args.against:
        print("| op | torch | hookgrad | hookgrad / torch |\n|---|---|---|---|")
    else:
        print(f"against: {args.against}\n\n| op | torch | hookgrad | hookgrad / torch | against "
              "| hookgrad / against (paired) |\n|---|---|---|---|---|---|")
    for name in names:
        torch_ms, ours_ms = (statistics.median(samples[framework, name]) * 1e3
                             for framework in ("torch", "hookgrad"))
        row = f"| {name} | {torch_ms:.3f} | {ours_ms:.3f} | {ours_ms / torch_ms:.2f}x |"
        if args.against:
            other_ms = statistics.median(samples["against", name]) * 1e3
            paired = statistics.median(ours / other for ours, other in zip(
                samples["hookgrad", name], samples["against", name]))
            row += f" {other_ms:.3f} | {paired:.3f} |"
        print(row)


if __name__ == "__main__":
    main()
