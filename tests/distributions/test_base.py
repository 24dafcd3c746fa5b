"""The Distribution base and its helpers against torch: scalar parameters, sample shapes,
the generic exponential-family entropy and KL, perplexity, sample_n, lazily derived
parameters, utils, and a subclass without a custom expand."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad

SCALAR_CASES = {
    "Normal": lambda L: L.distributions.Normal(0.5, 2.0),
    "Uniform": lambda L: L.distributions.Uniform(-1.0, 3.0),
    "Bernoulli": lambda L: L.distributions.Bernoulli(0.3),
    "Exponential": lambda L: L.distributions.Exponential(1.5),
    "Laplace": lambda L: L.distributions.Laplace(0.0, 1.0),
    "Cauchy": lambda L: L.distributions.Cauchy(1.0, 0.5),
    "Geometric": lambda L: L.distributions.Geometric(0.25),
    "Gumbel": lambda L: L.distributions.Gumbel(1.0, 2.0),
    "HalfNormal": lambda L: L.distributions.HalfNormal(2.0),
    "LogNormal": lambda L: L.distributions.LogNormal(0.0, 0.5),
    "Poisson": lambda L: L.distributions.Poisson(L.tensor(4.0)),
    "Categorical": lambda L: L.distributions.Categorical(L.tensor([0.2, 0.5, 0.3])),
    "OneHotCategorical": lambda L: L.distributions.OneHotCategorical(
        logits=L.tensor([0.2, 0.5, 0.3])),
    "MultivariateNormal": lambda L: L.distributions.MultivariateNormal(
        L.zeros(2), L.tensor([[2.0, 0.5], [0.5, 1.0]])),
    "RelaxedBernoulli": lambda L: L.distributions.RelaxedBernoulli(L.tensor(0.5), 0.3),
}


@pytest.mark.parametrize("shape", [(), (1,), (7,), (2, 3)], ids=str)
@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
def test_scalar_parameters_sample_as_torch(name, shape):
    draws = []
    for L in (hookgrad, torch):
        d = SCALAR_CASES[name](L)
        L.manual_seed(2)
        sample = d.sample(shape)
        after = L.rand(2)  # the generator is left where torch's is
        draws.append((tuple(d.batch_shape), tuple(d.event_shape), tuple(sample.shape),
                      str(sample.dtype).split(".")[-1], sample.numpy(), after.numpy()))
    ours, theirs = draws
    assert ours[:4] == theirs[:4]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(ours[5], theirs[5])


@pytest.mark.parametrize("name", ["Normal", "Bernoulli", "Exponential", "Poisson"])
def test_generic_exponential_family_entropy_and_kl(name):
    makers = {"Normal": lambda L, s: L.distributions.Normal(L.tensor([0.3, -1.0]) * s,
                                                            L.tensor([1.0, 2.0]) * s),
              "Bernoulli": lambda L, s: L.distributions.Bernoulli(L.tensor([0.2, 0.7]) * s),
              "Exponential": lambda L, s: L.distributions.Exponential(L.tensor([0.5, 3.0]) * s),
              "Poisson": lambda L, s: L.distributions.Poisson(L.tensor([0.5, 3.0]) * s)}
    results = []
    for L in (hookgrad, torch):
        p, q = makers[name](L, 1.0), makers[name](L, 1.2)
        if name == "Poisson":  # no carrier-measure mean: the generic entropy is undefined
            with pytest.raises(NotImplementedError):
                L.distributions.ExponentialFamily.entropy(p)
            generic_entropy = L.zeros(1)
        else:
            generic_entropy = L.distributions.ExponentialFamily.entropy(p)
        generic_kl = L.distributions.kl._kl_expfamily_expfamily(p, q)
        results.append((generic_entropy.detach().numpy(), generic_kl.detach().numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_perplexity_sample_n_and_stddev():
    results = []
    for L in (hookgrad, torch):
        d = L.distributions.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, 3.0]))
        L.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            drawn = d.sample_n(4)
        results.append((d.perplexity().numpy(), drawn.numpy(),
                        [w.category.__name__ for w in caught], d.stddev.numpy()))
    ours, theirs = results
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] == theirs[2] and ours[2]
    np.testing.assert_array_equal(ours[3], theirs[3])


def test_lazily_derived_parameters_keep_their_graph():
    grads = []
    for L in (hookgrad, torch):
        logits = L.tensor([0.1, -0.4, 2.0], requires_grad=True)
        d = L.distributions.Bernoulli(logits=logits)
        assert "probs" not in d.__dict__
        d.probs.sum().backward()
        assert "probs" in d.__dict__
        grads.append(logits.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_a_subclass_with_its_own_init_must_define_expand():
    outcomes = []
    for L in (hookgrad, torch):
        class Shifted(L.distributions.Normal):
            def __init__(self, loc):
                super().__init__(loc + 1, 1.0)
        with pytest.raises(NotImplementedError) as info:
            Shifted(L.zeros(2)).expand((3, 2))
        outcomes.append(str(info.value))
    assert outcomes[0] == outcomes[1]


def test_utils_match_torch():
    from hookgrad.distributions import utils as ours
    from torch.distributions import utils as theirs
    probs = np.array([[0.0, 0.3, 0.7], [1.0, 0.5, 0.5]])
    for name in ("probs_to_logits", "clamp_probs"):
        for binary in ((False, True) if name == "probs_to_logits" else (None,)):
            args = () if binary is None else (binary,)
            mine = getattr(ours, name)(hookgrad.tensor(probs), *args).numpy()
            expected = getattr(theirs, name)(torch.tensor(probs), *args).numpy()
            np.testing.assert_allclose(mine, expected, rtol=1e-12)
    for binary in (False, True):
        np.testing.assert_allclose(
            ours.logits_to_probs(hookgrad.tensor(probs), binary).numpy(),
            theirs.logits_to_probs(torch.tensor(probs), binary).numpy(), rtol=1e-12)
    matrix = np.arange(16.0).reshape(4, 4)
    for diag in (-1, 0, 2):
        vec = ours.tril_matrix_to_vec(hookgrad.tensor(matrix), diag)
        np.testing.assert_array_equal(
            vec.numpy(), theirs.tril_matrix_to_vec(torch.tensor(matrix), diag).numpy())
        np.testing.assert_array_equal(
            ours.vec_to_tril_matrix(vec, diag).numpy(),
            theirs.vec_to_tril_matrix(torch.tensor(vec.numpy()), diag).numpy())
    ours_all = ours.broadcast_all(hookgrad.zeros(3, dtype=hookgrad.float64), 2.0)
    theirs_all = theirs.broadcast_all(torch.zeros(3, dtype=torch.float64), 2.0)
    assert [str(t.dtype) for t in ours_all] == [str(t.dtype) for t in theirs_all]
    with pytest.raises(ValueError):
        ours.broadcast_all("a")
