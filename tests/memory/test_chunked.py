"""recompute(chunks=k): a module run in micro-batches in forward and in backward's rerun gives
the gradients of the unchanged model (checked against torch's own autograd on the same weights),
lowers the step's measured peak where plain recomputation does not, and the planner reaches
for it when a budget on the whole-step peak is not met otherwise."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import memory


def _cnn(lib, seed=0, dropout=0.0):
    lib.manual_seed(seed)
    nn = lib.nn

    def block(channels_in, channels_out):
        return nn.Sequential(nn.Conv2d(channels_in, channels_out, 3, padding=1), nn.ReLU(),
                             nn.Dropout(dropout), nn.MaxPool2d(2))

    return nn.Sequential(block(3, 8), block(8, 8), nn.Flatten(), nn.Linear(8 * 4 * 4, 5))


def _copy_weights(source, target):
    with torch.no_grad():
        for theirs, ours in zip(target.parameters(), source.parameters()):
            theirs.copy_(torch.from_numpy(ours.detach().numpy()))


def _step(model, x, context=None):
    for p in model.parameters():
        p.grad = None
    if context is None:
        loss = model(x).pow(2).mean()
    else:
        with context:
            loss = model(x).pow(2).mean()
    loss.backward()
    return [p.grad.detach().numpy().copy() for p in model.parameters()]


def _input(batch=12, dtype=np.float64):
    return np.random.default_rng(3).standard_normal((batch, 3, 16, 16)).astype(dtype)


@pytest.mark.parametrize("chunks", [1, 2, 3, 5, 12, 20])
@pytest.mark.parametrize("rules", [{"0": "chunk"}, {"0": "chunk", "1": "chunk"},
                                   {"": "chunk"}, {"1": "chunk", "*": "offload"}])
def test_chunked_gradients_equal_torchs_on_the_same_weights(chunks, rules):
    ours = _cnn(hookgrad).double()
    theirs = _cnn(torch).double()
    _copy_weights(ours, theirs)
    data = _input()
    expected = _step(theirs, torch.from_numpy(data))
    entries = {key: memory.recompute(chunks=chunks) if value == "chunk" else memory.offload()
               for key, value in rules.items()}
    got = _step(ours, hookgrad.from_numpy(data), memory.policy(entries, model=ours))
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("chunks", [2, 4])
def test_chunked_works_on_torch_models_too(chunks):
    model = _cnn(torch).double()
    data = torch.from_numpy(_input())
    expected = _step(model, data)
    got = _step(model, data, memory.policy({"0": memory.recompute(chunks=chunks)},
                                           model=model))
    for a, e in zip(got, expected):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def test_the_input_gradient_flows_through_a_chunked_module():
    data = _input(batch=6)
    grads = []
    for context in (None, "chunks"):
        model = _cnn(hookgrad).double()
        x = hookgrad.from_numpy(data.copy()).requires_grad_()
        policy = None if context is None else memory.policy(
            {"0": memory.recompute(chunks=4)}, model=model)
        _step(model, x, policy)
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, atol=1e-14)


def test_dropout_draws_the_same_masks_in_the_rerun():
    """The rerun puts the random state back: the gradient is that of the forward that ran
    (here checked by its loss: the gradient of mean(y^2) from the recorded y)."""
    model = _cnn(hookgrad, dropout=0.5).double()
    x = hookgrad.from_numpy(_input(batch=8))
    policy = memory.policy({"0": memory.recompute(chunks=4)}, model=model)
    hookgrad.manual_seed(7)
    with policy:
        output = model(x)
    output.retain_grad()
    output.pow(2).mean().backward()
    chunked_grads = [p.grad.numpy().copy() for p in model.parameters()]
    # the same forward without a policy, from the same random state, gives the same output
    for p in model.parameters():
        p.grad = None
    hookgrad.manual_seed(7)
    again = model(x)
    np.testing.assert_array_equal(again.detach().numpy(), output.detach().numpy())
    again.pow(2).mean().backward()
    for a, e in zip(chunked_grads, [p.grad.numpy() for p in model.parameters()]):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def test_batch_statistics_and_other_calls_are_refused_with_the_module_named():
    nn = hookgrad.nn
    model = nn.Sequential(nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)), nn.Flatten())
    with pytest.raises(ValueError, match="'0'.*0.1 \\(BatchNorm2d\\).*batch statistics"):
        with memory.policy({"0": memory.recompute(chunks=2)}, model=model):
            model(hookgrad.randn(4, 3, 8, 8))
    model.eval()  # running statistics: each sample on its own, so it is allowed
    with memory.policy({"0": memory.recompute(chunks=2)}, model=model):
        model(hookgrad.randn(4, 3, 8, 8))
    bilinear = nn.Sequential(nn.Bilinear(3, 3, 2))
    with pytest.raises(ValueError, match="one batched tensor"):
        with memory.policy({"0": memory.recompute(chunks=2)}, model=bilinear):
            bilinear[0](hookgrad.randn(4, 3), hookgrad.randn(4, 3))
    with pytest.raises(ValueError, match="chunks"):
        memory.recompute(chunks=0)
    with pytest.raises(ValueError, match="segments"):
        memory.recompute(chunks=2, segments=2)
    assert repr(memory.recompute(chunks=4)) == "recompute(chunks=4)"


def test_under_no_grad_the_module_runs_whole():
    model = _cnn(hookgrad)
    x = hookgrad.randn(4, 3, 16, 16)
    with hookgrad.no_grad(), memory.policy({"0": memory.recompute(chunks=2)}, model=model):
        got = model(x)
    np.testing.assert_array_equal(got.numpy(), model(x).detach().numpy())


def _traced_peak(model, x, context):
    _step(model, x, context)  # warm up
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    _step(model, x, context)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def test_chunks_lower_the_step_peak_where_plain_recompute_cannot():
    model = _cnn(hookgrad)
    x = hookgrad.randn(32, 3, 16, 16)
    none = _traced_peak(model, x, None)
    plain = _traced_peak(model, x, memory.policy({"0": memory.recompute()}, model=model))
    chunked = _traced_peak(model, x, memory.policy({"0": memory.recompute(chunks=4)},
                                                   model=model))
    assert plain > 0.8 * none  # the first block's working set still peaks
    assert chunked < 0.75 * plain


def _wide_cnn(seed=0):
    nn = hookgrad.nn
    hookgrad.manual_seed(seed)
    return nn.Sequential(nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                       nn.MaxPool2d(2)),
                         nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(),
                                       nn.MaxPool2d(2)),
                         nn.Flatten(), nn.Linear(8 * 4 * 4, 5))


def test_a_budget_on_the_step_peak_is_met_with_micro_batches_and_the_plan_repeats():
    """The planner measures peaks with one intra-op thread (so they repeat): the budget here is
    half of no policy's peak measured the same way."""
    model = _wide_cnn()
    x = hookgrad.randn(32, 3, 16, 16)

    def loss(out):
        return out.pow(2).mean()

    threads = hookgrad.get_num_threads()
    hookgrad.set_num_threads(1)
    try:
        none = _traced_peak(model, x, None)
    finally:
        hookgrad.set_num_threads(threads)
    plans = [memory.plan(model, x, int(none * 0.5), loss_fn=loss, budget_on="peak",
                         time_limit=0.5, rounds=2) for _ in range(2)]
    first, second = plans
    assert [c[:2] for c in first.choices] == [c[:2] for c in second.choices]
    assert any("chunks" in choice for _, choice, *_ in first.choices)
    assert first.feasible and first.estimated_memory_peak <= first.budget
    assert "recompute(chunks=" in str(first)
    hookgrad.set_num_threads(1)
    try:
        assert _traced_peak(model, x, first.policy) <= first.budget
    finally:
        hookgrad.set_num_threads(threads)


def test_a_peak_budget_nothing_meets_gets_the_lowest_peak_found_and_says_so():
    """An MLP's step peak is mostly its weights' gradients and the last layer's backward: a
    quarter of it has no plan. The planner still returns the plan with the lowest peak it
    found (every module offloaded: the candidate that keeps the fewest bytes), not feasible,
    with that peak and the reason in ``print(plan)``; a budget on saved bytes that cannot be
    met still gives no plan."""
    nn = hookgrad.nn
    hookgrad.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(256, 256), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])
    x = hookgrad.randn(64, 256)

    def loss(out):
        return out.pow(2).mean()

    found = memory.plan(model, x, 1 << 10, loss_fn=loss, time_limit=0.5, rounds=2)
    assert found.budget_on == "peak" and not found.feasible
    assert found.policy is not None and "offload" in repr(found.policy)
    assert found.memory_peak < 0.9 * found.baseline_memory_peak
    text = str(found)
    assert "cannot meet the budget: the lowest step peak found is" in text
    assert memory.format_bytes(found.estimated_memory_peak) in text
    saved = memory.plan(model, x, 1 << 10, loss_fn=loss, budget_on="saved", verify=False)
    assert not saved.feasible and saved.policy is None


def test_the_default_peak_budget_reaches_micro_batches_on_a_torch_model():
    """The same second stage on a torch CNN: its peak measured by the torch backend's meter
    (the profiler's memory events on CPU), the plan checked against it."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                        nn.MaxPool2d(2)),
                          nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU(),
                                        nn.MaxPool2d(2)),
                          nn.Flatten(), nn.Linear(8 * 4 * 4, 5))
    x = torch.randn(32, 3, 16, 16)

    def loss(out):
        return out.pow(2).mean()

    exact = [g.clone() for g in torch.autograd.grad(loss(model(x)), list(model.parameters()))]
    first = memory.plan(model, x, 0, loss_fn=loss, verify=False, budget_on="saved")
    found = memory.plan(model, x, first.baseline_memory_peak // 2, loss_fn=loss,
                        time_limit=0.5, rounds=2)
    assert found.budget_on == "peak" and found.framework == "torch"
    assert "recompute(chunks=" in repr(found.policy)
    assert found.feasible and found.memory_peak <= found.budget
    with found.policy:
        out = loss(model(x))
    grads = torch.autograd.grad(out, list(model.parameters()))
    for ours, theirs in zip(grads, exact):  # the plan may keep some inputs in bfloat16
        assert float((ours - theirs).norm() / theirs.norm()) < 1e-2
