"""optim.Muon against torch.optim.Muon: parameter trajectories over several steps (Nesterov or
not, both learning-rate adjustments, tall, wide and square weights, float32 and float64), the
momentum buffer, defaults, state_dict, and the constructor's errors."""
import math

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

R = np.random.default_rng(8)


def _trajectory(lib, start, grads, **options):
    param = lib.nn.Parameter(lib.tensor(start))
    optimizer = lib.optim.Muon([param], **options)
    path = []
    for grad in grads:
        param.grad = lib.tensor(grad)
        optimizer.step()
        path.append(param.detach().clone())
    return path, optimizer.state[param]["momentum_buffer"]


def _slack(shape, options):
    """The update is orthogonalised in bfloat16 (8 significant bits): a kernel that rounds one
    entry the other way moves that entry by lr' * 2^-8, so allow a few such steps."""
    lr = options.get("lr", 1e-3)
    rows, cols = shape
    if options.get("adjust_lr_fn") == "match_rms_adamw":
        adjusted = 0.2 * math.sqrt(max(rows, cols)) * lr
    else:
        adjusted = lr * math.sqrt(max(1, rows / cols))
    return 4 * adjusted * 2 ** -8


OPTIONS = [dict(), dict(nesterov=False), dict(adjust_lr_fn="match_rms_adamw", lr=0.02),
           dict(adjust_lr_fn="original", lr=0.05, weight_decay=0.01),
           dict(momentum=0.5, weight_decay=0.0, ns_steps=3, lr=0.1),
           dict(ns_coefficients=(2.0, -1.5, 0.5), eps=1e-5, lr=0.01)]


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (7, 2), (16, 8)])
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_trajectories_match_torch(shape, options, dtype):
    start = R.standard_normal(shape).astype(dtype)
    grads = [R.standard_normal(shape).astype(dtype) for _ in range(5)]
    ours, our_buffer = _trajectory(hookgrad, start, grads, **options)
    theirs, their_buffer = _trajectory(torch, start, grads, **options)
    for a, b in zip(ours, theirs):
        assert a.dtype == getattr(hookgrad, dtype)
        assert_close(a, b, rtol=1e-6, atol=_slack(shape, options))
    assert_close(our_buffer, their_buffer)


def test_a_larger_weight_over_steps():
    shape = (24, 40)
    start = R.standard_normal(shape)
    grads = [R.standard_normal(shape) for _ in range(4)]
    ours, _ = _trajectory(hookgrad, start, grads, lr=0.02)
    theirs, _ = _trajectory(torch, start, grads, lr=0.02)
    assert_close(ours[-1], theirs[-1], rtol=1e-6, atol=_slack(shape, dict(lr=0.02)))


def test_training_a_model_with_closure_and_groups():
    results = []
    start = R.standard_normal((4, 6))
    for lib in (hookgrad, torch):
        first = lib.nn.Parameter(lib.tensor(start))
        second = lib.nn.Parameter(lib.ones(6, 3, dtype=lib.float64))
        optimizer = lib.optim.Muon([{"params": [first]}, {"params": [second], "lr": 0.01}],
                                   lr=0.03)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(2, 6))

        def closure():
            optimizer.zero_grad()
            loss = ((x @ first.T) ** 2).sum() + (x @ second).pow(2).sum()
            loss.backward()
            return loss
        losses = [optimizer.step(closure).item() for _ in range(4)]
        results.append((losses, second.detach().clone()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    assert_close(results[0][1], results[1][1], rtol=1e-6, atol=_slack((6, 3), dict(lr=0.01)))


def test_defaults_groups_and_state_dict():
    ours = hookgrad.optim.Muon([hookgrad.nn.Parameter(hookgrad.ones(2, 3))])
    theirs = torch.optim.Muon([torch.nn.Parameter(torch.ones(2, 3))])
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)
    for opt, lib in ((ours, hookgrad), (theirs, torch)):
        opt.param_groups[0]["params"][0].grad = lib.ones(2, 3)
        opt.step()
    ours_state, theirs_state = ours.state_dict(), theirs.state_dict()
    assert ours_state["param_groups"] == theirs_state["param_groups"]
    assert list(ours_state["state"][0]) == list(theirs_state["state"][0]) == ["momentum_buffer"]
    assert_close(ours_state["state"][0]["momentum_buffer"],
                 theirs_state["state"][0]["momentum_buffer"])
    fresh = hookgrad.optim.Muon([hookgrad.nn.Parameter(hookgrad.ones(2, 3))])
    fresh.load_state_dict(ours_state)
    assert_close(next(iter(fresh.state.values()))["momentum_buffer"],
                 theirs_state["state"][0]["momentum_buffer"])


@pytest.mark.parametrize("make", [
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(3))]),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 3, 4))]),
    lambda lib: lib.optim.Muon([{"params": [lib.nn.Parameter(lib.ones(2, 2))]},
                                {"params": [lib.nn.Parameter(lib.ones(2))]}]),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], lr=float("nan")),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], weight_decay=-1.0),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], momentum=-1.0),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], weight_decay=-1.0,
                               momentum=-1.0),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2))], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], adjust_lr_fn="other"),
    lambda lib: lib.optim.Muon([lib.nn.Parameter(lib.ones(2, 2))], lr=lib.tensor([0.1, 0.2])),
])
def test_constructor_errors(make):
    assert_same_error(make)


def test_half_parameters_and_a_tensor_lr():
    start = R.standard_normal((4, 6)).astype(np.float16)
    grads = [R.standard_normal((4, 6)).astype(np.float16) for _ in range(3)]
    results = []
    for lib in (hookgrad, torch):
        param = lib.nn.Parameter(lib.tensor(start))
        optimizer = lib.optim.Muon([param], lr=lib.tensor(0.05))
        for grad in grads:
            param.grad = lib.tensor(grad)
            optimizer.step()
        results.append((param.detach(), optimizer.state[param]["momentum_buffer"]))
    assert results[0][0].dtype == hookgrad.float16
    assert_close(results[0][0].float(), results[1][0].float(), rtol=0, atol=1e-3)
    assert_close(results[0][1].float(), results[1][1].float())
