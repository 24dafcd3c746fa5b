"""Does the planner's time estimate hold, and do its plans repeat? (run by hand)

    .venv/bin/python benchmarks/planner.py [--quick] [--clock cpu|wall] [--repeats N]

For the demo's digits CNN (its training loss, a batch of 64) and the deep MLP and small CNN of
benchmarks/memory.py, with a budget of a quarter of the saved bytes: the plan's estimated
extra time per step, the extra time ``plan`` measured, and the extra time measured again
afterwards over more rounds (each with its standard error), with the estimate's error against
each (aim: within +-25 %). The estimate is scaled by the plan's parts timed before the plan
runs (each saver on the modules the plan gives it: printed under each plan).
Then the demo's plan is made in ``--repeats`` fresh processes (different hash seeds) and their
choices compared (aim: all the same). One BLAS thread; on a machine shared with other jobs the
figures are indicative, a quiet machine confirms them.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

# one BLAS thread: on a shared 2-core machine, threaded BLAS makes step times swing tenfold
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import hookgrad  # noqa: E402
from hookgrad import memory  # noqa: E402
from hookgrad.memory import _costs  # noqa: E402
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
found = plan_policy(model.build(0, notes), digits, 64, {budget}, clock={clock!r})
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


def check(title: str, model, x, loss_fn, clock: str) -> tuple:
    first = memory.plan(model, x, 0, loss_fn=loss_fn, verify=False, measure=False, clock=clock)
    budget = first.baseline_peak // 4
    found = memory.plan(model, x, budget, loss_fn=loss_fn, measure=False, clock=clock)
    print(f"\n{title}")
    print(found)
    if found.policy is None:
        return (title, 0.0, None, None, None, None, found.baseline_seconds), budget
    costs = [c for k, c in _costs.MODEL_COSTS.items() if k[0][1] == id(model)][-1]
    print("  what scaled the estimate: the plan's parts, each against no policy (ms): "
          + ", ".join(f"{name} {seconds * 1e3:+.2f}" for name, seconds in costs.savers.items())
          + ("" if costs.recompute is None else f" recompute() {costs.recompute * 1e3:+.2f}"))
    # measured again, over three times the rounds
    saved = _costs.MEASURE_SECONDS
    _costs.MEASURE_SECONDS = 3 * saved
    spread: dict = {}
    try:
        again = _costs.time_contexts(
            lambda context: _step(model, x, loss_fn, context),
            {"none": lambda: None, "plan": lambda: found.policy}, 15, clock, spread=spread,
            warm_steps=_costs.WARM_STEPS, warm_seconds=saved)
    finally:
        _costs.MEASURE_SECONDS = saved
    remeasured = again["plan"] - again["none"]
    row = (title, found.estimated_extra_seconds, found.measured_extra_seconds,
           found.measured_extra_error, remeasured, spread["plan"], found.baseline_seconds)
    return row, budget


def _step(model, x, loss_fn, context):
    if context is None:
        loss = loss_fn(model(x))
    else:
        with context:
            loss = loss_fn(model(x))
    loss.backward()


def error(estimate: float, measured: float) -> str:
    if measured <= 0:
        return "-"
    return f"{(estimate - measured) / measured * 100:+.0f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller benchmark models")
    parser.add_argument("--clock", default="cpu", choices=("cpu", "wall"))
    parser.add_argument("--repeats", type=int, default=3,
                        help="fresh processes that plan the demo (default 3)")
    args = parser.parse_args()
    hookgrad.manual_seed(0)
    depth, width, batch = (4, 128, 32) if args.quick else (16, 1024, 256)
    rows = []
    model, x, loss_fn = demo_model()
    row, demo_budget = check("demo digits CNN, batch 64", model, x, loss_fn, args.clock)
    rows.append(row)
    rows.append(check(f"MLP {depth} x {width}, batch {batch}", benchmark.mlp(depth, width),
                      hookgrad.randn(batch, width), benchmark.loss_of, args.clock)[0])
    rows.append(check("CNN 3 conv blocks", benchmark.cnn(),
                      hookgrad.randn(16 if args.quick else 64, 3, 32, 32), benchmark.loss_of,
                      args.clock)[0])
    unit = "CPU time" if args.clock == "cpu" else "wall time"
    print(f"\nextra {unit} per step under the plan (budget: a quarter of the saved bytes)")
    print("(each measurement ± its standard error, from the spread of its rounds)")
    print("| model | step | estimated | measured by plan | error | measured again | error |")
    print("|---|---|---|---|---|---|---|")
    for title, estimate, measured, measured_error, again, again_error, step in rows:
        if measured is None:
            print(f"| {title} | {step * 1e3:.1f} ms | no plan meets the budget | | | | |")
            continue
        print(f"| {title} | {step * 1e3:.1f} ms | {estimate * 1e3:+.1f} ms | "
              f"{measured * 1e3:+.1f} ± {measured_error * 1e3:.1f} ms | "
              f"{error(estimate, measured)} | {again * 1e3:+.1f} ± {again_error * 1e3:.1f} ms | "
              f"{error(estimate, again)} |")
    code = DEMO_PLAN.format(budget=demo_budget, clock=args.clock)
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
