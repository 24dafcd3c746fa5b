"""The workloads of benchmarks/compare.py build and take one step under hookgrad (nothing is
timed here: the benchmark itself is run by hand or by `make bench`)."""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


workloads = _load("workloads")


@pytest.mark.parametrize("name", list(workloads.WORKLOADS))
def test_workload_takes_a_step_under_hookgrad(name):
    step = workloads.build(name, "hookgrad")
    step()


def test_training_workloads_update_the_parameters():
    import hookgrad
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Linear(3, 2)
    before = model.weight.detach().numpy().copy()
    step = workloads._train(hookgrad, model, hookgrad.ones(4, 3), lambda out: out.sum())
    step()
    assert not np.array_equal(before, model.weight.detach().numpy())


def test_hooked_workloads_put_one_forward_hook_on_every_module():
    import hookgrad
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 2), hookgrad.nn.ReLU())
    workloads._train(hookgrad, model, hookgrad.ones(4, 3), lambda out: out.sum(), hooked=True)
    assert [len(module._forward_hooks) for module in model.modules()] == [1, 1, 1]


def test_quick_flag_runs_without_timing(capsys):
    compare = _load("compare")
    compare.main(["--quick", "--workloads", "small_ops"])
    assert "ok hookgrad small_ops" in capsys.readouterr().out


def test_cpu_time_flag_serves_process_cpu_time():
    # the child protocol alone (one framework, no parent): a step answered in process CPU time
    import subprocess

    child = subprocess.Popen([sys.executable, str(BENCHMARKS / "compare.py"), "--child",
                              "hookgrad", "--cpu-time", "--sample", "0.001", "--workloads",
                              "small_ops"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    out, _ = child.communicate("small_ops\n", timeout=300)
    ready, seconds = out.splitlines()
    assert ready == '["small_ops"]' and float(seconds) > 0


def test_paired_forward_hook_rounds_leave_no_hook_behind():
    import hookgrad
    hook_cost = _load("hook_cost")
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 2), hookgrad.nn.ReLU())
    seen = []
    step = workloads._train(hookgrad, model, hookgrad.ones(4, 3), lambda out: out.sum())

    def counting_step():
        seen.append(sum(len(m._forward_hooks) for m in model.modules()))
        step()

    ratios = hook_cost.paired_ratios(counting_step, list(model.modules()), rounds=3,
                                     sample=0.001)
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    assert set(seen) == {0, 3}  # each half ran with a hook on all three modules, or none
    assert all(len(m._forward_hooks) == 0 for m in model.modules())


@pytest.mark.parametrize("n", [1, 2, 5, 40, 41])
def test_median_interval_brackets_the_median(n):
    hook_cost = _load("hook_cost")
    values = list(np.random.default_rng(n).permutation(n) / 7.0)
    low, middle, high = hook_cost.median_interval(values)
    assert middle == pytest.approx(float(np.median(values)))
    assert low <= middle <= high
    if n >= 40:  # a real interval: neither end is the extreme value
        assert min(values) < low and high < max(values)


def test_mygrad_child_gets_hookgrads_malloc_thresholds():
    from hookgrad._allocator import MMAP_THRESHOLD, TRIM_THRESHOLD
    compare = _load("compare")
    env = compare.peer_environment("mygrad", {"PATH": "/bin"})
    assert env["MALLOC_MMAP_THRESHOLD_"] == str(MMAP_THRESHOLD)
    assert env["MALLOC_TRIM_THRESHOLD_"] == str(TRIM_THRESHOLD)
    # torch and hookgrad keep their own; a user's malloc settings are left alone
    assert compare.peer_environment("torch", {"PATH": "/bin"}) == {"PATH": "/bin"}
    assert compare.peer_environment("hookgrad", {"PATH": "/bin"}) == {"PATH": "/bin"}
    mine = {"MALLOC_ARENA_MAX": "2"}
    assert compare.peer_environment("mygrad", mine) == mine
