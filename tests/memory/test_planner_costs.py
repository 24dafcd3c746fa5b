"""The planner's cost model: the choice rests on counts alone (noisy or even reordered timings
move the estimate, never the plan), and the costs measured on the model scale those counts
into the estimate (no timed assertions: timings are injected)."""
import random

import pytest
import torch

import hookgrad
from hookgrad import memory, nn
from hookgrad.memory import _costs, _timing, _work, planner
from test_policy import Affine  # the same small model the policy tests train

# the default candidates' 8-bit saver (dense codes), and the one asked for by name
Q8 = repr(memory.quantize(8, sparse=False))
NOMINAL = {  # seconds each context adds, on the decision grid's bucket centres (powers of 2)
    "nothing stored": 2.0 ** -10,
    "cast('bfloat16')": 2.0 ** -9,
    Q8: 2.0 ** -9,
    "quantize(8, per='channel')": 2.0 ** -9,
    "offload()": 2.0 ** -7,
    "recompute": 2.0 ** -6,
}
STEP = 2.0 ** -5


def _model(depth=6, width=16, framework="hookgrad"):
    if framework == "torch":  # the same blocks as a torch model: planned through torch's hooks
        torch.manual_seed(0)
        return torch.nn.Sequential(*[torch.nn.Sequential(
            torch.nn.Linear(width, width, bias=False), torch.nn.Tanh()) for _ in range(depth)])
    hookgrad.manual_seed(0)
    return nn.Sequential(*[nn.Sequential(Affine(width, width), nn.Tanh())
                           for _ in range(depth)])


def _input(framework="hookgrad", rows=64, width=16):
    return (torch.randn if framework == "torch" else hookgrad.randn)(rows, width)


def _loss(out):
    return out.pow(2).sum()


def _inject(monkeypatch, spread: float, seed: int, nominal: dict = NOMINAL) -> None:
    """Timings drawn around ``nominal``, each off by a factor of up to ``1 + spread`` either way
    (log-uniform): what the planner measures on the model."""
    rng = random.Random(seed)

    def noisy(seconds):
        return seconds * (1 + spread) ** rng.uniform(-1, 1)

    def time_contexts(step, contexts, rounds, clock="cpu", **options):
        for make in contexts.values():  # the steps run, so policies see the model
            step(make())
        stored = STEP + noisy(nominal["nothing stored"])
        seconds = {name: STEP if name == "none" else
                   stored if name == "nothing stored" else
                   stored + noisy(nominal.get(name, 2.0 ** -8))  # "plan": its own figure
                   for name in contexts if name != _costs.TOGETHER}
        if _costs.TOGETHER in contexts:  # the parts' sum, the policy's own work once
            parts = [name for name in seconds if name != "none"]
            seconds[_costs.TOGETHER] = (stored + sum(seconds[p] - stored for p in parts)
                                        + nominal.get(_costs.TOGETHER, 0.0))
        return seconds

    monkeypatch.setattr(planner, "time_contexts", time_contexts)


def _plan(model, x, budget, **options):
    return memory.plan(model, x, budget, loss_fn=_loss, measure=False, recalibrate=True,
                       **options)


def _choices(found):
    return [c[:4] for c in found.choices], repr(found.policy)


@pytest.mark.parametrize("framework", ["hookgrad", "torch"])
def test_noisy_timings_move_the_estimate_but_not_the_plan(monkeypatch, framework):
    # timings off by up to 8x either way: the savers' and recompute's measured order changes
    # from draw to draw, and the plan does not
    model, x = _model(framework=framework), _input(framework)
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    plans, estimates = [], set()
    for draw in range(6):
        _inject(monkeypatch, spread=7.0, seed=draw)
        found = _plan(model, x, budget, verify=False)
        plans.append(_choices(found))
        estimates.add(found.estimated_extra_seconds)
    assert plans[0][0] and found.feasible
    assert all(plan == plans[0] for plan in plans)
    assert len(estimates) == 6  # the estimate follows what was measured


def test_the_plan_does_not_depend_on_the_measured_order_of_the_candidates(monkeypatch):
    # one process measures offload as the cheapest saver, another as the dearest: same plan
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    cheap = dict(NOMINAL, **{"offload()": 2.0 ** -14, Q8: 2.0 ** -5})
    dear = dict(NOMINAL, **{"offload()": 2.0 ** -4, Q8: 2.0 ** -14})
    found = []
    for nominal in (cheap, dear):
        _inject(monkeypatch, spread=0.0, seed=0, nominal=nominal)
        found.append(_plan(model, x, budget, verify=False))
    assert found[0].choices and _choices(found[0]) == _choices(found[1])
    assert found[0].estimated_extra_seconds != found[1].estimated_extra_seconds


@pytest.mark.parametrize("framework", ["hookgrad", "torch"])
def test_the_estimate_is_what_the_model_measured(monkeypatch, framework):
    # a plan that stores every unit it can with one saver is estimated at what that saver
    # (and the policy around it) added on the whole model
    _inject(monkeypatch, spread=0.0, seed=0)
    model, x = _model(framework=framework), _input(framework)
    first = _plan(model, x, 0, verify=False, candidates=[memory.quantize(8)])
    unit = 64 * 16 * 4
    budget = first.baseline_peak - 5 * unit + 5 * unit // 4 + 1024
    found = _plan(model, x, budget, candidates=[memory.quantize(8)])
    assert found.feasible and len(found.choices) == 5
    expected = NOMINAL["nothing stored"] + NOMINAL["quantize(8, per='channel')"]
    assert found.estimated_extra_seconds == pytest.approx(expected)
    text = str(found)
    assert "extra CPU time per step" in text and f"+{expected * 1e3:.1f} ms" in text
    assert found.measured_extra_seconds == pytest.approx(NOMINAL["nothing stored"] + 2.0 ** -8)
    assert found.estimate_error == pytest.approx(expected / (2.0 ** -10 + 2.0 ** -8) - 1)


def test_a_recompute_costs_its_work_scaled_by_what_the_plans_recomputes_measured(monkeypatch):
    # each recompute's seconds are its weight (checkpointing plus forward work) times what the
    # plan's recomputes measured together over their weights (with the policy's own work,
    # which the estimate then counts once, at that scale): the estimate is that measurement
    _inject(monkeypatch, spread=0.0, seed=0)
    model, x = _model(depth=9), hookgrad.randn(64, 16)
    first = _plan(model, x, 0, verify=False, candidates=[memory.recompute()])
    found = _plan(model, x, first.baseline_peak * 7 // 10, verify=False,
                  candidates=[memory.recompute()])
    assert found.choices
    backend = memory._backend.backend_for(model)
    work = _work.ModuleWork(backend)
    handles = backend.module_hooks(
        lambda module, args: None,
        lambda module, args, output: work.add(_name_of(model, module), module, args, output))
    try:
        with memory.Ledger() as led:
            _loss(model(x)).backward()
    finally:
        for handle in handles:
            handle.remove()
    policy = _work.policy_weight(sum(work.calls.values()), len(led.records))
    measured = NOMINAL["nothing stored"] + NOMINAL["recompute"]  # against no policy
    assert found.estimated_extra_seconds == pytest.approx(measured)
    rerun = found.per_step_seconds["policy"] / policy
    assert set(found.per_step_seconds) == {"policy"}
    block = work.work("0")  # every block does the same work
    assert all(work.work(str(i)) == pytest.approx(block) for i in range(9))
    weights = 0.0
    for modules, entry, _, _, cost in found.choices:
        segments = int(entry.split("segments=")[1].rstrip(")")) if "segments=" in entry else 2
        blocks = (cost / rerun - (segments - 1) * _work.RECOMPUTE_FIXED) / block
        assert blocks >= 1 and blocks == pytest.approx(round(blocks))
        weights += cost / rerun
    assert rerun == pytest.approx(measured / (policy + weights))


def _name_of(model, module):
    return next(name for name, m in model.named_modules() if m is module)


def test_the_clock_is_checked_and_named():
    model, x = _model(depth=2), hookgrad.randn(8, 16)
    with pytest.raises(ValueError, match="clock"):
        memory.plan(model, x, 0, loss_fn=_loss, clock="gpu")
    found = memory.plan(model, x, 0, loss_fn=_loss, measure=False, verify=False, clock="wall")
    assert found.clock == "wall" and "wall time" in str(found)


CALIBRATIONS = ("MODEL_COSTS", "SAVER_RATES")


@pytest.fixture
def fresh_process():
    """The process's calibrations, put back as they were after the test empties them."""
    kept = {name: dict(getattr(_costs, name)) for name in CALIBRATIONS}
    yield
    for name, values in kept.items():
        getattr(_costs, name).clear()
        getattr(_costs, name).update(values)


def test_a_costs_file_makes_a_later_process_estimate_alike(monkeypatch, tmp_path,
                                                           fresh_process):
    model, x = _model(), hookgrad.randn(64, 16)
    path = tmp_path / "costs.json"
    _inject(monkeypatch, spread=0.0, seed=0)
    budget = memory.plan(model, x, 0, loss_fn=_loss, measure=False,
                         verify=False).baseline_peak // 3

    def plan_in_a_new_process(nominal, **options):
        for name in CALIBRATIONS:  # as in a new process
            getattr(_costs, name).clear()
        _inject(monkeypatch, spread=0.0, seed=0, nominal=nominal)
        found = memory.plan(model, x, budget, loss_fn=_loss, measure=False, verify=False,
                            **options)
        return _choices(found), found.estimated_extra_seconds

    first = plan_in_a_new_process(NOMINAL, costs_file=path)
    assert path.exists() and not list(tmp_path.glob(".costs-*"))  # no temporary file left
    # another process on a loaded machine measures offload as the cheapest saver: the same
    # choices, another estimate; with the file, the first estimate too
    swapped = dict(NOMINAL, **{"offload()": 2.0 ** -12, Q8: 2.0 ** -6})
    elsewhere = plan_in_a_new_process(swapped)
    assert elsewhere[0] == first[0] and elsewhere[1] != first[1]
    assert plan_in_a_new_process(swapped, costs_file=path) == first
    assert plan_in_a_new_process(swapped, costs_file=path, recalibrate=True) == elsewhere


def test_a_costs_file_that_is_not_one_is_refused(tmp_path):
    model, x = _model(depth=2), hookgrad.randn(8, 16)
    path = tmp_path / "costs.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a costs file"):
        memory.plan(model, x, 0, loss_fn=_loss, measure=False, verify=False, costs_file=path)


def test_a_cost_measured_below_zero_is_noise_and_floored(monkeypatch):
    # on a loaded machine a saver can time below the policy that stores nothing: it must not
    # come out free (a plan of offload everywhere, estimated at +0 ms)
    cheap = dict(NOMINAL, **{"offload()": -2.0 ** -8})
    _inject(monkeypatch, spread=0.0, seed=0, nominal=cheap)
    model, x = _model(), hookgrad.randn(64, 16)
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    found = _plan(model, x, budget, verify=False, candidates=[memory.offload()])
    assert found.choices and all(choice[4] > 0 for choice in found.choices)
    assert found.estimated_extra_seconds >= 0.25 * sum(choice[4] for choice in found.choices) > 0


PLAN_IN_A_PROCESS = """
import hookgrad
from hookgrad import memory, nn
hookgrad.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(8 * 4 * 4, 16), nn.ReLU(), nn.Linear(16, 4))
x = hookgrad.randn(8, 1, 16, 16)
first = memory.plan(model, x, 0, verify=False, measure=False, rounds=1)
found = memory.plan(model, x, first.baseline_peak // 4, measure=False, rounds=1)
print(found.feasible, found.measured_peak <= found.budget, [c[:4] for c in found.choices],
      repr(found.policy))
"""


def test_fresh_processes_choose_the_same_plan_without_a_costs_file():
    # every default candidate (casts, 8-bit, offload, recompute), no costs file, other hash
    # seeds, two processes timing side by side on a loaded machine: one plan
    import os
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-c", PLAN_IN_A_PROCESS], text=True,
                             env=dict(os.environ, PYTHONHASHSEED=hash_seed),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for hash_seed in ("3", "4")]
    outputs = []
    for run in runs:
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, stderr
        outputs.append(stdout)
    assert outputs[0].startswith("True True [(")
    assert outputs[0] == outputs[1]


def test_a_plan_of_several_savers_is_timed_in_parts_and_counts_the_policy_once(monkeypatch):
    # each saver's part is the plan's own policy with the other savers' entries set to None,
    # timed against no policy; the parts compose to their sum less the policy's own work
    # counted in every part but one (the whole plan, timed beside them, corrects that sum)
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    _inject(monkeypatch, spread=0.0, seed=0)
    seen = {}
    injected = planner.time_contexts

    def time_contexts(step, contexts, rounds, clock="cpu", **options):
        seen.update({name: make() for name, make in contexts.items()})
        return injected(step, contexts, rounds, clock, **options)

    monkeypatch.setattr(planner, "time_contexts", time_contexts)
    found = _plan(model, x, budget, verify=False)
    used = {c[1] for c in found.choices}
    assert len(used) == 3 and set(seen) == {"none", _costs.TOGETHER} | used
    assert seen[_costs.TOGETHER].rules == found.policy.rules
    for part in used:
        rules = seen[part].rules
        assert [key for key, _ in rules] == [key for key, _ in found.policy.rules]
        assert {repr(entry) for _, entry in rules} == {part, "None"}
        for (key, entry), (_, planned) in zip(rules, found.policy.rules):
            assert entry is None or entry is planned
    measured = sum(NOMINAL["nothing stored"] + NOMINAL[part] for part in used)
    policy = found.per_step_seconds["policy"]
    composed = found.estimated_extra_seconds - found.per_step_seconds[_costs.TOGETHER]
    assert composed == pytest.approx(measured - 2 * policy)
    shares = sum(choice[4] for choice in found.choices)  # offload's per-step cost apart
    assert found.estimated_extra_seconds == pytest.approx(
        shares + sum(found.per_step_seconds.values()))


def test_a_plan_of_several_savers_stays_whatever_its_parts_measure(monkeypatch):
    # each part timed off by up to 8x either way, independently: the same three-saver plan
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    plans, estimates = [], set()
    for draw in range(4):
        _inject(monkeypatch, spread=7.0, seed=10 + draw)
        found = _plan(model, x, budget)
        plans.append(_choices(found))
        estimates.add(found.estimated_extra_seconds)
        assert found.feasible and found.measured_peak <= budget
    assert len({c[1] for c in found.choices}) == 3
    assert all(plan == plans[0] for plan in plans) and len(estimates) == 4


def test_a_costs_file_keeps_each_budgets_plan(monkeypatch, tmp_path, fresh_process):
    # two budgets give two plans: each one's costs are filed under its rules, so reading the
    # file back estimates both alike whatever a later process would measure
    model, x = _model(), _input()
    path = tmp_path / "costs.json"
    base = _plan(model, x, 0, verify=False).baseline_peak
    budgets = (base // 3, base * 40 // 100)

    def estimates(nominal):
        result = []
        for budget in budgets:
            for name in CALIBRATIONS:
                getattr(_costs, name).clear()
            _inject(monkeypatch, spread=0.0, seed=0, nominal=nominal)
            result.append(memory.plan(model, x, budget, loss_fn=_loss, measure=False,
                                      verify=False, costs_file=path).estimated_extra_seconds)
        return result

    first = estimates(NOMINAL)
    assert first[0] != first[1]
    assert estimates({name: 4 * seconds for name, seconds in NOMINAL.items()}) == first


def _with_errors(monkeypatch, errors):
    """The injected timings, each policy's standard error given by ``errors(name)``."""
    injected = planner.time_contexts

    def time_contexts(step, contexts, rounds, clock="cpu", spread=None, **options):
        if spread is not None:
            spread.update({name: errors(name) for name in list(contexts)[1:]})
        return injected(step, contexts, rounds, clock, **options)

    monkeypatch.setattr(planner, "time_contexts", time_contexts)


def test_the_plan_shows_the_standard_errors_of_its_estimate_and_its_check(monkeypatch):
    # a plan of one saver is estimated by its one part: the part's standard error is the
    # estimate's; the check's is its own
    _inject(monkeypatch, spread=0.0, seed=0)
    _with_errors(monkeypatch, lambda name: 2.0 ** -11 if name == "plan" else 2.0 ** -10)
    model, x = _model(), _input()
    unit = 64 * 16 * 4
    budget = _plan(model, x, 0, verify=False).baseline_peak - 5 * unit + 5 * unit // 4 + 1024
    found = _plan(model, x, budget, candidates=[memory.quantize(8)])
    assert {c[1] for c in found.choices} == {"quantize(8, per='channel')"}
    assert found.estimated_extra_error == pytest.approx(2.0 ** -10)
    assert found.measured_extra_error == 2.0 ** -11
    line = next(line for line in str(found).splitlines() if "extra CPU time per step" in line)
    estimated, measured = found.estimated_extra_seconds * 1e3, found.measured_extra_seconds * 1e3
    assert line.split() == ["extra", "CPU", "time", "per", "step", f"+{estimated:.1f}", "±",
                            f"{2.0 ** -10 * 1e3:.1f}", "ms", f"+{measured:.1f}", "±",
                            f"{2.0 ** -11 * 1e3:.1f}", "ms"]


def test_a_plan_of_several_parts_is_estimated_by_its_parts_timed_together(monkeypatch):
    # three parts, and the whole plan timed in the same rounds: the estimate is the whole
    # plan's figure with its standard error; the parts only share it out, so moving a
    # part's timing moves the options' shares, not the estimate
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    errors = {"cast('bfloat16')": 2.0 ** -12, Q8: 2.0 ** -11,
              "offload()": 2.0 ** -10, _costs.TOGETHER: 2.0 ** -9}

    def estimate(nominal):
        _inject(monkeypatch, spread=0.0, seed=0, nominal=nominal)
        _with_errors(monkeypatch, lambda name: errors.get(name, 0.0))
        return _plan(model, x, budget, verify=False)

    found = estimate(NOMINAL)
    assert {c[1] for c in found.choices} == set(errors) - {_costs.TOGETHER}
    assert found.estimated_extra_error == errors[_costs.TOGETHER]
    for part in ("cast('bfloat16')", "offload()"):
        moved = estimate(dict(NOMINAL, **{part: NOMINAL[part] * 2,
                                          _costs.TOGETHER: -NOMINAL[part]}))
        assert moved.estimated_extra_seconds == pytest.approx(found.estimated_extra_seconds)
        assert [c[4] for c in moved.choices] != [c[4] for c in found.choices]


@pytest.mark.parametrize("interaction", [2.0 ** -9, -2.0 ** -11])
def test_what_the_parts_do_to_each_other_is_measured_and_shown(monkeypatch, interaction):
    # the parts cost more together than their sum (or less: shared work): the estimate is
    # what they measured together, and the difference is shown once per step
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    _inject(monkeypatch, spread=0.0, seed=0)
    additive = _plan(model, x, budget, verify=False)
    _inject(monkeypatch, spread=0.0, seed=0, nominal=dict(NOMINAL, **{
        _costs.TOGETHER: interaction}))
    found = _plan(model, x, budget, verify=False)
    assert _choices(found) == _choices(additive)
    assert found.estimated_extra_seconds == pytest.approx(
        additive.estimated_extra_seconds + interaction)
    shown = found.per_step_seconds[_costs.TOGETHER]
    assert shown == pytest.approx(additive.per_step_seconds[_costs.TOGETHER] + interaction)
    assert f"{_costs.TOGETHER} {shown * 1e3:.2f} ms" in str(found)


def test_parts_together_measured_below_a_quarter_of_their_sum_are_noise(monkeypatch):
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    _inject(monkeypatch, spread=0.0, seed=0, nominal=dict(NOMINAL, **{
        _costs.TOGETHER: -1.0}))
    found = _plan(model, x, budget, verify=False)
    composed = found.estimated_extra_seconds - found.per_step_seconds[_costs.TOGETHER]
    assert found.estimated_extra_seconds == pytest.approx(0.25 * composed)


def test_a_plan_of_one_part_is_not_timed_twice(monkeypatch):
    # its one part is the plan itself: its estimate is that part's figure, no correction
    _inject(monkeypatch, spread=0.0, seed=0)
    asked = []
    injected = planner.time_contexts

    def time_contexts(step, contexts, rounds, clock="cpu", **options):
        asked.append(list(contexts))
        return injected(step, contexts, rounds, clock, **options)

    monkeypatch.setattr(planner, "time_contexts", time_contexts)
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    asked.clear()
    found = _plan(model, x, budget, candidates=[memory.offload()], verify=False)
    assert asked == [["none", "offload()"]]
    assert _costs.TOGETHER not in found.per_step_seconds
    assert found.estimated_extra_seconds == pytest.approx(
        NOMINAL["nothing stored"] + NOMINAL["offload()"])


def test_the_parts_and_the_check_are_timed_alike(monkeypatch):
    # the same warm-up and the same time limit (the plan's) for both timings
    _inject(monkeypatch, spread=0.0, seed=0)
    injected = planner.time_contexts
    asked = []

    def time_contexts(step, contexts, rounds, clock="cpu", **options):
        asked.append((list(contexts), options.get("warm_steps"), options.get("warm_seconds"),
                      options.get("time_limit")))
        return injected(step, contexts, rounds, clock, **options)

    monkeypatch.setattr(planner, "time_contexts", time_contexts)
    model, x = _model(), _input()
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    asked.clear()
    _plan(model, x, budget)
    _plan(model, x, budget, time_limit=3.5)
    parts, check, other_parts, other_check = asked
    assert "plan" not in parts[0] and check[0] == ["none", "plan"]
    assert parts[1:] == check[1:] == (_timing.WARM_STEPS, _timing.MEASURE_SECONDS,
                                      _timing.TIME_LIMIT)
    assert other_parts[3] == other_check[3] == 3.5


def test_a_costs_file_keeps_the_parts_standard_errors(monkeypatch, tmp_path, fresh_process):
    model, x = _model(), _input()
    path = tmp_path / "costs.json"
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    found = []
    for error in (2.0 ** -11, 2.0 ** -8):  # the second process would measure another error
        for name in CALIBRATIONS:
            getattr(_costs, name).clear()
        _inject(monkeypatch, spread=0.0, seed=0)
        _with_errors(monkeypatch, lambda name, error=error: error)
        found.append(memory.plan(model, x, budget, loss_fn=_loss, measure=False,
                                 verify=False, costs_file=path))
    assert found[0].estimated_extra_error is not None
    assert found[1].estimated_extra_error == found[0].estimated_extra_error


def test_a_costs_file_keeps_what_the_parts_measured_together(monkeypatch, tmp_path,
                                                            fresh_process):
    model, x = _model(), _input()
    path = tmp_path / "costs.json"
    budget = _plan(model, x, 0, verify=False).baseline_peak * 40 // 100
    found = []
    for interaction in (2.0 ** -9, -2.0 ** -11):  # the second process would measure another
        for name in CALIBRATIONS:
            getattr(_costs, name).clear()
        _inject(monkeypatch, spread=0.0, seed=0,
                nominal=dict(NOMINAL, **{_costs.TOGETHER: interaction}))
        found.append(memory.plan(model, x, budget, loss_fn=_loss, measure=False,
                                 verify=False, costs_file=path))
    assert _costs.TOGETHER in found[0].per_step_seconds
    assert found[1].per_step_seconds == found[0].per_step_seconds
    assert found[1].estimated_extra_seconds == found[0].estimated_extra_seconds
