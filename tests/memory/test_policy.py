"""policy(): a saver or recomputation per module; exact where it must be; composes with module
hooks and checkpoint; 8-bit training tracks the exact run; the planner meets a budget."""
import numpy as np
import pytest

import hookgrad
from hookgrad import memory, nn
from hookgrad.utils.checkpoint import checkpoint


class Affine(nn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.weight = nn.Parameter(hookgrad.randn(fan_out, fan_in) / fan_in ** 0.5)

    def forward(self, x):
        return x @ self.weight.t()


class Tanh(nn.Module):
    def forward(self, x):
        return x.tanh()


def _blocks(depth=6, width=16, seed=0, layers=1):
    hookgrad.manual_seed(seed)
    return nn.Sequential(*[nn.Sequential(*[m for _ in range(layers)
                                           for m in (Affine(width, width), Tanh())])
                           for _ in range(depth)])


def _grads(model, x, context=None):
    for p in model.parameters():
        p.grad = None
    with memory.ledger() as led:
        if context is None:
            loss = model(x).pow(2).sum()
        else:
            with context:
                loss = model(x).pow(2).sum()
        loss.backward()
    return [p.grad.numpy().copy() for p in model.parameters()], led


@pytest.fixture
def x():
    hookgrad.manual_seed(1)
    return hookgrad.randn(8, 16)


def test_rules_match_by_glob_or_type_innermost_module_first(x):
    model = _blocks(depth=3)
    rules = {"0.*": memory.cast("float16"), Tanh: memory.quantize(8), "2": None}
    with memory.ledger() as led:
        with memory.policy(rules):
            model(x).sum()
    stored = {(r.module, r.op): r.stored_as for r in led.records if r.kind == "activation"}
    assert stored[("0.1", "TanhBackward0")] == "float16"  # "0.*" comes first
    assert stored[("1.1", "TanhBackward0")] == "int8"     # by type
    assert stored[("2.1", "TanhBackward0")] == "int8"     # the innermost module's rule wins
    assert stored[("2.0", "MmBackward0")] == "tensor"     # "2" (the block) says: as it is


@pytest.mark.parametrize("rules", [
    {"[024]": memory.recompute()},
    {"": memory.recompute(segments=3)},
    {"*": memory.offload()},
], ids=["recompute", "segments", "offload"])
def test_exact_policies_give_exact_gradients_with_fewer_bytes(x, rules):
    model = _blocks(layers=2)  # a block's inner activations are not the next block's input
    exact, plain = _grads(model, x)
    grads, led = _grads(model, x, memory.policy(rules, model=model))
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)
    assert led.peak < plain.peak


def test_recompute_wraps_forward_only_while_active(x):
    model = _blocks(depth=2)
    policy = memory.policy({"1": memory.recompute()})
    with policy:
        model(x)
        assert "forward" in vars(model[1])
    assert "forward" not in vars(model[1])


def test_policies_compose_with_module_forward_hooks(x):
    model = _blocks(depth=2)
    exact, _ = _grads(model, x)
    calls = []
    handle = model[0].register_forward_hook(lambda m, args, out: calls.append(m) or out * 1)
    try:
        grads, _ = _grads(model, x, memory.policy({"*": memory.offload()}))
    finally:
        handle.remove()
    assert calls == [model[0]]
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)


def test_savers_compose_with_a_checkpoint_inside_the_model(x):
    class Checkpointed(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, value):
            return checkpoint(self.inner, value, use_reentrant=False)

    inner = _blocks(depth=3)
    model = Checkpointed(inner)
    exact, _ = _grads(model, x)
    grads, led = _grads(model, x, memory.offload())
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)
    # its input, kept (as by torch's checkpoint) on a node of its own that no backward reaches
    assert [r.op for r in led.records if r.kind == "input"] == ["_NoopSaveInputsBackward"]


def test_bad_rules_are_refused():
    with pytest.raises(TypeError):
        memory.policy({3: memory.offload()})
    with pytest.raises(TypeError):
        memory.policy({"*": "int8"})
    with pytest.raises(ValueError):
        memory.recompute(segments=0)


def _train(context_factory, steps=30):
    hookgrad.manual_seed(0)
    model = nn.Sequential(Affine(4, 32), Tanh(), Affine(32, 32), Tanh(), Affine(32, 1))
    data = hookgrad.randn(64, 4)
    target = (data[:, :1] * data[:, 1:2]).tanh()
    optimizer = hookgrad.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        with context_factory():
            loss = (model(data) - target).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_training_with_8_bit_activations_tracks_the_exact_run():
    exact = _train(_Nothing)
    quantized = _train(lambda: memory.quantize(8))
    assert exact[-1] < 0.8 * exact[0]
    assert abs(quantized[-1] - exact[-1]) <= 0.02 * exact[0]


def test_the_planner_meets_a_reachable_budget(x):
    model = _blocks(depth=4, width=32)
    data = hookgrad.randn(16, 32)
    _, plain = _grads(model, data)
    budget = plain.peak // 2
    plan = memory.plan(model, data, budget, loss_fn=lambda out: out.pow(2).sum(),
                       budget_on="saved")
    assert plan.feasible and plan.measured_peak <= budget
    assert "meets the budget" in str(plan)
    exact, _ = _grads(model, data)
    grads, led = _grads(model, data, plan.policy)
    assert led.peak <= budget
    assert all(np.allclose(g, e, rtol=0.05, atol=0.05) for g, e in zip(grads, exact))


def test_the_planner_says_why_it_cannot_meet_a_budget(x):
    model = _blocks(depth=2)
    plan = memory.plan(model, x, 16, loss_fn=lambda out: out.pow(2).sum())
    assert not plan.feasible and "cannot" in str(plan) and plan.reason


def test_type_rules_apply_to_nn_layers_and_conv_nets_train_through_them():
    hookgrad.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    data = hookgrad.randn(5, 2, 8, 8)
    exact, _ = _grads(model, data)
    rules = {nn.Conv2d: memory.quantize(8), nn.Linear: memory.offload(), "1": memory.cast()}
    grads, led = _grads(model, data, memory.policy(rules))
    stored = {(r.module_type, r.stored_as) for r in led.records if r.kind == "activation"}
    assert ("ReLU", "bfloat16") in stored and ("Linear", "disk") in stored
    assert all(np.allclose(g, e, rtol=2e-2, atol=2e-2 * np.abs(e).max())
               for g, e in zip(grads, exact))


@pytest.mark.parametrize("rules, give_model", [
    ({"": memory.recompute(segments=3)}, True),
    ({"[0-3]": memory.recompute()}, False),
], ids=["segments", "modules"])
def test_recompute_with_backward_inside_the_policy_reruns_what_forward_ran(x, rules, give_model):
    model = _blocks(depth=6, layers=2)
    exact, _ = _grads(model, x)
    for p in model.parameters():
        p.grad = None
    with memory.policy(rules, model=model if give_model else None):
        model(x).pow(2).sum().backward()  # the rerun sees submodules as roots: not rewrapped
    for p, e in zip(model.parameters(), exact):
        np.testing.assert_array_equal(p.grad.numpy(), e)


@pytest.mark.parametrize("draw", range(4))
def test_an_exact_plan_is_found_whatever_the_timings(x, monkeypatch, draw):
    # the recompute-only plan must not hinge on what the model's steps happened to take:
    # timings drawn at random (zeros and ties included) all give the same feasible exact plan
    import random

    from hookgrad.memory import planner

    rng = random.Random(draw)

    def time_contexts(step, contexts, rounds, clock="cpu", **options):
        for make in contexts.values():
            step(make())
        return {name: rng.choice([0.0, 1e-3, rng.uniform(1e-5, 1e-1)]) for name in contexts}

    monkeypatch.setattr(planner, "time_contexts", time_contexts)
    model = _blocks(depth=9, width=16)
    _, plain = _grads(model, x)
    budget = int(plain.peak * 0.65)
    plans = [memory.plan(model, x, budget, loss_fn=lambda out: out.pow(2).sum(),
                         candidates=[memory.recompute()], measure=False, recalibrate=True)
             for _ in range(2)]  # two draws
    plan = plans[0]
    assert plan.feasible and "recompute(segments=" in str(plan)
    assert repr(plan.policy) == repr(plans[1].policy)
    exact, _ = _grads(model, x)
    grads, led = _grads(model, x, plan.policy)
    assert led.peak <= budget
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)


def test_the_planner_finds_an_exact_plan_with_recompute_only(x):
    model = _blocks(depth=9, width=16)
    _, plain = _grads(model, x)
    budget = int(plain.peak * 0.65)
    plan = memory.plan(model, x, budget, loss_fn=lambda out: out.pow(2).sum(),
                       candidates=[memory.recompute()], budget_on="saved")
    assert plan.feasible and "recompute(segments=" in str(plan)
    exact, _ = _grads(model, x)
    grads, led = _grads(model, x, plan.policy)
    assert led.peak <= budget
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)


PLAN_IN_A_PROCESS = """
import hookgrad
from hookgrad import memory, nn
hookgrad.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.Tanh()) for _ in range(6)])
x = hookgrad.randn(64, 32)
first = memory.plan(model, x, 0, candidates=[memory.quantize(8)], verify=False, measure=False)
found = memory.plan(model, x, first.baseline_peak * 3 // 5, candidates=[memory.quantize(8)],
                    verify=False, measure=False)
print(found.feasible, [choice[:4] for choice in found.choices], repr(found.policy))
"""


def test_two_processes_choose_the_same_plan():
    # equal units cost alike whatever the timings: the choice among them is the tie-breaking
    # alone, which must not depend on the process (hash seeds, set order, timing noise)
    import os
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-c", PLAN_IN_A_PROCESS], text=True,
                             env=dict(os.environ, PYTHONHASHSEED=hash_seed),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for hash_seed in ("1", "2")]  # side by side: one test's time, not two
    outputs = []
    for run in runs:
        stdout, stderr = run.communicate(timeout=120)
        assert run.returncode == 0, stderr
        outputs.append(stdout)
    assert outputs[0].startswith("True [(") and "quantize(8" in outputs[0]
    # some units stay as they are: which ones is decided by the ties
    assert outputs[0].count("quantize(8") < 2 * 6
    assert outputs[0] == outputs[1]
