"""BatchNorm1d/2d, LayerNorm and GroupNorm layers against torch: buffers and their updates
(momentum, cumulative average, num_batches_tracked), train vs eval, gradients, repr."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def pair(name: str, *args, **kwargs):
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(hookgrad.nn, name)(*args, **kwargs).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.uniform_(0.5, 1.5)
    ours.load_state_dict({k: hookgrad.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def step(ours, theirs, x: np.ndarray, seed: int = 0):
    """One forward/backward in both; returns (ours, theirs) outputs, input grads, param grads."""
    results = []
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        module.zero_grad()
        inp = lib.tensor(x.copy(), requires_grad=True)
        out = module(inp)
        out.backward(lib.tensor(np.random.default_rng(seed).standard_normal(x.shape)))
        results.append((out, inp.grad, [p.grad for p in module.parameters()]))
    (h_out, h_grad, h_params), (t_out, t_grad, t_params) = results
    assert_close(h_out, t_out, what="output")
    assert_close(h_grad, t_grad, what="input grad")
    for h, t in zip(h_params, t_params):
        assert_close(h, t, what="parameter grad")


def assert_same_buffers(ours, theirs):
    mine, reference = dict(ours.named_buffers()), dict(theirs.named_buffers())
    assert list(mine) == list(reference)
    for name in reference:
        assert_close(mine[name], reference[name], what=name)


@pytest.mark.parametrize("name,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 4)),
                                        ("BatchNorm2d", (4, 3, 5, 5))])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_training_steps_then_eval(rng, name, shape, momentum):
    ours, theirs = pair(name, 3, momentum=momentum)
    assert repr(ours) == repr(theirs)
    for seed in range(3):
        step(ours, theirs, rng.standard_normal(shape) * 2 + seed, seed)
        assert_same_buffers(ours, theirs)
    ours.eval(), theirs.eval()
    step(ours, theirs, rng.standard_normal(shape))
    assert_same_buffers(ours, theirs)


@pytest.mark.parametrize("kwargs", [{"affine": False}, {"track_running_stats": False},
                                    {"bias": False}, {"eps": 1e-3}])
def test_batch_norm_options(rng, kwargs):
    ours, theirs = pair("BatchNorm2d", 3, **kwargs)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    step(ours, theirs, rng.standard_normal((4, 3, 2, 2)))
    assert_same_buffers(ours, theirs)
    ours.eval(), theirs.eval()
    step(ours, theirs, rng.standard_normal((4, 3, 2, 2)))


def test_batch_norm_state_dict_keys_and_input_checks():
    ours, theirs = hookgrad.nn.BatchNorm2d(4), torch.nn.BatchNorm2d(4)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.num_batches_tracked.dtype == hookgrad.int64
    for lib, module in ((hookgrad, ours), (torch, theirs)):
        with pytest.raises(ValueError, match="expected 4D input \\(got 3D input\\)"):
            module(lib.zeros(2, 4, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input \\(got 4D input\\)"):
        hookgrad.nn.BatchNorm1d(4)(hookgrad.zeros(2, 4, 3, 3))


@pytest.mark.parametrize("shape,normalized,kwargs", [
    ((4, 6), 6, {}), ((2, 3, 4, 5), (4, 5), {"eps": 1e-3}), ((3, 6), 6, {"bias": False}),
    ((3, 6), [6], {"elementwise_affine": False})])
def test_layer_norm_layer(rng, shape, normalized, kwargs):
    ours, theirs = pair("LayerNorm", normalized, **kwargs)
    assert repr(ours) == repr(theirs)
    step(ours, theirs, rng.standard_normal(shape) * 3 + 1)


@pytest.mark.parametrize("kwargs", [{}, {"affine": False}, {"bias": False}])
def test_group_norm_layer(rng, kwargs):
    ours, theirs = pair("GroupNorm", 2, 6, **kwargs)
    assert repr(ours) == repr(theirs)
    step(ours, theirs, rng.standard_normal((3, 6, 4, 2)) * 3 + 1)


def test_group_norm_channel_check_matches_torch():
    outcomes = []
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError) as info:
            lib.nn.GroupNorm(4, 6)
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_norm_layers_default_parameters_are_ones_and_zeros():
    for ours, theirs in ((hookgrad.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)),
                         (hookgrad.nn.LayerNorm(3), torch.nn.LayerNorm(3)),
                         (hookgrad.nn.GroupNorm(1, 3), torch.nn.GroupNorm(1, 3))):
        for (_, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            assert_close(a, b)
