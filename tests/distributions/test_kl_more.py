"""kl_divergence for the pairs torch registers around ContinuousBernoulli, Pareto and
LowRankMultivariateNormal: values (finite and infinite) and gradients against torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

RNG = np.random.default_rng(23)
LOC, LOC2 = RNG.normal(size=3), RNG.normal(size=3)
SCALE, SCALE2 = RNG.uniform(0.5, 2, size=3), RNG.uniform(0.5, 2, size=3)
PROBS, PROBS2 = np.array([0.2, 0.4995, 0.8]), np.array([0.65, 0.3, 0.5005])
TRIL = np.tril(RNG.normal(size=(3, 3)) * 0.3) + np.eye(3)
FACTOR, FACTOR2 = RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3, 1))

SPECS = {
    "ContinuousBernoulli": [("ContinuousBernoulli", PROBS), ("ContinuousBernoulli", PROBS2)],
    "Pareto": [("Pareto", SCALE, np.array([0.8, 2.5, 3.0])),
               ("Pareto", np.array([0.4, 1.5, 0.6]), SCALE2)],
    "Beta": [("Beta", SCALE, SCALE2), ("Beta", SCALE2, SCALE)],
    "Exponential": [("Exponential", SCALE), ("Exponential", SCALE2)],
    "Gamma": [("Gamma", SCALE, SCALE2), ("Gamma", SCALE2, SCALE)],
    "Gumbel": [("Gumbel", LOC, SCALE), ("Gumbel", LOC2, SCALE2)],
    "Laplace": [("Laplace", LOC, SCALE), ("Laplace", LOC2, SCALE2)],
    "Normal": [("Normal", LOC, SCALE), ("Normal", LOC2, SCALE2)],
    "Uniform": [("Uniform", np.array([0.1, -1.0, 2.0]), np.array([0.9, 3.0, 5.0])),
                ("Uniform", np.array([-0.5, 0.0, 0.0]), np.array([1.5, 0.5, 1.0]))],
    "LowRankMultivariateNormal": [("LowRank", LOC, FACTOR, SCALE),
                                  ("LowRank", LOC2, FACTOR2, np.stack([SCALE2, SCALE]))],
    "MultivariateNormal": [("MultivariateNormal", LOC, TRIL),
                           ("MultivariateNormal", LOC2, TRIL.T @ TRIL * 0 + TRIL * 1.3)],
}


def make(L, spec, params):
    name, *arrays = spec
    tensors = [L.tensor(a, requires_grad=True) for a in arrays]
    params.extend(tensors)
    D = L.distributions
    if name == "ContinuousBernoulli":
        return D.ContinuousBernoulli(probs=tensors[0])
    if name == "LowRank":
        return D.LowRankMultivariateNormal(*tensors)
    if name == "MultivariateNormal":
        return D.MultivariateNormal(tensors[0], scale_tril=tensors[1])
    return getattr(D, name)(*tensors)


PAIRS = [("ContinuousBernoulli", "ContinuousBernoulli"), ("Pareto", "Pareto"),
         ("LowRankMultivariateNormal", "LowRankMultivariateNormal"),
         ("MultivariateNormal", "LowRankMultivariateNormal"),
         ("LowRankMultivariateNormal", "MultivariateNormal")] + [
    (p, q) for p, q in [
        ("Beta", "ContinuousBernoulli"), ("Beta", "Pareto"), ("ContinuousBernoulli", "Pareto"),
        ("ContinuousBernoulli", "Exponential"), ("ContinuousBernoulli", "Normal"),
        ("ContinuousBernoulli", "Uniform"), ("Exponential", "Pareto"),
        ("Exponential", "ContinuousBernoulli"), ("Gamma", "Pareto"),
        ("Gamma", "ContinuousBernoulli"), ("Gumbel", "Pareto"),
        ("Gumbel", "ContinuousBernoulli"), ("Laplace", "Pareto"),
        ("Laplace", "ContinuousBernoulli"), ("Normal", "Pareto"),
        ("Normal", "ContinuousBernoulli"), ("Pareto", "Uniform"),
        ("Pareto", "ContinuousBernoulli"), ("Pareto", "Beta"), ("Pareto", "Exponential"),
        ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "ContinuousBernoulli"),
        ("Uniform", "Pareto")]]


def _kl_and_grads(L, p_spec, q_spec):
    params = []
    p, q = make(L, p_spec, params), make(L, q_spec, params)
    kl = L.distributions.kl_divergence(p, q)
    if kl.requires_grad:
        kl.masked_fill(~L.isfinite(kl), 0.0).sum().backward()
    grads = [t.grad.numpy() if t.grad is not None else None for t in params]
    return kl.detach().numpy(), grads, kl.requires_grad


@pytest.mark.parametrize("p_name,q_name", PAIRS, ids=lambda v: v)
@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_kl_values_and_gradients_match_torch(p_name, q_name, order):
    p_spec, q_spec = SPECS[p_name][order[0]], SPECS[q_name][order[1]]
    ours, our_grads, ours_tracked = _kl_and_grads(hookgrad, p_spec, q_spec)
    theirs, their_grads, theirs_tracked = _kl_and_grads(torch, p_spec, q_spec)
    assert ours_tracked == theirs_tracked
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for mine, expected in zip(our_grads, their_grads):
        if expected is None:
            assert mine is None or not np.any(mine)
        else:
            np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("pair", [("LowRank", "LowRank"), ("LowRank", "Full"),
                                  ("Full", "LowRank")])
def test_low_rank_kl_refuses_different_event_shapes_as_torch(pair):
    messages = []
    for L in (hookgrad, torch):
        D = L.distributions
        build = {"LowRank": lambda n: D.LowRankMultivariateNormal(L.zeros(n), L.ones(n, 1),
                                                                  L.ones(n)),
                 "Full": lambda n: D.MultivariateNormal(L.zeros(n), L.eye(n))}
        with pytest.raises(ValueError) as info:
            D.kl_divergence(build[pair[0]](3), build[pair[1]](2))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
