"""torch's ``distributions`` on hookgrad tensors: parameterised distributions with
``sample``/``rsample`` (seeded draws equal to torch's), ``log_prob``, ``cdf``/``icdf``,
``entropy`` and moments; ``constraints``; ``transforms`` with ``TransformedDistribution``,
``biject_to``/``transform_to``; and ``kl_divergence`` with ``register_kl``.

Example::

    import hookgrad as torch
    d = torch.distributions.Normal(torch.zeros(3), torch.ones(3))
    x = d.rsample((10,))        # shape (10, 3), differentiable in loc and scale
    d.log_prob(x).sum().backward()
"""
from __future__ import annotations

from . import constraints, kl_gamma_family, kl_more, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .constraint_registry import biject_to, transform_to
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .generalized_pareto import GeneralizedPareto
from .fishersnedecor import FisherSnedecor
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .logistic_normal import LogisticNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .pareto import Pareto
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform,
                         ExpTransform,
                         IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
                         PowerTransform, ReshapeTransform, SigmoidTransform, SoftmaxTransform,
                         SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform,
                         Transform,
                         identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "ContinuousBernoulli", "FisherSnedecor", "NegativeBinomial", "GeneralizedPareto",
    "HalfCauchy", "InverseGamma", "Kumaraswamy",
    "LogisticNormal", "LowRankMultivariateNormal", "Pareto", "VonMises", "Weibull",
    "LKJCholesky", "Wishart",
    "Binomial", "Multinomial",
    "MixtureSameFamily",
    "CatTransform", "StackTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Categorical", "Cauchy", "Chi2",
    "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform", "Exponential",
    "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfNormal", "Independent",
    "IndependentTransform", "Laplace", "LogNormal", "LowerCholeskyTransform",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Poisson", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform",
    "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
    "biject_to", "constraints", "identity_transform", "kl_divergence", "register_kl",
    "transform_to", "transforms",
]
del kl_gamma_family, kl_more  # imported for the pairs they register
