"""bessel_j0/j1/y0/y1 and airy_ai against torch.special: values over wide ranges, the branch
points and special values, float32 rounding, integer promotion, out=, no gradient, half refused."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

NAMES = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai"]
R = np.random.default_rng(11)
SPECIAL = [0.0, -0.0, 1e-300, 1e-6, 1e-5, -1e-5, 0.3, 4.999, 5.0, 5.0001, -5.0, -5.0001, 2.09,
           -2.09, 2.0899, -2.0901, 8.3203353, 25.77, 25.8, 100.0, 103.89, 103.9, 104.0, 1e10,
           1e30, 1e300, -1e10, np.inf, -np.inf, np.nan, -700.0, 700.0]
X = np.concatenate([SPECIAL, R.uniform(-30, 30, 400), R.standard_normal(100),
                    np.exp(R.uniform(-20, 20, 100)), -np.exp(R.uniform(-20, 8, 100))])


@pytest.mark.parametrize("name", NAMES)
def test_float64_values_match_torch(name):
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(X)).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(X)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
def test_float32_values_match_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = X.astype(np.float32)
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(x))
    theirs = getattr(torch.special, name)(torch.tensor(x))
    assert ours.dtype == hookgrad.float32
    assert_close(ours, theirs, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name", NAMES)
def test_large_float32_arguments_round_like_torch(name):
    x = np.array([1e10, 3e38, 123456.7, -98765.4, 5e6], np.float32)
    assert_close(getattr(hookgrad.special, name)(hookgrad.tensor(x)),
                 getattr(torch.special, name)(torch.tensor(x)), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("name", NAMES)
def test_integers_and_bools_give_the_default_float(name):
    for values in ([0, 1, 2, -3, 7], [True, False]):
        ours = getattr(hookgrad.special, name)(hookgrad.tensor(values))
        theirs = getattr(torch.special, name)(torch.tensor(values))
        assert_close(ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_is_recorded_as_torch(name):
    ours = getattr(hookgrad.special, name)(hookgrad.tensor([0.5, 2.0], requires_grad=True))
    theirs = getattr(torch.special, name)(torch.tensor([0.5, 2.0], requires_grad=True))
    assert ours.requires_grad == theirs.requires_grad is False and ours.grad_fn is None
    assert_same_error(lambda lib: getattr(lib.special, name)(
        lib.tensor([0.5], requires_grad=True)).sum().backward())


@pytest.mark.parametrize("name", NAMES)
def test_out_is_written_and_returned(name):
    for dtype in ("float64", "float32"):
        results = []
        for lib in (hookgrad, torch):
            out = lib.empty(5, dtype=getattr(lib, dtype))
            returned = getattr(lib.special, name)(lib.tensor([0.1, 1.0, 3]), out=out)
            assert returned is out
            results.append(out)
        assert_close(*results, rtol=1e-6, atol=1e-7)  # computed in float32 either way


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_are_refused_as_torch(name, dtype):
    assert_same_error(lambda lib: getattr(lib.special, name)(
        lib.tensor([1.0], dtype=getattr(lib, dtype))))


@pytest.mark.parametrize("name", NAMES)
def test_shapes_and_non_contiguous_inputs(name):
    data = R.uniform(-10, 10, (3, 4, 5))
    ours = getattr(hookgrad.special, name)(hookgrad.tensor(data).transpose(0, 2))
    theirs = getattr(torch.special, name)(torch.tensor(data).transpose(0, 2))
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert_close(ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_a_number_is_refused_as_torch(name):
    assert_same_error(lambda lib: getattr(lib.special, name)(1.0))


def test_airy_ai_takes_its_argument_as_x():
    assert_close(hookgrad.special.airy_ai(x=hookgrad.tensor([0.5, -3.0])),
                 torch.special.airy_ai(x=torch.tensor([0.5, -3.0])))
