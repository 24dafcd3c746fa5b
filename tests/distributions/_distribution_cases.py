"""The distributions the tests build, once per library: ``build(L, dtype)`` returns the
distribution and the parameter tensors (leaves that require grad); ``value(L, dtype)`` is a
point inside the support to score."""
from __future__ import annotations

import numpy as np

RNG = np.random.default_rng(7)
LOC = RNG.normal(size=(2, 3))
SCALE = RNG.uniform(0.5, 2.0, size=(2, 3))
PROBS = RNG.uniform(0.1, 0.9, size=(2, 3))
SIMPLEX = RNG.uniform(0.1, 1.0, size=(2, 4))
TRIL = np.tril(RNG.normal(size=(2, 3, 3)) * 0.3) + np.eye(3) * 1.5


def leaf(L, array, dtype):
    return L.tensor(np.asarray(array), dtype=getattr(L, dtype), requires_grad=True)


def const(L, array, dtype):
    return L.tensor(np.asarray(array), dtype=getattr(L, dtype))


def _two(cls_name, first, second):
    def build(L, dtype):
        a, b = leaf(L, first, dtype), leaf(L, second, dtype)
        return getattr(L.distributions, cls_name)(a, b), [a, b]
    return build


def _one(cls_name, array, keyword=None):
    def build(L, dtype):
        a = leaf(L, array, dtype)
        cls = getattr(L.distributions, cls_name)
        return (cls(**{keyword: a}) if keyword else cls(a)), [a]
    return build


def _mvn(keyword):
    def build(L, dtype):
        loc, tril = leaf(L, LOC, dtype), leaf(L, TRIL, dtype)
        matrix = {"scale_tril": tril, "covariance_matrix": tril @ tril.mT,
                  "precision_matrix": L.linalg.inv(tril @ tril.mT)}[keyword]
        return L.distributions.MultivariateNormal(loc, **{keyword: matrix}), [loc, tril]
    return build


def _gumbel(L, dtype):
    a, b = leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    return L.distributions.Gumbel(a, b), [a, b]


def _independent(L, dtype):
    a, b = leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    return L.distributions.Independent(L.distributions.Normal(a, b), 1), [a, b]


def _tanh_normal(L, dtype):
    a, b = leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    T = L.distributions.transforms
    chain = [T.TanhTransform(), T.AffineTransform(1.0, 2.0), T.SigmoidTransform().inv,
             T.ExpTransform()]
    return L.distributions.TransformedDistribution(L.distributions.Normal(a, b), chain), [a, b]


def _student(L, dtype):
    df, loc, scale = leaf(L, SCALE * 2, dtype), leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    return L.distributions.StudentT(df, loc, scale), [df, loc, scale]


POSITIVE = np.abs(LOC) + 0.3
COUNTS = np.array([[0., 1., 2.], [3., 0., 5.]])
BINARY = np.array([[0., 1., 1.], [1., 0., 0.]])
CATEGORY = np.array([0, 3])
ONE_HOT = np.eye(4)[CATEGORY]

# name -> (build, value to score, what the value is made of)
CASES = {
    "Normal": (_two("Normal", LOC, SCALE), LOC + 0.3),
    "Uniform": (_two("Uniform", LOC, LOC + SCALE), LOC + SCALE / 3),
    "Exponential": (_one("Exponential", SCALE), POSITIVE),
    "Laplace": (_two("Laplace", LOC, SCALE), LOC - 0.4),
    "Cauchy": (_two("Cauchy", LOC, SCALE), LOC + 0.7),
    "LogNormal": (_two("LogNormal", LOC, SCALE), POSITIVE),
    "Gumbel": (_gumbel, LOC + 0.2),
    "HalfNormal": (_one("HalfNormal", SCALE), POSITIVE),
    "Bernoulli(probs)": (_one("Bernoulli", PROBS, "probs"), BINARY),
    "Bernoulli(logits)": (_one("Bernoulli", LOC, "logits"), BINARY),
    "Geometric(probs)": (_one("Geometric", PROBS, "probs"), COUNTS),
    "Geometric(logits)": (_one("Geometric", LOC, "logits"), COUNTS),
    "Poisson": (_one("Poisson", SCALE * 3), COUNTS),
    "Categorical(probs)": (_one("Categorical", SIMPLEX, "probs"), CATEGORY),
    "Categorical(logits)": (_one("Categorical", LOC[:, :2], "logits"), np.array([1, 0])),
    "OneHotCategorical": (_one("OneHotCategorical", SIMPLEX, "probs"), ONE_HOT),
    "MultivariateNormal(scale_tril)": (_mvn("scale_tril"), LOC - 0.2),
    "MultivariateNormal(covariance)": (_mvn("covariance_matrix"), LOC - 0.2),
    "MultivariateNormal(precision)": (_mvn("precision_matrix"), LOC - 0.2),
    "Independent(Normal)": (_independent, LOC + 0.1),
    "TransformedDistribution": (_tanh_normal, np.log(PROBS * 0.8 + 0.1) * 0 + 0.4),
}
CASES.update({
    "Gamma": (_two("Gamma", SCALE, SCALE[::-1].copy()), POSITIVE),
    "Chi2": (_one("Chi2", SCALE * 3), POSITIVE),
    "Beta": (_two("Beta", SCALE, SCALE[::-1].copy()), PROBS),
    "Dirichlet": (_one("Dirichlet", SIMPLEX * 3), SIMPLEX / SIMPLEX.sum(-1, keepdims=True)),
    "StudentT": (lambda L, dtype: _student(L, dtype), LOC * 2),
})
def _relaxed(cls_name, keyword, array):
    def build(L, dtype):
        temperature, a = leaf(L, 0.7, dtype), leaf(L, array, dtype)
        module = {"LogitRelaxedBernoulli": L.distributions.relaxed_bernoulli,
                  "ExpRelaxedCategorical": L.distributions.relaxed_categorical}.get(
                      cls_name, L.distributions)
        return getattr(module, cls_name)(temperature, **{keyword: a}), [temperature, a]
    return build


SIMPLEX_POINT = SIMPLEX / SIMPLEX.sum(-1, keepdims=True)
CASES.update({
    "RelaxedBernoulli(probs)": (_relaxed("RelaxedBernoulli", "probs", PROBS), PROBS[::-1].copy()),
    "RelaxedBernoulli(logits)": (_relaxed("RelaxedBernoulli", "logits", LOC), PROBS),
    "LogitRelaxedBernoulli": (_relaxed("LogitRelaxedBernoulli", "probs", PROBS), LOC),
    "RelaxedOneHotCategorical": (_relaxed("RelaxedOneHotCategorical", "probs", SIMPLEX),
                                 SIMPLEX_POINT),
    "ExpRelaxedCategorical": (_relaxed("ExpRelaxedCategorical", "logits", SIMPLEX),
                              np.log(SIMPLEX_POINT)),
})
def _mixture(L, dtype):
    weights = leaf(L, SIMPLEX[:, :3], dtype)
    loc, scale = leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    D = L.distributions
    return D.MixtureSameFamily(D.Categorical(probs=weights), D.Normal(loc, scale)), [
        weights, loc, scale]


def _vector_mixture(L, dtype):
    logits, loc = leaf(L, LOC[0], dtype), leaf(L, TRIL[0], dtype)
    D = L.distributions
    components = D.Independent(D.Normal(loc, 1.5), 1)
    return D.MixtureSameFamily(D.Categorical(logits=logits), components), [logits, loc]


CASES.update({"MixtureSameFamily": (_mixture, LOC[:, 0] + 0.3),
              "MixtureSameFamily(vector)": (_vector_mixture, LOC[0] * 0.5)})
def _binomial(L, dtype):
    probs = leaf(L, PROBS, dtype)
    return L.distributions.Binomial(5, probs), [probs]


def _multinomial(L, dtype):
    logits = leaf(L, SIMPLEX, dtype)
    return L.distributions.Multinomial(6, logits=logits), [logits]


CASES.update({"Binomial": (_binomial, COUNTS),
              "Multinomial": (_multinomial, np.array([[1., 2., 0., 3.], [0., 0., 6., 0.]]))})
# every distribution here draws with torch's samplers (none is left without one)
NO_SAMPLER: set = set()
INTEGER_VALUES = {"Categorical(probs)", "Categorical(logits)"}


def _more():
    from _more_distribution_cases import MORE_CASES
    CASES.update(MORE_CASES)  # the gamma-based ones draw through the gamma sampler now


_more()
