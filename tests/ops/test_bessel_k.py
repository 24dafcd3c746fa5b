"""K0, K1 (plain and scaled), modified_bessel_i0/i1 and spherical_bessel_j0 against
torch.special: values over wide ranges and at the special points, dtypes, no gradient."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

R = np.random.default_rng(5)
SPECIAL = [0.0, -0.0, 1e-300, 1e-5, 0.5, -2.0, 2.0, 1.9999999, 2.0000001, 29.999, 30.0, 30.001,
           3.14159, 100.0, 1e10, 1e300, np.inf, -np.inf, np.nan, -700.0, 700.0, 705.0, 713.0,
           720.0, 745.0, 750.0, -1e-300]
X = np.concatenate([SPECIAL, R.uniform(0, 3, 200), R.uniform(0, 50, 200),
                    np.exp(R.uniform(-700, 700, 200)), -np.exp(R.uniform(-5, 5, 20))])
NAMES = ["spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
         "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]


@pytest.mark.parametrize("name", NAMES)
def test_float64_values_match_torch(name):
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(X)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(X)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-320, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_float32_values_match_torch(name):
    x = X[(np.abs(X) > 1e-30) | (X == 0) | np.isnan(X)].astype(np.float32)
    x = x[~np.isinf(x) | np.isinf(X[(np.abs(X) > 1e-30) | (X == 0) | np.isnan(X)])]
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(x))
    assert_close(ours, theirs, rtol=2e-6, atol=1e-37)


@pytest.mark.parametrize("name", NAMES)
def test_integers_give_the_default_float_and_no_gradient(name):
    assert_close(getattr(hookgrad.special, name)(hookgrad.tensor([0, 1, 2, -3])),
                 getattr(torch.special, name)(torch.tensor([0, 1, 2, -3])))
    ours = getattr(hookgrad.special, name)(hookgrad.tensor([0.5, 2.0], requires_grad=True))
    theirs = getattr(torch.special, name)(torch.tensor([0.5, 2.0], requires_grad=True))
    assert ours.requires_grad == theirs.requires_grad and ours.grad_fn is None
