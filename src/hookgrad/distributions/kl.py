"""``kl_divergence(p, q)`` and ``register_kl``: KL(p || q) looked up by the pair of types.

The registry maps (type_p, type_q) to a function; a lookup takes the most specific registered
pair both types are subclasses of (ties resolved as torch resolves them, with a warning when
the two orders disagree) and remembers the answer per pair of concrete types.
"""
from __future__ import annotations

import math
import warnings

import hookgrad as torch

from .bernoulli import Bernoulli
from .categorical import Categorical
from .cauchy import Cauchy
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _sum_rightmost, euler_constant

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict = {}
_KL_MEMOIZE: dict = {}


def register_kl(type_p, type_q):
    """Decorator registering ``fun(p, q)`` as KL(p || q) for instances of these types."""
    for given in (type_p, type_q):
        if not (isinstance(given, type) and issubclass(given, Distribution)):
            raise TypeError(f"Expected type_p to be a Distribution subclass but got {given}"
                            if given is type_p else
                            f"Expected type_q to be a Distribution subclass but got {given}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair can change which match is most specific
        return fun
    return decorator


def _narrower(a, b) -> bool:
    """Whether registered pair ``a`` is strictly more specific than ``b``.

    Only the first slot where the two pairs hold different types decides; the relation is
    partial, so which candidate wins can depend on the order they are visited in (the
    registration order), exactly as torch's lookup does.
    """
    for mine, theirs in zip(a, b):
        if mine is not theirs:
            return issubclass(mine, theirs)
    return False


def _most_specific(pairs):
    best = pairs[0]
    for candidate in pairs[1:]:
        if _narrower(candidate, best):
            best = candidate
    return best


def _dispatch_kl(type_p, type_q):
    fits = [pair for pair in _KL_REGISTRY
            if issubclass(type_p, pair[0]) and issubclass(type_q, pair[1])]
    if not fits:
        return NotImplemented
    # Rank once with p's type first and once with q's first; if the two winners differ the
    # registry is ambiguous for this pair: warn, and use the p-first answer.
    p_first = _most_specific(fits)
    q_first = _most_specific([(b, a) for a, b in fits])[::-1]
    chosen = _KL_REGISTRY[p_first]
    if chosen is not _KL_REGISTRY[q_first]:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({p_first[0].__name__}, {q_first[1].__name__})",
                      RuntimeWarning, stacklevel=2)
    return chosen


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], one value per batch entry."""
    key = (type(p), type(q))
    if key not in _KL_MEMOIZE:
        _KL_MEMOIZE[key] = _dispatch_kl(*key)
    fun = _KL_MEMOIZE[key]
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return torch.full_like(tensor, math.inf)


# -- one family ------------------------------------------------------------------------------
@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = torch.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    r = q.rate / p.rate
    return r - torch.log(r) - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the Bregman divergence of the log normaliser between the natural parameters
    if type(p) is not type(q):
        # torch's message, with the run of spaces its line continuation leaves in it
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot" + " " * 29 + "be computed using Bregman "
                                  "divergences")
    p_natural = [n.detach().requires_grad_() for n in p._natural_params]
    q_natural = q._natural_params
    log_normalizer = p._log_normalizer(*p_natural)
    gradients = torch.autograd.grad(log_normalizer.sum(), p_natural, create_graph=True)
    result = q._log_normalizer(*q_natural) - log_normalizer
    for pn, qn, gradient in zip(p_natural, q_natural, gradients):
        result = result - _sum_rightmost((qn - pn) * gradient, len(q.event_shape))
    return result


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # log(b2/b1) + (a1-a2)/b2 + gamma (b1/b2 - 1) + Gamma(b1/b2 + 1) exp(-(a1-a2)/b2) - 1
    r = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    tail = torch.exp(torch.lgamma(r + 1) - shift)
    return shift - torch.log(r) + euler_constant * (r - 1) + tail - 1


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # -H(p) - E_p[k] log(1 - q) - log q, with E_p[k] log(1-q) + log q folded as below
    return -(p.entropy() + q.logits + torch.log1p(-q.probs) / p.probs)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    # folding both at zero keeps the divergence of the underlying normals
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    gap = torch.abs(p.loc - q.loc)
    r = p.scale / q.scale
    return r * torch.exp(-gap / p.scale) + gap / q.scale - torch.log(r) - 1


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    p_tril, q_tril = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    batch = torch.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_tril.shape[:-2]))
    n = p.event_shape[0]
    solved = torch.linalg.solve_triangular(q_tril.expand(batch + (n, n)),
                                           p_tril.expand(batch + (n, n)), upper=False)
    term2 = solved.pow(2).reshape(batch + (-1,)).sum(-1)
    term3 = _batch_mahalanobis(q_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    r = p.scale / q.scale
    z = (p.loc - q.loc) / q.scale
    return 0.5 * (r * r + z * z - 1) - torch.log(r)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (torch.log(p.rate) - torch.log(q.rate)) + q.rate - p.rate


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # log[((g1 + g2)^2 + (x1 - x2)^2) / (4 g1 g2)]
    spread = torch.square(p.scale + q.scale) + torch.square(p.loc - q.loc)
    return torch.log(spread) - torch.log(4 * p.scale * q.scale)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# -- across families -------------------------------------------------------------------------
@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # -H(p) - E_p[log q(x)]; log x! vanishes on {0, 1}
    return q.rate - p.probs * torch.log(q.rate) - p.entropy()


@register_kl(Poisson, Bernoulli)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    sb = p.rate * q.scale
    m = q.loc / q.scale
    return torch.log(sb) + 1 / sb - m - 1 + torch.exp(m) * sb / (sb + 1)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var = torch.square(q.scale)
    mean = p.rate.reciprocal()
    # E[(x - mu)^2] under Exp(rate) is 2/rate^2 - 2 mu/rate + mu^2
    spread = 2 * mean * mean - 2 * q.loc * mean + torch.square(q.loc)
    return 0.5 * torch.log(2 * math.pi * var * torch.square(p.rate)) - 1 + 0.5 * spread / var


@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Uniform)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Normal, Uniform)
def _kl_loc_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    r = p.scale / q.scale
    z = (p.loc + euler_constant * p.scale - q.loc) / q.scale  # the Gumbel mean, standardised
    return (torch.square(math.pi * r / 2) / 3 + 0.5 * torch.square(z)
            - torch.log(r / math.sqrt(2 * math.pi)) - euler_constant - 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var = torch.square(q.scale)
    r = torch.square(p.scale) / var
    return r + 0.5 * torch.square(p.loc - q.loc) / var - 0.5 * torch.log(2 * r / math.pi) - 1


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale = p.loc / q.scale
    var_scale_sqr = (p.scale / q.scale).pow(2)
    loc_scale = q.loc / q.scale
    t3 = torch.exp(-mean_scale + 0.5 * var_scale_sqr + loc_scale)
    return (-var_scale_sqr.log() * 0.5 + mean_scale - loc_scale + t3
            - (0.5 * (1 + math.log(2 * math.pi))))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    standardised = loc_diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * torch.exp(-0.5 * standardised.pow(2))
    t3 = loc_diff * torch.erf(math.sqrt(0.5) * standardised)
    return (-torch.log(scale_ratio) + (t2 + t3) / q.scale
            - (0.5 * (1 + math.log(0.5 * math.pi))))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high_diff = (p.high - q.loc) / q.scale
    low_diff = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_diff + low_diff)
    return t1 - common * (torch.exp(-high_diff) - torch.exp(-low_diff))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common).log()
    t2 = common.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)
