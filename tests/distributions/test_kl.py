"""kl_divergence for every registered pair among hookgrad's distributions, values and
gradients against torch's; register_kl dispatch and its ambiguity warning."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad

RNG = np.random.default_rng(11)
LOC, LOC2 = RNG.normal(size=3), RNG.normal(size=3)
SCALE, SCALE2 = RNG.uniform(0.5, 2, size=3), RNG.uniform(0.5, 2, size=3)
PROBS, PROBS2 = RNG.uniform(0.1, 0.9, size=3), RNG.uniform(0.1, 0.9, size=3)
SIMPLEX, SIMPLEX2 = RNG.uniform(0.1, 1, size=(3, 4)), RNG.uniform(0.1, 1, size=(3, 4))
TRIL = np.tril(RNG.normal(size=(3, 3)) * 0.3) + np.eye(3)
TRIL2 = np.tril(RNG.normal(size=(2, 3, 3)) * 0.3) + np.eye(3) * 1.2


def make(L, spec, params):
    name, *arrays = spec
    tensors = [L.tensor(a, requires_grad=True) for a in arrays]
    params.extend(tensors)
    D = L.distributions
    if name == "Normal2":
        return D.Normal(*tensors)
    if name == "Binomial":
        return D.Binomial(tensors[0].detach(), probs=tensors[1])
    if name in ("Bernoulli", "Geometric"):
        return getattr(D, name)(probs=tensors[0])
    if name in ("Categorical", "OneHotCategorical"):
        return getattr(D, name)(probs=tensors[0])
    if name == "MultivariateNormal":
        return D.MultivariateNormal(tensors[0], scale_tril=tensors[1])
    if name == "Independent":
        return D.Independent(D.Normal(*tensors), 1)
    if name == "LogNormal":
        return D.LogNormal(*tensors)
    return getattr(D, name)(*tensors)


def two(name, first, second):
    return (name, first, second)


SPECS = {
    "Normal": [("Normal", LOC, SCALE), ("Normal", LOC2, SCALE2)],
    "Uniform": [("Uniform", LOC - 3, LOC + 3), ("Uniform", LOC - 4, LOC + 5)],
    "Exponential": [("Exponential", SCALE), ("Exponential", SCALE2)],
    "Laplace": [("Laplace", LOC, SCALE), ("Laplace", LOC2, SCALE2)],
    "Cauchy": [("Cauchy", LOC, SCALE), ("Cauchy", LOC2, SCALE2)],
    "Gumbel": [("Gumbel", LOC, SCALE), ("Gumbel", LOC2, SCALE2)],
    "HalfNormal": [("HalfNormal", SCALE), ("HalfNormal", SCALE2)],
    "LogNormal": [("LogNormal", LOC, SCALE), ("LogNormal", LOC2, SCALE2)],
    "Bernoulli": [("Bernoulli", PROBS), ("Bernoulli", PROBS2)],
    "Geometric": [("Geometric", PROBS), ("Geometric", PROBS2)],
    "Poisson": [("Poisson", SCALE), ("Poisson", SCALE2)],
    "Categorical": [("Categorical", SIMPLEX), ("Categorical", SIMPLEX2)],
    "OneHotCategorical": [("OneHotCategorical", SIMPLEX), ("OneHotCategorical", SIMPLEX2)],
    "MultivariateNormal": [("MultivariateNormal", LOC, TRIL),
                           ("MultivariateNormal", LOC2, TRIL2)],
    "Independent": [("Independent", LOC, SCALE), ("Independent", LOC2, SCALE2)],
    "Gamma": [("Gamma", SCALE, SCALE2), ("Gamma", SCALE2, SCALE)],
    "Beta": [("Beta", SCALE, SCALE2), ("Beta", SCALE2, SCALE)],
    "Dirichlet": [("Dirichlet", SIMPLEX * 2), ("Dirichlet", SIMPLEX2 * 3)],
    "Chi2": [("Chi2", SCALE), ("Chi2", SCALE2)],
    "Binomial": [("Binomial", np.array([5.0, 7.0, 5.0]), PROBS),
                 ("Binomial", np.array([5.0, 5.0, 5.0]), PROBS2)],
}
PAIRS = [(k, k) for k in SPECS] + [
    ("Bernoulli", "Poisson"), ("Poisson", "Bernoulli"), ("Exponential", "Uniform"),
    ("Exponential", "Gumbel"), ("Exponential", "Normal"), ("Gumbel", "Exponential"),
    ("Gumbel", "Uniform"), ("Gumbel", "Normal"), ("Laplace", "Exponential"),
    ("Laplace", "Uniform"), ("Laplace", "Normal"), ("Normal", "Exponential"),
    ("Normal", "Uniform"), ("Normal", "Gumbel"), ("Normal", "Laplace"),
    ("Uniform", "Exponential"), ("Uniform", "Gumbel"), ("Uniform", "Normal"),
    ("Beta", "Exponential"), ("Beta", "Gamma"), ("Beta", "Normal"), ("Beta", "Uniform"),
    ("Exponential", "Beta"), ("Exponential", "Gamma"), ("Gamma", "Beta"), ("Gamma", "Uniform"),
    ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Normal"), ("Gumbel", "Beta"),
    ("Gumbel", "Gamma"), ("Laplace", "Beta"), ("Laplace", "Gamma"), ("Normal", "Beta"),
    ("Normal", "Gamma"), ("Uniform", "Beta"), ("Uniform", "Gamma"), ("Chi2", "Gamma"),
    ("Poisson", "Binomial"),
]


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=lambda v: v)
def test_kl_values_and_gradients_match_torch(p_name, q_name):
    results = []
    for L in (hookgrad, torch):
        params = []
        p = make(L, SPECS[p_name][0], params)
        q = make(L, SPECS[q_name][1], params)
        kl = L.distributions.kl_divergence(p, q)
        finite = L.isfinite(kl)
        if kl.requires_grad:
            kl.masked_fill(~finite, 0.0).sum().backward()
        grads = [t.grad.numpy() if t.grad is not None else None for t in params]
        results.append((kl.detach().numpy(), grads, kl.requires_grad))
    (ours, our_grads, ours_tracked), (theirs, their_grads, theirs_tracked) = results
    assert ours_tracked == theirs_tracked
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for mine, expected in zip(our_grads, their_grads):
        if expected is None:
            assert mine is None or not np.any(mine)
        else:
            # digamma's derivative (trigamma) in the gamma family agrees to ~1e-10
            np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=1e-9)


def test_unbounded_uniform_kl_is_infinite_where_support_escapes():
    for L in (hookgrad, torch):
        p = L.distributions.Uniform(L.tensor([0.0, 0.0]), L.tensor([1.0, 2.0]))
        q = L.distributions.Uniform(L.tensor([-1.0, 0.5]), L.tensor([3.0, 3.0]))
        assert L.distributions.kl_divergence(p, q).isinf().tolist() == [False, True]


def test_register_kl_prefers_the_most_specific_pair_and_warns_when_ambiguous():
    outcomes = []
    for L in (hookgrad, torch):
        D = L.distributions

        class MyNormal(D.Normal):
            pass

        class OtherNormal(D.Normal):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _left(p, q):
            return "left"

        @D.register_kl(D.Normal, OtherNormal)
        def _right(p, q):
            return "right"

        plain = D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ambiguous = D.kl_divergence(MyNormal(0.0, 1.0), OtherNormal(0.0, 1.0))
        outcomes.append((plain, ambiguous, [str(w.message).replace(
            "hookgrad", "torch") for w in caught]))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2]  # the ambiguity was reported


def test_register_kl_rejects_a_non_type():
    for L in (hookgrad, torch):
        with pytest.raises(TypeError):
            L.distributions.register_kl(1, 2)

