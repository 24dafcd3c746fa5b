"""Does the planner's time estimate hold, and do its plans repeat? (run by hand)

    .venv/bin/python benchmarks/planner.py [--quick] [--clock cpu|wall] [--repeats N]
        [--time-limit SECONDS] [--models demo,mlp,cnn] [--budget-on peak|saved]

For the demo's digits CNN (its training loss, a batch of 64) and the deep MLP and small CNN of
benchmarks/memory.py, with the planner's default budget, on the whole-step peak, of half of
no policy's (as the demo plans; ``--budget-on saved``: a quarter of the saved bytes): the
plan's estimated
extra time per step, the extra time ``plan`` measured (its check), and the extra time
measured again afterwards, each with its standard error, and the estimate's error against
each measurement with the standard error of that error (aim: within +-25 %). The estimate is
scaled by the plan's parts timed before the plan runs (each saver on the modules the plan
gives it: printed under each plan). All three timings pair every plan step with a step
without policy and sample until the standard error is 10 % of the extra time or a time limit
passes: ``--time-limit`` (default 60 s) for the parts and the check, twice that for the
second measurement (memory._timing).
Then the demo's plan is made in ``--repeats`` fresh processes (different hash seeds) and their
choices compared (aim: all the same). ``--models`` runs only some of the three (the repeats
need the demo). One BLAS thread; on a machine shared with other jobs the
figures are indicative, a quiet machine confirms them.
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys

# one BLAS thread: on a shared 2-core machine, threaded BLAS makes step times swing tenfold
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import hookgrad  # noqa: E402
from hookgrad import memory  # noqa: E402
from hookgrad.memory import _costs, _timing  # noqa: E402
from hookgrad.nn import functional  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory as benchmark  # noqa: E402  (benchmarks/memory.py: the same models)

DEMO_PLAN = """
import os
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import hookgrad
from hookgrad import memory
from hookgrad.demo import data, model
from hookgrad.demo.optional import Notes
from hookgrad.demo.training import plan_policy
notes = Notes()
digits = data.load(0, notes)
found = plan_policy(model.build(0, notes), digits, 64, {budget}, clock={clock!r},
                    budget_on={budget_on!r})
print([choice[:4] for choice in found.choices])
"""


def demo_model():
    from hookgrad.demo import data, model
    from hookgrad.demo.optional import Notes

    notes = Notes()
    digits = data.load(0, notes)
    images = hookgrad.from_numpy(digits.train_x[:64])
    labels = hookgrad.from_numpy(digits.train_y[:64])
    return model.build(0, notes), images, lambda logits: functional.cross_entropy(logits, labels)


def check(title: str, model, x, loss_fn, clock: str, time_limit: float,
          budget_on: str) -> tuple:
    peak = budget_on == "peak"
    first = memory.plan(model, x, 0, loss_fn=loss_fn, verify=False, measure=peak,
                        budget_on="saved", clock=clock)
    budget = first.baseline_memory_peak // 2 if peak else first.baseline_peak // 4
    found = memory.plan(model, x, budget, loss_fn=loss_fn, measure=peak, clock=clock,
                        time_limit=time_limit, budget_on=budget_on)
    print(f"\n{title}")
    print(found)
    if found.policy is None:
        return (title, 0.0, None, None, None, None, None, found.baseline_seconds), budget
    costs = [c for k, c in _costs.MODEL_COSTS.items() if k[0][1] == id(model)][-1]
    print("  what scaled the estimate: the plan's parts, each against no policy (ms): "
          + ", ".join(f"{name} {ms(seconds, costs.errors.get(name))}"
                      for name, seconds in costs.savers.items())
          + ("" if costs.recompute is None
             else f" recompute() {ms(costs.recompute, costs.errors.get('recompute'))}")
          + ("" if getattr(costs, "together", None) is None
             else f"; all together {ms(costs.together, costs.errors.get(_costs.TOGETHER))}"))
    # measured again, the same way, for up to twice as long
    spread: dict = {}
    again = _timing.time_contexts(
        lambda context: _step(model, x, loss_fn, context),
        {"none": lambda: None, "plan": lambda: found.policy}, 15, clock,
        time_limit=2 * time_limit, spread=spread, warm_steps=_timing.WARM_STEPS,
        warm_seconds=_timing.MEASURE_SECONDS)
    remeasured = again["plan"] - again["none"]
    # load that changes between the timings shows in their steps without policy
    print("  the step without policy in each timing: "
          f"parts {costs.baseline * 1e3:.1f} ms, check "
          f"{(found.measured_seconds - found.measured_extra_seconds) * 1e3:.1f} ms, "
          f"again {again['none'] * 1e3:.1f} ms")
    row = (title, found.estimated_extra_seconds, found.estimated_extra_error,
           found.measured_extra_seconds, found.measured_extra_error, remeasured, spread["plan"],
           found.baseline_seconds)
    return row, budget


def _step(model, x, loss_fn, context):
    if context is None:
        loss = loss_fn(model(x))
    else:
        with context:
            loss = loss_fn(model(x))
    loss.backward()


def error(estimate: float, estimate_error, measured: float, measured_error: float) -> str:
    """The estimate's relative error against a measurement, and the standard error of that
    (from both standard errors, to first order)."""
    if measured <= 0:
        return "-"
    relative = (estimate - measured) / measured
    spread = math.hypot(estimate_error or 0.0, estimate / measured * measured_error) / measured
    return f"{relative * 100:+.0f} ± {spread * 100:.0f} %"


def ms(value: float, spread) -> str:
    return f"{value * 1e3:+.1f}" + ("" if spread is None else f" ± {spread * 1e3:.1f}") + " ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller benchmark models")
    parser.add_argument("--clock", default="cpu", choices=("cpu", "wall"))
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh processes that plan the demo (default 3)")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds each timing may sample while its standard error is "
                             "above 10 %% of the extra time (default 60; the second "
                             "measurement gets twice this)")
    parser.add_argument("--models", default="demo,mlp,cnn",
                        help="which models, comma-separated (default demo,mlp,cnn)")
    parser.add_argument("--budget-on", default="peak", choices=("peak", "saved"),
                        help="budget half the whole-step peak (default, as plan() does) or "
                             "a quarter of the saved bytes")
    args = parser.parse_args()
    models = set(args.models.split(","))
    if not models <= {"demo", "mlp", "cnn"}:
        parser.error(f"--models takes demo, mlp and cnn, got {args.models!r}")
    hookgrad.manual_seed(0)
    depth, width, batch = (4, 128, 32) if args.quick else (16, 1024, 256)
    rows = []
    limit = args.time_limit
    if "demo" in models:
        model, x, loss_fn = demo_model()
        row, demo_budget = check("demo digits CNN, batch 64", model, x, loss_fn, args.clock,
                                 limit, args.budget_on)
        rows.append(row)
    if "mlp" in models:
        rows.append(check(f"MLP {depth} x {width}, batch {batch}", benchmark.mlp(depth, width),
                          hookgrad.randn(batch, width), benchmark.loss_of, args.clock, limit,
                          args.budget_on)[0])
    if "cnn" in models:
        rows.append(check("CNN 3 conv blocks", benchmark.cnn(),
                          hookgrad.randn(16 if args.quick else 64, 3, 32, 32),
                          benchmark.loss_of, args.clock, limit, args.budget_on)[0])
    unit = "CPU time" if args.clock == "cpu" else "wall time"
    print(f"\nextra {unit} per step under the plan (budget: "
          + ("half the whole-step peak)" if args.budget_on == "peak"
             else "a quarter of the saved bytes)"))
    print("(each figure ± its standard error; time limit per timing "
          f"{limit:g} s, the second measurement {2 * limit:g} s)")
    print("| model | step | estimated | measured by plan | error | measured again | error |")
    print("|---|---|---|---|---|---|---|")
    for (title, estimate, estimate_error, measured, measured_error, again, again_error,
         step) in rows:
        if measured is None:
            print(f"| {title} | {step * 1e3:.1f} ms | no plan meets the budget | | | | |")
            continue
        print(f"| {title} | {step * 1e3:.1f} ms | {ms(estimate, estimate_error)} | "
              f"{ms(measured, measured_error)} | "
              f"{error(estimate, estimate_error, measured, measured_error)} | "
              f"{ms(again, again_error)} | "
              f"{error(estimate, estimate_error, again, again_error)} |")
    if "demo" not in models:
        return
    code = DEMO_PLAN.format(budget=demo_budget, clock=args.clock, budget_on=args.budget_on)
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed)), check=True).stdout
            for seed in range(args.repeats)]
    same = all(run == runs[0] for run in runs)
    print(f"\nthe demo's plan in {args.repeats} fresh processes: "
          + ("the same choices in each" if same else "choices differ"))
    for index, run in enumerate(runs):
        print(f"  process {index}: {run.strip()}")


if __name__ == "__main__":
    main()
