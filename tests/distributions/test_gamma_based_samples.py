"""Seeded draws of the distributions whose sampling goes through Gamma, Chi2 or Beta
(InverseGamma, FisherSnedecor, NegativeBinomial, Wishart, LKJCholesky) against torch's, with
gradients through rsample. These need hookgrad's gamma sampler to reproduce torch's
_standard_gamma; until it does they fail with NotImplementedError."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad

TRIL = np.tril(np.random.default_rng(9).normal(size=(2, 3, 3)) * 0.3) + np.eye(3)


def _tensor(L, array, dtype, grad=False):
    return L.tensor(np.asarray(array), dtype=getattr(L, dtype), requires_grad=grad)


CASES = {
    "InverseGamma": lambda L, dt: (lambda a, b: (L.distributions.InverseGamma(a, b), [a, b]))(
        _tensor(L, [0.7, 2.0, 5.0], dt, True), _tensor(L, [1.5, 0.5, 3.0], dt, True)),
    "FisherSnedecor": lambda L, dt: (lambda a, b: (L.distributions.FisherSnedecor(a, b),
                                                   [a, b]))(
        _tensor(L, [1.0, 3.0, 8.0], dt, True), _tensor(L, [2.5, 6.0, 1.2], dt, True)),
    "NegativeBinomial(probs)": lambda L, dt: (L.distributions.NegativeBinomial(
        _tensor(L, [1.0, 3.5, 10.0], dt), probs=_tensor(L, [0.2, 0.5, 0.9], dt)), []),
    "NegativeBinomial(logits)": lambda L, dt: (L.distributions.NegativeBinomial(
        _tensor(L, [2.0, 0.5, 4.0], dt), logits=_tensor(L, [-1.0, 0.3, 2.0], dt)), []),
    "Wishart(batch)": lambda L, dt: (lambda df, tril: (L.distributions.Wishart(
        df, scale_tril=tril), [df, tril]))(_tensor(L, [3.5, 6.0], dt, True),
                                           _tensor(L, TRIL, dt, True)),
    "Wishart(scalar df)": lambda L, dt: (lambda tril: (L.distributions.Wishart(
        4, covariance_matrix=tril[0] @ tril[0].mT), [tril]))(_tensor(L, TRIL, dt, True)),
    "LKJCholesky": lambda L, dt: (L.distributions.LKJCholesky(
        3, _tensor(L, [0.5, 1.0, 4.0], dt)), []),
    "LKJCholesky(scalar)": lambda L, dt: (L.distributions.LKJCholesky(4, 2.0), []),
}


def _draw(L, name, dtype, method, shape, **kwargs):
    d, params = CASES[name](L, dtype)
    L.manual_seed(11)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        draws = getattr(d, method)(shape, **kwargs)
        after = L.rand(2)
    return d, params, draws, after, [str(w.message) for w in caught]


@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_samples_equal_torchs(name, dtype, shape):
    _, _, ours, ours_after, ours_warned = _draw(hookgrad, name, dtype, "sample", shape)
    _, _, theirs, theirs_after, theirs_warned = _draw(torch, name, dtype, "sample", shape)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    single = theirs.dtype == torch.float32  # a Python-number parameter is float32 anyway
    tolerance = dict(rtol=2e-5, atol=2e-5) if single else dict(rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), **tolerance)
    np.testing.assert_array_equal(ours_after.numpy(), theirs_after.numpy())
    assert ours_warned == theirs_warned


@pytest.mark.parametrize("name", ["InverseGamma", "FisherSnedecor", "Wishart(batch)",
                                  "Wishart(scalar df)"])
def test_rsample_gradients_match_torchs(name):
    # torch 2.13 cannot backpropagate through a Wishart draw that was redrawn (it updates
    # in place the mask its index assignment saved), so Wishart is differentiated undrawn
    kwargs = {"max_try_correction": 0} if name.startswith("Wishart") else {}
    results = []
    for L in (hookgrad, torch):
        _, params, draws, _, _ = _draw(L, name, "float64", "rsample", (3,), **kwargs)
        draws.tanh().sum().backward()
        results.append([draws.detach().numpy()] + [p.grad.numpy() for p in params])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("tries", [0, 1, 4])
def test_wishart_max_try_correction_redraws_as_torch_does(tries):
    results = []
    for L in (hookgrad, torch):
        _, _, draws, after, warned = _draw(L, "Wishart(batch)", "float64", "rsample", (2,),
                                           max_try_correction=tries)
        results.append((draws.detach().numpy(), after.numpy(), warned))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_expanded_distributions_draw_like_torchs():
    for name in ("InverseGamma", "FisherSnedecor", "LKJCholesky", "Wishart(batch)"):
        results = []
        for L in (hookgrad, torch):
            d, _ = CASES[name](L, "float64")
            expanded = d.expand((2,) + tuple(d.batch_shape))
            L.manual_seed(2)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(expanded.sample((3,)).numpy())
        np.testing.assert_allclose(results[0], results[1], rtol=1e-11, atol=1e-11)
