"""The orthogonal polynomials of torch.special against torch: degrees as numbers and tensors,
negative and float degrees, x at +-1, 0, outside [-1, 1] and infinite, dtypes, no gradient."""
import numpy as np
import pytest
import torch

import hookgrad
from hookgrad.ops.orthogonal_polynomials import POLYNOMIALS
from conftest import assert_close

R = np.random.default_rng(3)
X = np.concatenate([[-1.0, 1.0, 0.0, 0.5, 2.0, -3.0, np.inf, -np.inf, 1e-300, 0.25, 0.75],
                    R.uniform(-1, 1, 200), R.uniform(-3, 3, 60), R.uniform(0, 1, 60)])
DEGREES = list(range(-2, 13)) + [20, 33, 50]


def _close(ours, theirs, name, rtol):
    """Values agree to ``rtol`` of max(|value|, 1); the Hermite recurrences cancel near their
    roots, where the terms are larger than the value, and get a looser bound; so do the
    Chebyshev polynomials, which past degree 6 inside (-1, 1) go through cos(n acos x): the
    last bit of acos and cos, which NumPy and torch vectorise differently on some processors
    (AVX-512), is multiplied by the degree."""
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    finite = np.isfinite(theirs)
    scale = np.maximum(np.abs(theirs[finite]), 1.0)
    bound = rtol * (1e3 if name.startswith("hermite") else 10.0 if "chebyshev" in name else 1.0)
    assert np.all(np.abs(ours[finite] - theirs[finite]) <= bound * scale), name
    np.testing.assert_array_equal(ours[~finite], theirs[~finite])


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_float64_values_match_torch_for_number_degrees(name):
    for n in DEGREES:
        ours = getattr(hookgrad.special, name)(hookgrad.tensor(X), n)
        theirs = getattr(torch.special, name)(torch.tensor(X), n)
        assert ours.dtype == hookgrad.float64
        _close(ours.numpy(), theirs.numpy(), name, 1e-13)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_tensor_degrees_broadcast_with_x(name):
    x = R.uniform(-1.5, 1.5, (4, 1))
    n = np.array([[-1, 0, 1, 2, 5, 9, 14]])
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(x), hookgrad.tensor(n))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n))
    assert tuple(ours.shape) == tuple(theirs.shape)
    _close(ours.numpy(), theirs.numpy(), name, 1e-13)
    float_n = np.array([2.5, -0.5, np.nan, np.inf, 1e30, 3.9])
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(x), hookgrad.tensor(float_n))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(float_n))
    _close(ours.numpy(), theirs.numpy(), name, 1e-13)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_float32_and_integer_inputs_follow_torchs_dtypes(name):
    x32 = X[np.isfinite(X) & (np.abs(X) <= 2)].astype(np.float32)
    for n in (0, 1, 3, 6, 10):
        ours = getattr(hookgrad.special, name)(hookgrad.tensor(x32), n)
        theirs = getattr(torch.special, name)(torch.tensor(x32), n)
        assert ours.dtype == hookgrad.float32
        _close(ours.numpy(), theirs.numpy(), name, 1e-5)
    ints, degrees = np.array([0, 1, -1, 2]), np.array([3, 2, 1, 0])
    for a, b in ((ints, degrees), (ints.astype(np.float32), degrees.astype(np.float64))):
        assert_close(getattr(hookgrad.special, name)(hookgrad.tensor(a), hookgrad.tensor(b)),
                     getattr(torch.special, name)(torch.tensor(a), torch.tensor(b)))
    assert_close(getattr(hookgrad.special, name)(0.5, hookgrad.tensor(degrees)),
                 getattr(torch.special, name)(0.5, torch.tensor(degrees)))


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_no_gradient_is_recorded(name):
    x = hookgrad.tensor([0.3, 0.6], requires_grad=True)
    out = getattr(hookgrad.special, name)(x, 3)
    reference = getattr(torch.special, name)(torch.tensor([0.3, 0.6], requires_grad=True), 3)
    assert out.requires_grad == reference.requires_grad
    assert out.grad_fn is None and reference.grad_fn is None
