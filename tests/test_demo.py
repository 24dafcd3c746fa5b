"""`hookgrad demo`: runs end to end (subprocess, temporary output directory), writes what it
says, and degrades with a clear message for each missing optional package or hookgrad piece."""
import argparse
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

import hookgrad
from hookgrad import demo
from hookgrad.capture import load

OPTIONAL = {"tqdm": "tqdm", "matplotlib": "matplotlib", "sklearn": "scikit-learn",
            "safetensors": "safetensors"}
FIGURES = ("feature_maps.png", "saved_bytes.png", "memory_timeline.png", "loss_curves.png")
HINT = "pip install hookgrad[demo]"

BLOCKING_RUNNER = """
import importlib.abc, sys
BLOCKED = set(sys.argv[1].split(","))

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
from hookgrad.__main__ import main
sys.exit(main(sys.argv[2:]))
"""


def run_demo(out, *options, blocked=()):
    command = [sys.executable, "-c", BLOCKING_RUNNER, ",".join(blocked) or "-", "demo",
               "--out", str(out), *options]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def available(module):
    return importlib.util.find_spec(module) is not None


def test_help_documents_the_options():
    script = Path(sys.executable).parent / "hookgrad"
    done = subprocess.run([str(script), "demo", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    for option in ("--quick", "--epochs", "--out", "--seed", HINT):
        assert option in done.stdout


def test_quick_demo_runs_and_writes_its_files(tmp_path):
    out = tmp_path / "demo-output"
    stdout = run_demo(out, "--quick")
    for module, package in OPTIONAL.items():  # the fallbacks, where this env lacks a package
        assert (f"{package} is not installed" in stdout) == (not available(module))
    for text in ("test accuracy", "no policy", "planned policy", "step time",
                 "saved tensors per module", "meets the budget", f"written to {out}/"):
        assert text in stdout

    results = json.loads((out / "results.json").read_text())
    plain, planned = results["runs"]
    assert plain["test_accuracy"] > 0.8 and planned["test_accuracy"] > 0.8
    assert planned["saved_bytes_peak"] <= plain["saved_bytes_peak"] / 4
    assert len(plain["losses"]) == len(planned["losses"]) == 3 * 23

    run = load(out / "capture")
    assert run.keys() == ["conv1.output", "fc2.grad_output", "fc2.grad_input"]
    assert run["conv1.output"][0].shape == (8, 8, 8, 8)
    assert [a.shape for a in run["fc2.grad_input"]] == [(8, 64)]
    extension = ".safetensors" if available("safetensors") else ".npy"
    assert all(r.file.endswith(extension) for r in run.records())
    for name in FIGURES:
        assert (out / name).is_file() == available("matplotlib"), name

    # the planner's measured costs are kept in the output directory; a fresh run without them
    # (another process, its own timings) chooses the same plan
    assert "planner_costs.json" in stdout and (out / "planner_costs.json").is_file()
    again = tmp_path / "again"
    again.mkdir()
    run_demo(again, "--quick", "--epochs", "1")
    replanned = json.loads((again / "results.json").read_text())
    assert results["plan_choices"] and replanned["plan_choices"] == results["plan_choices"]


def test_demo_without_optional_packages_falls_back_with_clear_messages(tmp_path):
    stdout = run_demo(tmp_path, "--epochs", "1", blocked=OPTIONAL)
    for package in OPTIONAL.values():
        line = next(line for line in stdout.splitlines()
                    if line.startswith(f"note: {package} is not installed"))
        assert HINT in line
    assert "synthetic 8x8 digits" in stdout
    assert "epoch 1/1" in stdout  # plain progress lines instead of tqdm
    assert not any((tmp_path / name).exists() for name in FIGURES)
    records = load(tmp_path / "capture").records()
    assert records and all(r.file.endswith(".npy") for r in records)
    assert np.load(tmp_path / "capture" / records[0].file).shape == records[0].shape
    assert json.loads((tmp_path / "results.json").read_text())["runs"][0]["test_accuracy"] > 0.5


def test_demo_without_the_memory_package_trains_once_and_says_so(tmp_path, monkeypatch):
    monkeypatch.delattr(hookgrad, "memory", raising=False)
    monkeypatch.setitem(sys.modules, "hookgrad.memory", None)  # import fails
    for module in ("matplotlib", "sklearn", "tqdm"):  # not what this test is about: faster
        monkeypatch.setitem(sys.modules, module, None)
    lines = []
    args = argparse.Namespace(quick=False, epochs=1, out=str(tmp_path), seed=0)
    assert demo.run(args, echo=lines.append) == 0
    text = "\n".join(lines)
    assert "note: hookgrad.memory is not available in this build" in text
    assert "planned policy" not in text
    assert len(json.loads((tmp_path / "results.json").read_text())["runs"]) == 1


def test_a_layer_missing_from_hookgrad_nn_gets_a_stand_in_with_a_note(monkeypatch):
    from hookgrad.demo import model as cnn
    from hookgrad.demo.optional import Notes

    for name in ("Conv2d", "Linear", "ReLU", "MaxPool2d"):
        monkeypatch.delattr(hookgrad.nn, name)
    lines = []
    model = cnn.build(0, Notes(lines.append))
    assert lines == [f"note: hookgrad.nn.{name} is not in this build: using a stand-in built on "
                     "hookgrad.nn.functional" for name in ("Conv2d", "Linear", "ReLU",
                                                          "MaxPool2d")]
    logits = model(hookgrad.randn(5, 1, 8, 8))
    logits.sum().backward()
    assert tuple(logits.shape) == (5, 10) and model.conv1.weight.grad is not None
