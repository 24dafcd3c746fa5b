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


# -- exact values: torch's stream after the same seed -------------------------------------------
INIT_CALLS = {
    "uniform_": lambda init, t: init.uniform_(t, -0.5, 2.0),
    "normal_": lambda init, t: init.normal_(t, 0.3, 2.0),
    "xavier_uniform_": lambda init, t: init.xavier_uniform_(t, gain=1.5),
    "xavier_normal_": lambda init, t: init.xavier_normal_(t),
    "kaiming_uniform_": lambda init, t: init.kaiming_uniform_(t, a=math.sqrt(5)),
    "kaiming_normal_": lambda init, t: init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu"),
    "trunc_normal_": lambda init, t: init.trunc_normal_(t, std=0.02),
    "trunc_normal_narrow": lambda init, t: init.trunc_normal_(t, mean=0.0, std=1.0, a=1.0, b=1.3),
    "sparse_": lambda init, t: init.sparse_(t.view(t.shape[0], -1), 0.3),
}


@pytest.mark.parametrize("shape", [(3, 5), (20, 30), (4, 3, 2, 2)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", INIT_CALLS)
def test_initialisers_equal_torchs_values(name, dtype, shape):
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(5)
        tensor = lib.empty(shape, dtype=getattr(lib, dtype))
        INIT_CALLS[name](lib.nn.init, tensor)
        results.append((tensor.numpy().copy(), lib.rand(2).numpy()))
    (ours, ours_after), (theirs, theirs_after) = results
    assert ours.tobytes() == theirs.tobytes()
    assert ours_after.tobytes() == theirs_after.tobytes()


def test_orthogonal_uses_torchs_draws():
    """Its normal draws are torch's; the QR factorisation runs in NumPy's LAPACK, so the values
    agree to float32 rounding rather than bit for bit."""
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(2)
        results.append(lib.nn.init.orthogonal_(lib.empty(6, 10)).numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=2e-6)


LAYERS = [
    ("Linear", (7, 5), {}), ("Linear", (40, 3), {"bias": False}), ("Conv1d", (3, 4, 3), {}),
    ("Conv2d", (3, 8, 3), {"groups": 1}), ("ConvTranspose1d", (3, 4, 3), {}),
    ("ConvTranspose2d", (4, 2, 3), {}), ("Embedding", (10, 4), {}), ("LayerNorm", (4,), {}),
    ("BatchNorm1d", (4,), {}), ("MultiheadAttention", (8, 2), {}),
    ("MultiheadAttention", (8, 2), {"kdim": 3, "vdim": 5, "add_bias_kv": True}),
    ("TransformerEncoderLayer", (8, 2, 16), {}),
]


@pytest.mark.parametrize("name,args,kwargs", LAYERS, ids=lambda v: str(v))
def test_default_initialisation_of_layers_equals_torchs(name, args, kwargs):
    states = []
    for lib in (hookgrad, torch):
        lib.manual_seed(3)
        layer = getattr(lib.nn, name)(*args, **kwargs)
        states.append({key: value.detach().numpy().copy()
                       for key, value in layer.state_dict().items()})
    assert states[0].keys() == states[1].keys()
    for key in states[1]:
        assert states[0][key].tobytes() == states[1][key].tobytes(), key
