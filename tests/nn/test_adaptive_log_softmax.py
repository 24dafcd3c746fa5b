"""nn.AdaptiveLogSoftmaxWithLoss against torch: the same submodules, parameter names and initial
draws for the same seed, state dicts loaded either way, forward's (output, loss) named tuple
with its graph and gradients, log_prob, predict, unbatched input and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, graph_nodes

RNG = np.random.default_rng(13)
CONFIGS = {
    "three_clusters": dict(in_features=16, n_classes=20, cutoffs=[3, 7, 12], div_value=2.0),
    "one_cluster_head_bias": dict(in_features=8, n_classes=10, cutoffs=[4], head_bias=True),
    "default_div": dict(in_features=32, n_classes=30, cutoffs=[5, 15]),
}


def _build(lib, seed=0, dtype="float64", **config):
    lib.manual_seed(seed)
    return lib.nn.AdaptiveLogSoftmaxWithLoss(**config, dtype=getattr(lib, dtype))


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_parameters_are_torchs_by_name_shape_and_initial_draw(name, dtype):
    ours = _build(hookgrad, dtype=dtype, **CONFIGS[name]).state_dict()
    theirs = _build(torch, dtype=dtype, **CONFIGS[name]).state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        assert_close(ours[key], theirs[key], rtol=0, atol=0, what=key)


@pytest.mark.parametrize("name", CONFIGS)
def test_state_dicts_load_either_way(name):
    ours = _build(hookgrad, seed=1, **CONFIGS[name])
    theirs = _build(torch, seed=2, **CONFIGS[name])
    x = RNG.standard_normal((5, CONFIGS[name]["in_features"]))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert_close(ours.log_prob(hookgrad.tensor(x)), theirs.log_prob(torch.tensor(x)),
                 rtol=1e-12, atol=1e-14)
    fresh = _build(hookgrad, seed=3, **CONFIGS[name])
    fresh.load_state_dict({k: hookgrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert_close(fresh.log_prob(hookgrad.tensor(x)), theirs.log_prob(torch.tensor(x)),
                 rtol=1e-12, atol=1e-14)


def _targets(config, size):
    return RNG.integers(0, config["n_classes"], size)


@pytest.mark.parametrize("name", CONFIGS)
@pytest.mark.parametrize("batch", [1, 2, 9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_output_loss_and_gradients_are_torchs(name, batch, dtype):
    config = CONFIGS[name]
    x = RNG.standard_normal((batch, config["in_features"])).astype(dtype)
    target = _targets(config, batch)
    tolerance = dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else {}
    results = []
    for lib in (torch, hookgrad):
        module = _build(lib, dtype=dtype, **config)
        inputs = lib.tensor(x, requires_grad=True)
        result = module(inputs, lib.tensor(target))
        result.loss.backward()
        grads = [None if p.grad is None else p.grad for p in module.parameters()]
        results.append((result, inputs.grad, grads, graph_nodes(result.loss)))
    (theirs, their_grad, their_grads, their_graph), (ours, our_grad, our_grads, our_graph) = \
        results
    assert type(ours).__name__ == "_ASMoutput" and ours._fields == ("output", "loss")
    assert_close(ours.output, theirs.output, **tolerance, what="output")
    assert_close(ours.loss, theirs.loss, **tolerance, what="loss")
    assert_close(our_grad, their_grad, **tolerance, what="input grad")
    for mine, expected in zip(our_grads, their_grads):
        assert (mine is None) == (expected is None)
        if expected is not None:
            assert_close(mine, expected, **tolerance, what="parameter grad")
    assert our_graph == their_graph


def test_an_unbatched_input_gives_a_scalar_output():
    config = CONFIGS["three_clusters"]
    x = RNG.standard_normal(config["in_features"])
    for target in (1, 9, 19):
        results = [_build(lib, **config)(lib.tensor(x), lib.tensor(target))
                   for lib in (torch, hookgrad)]
        assert_close(results[1].output, results[0].output, rtol=1e-12, atol=0)
        assert_close(results[1].loss, results[0].loss, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", CONFIGS)
def test_log_prob_and_predict_are_torchs(name):
    config = CONFIGS[name]
    x = RNG.standard_normal((12, config["in_features"])) * 3
    modules = [_build(lib, **config) for lib in (torch, hookgrad)]
    assert_close(modules[1].log_prob(hookgrad.tensor(x)), modules[0].log_prob(torch.tensor(x)),
                 rtol=1e-12, atol=1e-14)
    assert_close(modules[1].predict(hookgrad.tensor(x)), modules[0].predict(torch.tensor(x)))
    # rows whose best head entry is a cluster, and a mix of both kinds
    with torch.no_grad():
        modules[0].head.weight[config["cutoffs"][0]:] += 5.0
    modules[1].load_state_dict({k: hookgrad.tensor(v.numpy())
                                for k, v in modules[0].state_dict().items()})
    for rows in (x, x[:1], np.concatenate([x, -x])):
        assert_close(modules[1].predict(hookgrad.tensor(rows)),
                     modules[0].predict(torch.tensor(rows)))


CONFIG = CONFIGS["three_clusters"]
ERRORS = {
    "empty_cutoffs": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
    "unsorted": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3]),
    "repeated": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]),
    "too_large": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]),
    "zero": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [0, 3]),
    "not_integer": lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5, 3]),
    "batch_mismatch": lambda lib: _build(lib, **CONFIG)(lib.randn(3, 16, dtype=lib.float64),
                                                        lib.tensor([1, 2])),
    "input_3d": lambda lib: _build(lib, **CONFIG)(lib.randn(2, 3, 16, dtype=lib.float64),
                                                  lib.tensor([1, 2])),
    "input_2d_scalar_target": lambda lib: _build(lib, **CONFIG)(
        lib.randn(2, 16, dtype=lib.float64), lib.tensor(1)),
    "target_2d": lambda lib: _build(lib, **CONFIG)(lib.randn(2, 16, dtype=lib.float64),
                                                   lib.tensor([[1, 2]])),
    "target_out_of_range": lambda lib: _build(lib, **CONFIG)(
        lib.randn(3, 16, dtype=lib.float64), lib.tensor([1, 25, -2])),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_torchs(name):
    assert_same_error(ERRORS[name])
