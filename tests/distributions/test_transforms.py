"""Transforms, constraints and the biject_to / transform_to registries against torch's: values
both ways, log-Jacobians and their gradients, shapes, signs, equality, caching and reprs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 3))
MATRIX = RNG.normal(size=(2, 3, 3))


def transforms(L):
    T = L.distributions.transforms
    scale = L.tensor([0.5, -2.0, 3.0], dtype=L.float64)
    return {
        "exp": T.ExpTransform(), "sigmoid": T.SigmoidTransform(), "tanh": T.TanhTransform(),
        "softplus": T.SoftplusTransform(), "abs": T.AbsTransform(),
        "affine": T.AffineTransform(1.5, scale), "affine_scalar": T.AffineTransform(-1.0, -2.0),
        "affine_event": T.AffineTransform(0.5, scale, event_dim=1),
        "power": T.ComposeTransform([T.ExpTransform(), T.PowerTransform(
            L.tensor(1.7, dtype=L.float64))]),
        "compose": T.ComposeTransform([T.TanhTransform(), T.AffineTransform(2.0, 3.0),
                                       T.ExpTransform().inv]),
        "softmax": T.SoftmaxTransform(), "stick_breaking": T.StickBreakingTransform(),
        "independent": T.IndependentTransform(T.SigmoidTransform(), 1),
        "reshape": T.ReshapeTransform((3,), (3, 1)),
        "lower_cholesky": T.LowerCholeskyTransform(),
        "positive_definite": T.PositiveDefiniteTransform(),
        "identity": T.identity_transform,
        "inverse_sigmoid": T.SigmoidTransform().inv,
        "cat": T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, -3.0)], 1, [1, 2]),
        "cat_events": T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                      T.SigmoidTransform()], -1, [2, 1]),
        "stack": T.StackTransform([T.TanhTransform(), T.ExpTransform(),
                                   T.SigmoidTransform()], -1),
        "corr_cholesky": T.CorrCholeskyTransform(),
        "cdf_normal": T.CumulativeDistributionTransform(L.distributions.Normal(
            L.tensor([0.5, -1.0, 0.0], dtype=L.float64), scale * scale)),
    }


MATRIX_INPUT = {"lower_cholesky", "positive_definite"}
NO_JACOBIAN = {"softmax", "abs", "lower_cholesky", "positive_definite"}
NAMES = sorted(transforms(hookgrad))


def _input(L, name):
    if name == "inverse_sigmoid":
        return L.tensor(1 / (1 + np.exp(-X)), requires_grad=True)
    return L.tensor(MATRIX if name in MATRIX_INPUT else X, requires_grad=True)


@pytest.mark.parametrize("name", NAMES)
def test_transform_matches_torch(name):
    results = []
    for L in (hookgrad, torch):
        t = transforms(L)[name]
        x = _input(L, name)
        y = t(x)
        back = t.inv(y)
        record = {"y": y, "back": back, "repr": repr(t), "bijective": t.bijective,
                  "domain": repr(t.domain), "codomain": repr(t.codomain),
                  "shape": tuple(t.forward_shape(x.shape)),
                  "inverse_shape": tuple(t.inverse_shape(y.shape))}
        total = y.sum() + back.sum()
        if name not in NO_JACOBIAN:
            jacobian = t.log_abs_det_jacobian(x, y)
            record["jacobian"] = jacobian
            total = total + jacobian.sum()
        total.backward()
        record["grad"] = x.grad
        results.append(record)
    ours, theirs = results
    assert ours.keys() == theirs.keys()
    for key in ours:
        if hasattr(theirs[key], "detach"):
            assert tuple(ours[key].shape) == tuple(theirs[key].shape), key
            np.testing.assert_allclose(ours[key].detach().numpy(), theirs[key].detach().numpy(),
                                       rtol=1e-10, atol=1e-12, err_msg=key)
        else:
            assert ours[key] == theirs[key], key


@pytest.mark.parametrize("name", ["exp", "sigmoid", "tanh", "affine", "compose", "power"])
def test_sign_and_equality(name):
    for L in (hookgrad, torch):
        first, second = transforms(L)[name], transforms(L)[name]
        assert first == second and not first != second
        assert first.inv == second.inv
        assert first != transforms(L)["softmax"]
    ours = transforms(hookgrad)[name].sign
    theirs = transforms(torch)[name].sign
    ours = ours.tolist() if hasattr(ours, "tolist") else ours
    theirs = theirs.tolist() if hasattr(theirs, "tolist") else theirs
    assert ours == theirs


def test_cached_inverse_returns_the_very_input():
    for L in (hookgrad, torch):
        t = L.distributions.ExpTransform(cache_size=1)
        x = L.randn(3)
        assert t.inv(t(x)) is x
        assert L.distributions.ExpTransform().with_cache(1)._cache_size == 1


CONSTRAINTS = {
    "real": lambda C, L: C.real, "positive": lambda C, L: C.positive,
    "nonnegative": lambda C, L: C.nonnegative, "unit_interval": lambda C, L: C.unit_interval,
    "greater_than": lambda C, L: C.greater_than(-1.5), "less_than": lambda C, L: C.less_than(2.0),
    "greater_than_eq": lambda C, L: C.greater_than_eq(0.5),
    "interval": lambda C, L: C.interval(-2.0, 3.0),
    "half_open_interval": lambda C, L: C.half_open_interval(0.0, 1.0),
    "interval_tensor": lambda C, L: C.interval(L.zeros(3, dtype=L.float64),
                                               L.ones(3, dtype=L.float64) * 2),
    "simplex": lambda C, L: C.simplex, "real_vector": lambda C, L: C.real_vector,
    "independent_positive": lambda C, L: C.independent(C.positive, 1),
    "lower_cholesky": lambda C, L: C.lower_cholesky,
    "positive_definite": lambda C, L: C.positive_definite,
    "cat": lambda C, L: C.cat([C.positive, C.interval(-1.0, 1.0)], -1, [2, 1]),
    "stack": lambda C, L: C.stack([C.real, C.positive, C.unit_interval], -1),
    "corr_cholesky": lambda C, L: C.corr_cholesky,
}
VECTOR_SPACE = {"simplex"}
MATRIX_SPACE = {"lower_cholesky", "positive_definite"}


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_registries_reach_the_constraint(name, registry):
    results = []
    for L in (hookgrad, torch):
        C = L.distributions.constraints
        constraint = CONSTRAINTS[name](C, L)
        try:
            t = getattr(L.distributions, registry)(constraint)
        except NotImplementedError as error:
            results.append(("NotImplementedError", str(error)))
            continue
        x = L.tensor(MATRIX if name in MATRIX_SPACE else X)
        y = t(x)
        results.append((repr(t), y.numpy(), constraint.check(y).all().item()))
    ours, theirs = results
    assert ours[0] == theirs[0]
    if len(theirs) == 3:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
        assert ours[2] == theirs[2]


CHECKED = [
    ("boolean", lambda C: C.boolean, [0.0, 1.0, 0.5]),
    ("nonnegative_integer", lambda C: C.nonnegative_integer, [0.0, 2.0, -1.0, 1.5]),
    ("positive_integer", lambda C: C.positive_integer, [0.0, 2.0, 1.0]),
    ("integer_interval", lambda C: C.integer_interval(0, 3), [0.0, 3.0, 4.0, 1.5]),
    ("real", lambda C: C.real, [0.0, float("nan"), float("inf")]),
    ("positive", lambda C: C.positive, [0.0, 1.0, -1.0]),
    ("less_than", lambda C: C.less_than(1.0), [0.0, 1.0, 2.0]),
    ("half_open", lambda C: C.half_open_interval(0.0, 1.0), [0.0, 1.0, 0.5]),
    ("one_hot", lambda C: C.one_hot, [[0.0, 1.0], [1.0, 1.0]]),
    ("simplex", lambda C: C.simplex, [[0.3, 0.7], [0.5, 0.6]]),
    ("lower_triangular", lambda C: C.lower_triangular, [[[1.0, 0.0], [2.0, 3.0]],
                                                        [[1.0, 1.0], [0.0, 1.0]]]),
    ("lower_cholesky", lambda C: C.lower_cholesky, [[[1.0, 0.0], [2.0, -3.0]]]),
    ("square", lambda C: C.square, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
    ("symmetric", lambda C: C.symmetric, [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [3.0, 1.0]]]),
    ("positive_definite", lambda C: C.positive_definite, [[[2.0, 1.0], [1.0, 2.0]],
                                                          [[1.0, 2.0], [2.0, 1.0]]]),
    ("positive_semidefinite", lambda C: C.positive_semidefinite, [[[1.0, 1.0], [1.0, 1.0]]]),
    ("corr_cholesky", lambda C: C.corr_cholesky, [[[1.0, 0.0], [0.6, 0.8]]]),
    ("multinomial", lambda C: C.multinomial(3), [[1.0, 2.0], [2.0, 2.0]]),
    ("cat", lambda C: C.cat([C.positive, C.real], 0, [1, 2]), [-1.0, -1.0, 2.0]),
    ("stack", lambda C: C.stack([C.positive, C.real], -1), [[1.0, -1.0], [-1.0, 1.0]]),
]


@pytest.mark.parametrize("name,make,values", CHECKED, ids=[c[0] for c in CHECKED])
def test_constraint_check_event_dim_and_repr(name, make, values):
    results = []
    for L in (hookgrad, torch):
        constraint = make(L.distributions.constraints)
        result = constraint.check(L.tensor(values))
        results.append((repr(constraint), constraint.event_dim, constraint.is_discrete,
                        tuple(result.shape), result.tolist()))
    assert results[0] == results[1]


def test_dependent_constraints_refuse_static_questions():
    for L in (hookgrad, torch):
        C = L.distributions.constraints
        assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
        assert C.is_dependent(L.distributions.Uniform.support)
        with pytest.raises(NotImplementedError):
            C.dependent.event_dim
        assert C.dependent(is_discrete=True, event_dim=1).event_dim == 1
        with pytest.raises(ValueError):
            C.dependent.check(L.zeros(1))
