"""The gradients of i0, i1, i0e and i1e (torch.* and torch.special.*) against torch at the edges:
NaN, +-inf, +-0, inputs within the dtype's epsilon of 0 (where torch's i1 and i1e gradients
take their limit 1/2, NaN included), negatives and overflow, in float64 and float32."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import compare

EPS64, EPS32 = np.finfo(np.float64).eps, np.finfo(np.float32).eps
EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-300, EPS64, -EPS64,
                  2 * EPS64, 1e-8, -1.5, 2.0, -7.25, 40.0, -40.0, 700.0, -700.0, 1e4])
EDGES32 = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, EPS32, -EPS32, 2 * EPS32,
                    1e-8, -1e-7, -1.5, 2.0, 80.0, -80.0, 100.0], dtype=np.float32)
FUNCTIONS = ["special.i1", "special.i1e", "special.i0", "special.i0e", "i0"]


def _call(name):
    def run(lib, x):
        owner = lib.special if name.startswith("special.") else lib
        return getattr(owner, name.split(".")[-1])(x)
    return run


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float64_gradients_at_the_edges_are_torchs(name):
    # far out the scaled functions differ from torch's series in the 12th digit
    compare(_call(name), EDGES, rtol=1e-11, atol=0, seed=1)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_float32_gradients_at_the_edges_are_torchs(name):
    compare(_call(name), EDGES32, rtol=2e-5, atol=1e-6, seed=2)


@pytest.mark.parametrize("name", ["special.i1", "special.i1e"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_and_tiny_inputs_get_the_half_of_the_limit_at_zero(name, dtype):
    eps = np.finfo(dtype).eps
    x = np.array([np.nan, 0.0, -0.0, eps, -eps, eps / 3], dtype=dtype)
    grads = []
    for lib in (torch, hookgrad):
        t = lib.tensor(x, requires_grad=True)
        _call(name)(lib, t).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    np.testing.assert_array_equal(grads[1], np.full(x.shape, 0.5, dtype))


@pytest.mark.parametrize("name", ["special.i1", "special.i1e"])
def test_odd_functions_give_plus_zero_at_minus_zero(name):
    results = [_call(name)(lib, lib.tensor([-0.0, 0.0])).numpy() for lib in (torch, hookgrad)]
    np.testing.assert_array_equal(np.signbit(results[1]), np.signbit(results[0]))
