"""Gamma, Chi2, Beta, Dirichlet, StudentT and Binomial draw torch's numbers under the same
seed, with torch's pathwise gradients, and leave the generator where torch's is."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

BUILDERS = {
    "Gamma": lambda d, a, b: d.Gamma(a, b),
    "Chi2": lambda d, a, b: d.Chi2(a),
    "Beta": lambda d, a, b: d.Beta(a, b),
    "Dirichlet": lambda d, a, b: d.Dirichlet(a),
    "StudentT": lambda d, a, b: d.StudentT(a, b, b),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_rsample_and_gradients_match_torch(name, dtype, seed):
    rng = np.random.default_rng(seed)
    first = 10 ** rng.uniform(-2, 1.5, 3)
    second = rng.uniform(0.5, 2.0, 3)
    leaves_t = [torch.tensor(v, dtype=getattr(torch, dtype), requires_grad=True)
                for v in (first, second)]
    leaves_h = [hookgrad.tensor(v, dtype=getattr(hookgrad, dtype), requires_grad=True)
                for v in (first, second)]
    torch.manual_seed(seed)
    hookgrad.manual_seed(seed)
    draw_t = BUILDERS[name](torch.distributions, *leaves_t).rsample((4, 2))
    draw_h = BUILDERS[name](hookgrad.distributions, *leaves_h).rsample((4, 2))
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(draw_h.detach().numpy(), draw_t.detach().numpy(), rtol=tol)
    weights = np.random.default_rng(99).standard_normal(tuple(draw_t.shape))
    (draw_t * torch.tensor(weights, dtype=draw_t.dtype)).sum().backward()
    (draw_h * hookgrad.tensor(weights, dtype=draw_h.dtype)).sum().backward()
    for leaf_h, leaf_t in zip(leaves_h, leaves_t):
        if leaf_t.grad is None:
            assert leaf_h.grad is None
        else:
            np.testing.assert_allclose(leaf_h.grad.numpy(), leaf_t.grad.numpy(),
                                       rtol=1e-9 if dtype == "float64" else 1e-3, atol=1e-9)
    np.testing.assert_array_equal(hookgrad.rand(4, dtype=hookgrad.float64).numpy(),
                                  torch.rand(4, dtype=torch.float64).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_binomial_sample_matches_torch(dtype, seed):
    rng = np.random.default_rng(seed)
    count = rng.integers(0, 300, 3).astype(float)
    prob = rng.uniform(0, 1, 3)
    torch.manual_seed(seed)
    hookgrad.manual_seed(seed)
    expected = torch.distributions.Binomial(torch.tensor(count, dtype=getattr(torch, dtype)),
                                            torch.tensor(prob, dtype=getattr(torch, dtype)))
    actual = hookgrad.distributions.Binomial(
        hookgrad.tensor(count, dtype=getattr(hookgrad, dtype)),
        hookgrad.tensor(prob, dtype=getattr(hookgrad, dtype)))
    np.testing.assert_array_equal(actual.sample((5,)).numpy(), expected.sample((5,)).numpy())
    np.testing.assert_array_equal(hookgrad.rand(4).numpy(), torch.rand(4).numpy())


def test_dirichlet_rsample_node_name():
    concentration = hookgrad.tensor([0.5, 2.0, 3.0], requires_grad=True)
    draw = hookgrad.distributions.Dirichlet(concentration).rsample()
    expected = torch.distributions.Dirichlet(torch.tensor([0.5, 2.0, 3.0],
                                                          requires_grad=True)).rsample()
    assert type(draw.grad_fn).__name__ == type(expected.grad_fn).__name__
