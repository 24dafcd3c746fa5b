"""The distributions added with ContinuousBernoulli ... Wishart, beyond the shared table in
test_distributions: constructor errors, dependent supports, GeneralizedPareto (whose scores
torch computes in float32 only), the low-rank normal's matrices, Kumaraswamy's mode, VonMises's
float64 draws and kl_divergence between Wisharts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import raised

BAD = {
    "pareto scale": lambda L: L.distributions.Pareto(-1.0, 1.0),
    "pareto alpha": lambda L: L.distributions.Pareto(1.0, L.tensor([-1.0])),
    "weibull": lambda L: L.distributions.Weibull(L.tensor([1.0]), L.tensor([-1.0])),
    "kumaraswamy": lambda L: L.distributions.Kumaraswamy(L.tensor([-1.0]), 1.0),
    "half cauchy": lambda L: L.distributions.HalfCauchy(L.tensor([-1.0])),
    "inverse gamma": lambda L: L.distributions.InverseGamma(L.tensor([-1.0]), 1.0),
    "logistic normal": lambda L: L.distributions.LogisticNormal(0.0, L.tensor([-1.0])),
    "generalized pareto": lambda L: L.distributions.GeneralizedPareto(0.0, -1.0, 0.0),
    "continuous bernoulli both": lambda L: L.distributions.ContinuousBernoulli(0.3, 0.1),
    "fisher": lambda L: L.distributions.FisherSnedecor(L.tensor([-1.0]), 1.0),
    "negative binomial count": lambda L: L.distributions.NegativeBinomial(
        L.tensor([-1.0]), L.tensor([0.5])),
    "negative binomial probs": lambda L: L.distributions.NegativeBinomial(
        L.tensor([1.0]), L.tensor([1.0])),
    "negative binomial neither": lambda L: L.distributions.NegativeBinomial(3),
    "von mises": lambda L: L.distributions.VonMises(L.tensor([0.0]), L.tensor([0.0])),
    "lkj dim": lambda L: L.distributions.LKJCholesky(1),
    "lkj concentration": lambda L: L.distributions.LKJCholesky(3, L.tensor([0.0])),
    "wishart matrix": lambda L: L.distributions.Wishart(L.tensor([5.0]), -L.eye(3)),
    "wishart two matrices": lambda L: L.distributions.Wishart(3.0, L.eye(3),
                                                              scale_tril=L.eye(3)),
    "wishart vector": lambda L: L.distributions.Wishart(3.0, L.ones(3)),
    "wishart df": lambda L: L.distributions.Wishart(L.tensor(2.0), L.eye(3)),
    "wishart df int": lambda L: L.distributions.Wishart(2, L.eye(3)),
    "wishart df batch": lambda L: L.distributions.Wishart(L.ones(4), L.eye(2)),
    "low rank loc": lambda L: L.distributions.LowRankMultivariateNormal(
        L.tensor(0.0), L.ones(3, 2), L.ones(3)),
    "low rank factor": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3), L.ones(3), L.ones(3)),
    "low rank factor rows": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3), L.ones(4, 2), L.ones(3)),
    "low rank diag": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(3), L.ones(3, 2), L.ones(4)),
    "low rank batch": lambda L: L.distributions.LowRankMultivariateNormal(
        L.zeros(2, 3), L.ones(4, 3, 2), L.ones(3)),
    "pareto below its scale": lambda L: L.distributions.Pareto(2.0, 1.0).log_prob(
        L.tensor(1.0)),
    "corr cholesky size": lambda L: L.distributions.transforms.CorrCholeskyTransform()(
        L.ones(2, 5)),
    "corr cholesky shape": lambda L: L.distributions.transforms.CorrCholeskyTransform(
    ).forward_shape((2,)),
    "corr cholesky square": lambda L: L.distributions.transforms.CorrCholeskyTransform(
    ).inverse_shape((2, 4, 3)),
    "corr cholesky rank": lambda L: L.distributions.transforms.CorrCholeskyTransform(
    ).inverse_shape((3,)),
    "generalized pareto float64": lambda L: L.distributions.GeneralizedPareto(
        L.zeros(2, dtype=L.float64), L.ones(2, dtype=L.float64),
        L.zeros(2, dtype=L.float64)).log_prob(L.ones(2, dtype=L.float64)),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_are_torchs(name):
    kind, message = raised(BAD[name], hookgrad)
    assert (kind, message.replace("hookgrad", "torch")) == raised(BAD[name], torch)


def test_continuous_bernoulli_clamps_given_probs_before_validating():
    for L in (hookgrad, torch):
        d = L.distributions.ContinuousBernoulli(L.tensor([1.5, 0.0, 0.3]))
        assert d.probs.tolist() == pytest.approx([1 - 2 ** -23, 2 ** -23, 0.3])
    ours = hookgrad.distributions.ContinuousBernoulli(probs=hookgrad.tensor([0.0, 1.0]))
    theirs = torch.distributions.ContinuousBernoulli(probs=torch.tensor([0.0, 1.0]))
    np.testing.assert_allclose(ours.mean.numpy(), theirs.mean.numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [
    lambda L: L.distributions.Pareto(L.tensor([1.0, 2.0]), 3.0),
    lambda L: L.distributions.Pareto(1.0, 3.0),
    lambda L: L.distributions.GeneralizedPareto(0.0, 1.0, -0.5),
    lambda L: L.distributions.GeneralizedPareto(L.tensor([1.0, 2.0]), 2.0, 0.5),
    lambda L: L.distributions.GeneralizedPareto(L.tensor([1.0, 2.0]), 2.0, -0.5),
])
def test_dependent_supports_read_like_torchs(make):
    assert repr(make(hookgrad).support) == repr(make(torch).support)
    assert hookgrad.distributions.Pareto.support.event_dim == 0


GP_CONCENTRATION = np.array([[0.0, 0.3, -0.4], [0.8, -0.2, 1e-9]])
GP_LOC = np.array([[0.1, -0.5, 1.0], [0.0, 2.0, -1.0]])
GP_SCALE = np.array([[1.0, 0.5, 2.0], [1.5, 0.7, 1.2]])


def _generalized_pareto(L):
    params = [L.tensor(a, dtype=L.float32, requires_grad=True)
              for a in (GP_LOC, GP_SCALE, GP_CONCENTRATION)]
    return L.distributions.GeneralizedPareto(*params), params


def test_generalized_pareto_matches_torch_in_float32():
    ours_d, ours_params = _generalized_pareto(hookgrad)
    theirs_d, theirs_params = _generalized_pareto(torch)
    inside = GP_LOC + 0.4 * GP_SCALE
    results = []
    for L, d in ((hookgrad, ours_d), (torch, theirs_d)):
        x = L.tensor(inside, dtype=L.float32)
        p = L.tensor([[0.1, 0.5, 0.9], [0.3, 0.99, 0.0]], dtype=L.float32)
        L.manual_seed(4)
        draws = d.rsample((5,))
        outputs = [d.log_prob(x), d.cdf(x), d.icdf(p), d.entropy(), d.mean, d.mode,
                   d.variance, d.log_cdf(x), d.log_survival_function(x), draws]
        sum(o.sum() for o in outputs if o.requires_grad and o.isfinite().all()).backward()
        results.append(outputs)
    for ours, theirs in zip(*results):
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                   rtol=3e-5, atol=3e-5, equal_nan=True)
    for ours, theirs in zip(ours_params, theirs_params):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-4,
                                   atol=1e-4)


def test_generalized_pareto_outside_its_support_unvalidated():
    for value in ([-1.0, 0.0, 0.5, 1.9, 2.0, 3.0],):
        results = []
        for L in (hookgrad, torch):
            rows = []
            for xi in (-0.5, 0.0, 0.5):
                d = L.distributions.GeneralizedPareto(0.0, 1.0, xi, validate_args=False)
                x = L.tensor(value)
                rows.append([d.log_prob(x).tolist(), d.cdf(x).tolist(),
                             d.icdf(L.tensor([0.0, 0.3, 1.0])).tolist()])
            results.append(rows)
        for ours, theirs in zip(results[0], results[1]):
            for mine, expected in zip(ours, theirs):
                np.testing.assert_allclose(np.array(mine, dtype=float),
                                           np.array(expected, dtype=float), rtol=1e-6,
                                           equal_nan=True)


def test_low_rank_normal_matrices_match_torch():
    rng = np.random.default_rng(2)
    loc, factor, diag = rng.normal(size=(2, 4)), rng.normal(size=(4, 2)), rng.uniform(
        0.5, 2, size=4)
    results = []
    for L in (hookgrad, torch):
        tensors = [L.tensor(a, requires_grad=True) for a in (loc, factor, diag)]
        d = L.distributions.LowRankMultivariateNormal(*tensors)
        matrices = [d.scale_tril, d.covariance_matrix, d.precision_matrix, d.variance,
                    d.entropy()]
        sum(m.sum() for m in matrices).backward()
        results.append([m.detach().numpy() for m in matrices]
                       + [_grad(t) for t in tensors])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def _grad(tensor):
    return np.zeros(tuple(tensor.shape)) if tensor.grad is None else tensor.grad.numpy()


def test_kumaraswamy_mode_is_nan_with_nan_gradients_like_torchs():
    results = []
    for L in (hookgrad, torch):
        a = L.tensor([2.0, 0.5, 1.0], requires_grad=True)
        b = L.tensor([3.0, 2.0, 1.0], requires_grad=True)
        mode = L.distributions.Kumaraswamy(a, b).mode
        mode.sum().backward()
        results.append((mode.tolist(), a.grad.tolist(), b.grad.tolist()))
    np.testing.assert_array_equal(np.array(results[0]), np.array(results[1]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_von_mises_draws_equal_torchs_and_leave_the_generator_where_torch_does(dtype):
    results = []
    for L in (hookgrad, torch):
        d = L.distributions.VonMises(L.tensor([0.5, -3.0, 3.1], dtype=getattr(L, dtype)),
                                     L.tensor([0.05, 2.0, 40.0], dtype=getattr(L, dtype)))
        L.manual_seed(8)
        draws = d.sample((7,))
        results.append((draws.numpy(), L.rand(2).numpy(), str(draws.dtype)))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2].split(".")[-1] == results[1][2].split(".")[-1]


def test_wishart_kl_uses_the_exponential_family_bregman_divergence():
    tril = np.tril(np.random.default_rng(5).normal(size=(3, 3)) * 0.3) + np.eye(3)
    results = []
    for L in (hookgrad, torch):
        df = L.tensor([4.0, 6.5], dtype=L.float64, requires_grad=True)
        scale = L.tensor(tril, requires_grad=True)
        p = L.distributions.Wishart(df, scale_tril=scale)
        q = L.distributions.Wishart(L.tensor(5.0, dtype=L.float64),
                                    covariance_matrix=L.eye(3, dtype=L.float64) * 1.5)
        kl = L.distributions.kl_divergence(p, q)
        kl.sum().backward()
        results.append((kl.detach().numpy(), _grad(df), _grad(scale)))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


def test_cumulative_distribution_transform_follows_its_distribution():
    for L in (hookgrad, torch):
        T = L.distributions.transforms
        base = L.distributions.Uniform(L.tensor([0.0, 1.0]), L.tensor([1.0, 3.0]))
        t = T.CumulativeDistributionTransform(base)
        assert repr(t.domain) == repr(base.support) and t.sign == 1 and t.bijective
        cached = t.with_cache(1)
        assert cached._cache_size == 1 and cached.distribution is base
        assert t != T.CumulativeDistributionTransform(base)
        independent = T.CumulativeDistributionTransform(L.distributions.Independent(base, 1))
        assert independent.domain.event_dim == 1


def test_corr_cholesky_transform_on_a_single_dimension_and_equality():
    for L in (hookgrad, torch):
        t = L.distributions.transforms.CorrCholeskyTransform()
        assert t(L.zeros(0)).tolist() == [[1.0]]
        assert t.inverse_shape((1, 1)) == (0,) and t.forward_shape((2, 6)) == (2, 4, 4)
        assert t != L.distributions.transforms.CorrCholeskyTransform()
        assert repr(L.distributions.biject_to(L.distributions.constraints.corr_cholesky)) \
            == "CorrCholeskyTransform()"
