"""What each memory policy saves and costs, on a deep MLP and a small CNN (run by hand).

    .venv/bin/python benchmarks/memory.py [--quick]

Per policy: the ledger's saved-bytes peak (and the same without the input batch, which savers
leave alone since its owner keeps it anyway), the traced peak of the whole step (tracemalloc sees
NumPy's allocations), the step time (best of a few rounds in which the policies take turns; also
as CPU time, which load from other processes disturbs less) and the relative error of the
parameter gradients against the exact step; against no policy and checkpointing every sqrt(n)
layers. Aims (reported, not asserted): 8-bit >= 3.5x fewer saved bytes at <= 25 % extra time,
2-bit >= 10x, offload >= 90 % less resident saved memory, the planner meeting 25 % of the
no-policy peak with less extra time than sqrt(n) checkpointing.
"""
from __future__ import annotations

import argparse
import math
import os
import time
import tracemalloc

# one BLAS thread: on a shared 2-core machine, threaded BLAS makes step times swing tenfold
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

import hookgrad  # noqa: E402
from hookgrad import memory, nn  # noqa: E402


def mlp(depth: int, width: int):
    model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.ReLU())
                            for _ in range(depth)])
    for block in model:  # He init: activations keep their scale through all the layers
        nn.init.kaiming_normal_(block[0].weight, nonlinearity="relu")
    return model


def cnn():
    def block(channels_in: int, channels_out: int):
        return nn.Sequential(nn.Conv2d(channels_in, channels_out, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2))

    return nn.Sequential(block(3, 32), block(32, 64), block(64, 64), nn.Flatten(),
                         nn.Linear(64 * 4 * 4, 10))


class Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def loss_of(output):
    return output.pow(2).mean()


def step(model, x, context) -> None:
    for p in model.parameters():  # zeroed in place: the traced peak is the step's, not .grad's
        if p.grad is not None:
            p.grad.zero_()
    with context:
        loss = loss_of(model(x))
    loss.backward()


def grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def measure(model, x, make_context) -> dict:
    """Bytes (ledger peak, traced peak) and gradients of one step under a policy."""
    step(model, x, make_context())  # warm up (and create offload's directory)
    with memory.ledger() as led:
        step(model, x, make_context())
    inputs = sum(r.counted for r in led.records if r.kind == "input")
    result = {"saved": led.peak, "inputs": inputs, "grads": grads(model),
              "split": led.peak_split}
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    step(model, x, make_context())
    result["traced"] = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return result


def timings(model, x, policies, repeats: int) -> dict:
    """Best wall and CPU seconds per policy, the policies taking turns in each round so that
    load from other processes falls on all of them alike."""
    best = {name: [math.inf, math.inf] for name, _ in policies}
    for _ in range(repeats):
        for name, make in policies:
            wall, cpu = time.perf_counter(), time.process_time()
            step(model, x, make())
            best[name][0] = min(best[name][0], time.perf_counter() - wall)
            best[name][1] = min(best[name][1], time.process_time() - cpu)
    return best


def relative_error(grads, exact) -> float:
    """The worst parameter's ||g - exact|| / ||exact||."""
    return max(float(np.linalg.norm(g - e) / max(np.linalg.norm(e), 1e-30))
               for g, e in zip(grads, exact))


def run(title: str, model, x, repeats: int, depth: int) -> list:
    segments = max(1, round(math.sqrt(depth)))
    exact = measure(model, x, Nothing)
    # the planner's default budget is on the whole-step peak: a quarter of no policy's, and
    # half; the same quarter of the saved bytes only (budget_on="saved") for comparison
    budget = exact["traced"] // 4
    start = time.perf_counter()
    quarter_plan = memory.plan(model, x, budget, loss_fn=loss_of)
    planning = time.perf_counter() - start
    peak_plan = memory.plan(model, x, exact["traced"] // 2, loss_fn=loss_of)
    plan = memory.plan(model, x, exact["saved"] // 4, loss_fn=loss_of, budget_on="saved")
    policies = [
        ("none", Nothing),
        (f"checkpoint every sqrt(n) ({segments} runs)",
         lambda: memory.policy({"": memory.recompute(segments=segments)}, model=model)),
        ("bfloat16", lambda: memory.cast("bfloat16")),
        ("float16", lambda: memory.cast("float16")),
        ("int8", lambda: memory.quantize(8)),
        ("int4", lambda: memory.quantize(4)),
        ("int2", lambda: memory.quantize(2)),
        ("int2 groups of 64, stochastic",
         lambda: memory.quantize(2, per="group", group_size=64, rounding="stochastic")),
        ("offload", memory.offload),
    ]
    if plan.policy is not None:
        policies.append(("planner (25 % of saved bytes)", lambda: plan.policy))
    if peak_plan.policy is not None:
        policies.append(("planner (50 % of step peak)", lambda: peak_plan.policy))
    if quarter_plan.policy is not None:
        policies.append(("planner (25 % of step peak)", lambda: quarter_plan.policy))
    results = {name: exact if name == "none" else measure(model, x, make)
               for name, make in policies}
    seconds = timings(model, x, policies, repeats)
    wall0, cpu0 = seconds["none"]
    rows = []
    for name, _ in policies:
        result = results[name]
        wall, cpu = seconds[name]
        activations = result["saved"] - result["inputs"]
        rows.append((name, result["saved"], exact["saved"] / max(1, result["saved"]),
                     (exact["saved"] - exact["inputs"]) / max(1, activations), result["traced"],
                     wall, wall / wall0 - 1, cpu / cpu0 - 1,
                     relative_error(result["grads"], exact["grads"])))
    print(f"\n{title}: budget on the whole-step peak (the default), a quarter of no policy's: "
          f"{memory.format_bytes(budget)} (planning took {planning:.1f} s)")
    print(quarter_plan)
    print(f"\n{title}: budget on the whole-step peak, half of no policy's")
    print(peak_plan)
    print(f"\n{title}: budget on saved bytes (budget_on='saved'), a quarter of no policy's")
    print(plan)
    print_table(rows)
    print_split([(name, results[name]["split"]) for name, _ in policies])
    return rows


def print_table(rows) -> None:
    header = ("policy", "saved peak", "fewer", "fewer (activations)", "traced peak", "step",
              "extra time", "extra CPU", "grad rel. error")
    lines = [header]
    for name, saved, ratio, ratio_activations, traced, seconds, extra, extra_cpu, error in rows:
        lines.append((name, memory.format_bytes(saved), f"{ratio:.1f}x",
                      f"{ratio_activations:.1f}x" if ratio_activations < 1e4 else "all",
                      memory.format_bytes(traced), f"{seconds * 1e3:.0f} ms",
                      f"{extra * 100:+.0f} %", f"{extra_cpu * 100:+.0f} %", f"{error:.1e}"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for index, line in enumerate(lines):
        print("| " + " | ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                                for i, (cell, w) in enumerate(zip(line, widths))) + " |")
        if index == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def print_split(splits) -> None:
    """What the ledger found at each policy's step peak (its own run, under the ledger): saved
    activations still resident, parameter gradients made so far, and the rest (workspaces,
    gradients flowing through backward, saved tensors read back), with the step's place."""
    print("\n| policy | step peak (ledger) | saved | gradients | transient | reached at |")
    print("|---|---|---|---|---|---|")
    for name, split in splits:
        if split is None:
            continue
        cells = [memory.format_bytes(split[key])
                 for key in ("peak", "saved", "gradients", "transient")]
        print(f"| {name} | " + " | ".join(cells) + f" | {split['where']} |")


def digits(epochs: int, seeds, only=None) -> None:
    """Train the demo's digits CNN per saver (on the model's modules, the loss left exact) and
    print test accuracy against no policy, seed by seed (bfloat16 and 8-bit show how far a
    nearly exact run drifts from no policy's by chance), then each saver's mean difference
    with its standard error: one run moves by a point on chance alone, so only the mean over
    many seeds can tell a saver that costs half a point from one that costs nothing."""
    from hookgrad.demo import data as digit_data
    from hookgrad.demo import model as demo_model
    from hookgrad.demo.optional import Notes
    from hookgrad.demo.training import train

    notes = Notes()
    data = digit_data.load(0, notes)
    variants = [("none", lambda: None),
                ("bfloat16", lambda: memory.cast("bfloat16")),
                ("int8", lambda: memory.quantize(8)),
                ("int2 per channel", lambda: memory.quantize(2)),
                ("int2 groups of 64", lambda: memory.quantize(2, per="group", group_size=64)),
                ("int2 groups of 64, stochastic",
                 lambda: memory.quantize(2, per="group", group_size=64, rounding="stochastic"))]
    if only:
        unknown = set(only) - {name for name, _ in variants}
        if unknown:
            raise SystemExit(f"--savers: no saver named {sorted(unknown)}; "
                             f"choose from {[name for name, _ in variants]}")
        variants = [variants[0]] + [v for v in variants[1:] if v[0] in only]
    summary = []
    print(f"\ndigits CNN, {epochs} epochs: test accuracy (points against no policy)")
    print("| saver | " + " | ".join(f"seed {seed}" for seed in seeds) + " | mean |")
    print("|---" * (len(seeds) + 2) + "|")
    base = {}
    for name, make in variants:
        cells, differences = [], []
        for seed in seeds:
            saver = make()
            policy = None if saver is None else memory.policy({"*": saver})
            run = train(demo_model.build(seed, notes), data, epochs, 64, seed, name,
                        policy=policy, echo=lambda *a: None)
            base.setdefault(seed, run.accuracy)
            differences.append((run.accuracy - base[seed]) * 100)
            cells.append(f"{run.accuracy * 100:.1f} % ({differences[-1]:+.1f})")
        print(f"| {name} | " + " | ".join(cells) + f" | {np.mean(differences):+.2f} |",
              flush=True)
        if name != "none":
            error = np.std(differences, ddof=1) / np.sqrt(len(seeds)) if len(seeds) > 1 else 0.0
            summary.append((name, np.mean(differences), error,
                            np.mean(np.abs(differences) <= 0.5)))
    print(f"\nover {len(seeds)} seeds: mean difference in points, its standard error, the mean "
          "+- 2 standard errors, and the share of seeds within 0.5 points")
    for name, mean, error, within in summary:
        print(f"  {name:30s} {mean:+.2f} +- {error:.2f}  [{mean - 2 * error:+.2f}, "
              f"{mean + 2 * error:+.2f}]  {within:.0%}")


def _seeds(text: str) -> list[int]:
    """'0,1,5' or '0-29' (or both mixed) as a list of seeds."""
    seeds = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller models, for a smoke run")
    parser.add_argument("--digits", type=int, default=0, metavar="EPOCHS",
                        help="only train the demo's digits CNN under 2-bit savers")
    parser.add_argument("--seeds", default="0,1,2,3,4",
                        help="seeds for --digits: '0,1,2' or '0-29' (default 0,1,2,3,4)")
    parser.add_argument("--savers", default="",
                        help="with --digits: only these savers, named as printed and "
                             "separated by ';' (their names hold commas)")
    args = parser.parse_args()
    if args.digits:
        seeds = _seeds(args.seeds)
        only = [name.strip() for name in args.savers.split(";") if name.strip()]
        digits(args.digits, seeds, only)
        return
    hookgrad.manual_seed(0)
    depth, width, batch = (4, 128, 32) if args.quick else (16, 1024, 256)
    repeats = 1 if args.quick else 5
    run(f"MLP {depth} x {width}, batch {batch}", mlp(depth, width),
        hookgrad.randn(batch, width), repeats, depth)
    run("CNN 3 conv blocks, batch 64 x 3 x 32 x 32", cnn(),
        hookgrad.randn(16 if args.quick else 64, 3, 32, 32), repeats, 3)
    np.set_printoptions()


if __name__ == "__main__":
    main()
