"""Gamma, Dirichlet and binomial draws equal torch's under the same seed, bit for bit, and
leave the generator where torch's is; their pathwise gradients match torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

DTYPES = [(np.float32, torch.float32), (np.float64, torch.float64)]
CONCENTRATIONS = {
    "spread": lambda rng, n: 10 ** rng.uniform(-3, 2, n),
    "below_one": lambda rng, n: rng.uniform(0, 1, n),
    "one": lambda rng, n: np.ones(n),
    "tiny": lambda rng, n: 10 ** rng.uniform(-30, -6, n),
    "large": lambda rng, n: rng.uniform(50, 5000, n),
}


def _seeded(seed: int) -> None:
    torch.manual_seed(seed)
    hookgrad.manual_seed(seed)


def _same_stream_after() -> None:
    """A later draw agrees, so the generator (and its cached normal) ended where torch's did."""
    np.testing.assert_array_equal(hookgrad.randn(3, dtype=hookgrad.float64).numpy(),
                                  torch.randn(3, dtype=torch.float64).numpy())
    np.testing.assert_array_equal(hookgrad.rand(5).numpy(), torch.rand(5).numpy())


@pytest.mark.parametrize("kind", sorted(CONCENTRATIONS))
@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_standard_gamma_matches_torch(kind, np_dtype, torch_dtype, seed):
    rng = np.random.default_rng(seed)
    shape = [(7,), (3, 40), (2, 3, 5)][seed % 3]
    alpha = CONCENTRATIONS[kind](rng, shape).astype(np_dtype)
    if seed % 2:
        alpha.reshape(-1)[::5] = 0
    _seeded(seed)
    if seed % 3 == 0:  # start with a cached normal in the generator
        torch.randn(1, dtype=torch.float64)
        hookgrad.randn(1, dtype=hookgrad.float64)
    expected = torch._standard_gamma(torch.from_numpy(alpha))
    actual = hookgrad._standard_gamma(hookgrad.tensor(alpha))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    _same_stream_after()


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
def test_standard_gamma_grad_matches_torch(np_dtype, torch_dtype):
    rng = np.random.default_rng(1)
    alpha = (10 ** rng.uniform(-3, 3, 3000)).astype(np_dtype)
    torch.manual_seed(0)
    x = torch._standard_gamma(torch.from_numpy(alpha))
    expected = torch._standard_gamma_grad(torch.from_numpy(alpha), x).numpy()
    actual = hookgrad._standard_gamma_grad(hookgrad.tensor(alpha), hookgrad.tensor(x.numpy()))
    np.testing.assert_allclose(actual.numpy(), expected, rtol=1e-14 if np_dtype == np.float64
                               else 1e-6)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
def test_dirichlet_grad_matches_torch(np_dtype, torch_dtype):
    rng = np.random.default_rng(2)
    alpha = (10 ** rng.uniform(-2, 2, 4000)).astype(np_dtype)
    beta = (10 ** rng.uniform(-2, 2, 4000)).astype(np_dtype)
    total = (alpha + beta).astype(np_dtype)
    torch.manual_seed(0)
    x = torch.distributions.Beta(torch.from_numpy(alpha), torch.from_numpy(beta)).sample()
    expected = torch._dirichlet_grad(x, torch.from_numpy(alpha), torch.from_numpy(total))
    actual = hookgrad._dirichlet_grad(hookgrad.tensor(x.numpy()), hookgrad.tensor(alpha),
                                      hookgrad.tensor(total))
    np.testing.assert_allclose(actual.numpy(), expected.numpy(),
                               rtol=1e-13 if np_dtype == np.float64 else 1e-4)


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("seed", range(6))
def test_sample_dirichlet_matches_torch(np_dtype, torch_dtype, seed):
    rng = np.random.default_rng(seed)
    shape = [(2,), (5, 2), (3, 4), (2, 3, 9)][seed % 4]
    alpha = (10 ** rng.uniform(-3, 2, shape)).astype(np_dtype)
    _seeded(seed)
    expected = torch._sample_dirichlet(torch.from_numpy(alpha)).numpy()
    actual = hookgrad._sample_dirichlet(hookgrad.tensor(alpha)).numpy()
    # the sum over the last dimension may differ from torch's in its last bit past 4 terms
    np.testing.assert_allclose(actual, expected, rtol=1e-15 if np_dtype == np.float64 else 0)
    _same_stream_after()


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("seed", range(8))
def test_binomial_matches_torch(np_dtype, torch_dtype, seed):
    rng = np.random.default_rng(seed)
    count = rng.integers(0, [5, 60, 2000, 10 ** 6][seed % 4], (4, 25)).astype(np_dtype)
    prob = rng.uniform(0, 1, (4, 25)).astype(np_dtype)
    prob[:, ::9], prob[:, 1::9] = 0, 1
    _seeded(seed)
    expected = torch.binomial(torch.from_numpy(count), torch.from_numpy(prob))
    actual = hookgrad.binomial(hookgrad.tensor(count), hookgrad.tensor(prob))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    _same_stream_after()


def test_standard_gamma_backward_and_node():
    alpha = np.array([0.3, 1.0, 2.5, 12.0])
    _seeded(3)
    a_t = torch.tensor(alpha, requires_grad=True)
    a_h = hookgrad.tensor(alpha, requires_grad=True)
    x_t, x_h = torch._standard_gamma(a_t), hookgrad._standard_gamma(a_h)
    assert type(x_h.grad_fn).__name__ == type(x_t.grad_fn).__name__
    x_t.sum().backward()
    x_h.sum().backward()
    np.testing.assert_allclose(a_h.grad.numpy(), a_t.grad.numpy(), rtol=1e-14)


def test_errors_match_torch():
    with pytest.raises(NotImplementedError, match="gamma_cpu"):
        hookgrad._standard_gamma(hookgrad.tensor([1, 2]))
    with pytest.raises(ValueError, match="binomial only supports floating-point dtypes"):
        hookgrad.binomial(hookgrad.tensor([10]), hookgrad.tensor([0.3]))


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("seed", range(4))
def test_standard_gamma_of_nan_inf_and_negative_concentrations(np_dtype, torch_dtype, seed):
    """torch still draws for these: NaN gives the smallest normal number, inf gives inf, and a
    negative concentration is raised by one like any below one."""
    alpha = np.random.default_rng(seed).uniform(-1.5, 3, 60).astype(np_dtype)
    alpha[::7], alpha[3::11], alpha[5::13] = np.nan, np.inf, 0
    _seeded(seed)
    expected = torch._standard_gamma(torch.from_numpy(alpha)).numpy()
    actual = hookgrad._standard_gamma(hookgrad.tensor(alpha)).numpy()
    np.testing.assert_array_equal(actual, expected)
    _same_stream_after()


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("count,prob", [(20.0, 0.3), (7.5, 0.8), (1000.0, 0.4), (1000.0, 0.93),
                                        (5.0e6, 0.01), (0.0, 0.5), (12.0, 1.0), (12.0, 0.0)])
def test_binomial_with_one_shared_parameter_pair_matches_torch(np_dtype, torch_dtype, count,
                                                               prob):
    """The common case of expanded parameters (drawn in blocks) gives torch's draws too."""
    counts, probs = np.full((30, 40), count, np_dtype), np.full((30, 40), prob, np_dtype)
    _seeded(11)
    expected = torch.binomial(torch.from_numpy(counts), torch.from_numpy(probs))
    actual = hookgrad.binomial(hookgrad.tensor(counts), hookgrad.tensor(probs))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    _same_stream_after()


@pytest.mark.parametrize("np_dtype,torch_dtype", DTYPES)
@pytest.mark.parametrize("seed", range(4))
def test_poisson_reads_ahead_and_leaves_the_generator_where_torch_does(np_dtype, torch_dtype,
                                                                       seed):
    rates = (10 ** np.random.default_rng(seed).uniform(-2, 3, (6, 30))).astype(np_dtype)
    rates[:, ::8] = 0
    _seeded(seed)
    hookgrad.randn(1, dtype=hookgrad.float64)  # a cached normal must survive the call
    torch.randn(1, dtype=torch.float64)
    expected = torch.poisson(torch.from_numpy(rates))
    actual = hookgrad.poisson(hookgrad.tensor(rates))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    _same_stream_after()


@pytest.mark.parametrize("op", ["_sample_dirichlet", "binomial", "_dirichlet_grad",
                                "_standard_gamma_grad"])
def test_no_derivative_nodes_raise_as_torchs(op):
    def run(lib):
        a = lib.tensor([0.5, 0.25], requires_grad=True)
        calls = {"_sample_dirichlet": lambda: lib._sample_dirichlet(a),
                 "binomial": lambda: lib.binomial(lib.tensor([10.0, 5.0]), a),
                 "_dirichlet_grad": lambda: lib._dirichlet_grad(a, a, a + 1),
                 "_standard_gamma_grad": lambda: lib._standard_gamma_grad(a, a)}
        out = calls[op]()
        with pytest.raises(Exception) as caught:
            out.sum().backward()
        return out.grad_fn.name(), type(caught.value), str(caught.value)

    assert run(hookgrad) == run(torch)


def test_binomial_and_gradients_broadcast_their_operands_as_torch():
    _seeded(4)
    expected = torch.binomial(torch.tensor([[10.0, 5.0]] * 3), torch.tensor([0.2, 0.7]))
    actual = hookgrad.binomial(hookgrad.tensor([[10.0, 5.0]] * 3), hookgrad.tensor([0.2, 0.7]))
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())
    expected = torch._standard_gamma_grad(torch.tensor([1.0, 2.0]), torch.tensor([0.5]))
    actual = hookgrad._standard_gamma_grad(hookgrad.tensor([1.0, 2.0]), hookgrad.tensor([0.5]))
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)
