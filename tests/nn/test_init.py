"""nn.init against torch: gains and fans exactly; distributions statistically (bounds, mean and
std of hookgrad's draw vs torch's draw on the same shape); in-place semantics."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.nn import init


@pytest.mark.parametrize("nonlinearity,param", [
    ("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None),
    ("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2),
    ("leaky_relu", 3), ("selu", None)])
def test_calculate_gain_matches_torch(nonlinearity, param):
    assert init.calculate_gain(nonlinearity, param) == torch.nn.init.calculate_gain(
        nonlinearity, param)


@pytest.mark.parametrize("args", [("softmax",), ("leaky_relu", True), ("leaky_relu", "x")])
def test_calculate_gain_errors_match_torch(args):
    messages = []
    for fn in (init.calculate_gain, torch.nn.init.calculate_gain):
        with pytest.raises(ValueError) as info:
            fn(*args)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 3, 2, 2), (2, 4, 1, 3, 2)])
def test_fans_match_torch(shape):
    assert init._calculate_fan_in_and_fan_out(hookgrad.empty(shape)) == \
        torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))


def test_fan_errors_match_torch():
    for fn, lib in ((init._calculate_fan_in_and_fan_out, hookgrad),
                    (torch.nn.init._calculate_fan_in_and_fan_out, torch)):
        with pytest.raises(ValueError, match="fewer than 2 dimensions"):
            fn(lib.empty(3))
    for fn, lib in ((init.kaiming_uniform_, hookgrad), (torch.nn.init.kaiming_uniform_, torch)):
        with pytest.raises(ValueError, match="Mode fan_avg not supported, please use one of"):
            fn(lib.empty(3, 3), mode="fan_avg")


SHAPE = (256, 64, 3, 3)
DISTRIBUTIONS = [
    ("uniform_", {"a": -0.3, "b": 0.7}),
    ("normal_", {"mean": 0.5, "std": 2.0}),
    ("trunc_normal_", {"mean": 0.1, "std": 1.0, "a": -1.0, "b": 1.5}),
    ("xavier_uniform_", {"gain": 1.5}),
    ("xavier_normal_", {}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {}),
    ("kaiming_normal_", {"a": 0.1, "mode": "fan_out", "nonlinearity": "leaky_relu"}),
    ("orthogonal_", {"gain": 2.0}),
]


@pytest.mark.parametrize("name,kwargs", DISTRIBUTIONS)
def test_distribution_matches_torch_statistics(name, kwargs):
    hookgrad.manual_seed(0)
    torch.manual_seed(0)
    ours = getattr(init, name)(hookgrad.empty(SHAPE), **kwargs).numpy()
    theirs = getattr(torch.nn.init, name)(torch.empty(SHAPE), **kwargs).numpy()
    assert ours.dtype == theirs.dtype == np.float32
    spread = theirs.std()
    assert abs(ours.mean() - theirs.mean()) < 0.02 * spread + 1e-3
    assert abs(ours.std() - spread) < 0.02 * spread
    if "uniform" in name or name == "trunc_normal_":
        # bounded distributions: the same support, filled up to its edges
        assert ours.min() >= theirs.min() - 0.01 * spread
        assert ours.max() <= theirs.max() + 0.01 * spread
        assert ours.min() < theirs.min() + 0.05 * spread
        assert ours.max() > theirs.max() - 0.05 * spread


@pytest.mark.parametrize("shape,gain", [((6, 4), 1.0), ((3, 8), 0.5), ((4, 2, 3), 2.0)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, gain):
    matrix = init.orthogonal_(hookgrad.empty(shape, dtype=hookgrad.float64), gain).numpy()
    flat = matrix.reshape(shape[0], -1)
    small = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
    np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-10)


def test_constant_ones_zeros_eye_match_torch():
    for name, args in (("constant_", (0.25,)), ("ones_", ()), ("zeros_", ()), ("eye_", ())):
        ours = getattr(init, name)(hookgrad.empty(3, 4), *args)
        theirs = getattr(torch.nn.init, name)(torch.empty(3, 4), *args)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_init_is_in_place_on_parameters_without_graph():
    weight = hookgrad.nn.Parameter(hookgrad.empty(4, 5))
    version = weight._version
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_, init.zeros_):
        result = fn(weight)
        assert result is weight
        assert weight.requires_grad and weight.grad_fn is None
        assert weight._version > version
        version = weight._version


def test_generator_argument_makes_draws_reproducible():
    first = init.normal_(hookgrad.empty(10), generator=hookgrad.Generator().manual_seed(7))
    second = init.normal_(hookgrad.empty(10), generator=hookgrad.Generator().manual_seed(7))
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_kaiming_on_zero_elements_warns_like_torch():
    for fn, lib in ((init.kaiming_uniform_, hookgrad), (torch.nn.init.kaiming_uniform_, torch)):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            fn(lib.empty(0, 3))
