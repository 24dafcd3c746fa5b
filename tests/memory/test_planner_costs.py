"""The planner's cost model: costs measured on the model add up to the estimate, and noisy
timings move the estimate but not the plan (no timed assertions: timings are injected)."""
import random

import pytest
import torch

import hookgrad
from hookgrad import memory, nn
from hookgrad.memory import _costs, planner
from test_policy import Affine  # the same small model the policy tests train

NOMINAL = {  # seconds each context adds, on the decision grid's bucket centres (powers of 2)
    "nothing stored": 2.0 ** -10,
    "cast('bfloat16')": 2.0 ** -9,
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
    """Timings drawn around ``nominal``, each off by up to ``spread`` (a fraction) either way:
    what the planner measures on the model, each module's forward and the savers' chains."""
    rng = random.Random(seed)

    def noisy(seconds):
        return seconds * (1 + rng.uniform(-spread, spread))

    def time_contexts(step, contexts, rounds, clock="cpu"):
        for make in contexts.values():  # the steps run, so policies see the model
            step(make())
        stored = STEP + noisy(nominal["nothing stored"])
        return {name: STEP if name == "none" else
                stored if name == "nothing stored" else
                stored + noisy(nominal.get(name, 2.0 ** -8))  # "plan": its own figure
                for name in contexts}

    timed = planner._Timer.exit

    def exit_with_noisy_time(self, module, name, is_root):
        timed(self, module, name, is_root)
        self.seconds[name] = noisy(2.0 ** -8 if is_root else 2.0 ** -12)

    original = _costs._measure

    def chain(saver, size, backend, length=6, rounds=5):
        kept, _ = original(saver, size, backend, length, rounds=1)
        return kept, noisy(2.0 ** -14 if size < 4096 else 2.0 ** -11)

    monkeypatch.setattr(planner, "time_contexts", time_contexts)
    monkeypatch.setattr(planner._Timer, "exit", exit_with_noisy_time)
    monkeypatch.setattr(_costs, "_measure", chain)


def _plan(model, x, budget, **options):
    return memory.plan(model, x, budget, loss_fn=_loss, measure=False, recalibrate=True,
                       **options)


@pytest.mark.parametrize("framework", ["hookgrad", "torch"])
def test_noisy_timings_move_the_estimate_but_not_the_plan(monkeypatch, framework):
    model, x = _model(framework=framework), _input(framework)
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    plans, estimates = [], set()
    for draw in range(6):
        _inject(monkeypatch, spread=0.12, seed=draw)
        found = _plan(model, x, budget, verify=False)
        plans.append((found.choices and [c[:4] for c in found.choices], repr(found.policy)))
        estimates.add(found.estimated_extra_seconds)
    assert plans[0][0] and "quantize(8" in plans[0][1]
    assert all(plan == plans[0] for plan in plans)
    assert len(estimates) > 1  # the estimate is the measured costs, not their buckets


def test_equal_costs_are_broken_alike_whatever_the_noise(monkeypatch):
    # bfloat16 and 8-bit cost the same bucket: the tie goes to the fewest bytes kept, always
    model, x = _model(), hookgrad.randn(64, 16)
    budget = _plan(model, x, 0, verify=False).baseline_peak * 3 // 4
    chosen = set()
    for draw in range(6):
        _inject(monkeypatch, spread=0.12, seed=100 + draw)
        found = _plan(model, x, budget, verify=False,
                      candidates=[memory.cast("bfloat16"), memory.quantize(8)])
        chosen.add(tuple(c[1] for c in found.choices))
    assert len(chosen) == 1 and all("quantize(8" in c for c in chosen.pop())


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


def test_a_recompute_costs_its_forward_scaled_by_the_whole_model_rerun(monkeypatch):
    _inject(monkeypatch, spread=0.0, seed=0)
    model, x = _model(depth=9), hookgrad.randn(64, 16)
    first = _plan(model, x, 0, verify=False, candidates=[memory.recompute()])
    found = _plan(model, x, first.baseline_peak * 7 // 10, verify=False,
                  candidates=[memory.recompute()])
    assert found.choices
    rerun = NOMINAL["recompute"] / 2.0 ** -8  # whole-model rerun over the root's forward
    seconds = sum(choice[4] for choice in found.choices)
    assert found.estimated_extra_seconds == pytest.approx(NOMINAL["nothing stored"] + seconds)
    for modules, _, _, _, cost in found.choices:  # each block's forward took 2 ** -12 s
        blocks = cost / (rerun * 2.0 ** -12)
        assert blocks >= 1 and blocks == pytest.approx(round(blocks))


def test_the_clock_is_checked_and_named():
    model, x = _model(depth=2), hookgrad.randn(8, 16)
    with pytest.raises(ValueError, match="clock"):
        memory.plan(model, x, 0, loss_fn=_loss, clock="gpu")
    found = memory.plan(model, x, 0, loss_fn=_loss, measure=False, verify=False, clock="wall")
    assert found.clock == "wall" and "wall time" in str(found)


CALIBRATIONS = ("MODEL_COSTS", "MODULE_SECONDS", "SAVER_RATES")


@pytest.fixture
def fresh_process():
    """The process's calibrations, put back as they were after the test empties them."""
    kept = {name: dict(getattr(_costs, name)) for name in CALIBRATIONS}
    yield
    for name, values in kept.items():
        getattr(_costs, name).clear()
        getattr(_costs, name).update(values)


def test_a_costs_file_makes_a_later_process_choose_the_same_plan(monkeypatch, tmp_path,
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
        return [c[:4] for c in found.choices]

    first = plan_in_a_new_process(NOMINAL, costs_file=path)
    assert path.exists() and not list(tmp_path.glob(".costs-*"))  # no temporary file left
    # another process on a loaded machine measures offload as the cheapest saver
    swapped = dict(NOMINAL, **{"offload()": 2.0 ** -12, "quantize(8, per='channel')": 2.0 ** -6})
    assert plan_in_a_new_process(swapped) != first
    assert plan_in_a_new_process(swapped, costs_file=path) == first
    assert plan_in_a_new_process(swapped, costs_file=path, recalibrate=True) != first


def test_a_costs_file_that_is_not_one_is_refused(tmp_path):
    model, x = _model(depth=2), hookgrad.randn(8, 16)
    path = tmp_path / "costs.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a costs file"):
        memory.plan(model, x, 0, loss_fn=_loss, measure=False, verify=False, costs_file=path)


def test_a_cost_measured_below_zero_is_noise_and_floored_by_the_chain(monkeypatch):
    # on a loaded machine a saver can time below the policy that stores nothing: it must not
    # come out free (a plan of offload everywhere, estimated at +0 ms)
    cheap = dict(NOMINAL, **{"offload()": -2.0 ** -8})
    _inject(monkeypatch, spread=0.0, seed=0, nominal=cheap)
    model, x = _model(), hookgrad.randn(64, 16)
    budget = _plan(model, x, 0, verify=False).baseline_peak // 3
    found = _plan(model, x, budget, verify=False, candidates=[memory.offload()])
    assert found.choices and all(choice[4] > 0 for choice in found.choices)
    assert found.estimated_extra_seconds > NOMINAL["nothing stored"]
