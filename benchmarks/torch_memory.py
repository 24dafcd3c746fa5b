"""hookgrad.memory on PyTorch models, against what PyTorch users use today (run by hand).

    .venv/bin/python benchmarks/torch_memory.py [--quick] [--json results.json]

Trains a ResNet-style CNN and a GPT-style transformer (both defined below) a few steps on torch
(CUDA when present, else CPU) under: no policy, ``torch.autograd.graph.save_on_cpu``,
``torch.utils.checkpoint`` per block, hookgrad ``quantize(8)``, ``offload()``, and ``plan`` at 25 %
and 50 % of the no-policy saved bytes. Per configuration:

* saved bytes: the peak of what autograd's saved tensors keep (a hookgrad ledger). torch's own
  ``save_on_cpu`` and ``checkpoint`` set saved-tensor hooks that replace the ledger's inside
  them, so for those the ledger sees only what is saved outside (shown, with a mark);
* measured peak: the step's peak of memory the framework allocated, above where it began
  (``max_memory_allocated`` on a GPU, the profiler's memory events on CPU) — the real figure;
* step time: median of the timed steps (forward, backward, optimizer);
* gradient error: max |g - g_exact| / max |g_exact| over parameters, on the first step, from the
  same weights and data as the no-policy run.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from typing import Callable, Dict, List

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from hookgrad import memory
from hookgrad.memory import format_bytes


# -- models ----------------------------------------------------------------------------------
class Residual(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.norm1(self.conv1(x)))
        return F.relu(x + self.norm2(self.conv2(y)))


class ResNet(nn.Module):
    def __init__(self, channels: int = 32, blocks: int = 4, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(*[Residual(channels) for _ in range(blocks)])
        self.head = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.head(x.mean((2, 3)))


class Attention(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        mask = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
        return self.out((weights @ v).transpose(1, 2).reshape(batch, length, width))


class Block(nn.Module):
    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attention = Attention(width, heads)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int = 256, width: int = 128, heads: int = 4, layers: int = 4,
                 length: int = 64):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.blocks = nn.Sequential(*[Block(width, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        places = torch.arange(ids.shape[1], device=ids.device)
        x = self.blocks(self.tokens(ids) + self.positions(places))
        return self.head(self.norm(x))


def workloads(device, quick: bool) -> Dict[str, tuple]:
    torch.manual_seed(0)
    batch = 8 if quick else 32
    images = torch.randn(batch, 3, 32, 32, device=device)
    labels = torch.randint(0, 10, (batch,), device=device)
    ids = torch.randint(0, 256, (batch // 2, 65), device=device)
    return {
        "resnet": (ResNet().to(device), (images,), lambda out: F.cross_entropy(out, labels)),
        "gpt": (GPT().to(device), (ids[:, :-1],),
                lambda out: F.cross_entropy(out.reshape(-1, out.shape[-1]),
                                            ids[:, 1:].reshape(-1))),
    }


# -- configurations --------------------------------------------------------------------------
class Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CheckpointBlocks:
    """torch.utils.checkpoint around each block, while active."""

    def __init__(self, model):
        self.blocks = list(model.blocks)

    def __enter__(self):
        for block in self.blocks:
            original = block.forward
            block.forward = (lambda function: lambda *args: checkpoint(
                function, *args, use_reentrant=False))(original)
        return self

    def __exit__(self, *exc):
        for block in self.blocks:
            del block.forward
        return False


def configurations(model, inputs, loss_fn, baseline_saved: int, device) -> Dict[str, Callable]:
    def planned(fraction: float):
        found = memory.plan(model, inputs, int(baseline_saved * fraction),
                            loss_fn=loss_fn, measure=False)
        print(f"    plan {fraction:.0%}: feasible={found.feasible}, "
              f"{len(found.choices)} choices")
        return (lambda: found.policy) if found.policy is not None else Nothing

    pin = device.type == "cuda"
    return {
        "no policy": Nothing,
        "torch save_on_cpu": lambda: torch.autograd.graph.save_on_cpu(pin_memory=pin),
        "torch checkpoint per block": lambda: CheckpointBlocks(model),
        "hookgrad quantize(8)": lambda: memory.quantize(8, framework="torch"),
        "hookgrad offload()": lambda: memory.offload(framework="torch"),
        "hookgrad plan 50%": planned(0.5),
        "hookgrad plan 25%": planned(0.25),
    }


TORCH_HOOKS = ("torch save_on_cpu", "torch checkpoint per block")


def step(model, inputs, loss_fn, context, optimizer=None):
    model.zero_grad(set_to_none=True)
    with context():
        loss = loss_fn(model(*inputs))
    loss.backward()
    if optimizer is not None:
        optimizer.step()


def run(name: str, model, inputs, loss_fn, device, steps: int) -> List[dict]:
    initial = {k: v.clone() for k, v in model.state_dict().items()}

    def reset():
        model.load_state_dict(initial)

    def grads_of(context) -> List[torch.Tensor]:
        reset()
        step(model, inputs, loss_fn, context)
        return [p.grad.detach().clone() for p in model.parameters()]

    with memory.ledger(model=model, measure=False) as led:
        step(model, inputs, loss_fn, Nothing)
    baseline_saved = led.peak
    exact = grads_of(Nothing)
    rows = []
    for label, context in configurations(model, inputs, loss_fn, baseline_saved,
                                         device).items():
        grads = grads_of(context)
        error = max(float((g - e).abs().max() / e.abs().max()) for g, e in zip(grads, exact))
        reset()
        with memory.ledger(model=model, device=device) as led:
            step(model, inputs, loss_fn, context)
        reset()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        step(model, inputs, loss_fn, context, optimizer)  # warm up
        times = []
        for _ in range(steps):
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            step(model, inputs, loss_fn, context, optimizer)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        row = {"model": name, "configuration": label, "saved_bytes": led.peak,
               "saved_bytes_partial": label in TORCH_HOOKS, "measured_peak": led.measured_peak,
               "step_seconds": statistics.median(times), "gradient_error": error}
        rows.append(row)
        print(f"  {label:<28} saved {format_bytes(row['saved_bytes']):>10}  "
              f"peak {format_bytes(row['measured_peak'] or 0):>10}  "
              f"{row['step_seconds'] * 1e3:8.1f} ms  error {error:.1e}", flush=True)
    reset()
    return rows


def table(rows: List[dict]) -> str:
    lines = ["| model | configuration | saved bytes | measured peak | step time | gradient error |",
             "|---|---|---:|---:|---:|---:|"]
    for row in rows:
        saved = format_bytes(row["saved_bytes"]) + (" *" if row["saved_bytes_partial"] else "")
        peak = "-" if row["measured_peak"] is None else format_bytes(row["measured_peak"])
        lines.append(f"| {row['model']} | {row['configuration']} | {saved} | {peak} | "
                     f"{row['step_seconds'] * 1e3:.0f} ms | {row['gradient_error']:.1e} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller batches, fewer steps")
    parser.add_argument("--json", default="torch_memory.json", help="where to write the rows")
    parser.add_argument("--steps", type=int, default=None)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.set_num_threads(1 if device.type == "cpu" else torch.get_num_threads())
    steps = args.steps or (2 if args.quick else 3)
    rows: List[dict] = []
    for name, (model, inputs, loss_fn) in workloads(device, args.quick).items():
        print(f"{name} on {device} ({sum(p.numel() for p in model.parameters())} parameters)")
        started = time.perf_counter()
        rows += run(name, model, inputs, loss_fn, device, steps)
        print(f"  ({time.perf_counter() - started:.0f} s)")
    print()
    print(table(rows))
    with open(args.json, "w") as handle:
        json.dump({"device": str(device), "torch": torch.__version__, "rows": rows}, handle,
                  indent=2)
    print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
