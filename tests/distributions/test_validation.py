"""Argument and sample validation: the same exception type and the whole message as torch's,
including the repr of the distribution and of the offending tensor."""
from __future__ import annotations

import pytest
import torch

import hookgrad
from tests.conftest import raised

BAD_ARGUMENTS = {
    "negative scale": lambda L: L.distributions.Normal(L.tensor([0.0, 1.0]),
                                                       L.tensor([1.0, -2.0])),
    "scalar negative scale": lambda L: L.distributions.Normal(0.0, -1.0),
    "probs above one": lambda L: L.distributions.Bernoulli(probs=L.tensor([0.2, 1.5])),
    "both probs and logits": lambda L: L.distributions.Bernoulli(probs=0.5, logits=0.0),
    "neither": lambda L: L.distributions.Categorical(),
    "zero-dim probs": lambda L: L.distributions.Categorical(probs=L.tensor(1.0)),
    "zero-dim logits": lambda L: L.distributions.Categorical(logits=L.tensor(1.0)),
    "low above high": lambda L: L.distributions.Uniform(L.tensor([2.0]), L.tensor([1.0])),
    "non-simplex probs": lambda L: L.distributions.OneHotCategorical(
        probs=L.tensor([-0.5, 1.5])),
    "zero rate": lambda L: L.distributions.Exponential(L.tensor([0.0, 1.0])),
    "negative poisson rate": lambda L: L.distributions.Poisson(L.tensor([-1.0])),
    "geometric zero probs": lambda L: L.distributions.Geometric(probs=L.tensor([0.0, 0.5])),
    "mvn two matrices": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), covariance_matrix=L.eye(2), scale_tril=L.eye(2)),
    "mvn scalar loc": lambda L: L.distributions.MultivariateNormal(L.tensor(0.0),
                                                                   scale_tril=L.eye(2)),
    "mvn vector scale_tril": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), scale_tril=L.ones(2)),
    "mvn not positive definite": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), covariance_matrix=-L.eye(2)),
    "independent too many dims": lambda L: L.distributions.Independent(
        L.distributions.Normal(L.zeros(3), 1.0), 2),
    "transforms not a list": lambda L: L.distributions.TransformedDistribution(
        L.distributions.Normal(0.0, 1.0), (L.distributions.ExpTransform(),)),
    "mixture not categorical": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Normal(0.0, 1.0), L.distributions.Normal(L.zeros(2), 1.0)),
    "mixture component count": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(3)), L.distributions.Normal(L.zeros(2), 1.0)),
    "mixture batch": lambda L: L.distributions.MixtureSameFamily(
        L.distributions.Categorical(L.ones(4, 2)), L.distributions.Normal(L.zeros(3, 2), 1.0)),
    "multinomial float count": lambda L: L.distributions.Multinomial(2.0, L.ones(3)),
    "binomial inhomogeneous entropy": lambda L: L.distributions.Binomial(
        L.tensor([2.0, 3.0]), L.ones(2) / 2).entropy(),
    "binomial q with more trials": lambda L: L.distributions.kl_divergence(
        L.distributions.Binomial(2, L.ones(1) / 2), L.distributions.Binomial(3, L.ones(1) / 2)),
    "scale requires grad": lambda L: L.distributions.LogNormal(
        L.zeros(2), -L.ones(2, requires_grad=True)),
}

BAD_VALUES = {
    "outside support": lambda L: L.distributions.Exponential(L.ones(2)).log_prob(
        L.tensor([1.0, -1.0])),
    "not a tensor": lambda L: L.distributions.Normal(0.0, 1.0).log_prob(0.5),
    "event shape": lambda L: L.distributions.MultivariateNormal(
        L.zeros(3), L.eye(3)).log_prob(L.zeros(2)),
    "batch shape": lambda L: L.distributions.Normal(L.zeros(3), 1.0).log_prob(L.zeros(2)),
    "non-integer count": lambda L: L.distributions.Poisson(L.ones(2)).log_prob(
        L.tensor([0.5, 1.0])),
    "category out of range": lambda L: L.distributions.Categorical(
        probs=L.ones(3)).log_prob(L.tensor([3])),
    "uniform outside": lambda L: L.distributions.Uniform(0.0, 1.0).log_prob(L.tensor(2.0)),
    "kl not registered": lambda L: L.distributions.kl_divergence(
        L.distributions.Cauchy(0.0, 1.0), L.distributions.Normal(0.0, 1.0)),
    "kl across exponential families": lambda L: L.distributions.kl_divergence(
        L.distributions.Poisson(L.ones(1)), L.distributions.Exponential(L.ones(1))),
    "bad default validate": lambda L: L.distributions.Distribution.set_default_validate_args(
        "yes"),
    "transform cache size": lambda L: L.distributions.ExpTransform(cache_size=2),
    "cannot transform": lambda L: L.distributions.biject_to(L.distributions.constraints.boolean),
    "mode of the base class": lambda L: L.distributions.Distribution().mode,
}


@pytest.mark.parametrize("name", list(BAD_ARGUMENTS) + list(BAD_VALUES))
def test_error_type_and_message_are_torchs(name):
    fn = {**BAD_ARGUMENTS, **BAD_VALUES}[name]
    kind, message = raised(fn, hookgrad)
    assert (kind, message.replace("hookgrad", "torch")) == raised(fn, torch)


def test_validation_can_be_turned_off_per_instance_and_by_default():
    for L in (hookgrad, torch):
        d = L.distributions.Normal(0.0, -1.0, validate_args=False)
        assert d.scale.item() == -1.0
        L.distributions.Distribution.set_default_validate_args(False)
        try:
            L.distributions.Normal(0.0, -1.0)
        finally:
            L.distributions.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError):
            L.distributions.Normal(0.0, -1.0)


def test_out_of_support_scores_match_when_unvalidated():
    results = []
    for L in (hookgrad, torch):
        d = L.distributions.Uniform(L.zeros(2), L.ones(2), validate_args=False)
        results.append(d.log_prob(L.tensor([0.5, 2.0])).tolist())
    assert results[0] == results[1]
