"""What "no hooks registered" costs: the hook checks a user without hooks still runs, per step.

Run by hand: ``python benchmarks/hook_cost.py [--workloads small_ops mlp_b16]``.
With ``--forward-hooks``: what a forward hook on every module costs, in torch and in hookgrad
(see ``forward_hook_cost``).

Method. A step of a workload (``workloads.py``) passes a fixed set of places that ask "is a hook
set here?" and find nothing: the mode test of every public function and operator (modes are
hookgrad's ``TorchFunctionMode`` interception), the module hook test of every module call, the
engine's one flag per node (tensor, retain_grad, pre- and post-hooks), the saved-tensor hook
test of every saved tensor, the post-accumulate hook test of every leaf, the buffer-reuse test
of a formula and the optimizer's step hooks. Taking the checks out would need a second engine,
so the cost is measured as a model instead:

1. how often the step reaches each check: the call counts of the functions that hold them,
   from ``cProfile`` over a few steps (exact counts; the profiler's timing is not used);
2. what one check costs: the check's own expression timed with ``timeit`` on live objects of
   the same kind, minus the timing loop's own cost (``pass``);
3. the sum of count x cost, over the median time of an unprofiled step (process time, steps
   interleaved with nothing else in this process).

The model leaves out effects a microbenchmark cannot see (cache misses of a cold object), and
counts each check at its cost in isolation, where the timing loop's global lookups are a little
slower than a function's: an estimate, not a bound. The figure is the share of the step; the
project's target is at most 2 %.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import subprocess
import sys
import time
import timeit
from pathlib import Path

# one thread: the step is timed in process CPU time, which counts the time BLAS's idle workers
# spend spinning; with them the step looked 10x longer and the checks' share 10x smaller
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))

import workloads  # noqa: E402

import hookgrad  # noqa: E402
from hookgrad.autograd import saved as _saved  # noqa: E402
from hookgrad.nn.modules import _module_hooks  # noqa: E402
from hookgrad import overrides as _overrides  # noqa: E402
from hookgrad.optim import optimizer as _optimizer  # noqa: E402


def _live_objects() -> dict:
    """One object of each kind a check reads, as a hook-free step has them."""
    x = hookgrad.ones(4, requires_grad=True)
    y = x * 2
    model = hookgrad.nn.Linear(2, 2)
    optimizer = hookgrad.optim.SGD(model.parameters(), lr=0.1)
    from itertools import chain
    return {"node": y.grad_fn, "captures": {}, "leaf": x, "module": model, "opt": optimizer,
            "chain": chain, "mh": _module_hooks, "ov": _overrides, "sv": _saved,
            "op": _optimizer, "saved_entry": None}


# site name -> (functions whose calls reach it once each, the check as the code writes it)
CHECKS = {
    "mode test (public functions, operators)": (
        [("overrides.py", "public"), ("_untracked.py", "operator")],
        "if ov._mode_stack: pass"),
    "module hooks (each module call)": (
        [("_module_hooks.py", "_call_impl")],
        "if not (module._backward_hooks or module._backward_pre_hooks or module._forward_hooks "
        "or module._forward_pre_hooks or mh._global_backward_pre_hooks or "
        "mh._global_backward_hooks or mh._global_forward_hooks or mh._global_forward_pre_hooks)"
        ": pass"),
    "engine: hook flag of each node": (
        [("engine.py", "_validate")],
        "if node._hooked or captures: pass"),
    "saved-tensor hooks (each save)": (
        [("saved.py", "__init__")],
        "pair = sv._hook_state.top\nif pair is None: pass"),
    "post-accumulate hooks (each leaf)": (
        [("node.py", "apply")],
        "hooks = leaf._extra.post_accumulate_hooks if leaf._extra is not None else None\n"
        "if hooks: pass"),
    "buffer reuse: hooks on the node": (
        [("_base.py", "owned_grad")],
        "if node._hooked: pass"),
    "array formula: saved tensor packed by a hook": (
        [("saved.py", "plain_like")],
        "if node._hooked: pass"),  # one slot read and a test, as ``plain_like``'s ``_hooked``
    "optimizer step hooks": (
        [("optimizer.py", "wrapper")],
        "for h in list(chain(op._global_step_pre_hooks.values(), "
        "opt._optimizer_step_pre_hooks.values())): pass\n"
        "for h in list(chain(opt._optimizer_step_post_hooks.values(), "
        "op._global_step_post_hooks.values())): pass"),
}


def _check_costs() -> dict:
    """Seconds per check, net of the timing loop."""
    objects = _live_objects()
    number = 200_000

    def best(statement: str) -> float:
        return min(timeit.repeat(statement, globals=objects, number=number, repeat=7,
                                 timer=time.process_time)) / number

    empty = best("pass")
    return {name: max(best(statement) - empty, 0.0) for name, (_, statement) in CHECKS.items()}


def _counts_per_step(step, steps: int = 20) -> dict:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(steps):
        step()
    profile.disable()
    stats = pstats.Stats(profile).stats
    counts = {}
    for name, (sites, _) in CHECKS.items():
        total = 0
        for (filename, _line, function), (_, calls, *_rest) in stats.items():
            if function in [f for _, f in sites] and any(
                    filename.endswith(file) and function == f for file, f in sites):
                total += calls
        counts[name] = total / steps
    return counts


def _step_time(step, rounds: int = 15, sample: float = 0.1) -> float:
    samples = []
    for _ in range(rounds):
        start, n = time.process_time(), 0
        while time.process_time() - start < sample:
            step()
            n += 1
        samples.append((time.process_time() - start) / n)
    samples.sort()
    return samples[len(samples) // 2]


# -- a forward hook on every module, measured in pairs -------------------------------------------
def _timed(step, count: int) -> float:
    start = time.process_time()
    for _ in range(count):
        step()
    return (time.process_time() - start) / count


def paired_ratios(step, modules, rounds: int, sample: float) -> list:
    """hooked / plain step time of one model, ``rounds`` times. Each round times the same model
    with a do-nothing forward hook on every module and without one (hooks added and removed
    between the two halves, their order alternating), so that the machine's slow drifts, which
    on a shared machine are larger than the effect, fall on both halves alike. Comparing two
    models built apart, as ``compare.py``'s hooked rows do, also compares their memory layouts."""
    def hook(module, args, output):
        return None

    step()
    count = max(1, round(sample / max(_timed(step, 1), 1e-6)))
    ratios = []
    for index in range(rounds):
        times = {}
        for hooked in ((True, False) if index % 2 == 0 else (False, True)):
            handles = [m.register_forward_hook(hook) for m in modules] if hooked else []
            step()  # untimed: the first call after a change
            times[hooked] = _timed(step, count)
            for handle in handles:
                handle.remove()
        ratios.append(times[True] / times[False])
    return ratios


def median_interval(values: list) -> tuple:
    """(low, median, high): the median and a distribution-free 95 % interval for it, from the
    order statistics n/2 -+ 1.96 sqrt(n)/2 (the sign test's normal approximation)."""
    ordered = sorted(values)
    n = len(ordered)
    half = 0.98 * n ** 0.5
    low = max(0, int(n / 2 - half))
    high = min(n - 1, int(math.ceil(n / 2 + half)) - 1)
    middle = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return ordered[low], middle, ordered[high]


def _forward_hook_child(framework: str, names: list, rounds: int, sample: float) -> None:
    if framework == "torch":
        import torch
        torch.set_num_threads(1)
    result = {}
    for name in names:
        step = workloads.build(name, framework)
        for _ in range(5):
            step()
        result[name] = paired_ratios(step, list(step.model.modules()), rounds, sample)
    print(json.dumps(result))


def forward_hook_cost(names: list, rounds: int, sample: float) -> None:
    """Each framework in its own process (one thread, process CPU time); prints the median
    hooked / plain ratio with its quartiles. The target is a median of at most 1.05."""
    print(f"forward hook on every module: hooked / plain, {rounds} paired rounds; "
          "median [95 % interval of the median]")
    print("| workload | torch | hookgrad |\n|---|---|---|")
    found = {}
    for framework in ("torch", "hookgrad"):
        output = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", framework, "--rounds",
             str(rounds), "--sample", str(sample), "--workloads", *names],
            check=True, capture_output=True, text=True).stdout
        found[framework] = json.loads(output.strip().splitlines()[-1])
    for name in names:
        cells = ["%.3f [%.3f, %.3f]" % (lambda q: (q[1], q[0], q[2]))(
            median_interval(found[fw][name])) for fw in ("torch", "hookgrad")]
        print(f"| {workloads.WORKLOADS[name][0]} | {cells[0]} | {cells[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=None,
                        choices=sorted(workloads.WORKLOADS))
    parser.add_argument("--forward-hooks", action="store_true",
                        help="measure a do-nothing forward hook on every module, paired")
    parser.add_argument("--rounds", type=int, default=40, help="paired rounds (--forward-hooks)")
    parser.add_argument("--sample", type=float, default=0.1,
                        help="seconds per half of a round (--forward-hooks)")
    parser.add_argument("--child", choices=("torch", "hookgrad"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return _forward_hook_child(args.child, args.workloads, args.rounds, args.sample)
    if args.forward_hooks:
        return forward_hook_cost(args.workloads or ["mlp", "transformer"], args.rounds,
                                 args.sample)
    args.workloads = args.workloads or ["small_ops", "mlp_b16", "mlp"]
    costs = _check_costs()
    for name in args.workloads:
        step = workloads.build(name, "hookgrad")
        if step is None:
            continue
        for _ in range(10):
            step()
        counts = _counts_per_step(step)
        seconds = _step_time(step)
        total = sum(counts[k] * costs[k] for k in CHECKS)
        print(f"\n{workloads.WORKLOADS[name][0]}: step {seconds * 1e3:.3f} ms, hook checks "
              f"{total * 1e6:.1f} us = {100 * total / seconds:.2f} % of the step")
        for k in CHECKS:
            if counts[k]:
                print(f"  {k:46s} {counts[k]:7.0f} x {costs[k] * 1e9:5.1f} ns = "
                      f"{counts[k] * costs[k] * 1e6:6.1f} us")


if __name__ == "__main__":
    main()
