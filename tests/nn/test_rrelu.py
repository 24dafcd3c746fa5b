"""F.rrelu, F.rrelu_, torch.rrelu and nn.RReLU against torch: the training slopes are torch's
draws from the default generator (same seed, same values and generator state after), evaluation
uses the mean slope; gradients, double backward, node names, saved tensors and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import (assert_close, assert_same_error, compare, compare_double_backward,
                            saved_log)

RNG = np.random.default_rng(21)
X = RNG.standard_normal((4, 6))
WITH_NAN = np.where(RNG.random((3, 5)) < 0.2, np.nan, RNG.standard_normal((3, 5)))

CALLS = {
    "train": lambda lib, x: lib.nn.functional.rrelu(x, training=True),
    "train_bounds": lambda lib, x: lib.nn.functional.rrelu(x, 0.05, 0.6, True),
    "train_transposed": lambda lib, x: lib.nn.functional.rrelu(x.t(), training=True),
    "train_fixed_range": lambda lib, x: lib.nn.functional.rrelu(x, 0.2, 0.2, True),
    "eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "eval_bounds": lambda lib, x: lib.nn.functional.rrelu(x, 0.1, 0.5, False),
    "top_level": lambda lib, x: lib.rrelu(x, 0.1, 0.3, True),
    "inplace": lambda lib, x: lib.nn.functional.rrelu(x * 1, training=True, inplace=True),
    "rrelu_": lambda lib, x: lib.nn.functional.rrelu_(x * 1, 0.1, 0.4, True),
    "eval_inplace": lambda lib, x: lib.rrelu_(x * 1),
}


def _seeded(call):
    def run(lib, *tensors):
        lib.manual_seed(17)
        return call(lib, *tensors)
    return run


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_equal_torchs_for_the_same_seed(name, dtype):
    ours, theirs = compare(_seeded(CALLS[name]), X.astype(dtype), rtol=0, atol=0)
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    assert hookgrad.rand(3).numpy().tobytes() == torch.rand(3).numpy().tobytes()


def test_nan_is_kept_and_draws_no_slope():
    compare(_seeded(CALLS["train"]), WITH_NAN)
    assert hookgrad.rand(3).numpy().tobytes() == torch.rand(3).numpy().tobytes()


def test_training_slopes_are_uniform_in_the_bounds():
    hookgrad.manual_seed(0)
    x = -hookgrad.ones(200_000, dtype=hookgrad.float64)
    slopes = -hookgrad.nn.functional.rrelu(x, 0.2, 0.7, True).numpy()
    assert 0.2 <= slopes.min() and slopes.max() < 0.7
    assert abs(slopes.mean() - 0.45) < 3e-3 and abs(slopes.var() - 0.5 ** 2 / 12) < 1e-3


@pytest.mark.parametrize("name", CALLS)
def test_saved_tensors(name):
    logs = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X, requires_grad=True)
        logs.append(saved_log(lib, lambda t: _seeded(CALLS[name])(lib, t), x))
    assert logs[1] == logs[0]


@pytest.mark.parametrize("name", ["train", "train_fixed_range", "eval", "inplace"])
def test_double_backward(name):
    compare_double_backward(_seeded(CALLS[name]), X)


@pytest.mark.parametrize("inplace", [False, True])
def test_module_train_and_eval(inplace):
    results = []
    for lib in (hookgrad, torch):
        lib.manual_seed(5)
        layer = lib.nn.RReLU(0.1, 0.3, inplace)
        trained = layer(lib.tensor(X))
        layer.eval()
        results.append((trained, layer(lib.tensor(X)), repr(layer)))
    (ours_train, ours_eval, ours_repr), (train, evaluated, text) = results
    assert_close(ours_train, train, rtol=0, atol=0)
    assert_close(ours_eval, evaluated, rtol=0, atol=0)
    assert ours_repr == text and repr(hookgrad.nn.RReLU()) == repr(torch.nn.RReLU())


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.functional.rrelu(lib.tensor([1, -2])),
    lambda lib: lib.nn.functional.rrelu(lib.ones(3), 0.5, 0.1, True),
    lambda lib: lib.nn.functional.rrelu([1.0, -1.0]),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)
