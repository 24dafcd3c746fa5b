"""The planner's timing (``memory._timing``): paired steps, the trimmed mean of their
differences and sampling until it is known, on fake clocks (no test here depends on how
long anything really takes)."""
import math
import random

import numpy as np
import pytest
from scipy import stats

from hookgrad.memory import _timing

CONTEXTS = {"none": lambda: "none", "plan": lambda: "plan"}


def _fake_clock(monkeypatch, seconds_of):
    """A clock that each step moves on by ``seconds_of(name, index)`` (``index`` counts the
    steps taken, so a drift or an order effect can be written down exactly); the wall clock
    the time limit reads is the same one. Returns the step and the names of the steps taken."""
    state = {"now": 0.0}
    taken = []
    monkeypatch.setitem(_timing.CLOCKS, "fake", lambda: state["now"])
    monkeypatch.setattr(_timing, "WALL", lambda: state["now"])
    monkeypatch.setattr(_timing, "MEASURE_SECONDS", 0.0)

    def step(name):
        state["now"] += seconds_of(name, len(taken))
        taken.append(name)
    return step, taken


def _noisy(extra, noise, seed=0):
    """Steps of 1 s (``1 + extra`` under the plan), each off by a uniform draw of up to
    ``noise`` either way."""
    rng = random.Random(seed)
    return lambda name, index: (1.0 + (extra if name == "plan" else 0.0)
                                + rng.uniform(-noise, noise))


@pytest.mark.parametrize("count", [2, 5, 10, 41, 200])
def test_the_trimmed_mean_and_its_error_are_scipys(count):
    rng = np.random.default_rng(count)
    values = rng.standard_t(3, count)  # heavy tails
    mean, error = _timing.trimmed_mean(values)
    assert mean == pytest.approx(stats.trim_mean(values, 0.2))
    assert error == pytest.approx(stats.mstats.trimmed_stde(values, limits=(0.2, 0.2)))


def test_a_burst_of_load_on_one_pair_hardly_moves_the_trimmed_mean():
    values = np.full(40, 0.03) + np.linspace(-0.01, 0.01, 40)
    hit = values.copy()
    hit[7] = 5.0  # one step slowed a hundredfold
    plain, error = _timing.trimmed_mean(values)
    assert _timing.trimmed_mean(hit)[0] == pytest.approx(plain, abs=error)
    assert np.mean(hit) > 4 * plain  # where the plain mean would have gone


def test_one_value_has_no_error():
    assert _timing.trimmed_mean([0.5]) == (0.5, math.inf)


def test_the_second_step_of_a_pair_gains_nothing_from_its_place(monkeypatch):
    # the second step of every pair runs 10 % faster (warm caches): the reference goes first
    # in every other pair, so the plan's 0.2 s is found exactly; always second, it would read
    # 0.08 s
    def seconds_of(name, index):
        return (1.2 if name == "plan" else 1.0) * (0.9 if index % 2 == 0 else 1.0)

    step, _ = _fake_clock(monkeypatch, seconds_of)  # index 0, 1 are warm-up steps
    spread = {}
    seconds = _timing.time_contexts(step, CONTEXTS, 10, clock="fake", spread=spread)
    assert seconds["plan"] - seconds["none"] == pytest.approx(0.2 * 0.95, rel=0.02)
    assert set(spread) == {"plan"}


def test_a_steady_drift_cancels_in_the_pairs(monkeypatch):
    # every step 1 % slower than the one before: pairs in both orders cancel it
    step, _ = _fake_clock(monkeypatch, lambda name, index: (1.1 if name == "plan" else 1.0)
                          * 1.01 ** index)
    seconds = _timing.time_contexts(step, CONTEXTS, 20, clock="fake")
    extra = seconds["plan"] - seconds["none"]
    assert extra / seconds["none"] == pytest.approx(0.1, rel=0.05)


def test_steady_timings_stop_as_soon_as_their_spread_is_trusted(monkeypatch):
    step, taken = _fake_clock(monkeypatch, lambda name, index: 1.5 if name == "plan" else 1.0)
    spread = {}
    seconds = _timing.time_contexts(step, CONTEXTS, 3, clock="fake", time_limit=1e6,
                                    spread=spread)
    assert seconds == {"none": 1.0, "plan": 1.5} and spread == {"plan": 0.0}
    assert len(taken) == 2 + 2 * _timing.SETTLE_PAIRS  # a step each, then the pairs
    # without a time limit, the least rounds (3 asked, made even) whatever the spread
    step, taken = _fake_clock(monkeypatch, lambda name, index: 1.5 if name == "plan" else 1.0)
    _timing.time_contexts(step, CONTEXTS, 3, clock="fake")
    assert len(taken) == 2 + 2 * 4


def test_noisy_timings_are_sampled_until_the_error_is_a_tenth_of_the_extra(monkeypatch):
    # a 5 % extra under noise of 20 % of the step: 10 pairs leave it unknown; sampling goes
    # on until its standard error is 10 % of it, well before the time limit
    step, taken = _fake_clock(monkeypatch, _noisy(0.05, 0.2))
    spread = {}
    seconds = _timing.time_contexts(step, CONTEXTS, 10, clock="fake", time_limit=1e5,
                                    spread=spread)
    extra = seconds["plan"] - seconds["none"]
    assert spread["plan"] <= 0.1 * extra
    assert extra == pytest.approx(0.05, abs=3 * spread["plan"])
    pairs = (len(taken) - 2) // 2
    assert 10 < pairs < 1e5 / 2 and pairs % 2 == 0


def test_the_time_limit_stops_what_never_settles(monkeypatch):
    # a 1 % extra under noise of 50 %: not known to 10 % in 100 s of 2 s rounds
    step, taken = _fake_clock(monkeypatch, _noisy(0.01, 0.5))
    spread = {}
    seconds = _timing.time_contexts(step, CONTEXTS, 4, clock="fake", time_limit=100.0,
                                    spread=spread)
    rounds = (len(taken) - 2) // 2
    assert 50 <= rounds <= 54  # 4 rounds, then 100 s of 2 s rounds (even counts)
    assert spread["plan"] > 0.1 * abs(seconds["plan"] - seconds["none"])


def test_more_pairs_give_a_smaller_error(monkeypatch):
    errors = []
    for rounds in (16, 256):
        step, _ = _fake_clock(monkeypatch, _noisy(0.2, 0.1, seed=rounds))
        spread = {}
        seconds = _timing.time_contexts(step, CONTEXTS, rounds, clock="fake", spread=spread)
        assert seconds["plan"] - seconds["none"] == pytest.approx(0.2, abs=4 * spread["plan"])
        errors.append(spread["plan"])
    assert 0 < errors[1] < errors[0] / 2


def test_an_extra_too_small_to_matter_settles_against_the_step(monkeypatch):
    # no extra at all, steps within 0.1 %: known to a tenth of 1 % of the step at once
    step, taken = _fake_clock(monkeypatch, _noisy(0.0, 0.001))
    _timing.time_contexts(step, CONTEXTS, 20, clock="fake", time_limit=1e6)
    assert (len(taken) - 2) // 2 == 20
    assert _timing.settled(0.0, 0.0009, 1.0) and not _timing.settled(0.0, 0.0011, 1.0)
    assert _timing.settled(0.5, 0.05, 1.0) and not _timing.settled(-0.5, 0.051, 1.0)


def test_each_policy_is_paired_with_a_step_without_one(monkeypatch):
    # three policies: every policy step has a reference step right before or after it, the
    # reference first in even rounds, and the policies' order reversed in odd ones
    step, taken = _fake_clock(monkeypatch, lambda name, index: {"none": 1.0, "a": 1.1,
                                                                "b": 1.2, "c": 1.4}[name])
    contexts = {name: (lambda name=name: name) for name in ("none", "a", "b", "c")}
    seconds = _timing.time_contexts(step, contexts, 2, clock="fake")
    assert seconds == pytest.approx({"none": 1.0, "a": 1.1, "b": 1.2, "c": 1.4})
    timed = taken[4:]
    assert timed == ["none", "a", "none", "b", "none", "c",
                     "c", "none", "b", "none", "a", "none"]


def test_policies_warm_up_to_their_steady_cost_before_the_timed_rounds(monkeypatch):
    # a policy whose first steps after steps without it cost less, settling after 5 (as
    # offload's do on a model that writes megabytes a step): warmed up, it is timed at its
    # steady cost; the reference (no policy) gets no extra warm-up steps
    count = {"none": 0, "plan": 0}

    def seconds_of(name, index):
        count[name] += 1
        return 1.0 if name == "none" else (1.2 if count[name] <= 5 else 1.5)

    step, _ = _fake_clock(monkeypatch, seconds_of)
    cold = _timing.time_contexts(step, CONTEXTS, 4, clock="fake")
    assert cold == pytest.approx({"none": 1.0, "plan": 1.2})
    count.update(none=0, plan=0)
    warm = _timing.time_contexts(step, CONTEXTS, 4, clock="fake", warm_steps=5,
                                 warm_seconds=60.0)
    assert warm == pytest.approx({"none": 1.0, "plan": 1.5})
    assert count == {"none": 1 + 4, "plan": 5 + 4}


def test_the_collector_is_paused_while_steps_are_timed_and_restored(monkeypatch):
    import gc
    seen = []
    step, _ = _fake_clock(monkeypatch, lambda name, index: seen.append(gc.isenabled()) or 1.0)
    assert gc.isenabled()
    _timing.time_contexts(step, CONTEXTS, 2, clock="fake")
    assert gc.isenabled() and seen[:2] == [True, True] and not any(seen[2:])


def test_pairs_that_follow_a_slow_swing_get_a_wider_error():
    # the same differences in a slow swing (neighbours alike) and shuffled: one trimmed mean,
    # a wider error for the swing, which the pairs' spread alone would understate
    swing = 0.03 + 0.01 * np.sin(np.arange(80) / 6)
    shuffled = swing[np.random.default_rng(0).permutation(80)]
    pairs = {}
    for name, values in (("swing", swing), ("shuffled", shuffled)):
        pairs[name] = _timing.Pairs([name])
        for value in values:
            pairs[name].add(name, 1.0 + value, 1.0)
    (mean, error), (same, plain) = pairs["swing"].extra("swing"), pairs["shuffled"].extra(
        "shuffled")
    assert mean == pytest.approx(same)
    assert error > 2 * plain and plain == pytest.approx(_timing.trimmed_mean(shuffled)[1],
                                                        rel=0.1)
    assert _timing.correlation_factor(np.ones(20)) == 1.0
    assert _timing.correlation_factor(swing[:7]) == 1.0


def test_two_plans_timed_on_a_noisy_clock_choose_alike(monkeypatch):
    # the real timing on a clock that moves on by a random amount at every reading (every
    # step seems to take from 0 to 20 ms): estimates and checks differ from call to call,
    # choices do not
    import hookgrad
    from hookgrad import memory, nn

    rng = random.Random(0)
    state = {"now": 0.0}

    def reading():
        state["now"] += rng.uniform(0.0, 0.01)
        return state["now"]

    monkeypatch.setitem(_timing.CLOCKS, "cpu", reading)
    monkeypatch.setattr(_timing, "WALL", reading)
    for name, value in (("TIME_LIMIT", 0.0), ("MEASURE_SECONDS", 0.0), ("WARM_STEPS", 2)):
        monkeypatch.setattr(_timing, name, value)  # the least rounds only: a quick test
    hookgrad.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh()) for _ in range(6)])
    x = hookgrad.randn(64, 16)

    def loss_fn(out):
        return out.pow(2).sum()

    budget = memory.plan(model, x, 0, loss_fn=loss_fn, verify=False,
                         measure=False).baseline_peak // 3
    found = [memory.plan(model, x, budget, loss_fn=loss_fn, measure=False, recalibrate=True)
             for _ in range(2)]
    assert found[0].choices and found[0].feasible
    assert [c[:4] for c in found[0].choices] == [c[:4] for c in found[1].choices]
    assert repr(found[0].policy) == repr(found[1].policy)
    assert found[0].estimated_extra_seconds != found[1].estimated_extra_seconds
    assert found[0].measured_extra_seconds != found[1].measured_extra_seconds
    assert all(plan.estimated_extra_error > 0 and plan.measured_extra_error > 0
               for plan in found)
