"""The same memory tools on a hookgrad model and on its torch twin (same weights): savers,
ledger, policies, recompute and the planner, each run once per framework, gradients compared
with that framework's own run without any policy, and both runs compared with each other."""
import os

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory

FRAMEWORKS = ["hookgrad", "torch"]


def _twin(framework: str, seed: int = 0, dtype=np.float64):
    """An MLP with a normalisation buffer, built in ``framework`` from one set of weights."""
    lib = torch if framework == "torch" else hookgrad
    nn = lib.nn
    model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(),
                          nn.Sequential(nn.Linear(32, 16), nn.GELU()), nn.Linear(16, 3))
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for parameter in model.parameters():
            values = rng.standard_normal(tuple(parameter.shape)) / 4
            parameter.copy_(lib.from_numpy(values.astype(dtype)))
    return model.to(lib.float64) if dtype == np.float64 else model


def _input(framework: str, dtype=np.float64, rows: int = 20):
    values = np.random.default_rng(1).standard_normal((rows, 12)).astype(dtype)
    lib = torch if framework == "torch" else hookgrad
    return lib.from_numpy(values)


def _grads(model, x, context=None):
    for parameter in model.parameters():
        parameter.grad = None
    if context is None:
        loss = model(x).pow(2).sum()
    else:
        with context:
            loss = model(x).pow(2).sum()
    loss.backward()
    return [parameter.grad.detach().numpy().copy() for parameter in model.parameters()]


def _worst(grads, exact) -> float:
    return max(float(np.abs(g - e).max() / np.abs(e).max()) for g, e in zip(grads, exact))


SAVERS = [  # (make, bound on the relative gradient error; 0 means bitwise equal)
    (lambda fw: memory.offload(framework=fw), 0.0),
    (lambda fw: memory.cast("bfloat16", framework=fw), 3e-2),
    (lambda fw: memory.cast("float16", framework=fw), 3e-3),
    (lambda fw: memory.quantize(8, framework=fw), 3e-2),
    (lambda fw: memory.quantize(8, per="tensor", framework=fw), 5e-2),
    (lambda fw: memory.quantize(4, framework=fw), 0.5),
    (lambda fw: memory.quantize(8, per="group", group_size=64, framework=fw), 3e-2),
    (lambda fw: memory.quantize(4, per="group", rounding="stochastic", framework=fw), 0.5),
]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_no_policy_runs_agree_across_frameworks(framework):
    exact = _grads(_twin("torch"), _input("torch"))
    with memory.ledger(framework=framework, measure=False):
        ours = _grads(_twin(framework), _input(framework))
    for g, e in zip(ours, exact):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("make, bound", SAVERS)
def test_every_saver_keeps_gradients_within_its_tolerance(framework, make, bound, tmp_path):
    model, x = _twin(framework), _input(framework)
    exact = _grads(model, x)
    saver = make(framework)
    if isinstance(saver, memory.offload):
        saver.directory = str(tmp_path)
    grads = _grads(model, x, saver)
    if bound == 0.0:
        for g, e in zip(grads, exact):
            np.testing.assert_array_equal(g, e)
    else:
        assert _worst(grads, exact) <= bound
    assert [f for _, _, files in os.walk(tmp_path) for f in files] == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_ledger_sees_the_same_saved_activations_in_both(framework):
    model, x = _twin(framework), _input(framework)
    with memory.ledger(model=model) as led:
        loss = model(x).pow(2).sum()
    reference = _twin("torch")
    with memory.ledger(model=reference) as torch_led:
        reference(_input("torch")).pow(2).sum()
    assert led.total == torch_led.total > 0
    kinds = {r.module: r.kind for r in led.records if r.kind != "activation"}
    assert kinds["0"] == "input"  # the batch, passed in by the caller
    assert "parameter" in {r.kind for r in led.records}  # weights saved, not counted
    by_module = led.by_module()
    assert by_module["1"]["counted"] == 20 * 32 * 8  # ReLU's float64 output, counted once
    assert by_module["2"]["counted"] == 0  # the next Linear saves that same buffer
    loss.backward()
    assert led.current == 0


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("ledger_outside", [True, False])
def test_the_ledger_counts_what_a_saver_holds_in_either_order(framework, ledger_outside):
    model, x = _twin(framework), _input(framework)
    led = memory.ledger(framework=framework)
    saver = memory.quantize(8, framework=framework, sparse=False)  # every code: a fixed size
    outer, inner = (led, saver) if ledger_outside else (saver, led)
    with outer:
        with inner:
            loss = model(x).pow(2).sum()
    plain = memory.ledger(framework=framework)
    with plain:
        model(x).pow(2).sum()
    assert 0 < led.total < plain.total / 2
    assert led.total == 5484  # the same in both frameworks: 8-bit codes plus float64 scales
    assert {r.stored_as for r in led.records if r.kind == "activation"} == {"int8"}
    loss.backward()


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_policy_rules_and_recompute_give_the_expected_gradients(framework):
    model, x = _twin(framework), _input(framework)
    exact = _grads(model, x)
    rules = {"0": memory.offload(framework=framework), "4": memory.recompute(),
             "2": memory.recompute()}
    exact_policy = memory.policy(rules, model=model)
    assert exact_policy.framework == framework
    for g, e in zip(_grads(model, x, exact_policy), exact):
        np.testing.assert_array_equal(g, e)
    rough = memory.policy({"3": memory.quantize(8)}, framework=framework)  # Tanh's output
    assert 0 < _worst(_grads(model, x, rough), exact) <= 3e-2
    assert model[2].forward.__func__ is type(model[2]).forward  # unwrapped after the block


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_recompute_without_a_model_wraps_on_first_call(framework):
    model, x = _twin(framework), _input(framework)
    exact = _grads(model, x)
    with memory.ledger(framework=framework) as plain:
        _grads(model, x)
    with memory.ledger(framework=framework) as led:
        grads = _grads(model, x, memory.policy({"4": memory.recompute()}, framework=framework))
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)
    assert led.peak < plain.peak


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_planner_meets_a_budget(framework):
    model, x = _twin(framework, dtype=np.float32), _input(framework, np.float32, rows=256)
    exact = _grads(model, x)
    found = memory.plan(model, x, budget_bytes=0)
    budget = found.baseline_peak // 2
    found = memory.plan(model, x, budget_bytes=budget, budget_on="saved")
    assert found.feasible and found.measured_peak <= budget
    assert found.policy.framework == framework
    assert _worst(_grads(model, x, found.policy), exact) <= 5e-2
    # the whole step's peak, measured in both frameworks, estimate and measurement side by side
    assert found.baseline_memory_peak > 0 and found.memory_peak > 0
    assert found.estimated_memory_peak > 0 and found.measured_extra_seconds is not None
    assert "step peak" in str(found) and "estimated" in str(found) and "measured" in str(found)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_two_consecutive_plans_choose_alike(framework):
    model, x = _twin(framework, dtype=np.float32), _input(framework, np.float32, rows=256)
    first = memory.plan(model, x, budget_bytes=0, measure=False, verify=False)
    budget = first.baseline_peak // 3
    plans = [memory.plan(model, x, budget_bytes=budget, measure=False, verify=False)
             for _ in range(2)]
    assert plans[0].choices and plans[0].choices == plans[1].choices
    assert plans[0].estimated_extra_seconds == plans[1].estimated_extra_seconds
    assert repr(plans[0].policy) == repr(plans[1].policy)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_budget_on_the_whole_step_peak_counts_what_the_savers_cannot_cut(framework):
    model, x = _twin(framework, dtype=np.float32), _input(framework, np.float32, rows=256)
    saved = memory.plan(model, x, budget_bytes=0, verify=False, budget_on="saved")
    assert saved.budget_on == "saved" and "on the saved bytes" in str(saved)
    other = saved.baseline_memory_peak - saved.baseline_peak
    budget = saved.baseline_memory_peak - saved.baseline_peak // 2
    found = memory.plan(model, x, budget_bytes=budget)  # the default: the whole-step peak
    assert found.budget_on == "peak" and "whole-step peak" in str(found)
    # without measuring there is no peak to budget: saved bytes, by default and only
    assert memory.plan(model, x, budget, measure=False, verify=False).budget_on == "saved"
    with pytest.raises(ValueError, match="measure=True"):
        memory.plan(model, x, budget, measure=False, budget_on="peak")
    if found.feasible:  # checked against the measured whole-step peak
        assert found.memory_peak <= budget
    assert found.estimated_peak < saved.baseline_peak  # savers chosen to cut the saved part
    assert other > 0
    with pytest.raises(ValueError, match="budget_on"):
        memory.plan(model, x, budget_bytes=budget, budget_on="total")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_planner_says_why_a_budget_is_out_of_reach(framework):
    model, x = _twin(framework, dtype=np.float32), _input(framework, np.float32)
    found = memory.plan(model, x, budget_bytes=16, measure=False)
    assert not found.feasible and "cannot" in str(found)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("ending", ["backward", "dropped", "error"])
def test_offload_leaves_no_files_however_the_step_ends(framework, ending, tmp_path):
    model, x = _twin(framework), _input(framework)
    saver = memory.offload(tmp_path, framework=framework)
    try:
        with saver:
            loss = model(x).pow(2).sum()
            if ending == "error":
                raise KeyError("stop")
    except KeyError:
        pass
    if ending == "backward":
        loss.backward()
    del loss
    saver._store_obj.pool.submit(lambda: None).result()  # let the writer finish its queue
    assert [f for _, _, files in os.walk(tmp_path) for f in files] == []
    saver.close()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("with_model", [False, True])
def test_a_key_that_matches_no_module_is_an_error_naming_close_ones(framework, with_model):
    model, x = _twin(framework), _input(framework)
    rules = {"linear": memory.quantize(8, framework=framework), "4.*": None}
    context = memory.policy(rules, model=model if with_model else None, framework=framework)
    with pytest.raises(KeyError, match=r"'linear' not found; available: '0', '1'"):
        with context:
            model(x)
    lib = torch if framework == "torch" else hookgrad
    with pytest.raises(KeyError, match="module type 'Conv2d' not found"):
        with memory.policy({lib.nn.Conv2d: None}, framework=framework):
            model(x)
    with memory.policy({"4.*": None, lib.nn.Tanh: None}, framework=framework):
        model(x)  # every key matches: no error


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_recompute_on_the_root_works_without_the_model(framework):
    model, x = _twin(framework), _input(framework)
    exact = _grads(model, x)
    with memory.ledger(framework=framework, measure=False) as plain:
        _grads(model, x)
    with memory.ledger(framework=framework, measure=False) as led:
        grads = _grads(model, x, memory.policy({"": memory.recompute()}, framework=framework))
    for g, e in zip(grads, exact):
        np.testing.assert_array_equal(g, e)
    # only the checkpoint's input is kept through forward: the model's input, alive anyway
    assert led.peak < plain.peak / 4
    assert {r.kind for r in led.records if r.module == ""} == {"input"}


# On torch a ledger nested inside a saver is handed the saver's detached tensor, so it cannot
# tell an activation and has no note to give: that order is a hookgrad-only case (docs/pytorch.md)
@pytest.mark.parametrize("framework, ledger_outside",
                         [("hookgrad", True), ("hookgrad", False), ("torch", True)])
def test_a_tensor_a_saver_cannot_encode_is_kept_and_the_ledger_says_why(framework,
                                                                         ledger_outside):
    lib = torch if framework == "torch" else hookgrad
    x = lib.from_numpy(np.linspace(-1, 1, 64).astype(np.float16)).requires_grad_()
    led = memory.ledger(framework=framework, measure=False)
    saver = memory.cast("bfloat16", framework=framework)  # float16 to bfloat16 gains nothing
    outer, inner = (led, saver) if ledger_outside else (saver, led)
    with outer, inner:
        loss = (x * 2).exp().sum()
    kept = [r for r in led.records if r.kind == "activation"]
    assert len(kept) == 1 and kept[0].stored_as == "tensor" and kept[0].held == 128
    assert kept[0].note == "cast('bfloat16') cannot encode float16: kept as it is"
    assert "1 saved tensor not encoded: cast('bfloat16')" in led.table()
    loss.backward()
    expected = 2 * np.exp(2 * x.detach().numpy().astype(np.float32))
    np.testing.assert_allclose(x.grad.detach().numpy(), expected, rtol=2e-3)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_integer_saved_tensors_are_stored_losslessly_in_the_narrowest_type(framework):
    lib = torch if framework == "torch" else hookgrad
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.MaxPool2d(2))
    x = lib.randn(2, 1, 8, 8)
    exact = _grads(model, x)
    model.zero_grad(set_to_none=True)
    # torch's pack hook cannot tell a saver alone that pool indices are made inside: the ledger
    # outside tells it
    with memory.ledger(framework=framework, measure=False) as led, \
            memory.cast("float16", framework=framework):
        loss = model(x).pow(2).sum()
    indices = [r for r in led.records if r.dtype == "int64"]
    assert len(indices) == 1 and indices[0].stored_as == "uint8"  # positions 0..35 of 6 x 6
    assert indices[0].held * 8 == indices[0].nbytes == 2 * 2 * 3 * 3 * 8
    loss.backward()
    grads = [p.grad.detach().numpy() for p in model.parameters()]
    assert 0 < _worst(grads, exact) <= 3e-3  # the floats were cast, the indices exact


def test_a_quantizer_keeps_non_finite_values_exact_and_says_so():
    x = hookgrad.tensor([[1.0, float("inf")], [2.0, 3.0]], requires_grad=True)
    with memory.ledger() as led, memory.quantize(8, per="tensor"):
        y = x.exp().sum()
    kept = [r for r in led.records if r.kind == "activation"]
    assert [r.stored_as for r in kept] == ["kept"] and "inf or nan" in kept[0].note
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.exp(x.detach().numpy()))
