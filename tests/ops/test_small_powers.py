"""Small integer powers are computed as torch computes them (by multiplication): values
bit-identical to torch, gradients and double backward as torch's, in every float dtype."""
import numpy as np
import pytest
import torch

import hookgrad

EXPONENTS = [2, 3, -1, -2, -0.5, 2.0, 3.0]
DTYPES = ["float16", "float32", "float64"]


def _inputs(dtype, shape=(37, 53)):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype) * 3
    x.flat[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("exponent", EXPONENTS)
def test_values_bit_identical(dtype, exponent):
    x = _inputs(dtype)
    expected = torch.tensor(x).pow(exponent).numpy()
    got = hookgrad.tensor(x).pow(exponent).numpy()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    inplace = hookgrad.tensor(x)
    inplace.pow_(exponent)
    np.testing.assert_array_equal(inplace.numpy(), expected)


@pytest.mark.parametrize("shape", [(), (1,), (7, 1, 3), (0, 4)])
@pytest.mark.parametrize("exponent", [2, 3, -2])
def test_gradients_and_double_backward(shape, exponent):
    x = np.random.default_rng(1).uniform(0.5, 2.0, shape) * np.where(
        np.random.default_rng(2).random(shape) < 0.5, -1, 1)
    a = torch.tensor(x, requires_grad=True)
    b = hookgrad.tensor(x, requires_grad=True)
    (ga,) = torch.autograd.grad(a.pow(exponent).sum(), a, create_graph=True)
    (gb,) = hookgrad.autograd.grad(b.pow(exponent).sum(), b, create_graph=True)
    np.testing.assert_allclose(gb.detach().numpy(), ga.detach().numpy(), rtol=1e-14)
    (gga,) = torch.autograd.grad(ga.sum(), a)
    (ggb,) = hookgrad.autograd.grad(gb.sum(), b)
    np.testing.assert_allclose(ggb.numpy(), gga.numpy(), rtol=1e-14)


def test_gelu_tanh_backward_matches_torch():
    x = np.random.default_rng(3).standard_normal((33, 17)).astype(np.float32) * 3
    a = torch.tensor(x, requires_grad=True)
    b = hookgrad.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(a, approximate="tanh").sum().backward()
    hookgrad.nn.functional.gelu(b, approximate="tanh").sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-5)
