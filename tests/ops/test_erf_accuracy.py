"""erf (and exact GELU, which uses it) against torch on a dense grid with tails, zeros,
infinities and nan: float64 within 2 ulp, float32 and float16 within 1 ulp; gradients and
double backward as torch's."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare

GRID = np.concatenate([np.linspace(-7, 7, 14001), np.geomspace(1e-300, 0.5, 400),
                       -np.geomspace(1e-300, 0.5, 400), [0.0, -0.0, np.inf, -np.inf, np.nan],
                       np.nextafter([0.5, 2.0, 4.0, 6.0], 0), [0.5, 2.0, 4.0, 6.0]])
MAX_ULP = {"float16": 1, "float32": 1, "float64": 2}

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_erf_values(dtype):
    x = GRID.astype(dtype)
    expected = torch.erf(torch.tensor(x)).numpy()
    got = hookgrad.erf(hookgrad.tensor(x)).numpy()
    assert got.dtype == expected.dtype
    # ulps measured in the output's own precision; torch's float16 erf is a few subnormal
    # steps (2**-24) off the correctly rounded value for tiny inputs
    with np.errstate(invalid="ignore"):
        spacing = MAX_ULP[dtype] * np.spacing(np.abs(expected))
    if dtype == "float16":
        spacing = spacing + 4 * 2.0 ** -24
    same = (got == expected) | (np.isnan(got) & np.isnan(expected))
    assert np.all(same | (np.abs(got.astype(np.float64) - expected) <= spacing))
    np.testing.assert_array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0]))

@pytest.mark.parametrize("shape", [(), (1,), (3, 0), (5, 7, 3)])
def test_erf_grad_and_double_backward(shape):
    x = np.random.default_rng(0).standard_normal(shape) * 2
    a = torch.tensor(x, requires_grad=True)
    b = hookgrad.tensor(x, requires_grad=True)
    (ga,) = torch.autograd.grad(torch.erf(a).sum(), a, create_graph=True)
    (gb,) = hookgrad.autograd.grad(hookgrad.erf(b).sum(), b, create_graph=True)
    np.testing.assert_allclose(gb.detach().numpy(), ga.detach().numpy(), rtol=1e-14)
    (gga,) = torch.autograd.grad(ga.sum(), a)
    (ggb,) = hookgrad.autograd.grad(gb.sum(), b)
    np.testing.assert_allclose(ggb.numpy(), gga.numpy(), rtol=1e-13, atol=1e-300)

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_gelu_matches_torch(dtype):
    x = np.random.default_rng(1).standard_normal((33, 17)).astype(dtype) * 4
    a = torch.tensor(x, requires_grad=True)
    b = hookgrad.tensor(x, requires_grad=True)
    ya, yb = torch.nn.functional.gelu(a), hookgrad.nn.functional.gelu(b)
    tol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(yb.detach().numpy(), ya.detach().numpy(), rtol=tol, atol=tol)
    ya.sum().backward()
    yb.sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_at_interval_edges_and_strided_input(dtype):
    # erf is tabulated on intervals of width 1/32: the edges (k + 1/2) / 32 and their
    # neighbours, read through a transposed, strided view
    edges = (np.arange(0, 193) + 0.5) / 32
    values = np.concatenate([edges, np.nextafter(edges, 0), np.nextafter(edges, 9), -edges])
    grid = np.resize(values, (2 * 193, 8)).astype(dtype)
    a = torch.tensor(grid).t()[:, ::2]
    b = hookgrad.tensor(grid).t()[:, ::2]
    expected = torch.erf(a).numpy()
    got = hookgrad.erf(b).numpy()
    assert got.shape == expected.shape and got.dtype == expected.dtype
    spacing = MAX_ULP[dtype] * np.spacing(np.abs(expected))
    assert np.all(np.abs(got.astype(np.float64) - expected) <= spacing)


def test_erfc_of_0d_tensors():
    for value in (0.5, 2.5, -3.0, 0.0):
        compare(lambda lib, x: lib.erfc(x), np.array(value))
        compare(lambda lib, x: lib.special.erfc(x), np.array(value, np.float32))
    compare(lambda lib, x: lib.erfc(x), np.array(3, np.int64), grad=False)
