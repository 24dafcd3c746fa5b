"""``hookgrad demo``: train a small CNN on 8x8 digits twice, without and with a memory policy
chosen by the planner, compare them, capture intermediates, and draw figures.

The pieces, each a worked example of the public API: ``data.py`` (load_digits), ``model.py``
(the CNN), ``training.py`` (loop, ledger, planner), ``report.py`` (tables), ``figures.py`` (PNGs).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import hookgrad

from . import data as digits
from . import model as cnn
from .optional import Notes, optional_import
from .report import format_bytes, side_by_side
from .training import RunResult, loss_of, plan_policy, train

__all__ = ["add_arguments", "run"]

BATCH_SIZE = 64
CAPTURED_IMAGES = 8
COSTS_FILE = "planner_costs.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="a short run: 3 epochs per run instead of 10 (seconds)")
    parser.add_argument("--epochs", type=int, default=None,
                        help="training epochs per run (default 10, or 3 with --quick)")
    parser.add_argument("--out", default="demo-output",
                        help="directory for the captured tensors, figures and results "
                             "(default: demo-output)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for data shuffling and weight initialisation (default 0)")


def _memory(notes: Notes) -> Optional[Any]:
    try:
        from hookgrad import memory
    except ImportError as error:
        notes.add(f"hookgrad.memory is not available in this build ({error}): no ledger, no "
                  "memory policy run")
        return None
    missing = [name for name in ("ledger", "plan") if not hasattr(memory, name)]
    if missing:
        notes.add(f"hookgrad.memory lacks {', '.join(missing)} in this build: "
                  + ("no ledger; " if "ledger" in missing else "")
                  + ("no memory policy run" if "plan" in missing else ""))
    return memory


def _capture(model: hookgrad.nn.Module, data: digits.Digits, out: Path, notes: Notes,
             echo) -> Optional[Any]:
    """Capture conv1's outputs and the last layer's gradients for a few test images."""
    from hookgrad.capture import capture, load, safetensors_available

    if not safetensors_available():
        notes.add("safetensors is not installed: the captured tensors are written as .npy "
                  "files instead (pip install safetensors, or pip install hookgrad[demo])")
    images = data.test_x[:CAPTURED_IMAGES]
    labels = data.test_y[:CAPTURED_IMAGES]
    with capture(model, layers={"conv1": ("output",), "fc2": ("grad_input", "grad_output")},
                 to=out / "capture", overwrite=True):
        loss_of(model, images, labels).backward()
    model.zero_grad()
    run = load(out / "capture")
    echo(f"\ncaptured for {len(images)} test images (hookgrad.capture, streamed to disk):")
    echo(str(run.summary()))
    return run


def _figures(matplotlib: Any, runs: List[RunResult], captured: Any, data: digits.Digits,
             out: Path) -> List[Path]:
    from . import figures  # needs matplotlib, only for figures

    plt = figures.pyplot(matplotlib)
    paths = []
    if captured is not None and "conv1.output" in captured:
        maps = captured["conv1.output"][0]
        count = min(4, len(maps))
        paths.append(figures.feature_maps(plt, data.test_x[:count], maps[:count],
                                          data.test_y[:count], out / "feature_maps.png"))
    if any(run.ledger is not None for run in runs):
        paths.append(figures.saved_bytes(plt, runs, out / "saved_bytes.png"))
    if runs and all(run.ledger is not None and run.ledger.timeline for run in runs):
        paths.append(figures.memory_timeline(runs, out / "memory_timeline.png"))
    paths.append(figures.loss_curves(plt, runs, out / "loss_curves.png"))
    return paths


def _print(*values: Any) -> None:
    print(*values, flush=True)  # before tqdm writes to stderr: keep the order on a terminal


def run(args: argparse.Namespace, echo=_print) -> int:
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    epochs = args.epochs if args.epochs is not None else (3 if args.quick else 10)
    if epochs < 1:
        raise SystemExit("hookgrad demo: --epochs must be at least 1")
    notes = Notes(echo)
    echo(f"hookgrad {hookgrad.__version__} demo: a small CNN on 8x8 digits, {epochs} epochs, "
         f"seed {args.seed}{' (quick)' if args.quick else ''}")
    tqdm = optional_import("tqdm", "tqdm", "progress is printed once per epoch", notes)
    matplotlib = optional_import("matplotlib", "matplotlib", "no PNG figures are drawn", notes)
    data = digits.load(args.seed, notes)
    echo(f"data: {data.source}; {len(data.train_x)} train / {len(data.test_x)} test images")
    memory = _memory(notes)
    ledger = getattr(memory, "ledger", None)

    echo("\n1) training without a memory policy")
    plain_model = cnn.build(args.seed, notes)
    echo(f"model: {sum(p.numel() for p in plain_model.parameters()):,} parameters")
    plain = train(plain_model, data, epochs, BATCH_SIZE, args.seed, "no policy", tqdm,
                  ledger=ledger, echo=echo)
    runs = [plain]

    plan = None
    if plain.ledger is not None and hasattr(memory, "plan"):
        # the budget is on what a user runs out of, the whole step's peak: half of the first
        # run's (its first step, measured by the ledger); a ledger that measured no peak
        # leaves the saved bytes to budget, a quarter of them
        step_peak = plain.ledger.measured_peak
        if step_peak:
            budget, options = step_peak // 2, {"budget_on": "peak"}
            echo(f"\n2) planning a memory policy for a budget of {format_bytes(budget)} "
                 f"(half the step peak of {format_bytes(step_peak)} without one)")
        else:
            budget, options = plain.ledger.peak // 4, {"budget_on": "saved"}
            echo(f"\n2) planning a memory policy for a budget of {format_bytes(budget)} "
                 f"(a quarter of the {format_bytes(plain.ledger.peak)} saved without one)")
        policy_model = cnn.build(args.seed, notes)
        # the plan is the same in every run (it is chosen on counts); the costs the planner
        # measures are kept beside the results, so a later run with the same --out reads
        # them back and estimates alike too, however loaded the machine
        plan = plan_policy(policy_model, data, BATCH_SIZE, budget,
                           costs_file=out / COSTS_FILE, **options)
        echo(str(plan))
        if plan.policy is None:
            notes.add("the planner chose no policy: the second run is skipped")
        else:
            echo("\n3) training with the planned policy")
            runs.append(train(policy_model, data, epochs, BATCH_SIZE, args.seed,
                              "planned policy", tqdm, policy=plan.policy, ledger=ledger,
                              echo=echo))

    echo("\nresults (the same initial weights and batches in both runs):")
    echo(side_by_side(runs))

    captured = _capture(plain_model, data, out, notes, echo)
    figure_paths: List[Path] = []
    if matplotlib is not None:
        figure_paths = _figures(matplotlib, runs, captured, data, out)

    results: Dict[str, Any] = {
        "epochs": epochs, "seed": args.seed, "quick": bool(args.quick), "data": data.source,
        "runs": [{"label": r.label, "test_accuracy": r.accuracy, "step_ms": r.step_ms,
                  "epoch_losses": r.epoch_losses, "losses": r.losses,
                  "saved_bytes_peak": None if r.ledger is None else r.ledger.peak,
                  "step_peak_bytes": None if r.ledger is None else r.ledger.measured_peak,
                  "saved_bytes_by_module": r.held_by_module()} for r in runs],
        "plan": None if plan is None else str(plan),
        "plan_choices": None if plan is None else [list(c[:2]) for c in plan.choices],
        "notes": notes.messages,
    }
    results_path = out / "results.json"
    results_path.write_text(json.dumps(results, indent=1, default=float))

    echo(f"\nwritten to {out}/:")
    echo(f"  {'capture/':<19} conv1.output, fc2.grad_input, fc2.grad_output as "
         f"{captured.meta.get('file_format', '?')} files + index.jsonl")
    echo(f"  {'':<19} (read back with hookgrad.capture.load, or safetensors/numpy alone)")
    for path in figure_paths:
        echo(f"  {path.name:<19} {_figure_caption(path.name)}")
    echo(f"  {results_path.name:<19} accuracies, step times, losses, saved bytes, the plan")
    if (out / COSTS_FILE).exists():
        echo(f"  {COSTS_FILE:<19} the costs the planner measured (a later run reads them back "
             "and estimates alike)")
    if notes.messages:
        echo("\nnotes (pip install hookgrad[demo] for everything):")
        for message in notes.messages:
            echo(f"  - {message}")
    echo(f"\ndone in {time.perf_counter() - started:.1f} s")
    return 0


def _figure_caption(name: str) -> str:
    return {"feature_maps.png": "the first convolution's outputs for 4 test images",
            "saved_bytes.png": "saved bytes per module, both runs",
            "memory_timeline.png": "bytes alive through one step, per module, both runs",
            "loss_curves.png": "training loss of both runs"}.get(name, "")
