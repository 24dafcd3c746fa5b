"""Small torch.nn names against torch: F.linear_cross_entropy and nn.LinearCrossEntropyLoss
(values, gradients, graph, parameters and errors), nn.SyncBatchNorm in one process (plain
batch norm, torch's checks, convert_sync_batchnorm), nn.DataParallel without accelerators,
and the deprecated nn.Container and nn.NLLLoss2d with their warnings."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare, graph_nodes

RNG = np.random.default_rng(17)
X = RNG.standard_normal((5, 6))
W = RNG.standard_normal((4, 6))
B = RNG.standard_normal(4)
W_K = RNG.standard_normal((4, 3, 6))
B_K = RNG.standard_normal((4, 3))

LINEAR_CE = {
    "plain": (lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor([0, 3, 1, 2, 3])), (X, W)),
    "bias_sum": (lambda lib, x, w, b: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor([0, 3, 1, 2, 3]), linear_bias=b, reduction="sum"), (X, W, B)),
    "ignore_smoothing_none": (lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor([0, 3, 1, 2, 3]), ignore_index=3, label_smoothing=0.2,
        reduction="none"), (X, W)),
    "class_weight": (lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor([0, 3, 1, 2, 3]), weight=lib.tensor([1.0, 2.0, 0.5, 3.0],
                                                              dtype=lib.float64)), (X, W)),
    "unbatched": (lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x[0], w, lib.tensor(2)), (X, W)),
    "probabilities": (lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x, w, lib.softmax(lib.tensor(RNG.standard_normal((5, 4)), dtype=lib.float64) * 0 +
                          lib.tensor(np.eye(5, 4)), -1)), (X, W)),
    "k_dimensional": (lambda lib, x, w, b: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(np.arange(15).reshape(5, 3) % 4), linear_bias=b), (X, W_K, B_K)),
}


@pytest.mark.parametrize("name", LINEAR_CE)
def test_linear_cross_entropy_equals_torchs(name):
    call, arrays = LINEAR_CE[name]
    compare(call, *arrays, rtol=1e-12, atol=1e-14)
    graphs = [graph_nodes(call(lib, *[lib.tensor(a, requires_grad=True) for a in arrays]))
              for lib in (torch, hookgrad)]
    assert graphs[1] == graphs[0]


LINEAR_CE_ERRORS = {
    "input_3d": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(2, 2, 6), lib.randn(4, 6), lib.tensor([0, 1])),
    "weight_1d": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(2, 6), lib.randn(6), lib.tensor([0, 1])),
    "features": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(2, 5), lib.randn(4, 6), lib.tensor([0, 1])),
    "bias_shape": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(2, 6), lib.randn(4, 6), lib.tensor([0, 1]), linear_bias=lib.randn(3)),
    "k_dim_unbatched": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(6), lib.randn(4, 3, 6), lib.tensor([0, 1, 2])),
    "ignore_with_probabilities": lambda lib: lib.nn.functional.linear_cross_entropy(
        lib.randn(2, 6), lib.randn(4, 6), lib.rand(2, 4), ignore_index=1),
    "module_weight": lambda lib: lib.nn.LinearCrossEntropyLoss(6, 4, weight=lib.ones(3)),
    "module_smoothing": lambda lib: lib.nn.LinearCrossEntropyLoss(6, 4, label_smoothing=1.5),
}


@pytest.mark.parametrize("name", LINEAR_CE_ERRORS)
def test_linear_cross_entropy_errors_are_torchs(name):
    assert_same_error(LINEAR_CE_ERRORS[name])


@pytest.mark.parametrize("kwargs", [{}, dict(out_features=(3,), bias=True),
                                    dict(bias=True, reduction="none", label_smoothing=0.1),
                                    dict(ignore_index=2, reduction="sum")])
def test_linear_cross_entropy_loss_module_equals_torchs(kwargs):
    modules = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        modules.append(lib.nn.LinearCrossEntropyLoss(6, 5, dtype=lib.float64, **kwargs))
    assert repr(modules[1]) == repr(modules[0])
    ours, theirs = modules[1].state_dict(), modules[0].state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        assert_close(ours[key], theirs[key], rtol=0, atol=0)
    target = RNG.integers(0, 5, (4,) + tuple(kwargs.get("out_features", ())))
    x = RNG.standard_normal((4, 6))
    results = [module(lib.tensor(x), lib.tensor(target))
               for module, lib in zip(modules, (torch, hookgrad))]
    assert_close(results[1], results[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 4, 5), (2, 3, 2, 2, 2, 2)])
def test_sync_batch_norm_is_batch_norm_in_one_process(shape):
    def run(lib, x):
        lib.manual_seed(0)
        layer = lib.nn.SyncBatchNorm(3, momentum=None).double()
        out = layer(x)
        layer.eval()
        return out, layer(x), layer.running_mean, layer.running_var, layer.num_batches_tracked
    compare(run, RNG.standard_normal(shape), rtol=1e-12, atol=1e-14)


SYNC_ERRORS = {
    "one_dim": lambda lib: lib.nn.SyncBatchNorm(3)(lib.randn(3)),
    "no_channels": lambda lib: lib.nn.SyncBatchNorm(0)(lib.randn(2, 0, 4)),
}


@pytest.mark.parametrize("name", SYNC_ERRORS)
def test_sync_batch_norm_errors_are_torchs(name):
    assert_same_error(SYNC_ERRORS[name])


def test_convert_sync_batchnorm_swaps_every_batch_norm_keeping_its_state():
    reprs, states = [], []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)))
        net[1](lib.randn(4, 3, 2, 2))
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        assert converted[1].weight is net[1].weight
        reprs.append(repr(converted))
        states.append({k: v.numpy() for k, v in converted.state_dict().items()})
    assert reprs[1] == reprs[0]
    assert list(states[1]) == list(states[0])
    for key in states[0]:
        np.testing.assert_allclose(states[1][key], states[0][key], rtol=1e-6)


def test_data_parallel_runs_the_module_on_the_whole_batch():
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        wrapped = lib.nn.DataParallel(lib.nn.Linear(6, 2).double())
        results.append((repr(wrapped), list(wrapped.state_dict()), wrapped.device_ids,
                        wrapped(lib.tensor(X)).detach().numpy()))
    assert results[1][:3] == results[0][:3]
    np.testing.assert_allclose(results[1][3], results[0][3], rtol=1e-12)
    assert hookgrad.nn.parallel.DataParallel is hookgrad.nn.DataParallel


@pytest.mark.parametrize("build", [
    lambda lib: lib.nn.Container(first=lib.nn.Linear(2, 3), second=lib.nn.ReLU()),
    lambda lib: lib.nn.NLLLoss2d(ignore_index=1),
])
def test_deprecated_names_warn_and_work_as_torchs(build):
    seen = []
    for lib in (torch, hookgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = build(lib)
        seen.append((repr(module), [(w.category, str(w.message)) for w in caught]))
    assert seen[1] == seen[0]


def test_nll_loss_2d_is_nll_loss_over_pixels():
    log_probs = np.ascontiguousarray(np.log(RNG.dirichlet(np.ones(4), (2, 3, 3))).transpose(
        0, 3, 1, 2))
    target = RNG.integers(0, 4, (2, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        compare(lambda lib, x: lib.nn.NLLLoss2d()(x, lib.tensor(target)), log_probs)
