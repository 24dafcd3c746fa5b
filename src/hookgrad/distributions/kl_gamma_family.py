"""KL divergences involving Gamma, Beta, Dirichlet and Binomial (with each other and with the other
families), registered into ``kl``'s table; kept apart so ``kl.py`` stays one screenful of pairs."""
from __future__ import annotations

import math

import hookgrad as torch

from .beta import Beta
from .binomial import Binomial
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _infinite_like, register_kl
from .laplace import Laplace
from .poisson import Poisson
from .normal import Normal
from .uniform import Uniform
from .utils import euler_constant

__all__: list = []


def _x_log_x(tensor):
    return torch.special.xlogy(tensor, tensor)  # 0 log 0 = 0


def _log_beta_fn(a, b):
    # log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b)
    return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1 = p.concentration1, p.concentration0
    a2, b2 = q.concentration1, q.concentration0
    s1 = a1 + b1
    weighted = ((a1 - a2) * torch.digamma(a1) + (b1 - b2) * torch.digamma(b1)
                + (a2 + b2 - s1) * torch.digamma(s1))
    return _log_beta_fn(a2, b2) - _log_beta_fn(a1, b1) + weighted


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    alpha, beta = p.concentration, q.concentration
    alpha0 = alpha.sum(-1)
    # log of q's normaliser over p's, then the expected log-density gap under p
    log_norms = (torch.lgamma(alpha0) - torch.lgamma(beta.sum(-1))
                 + (torch.lgamma(beta) - torch.lgamma(alpha)).sum(-1))
    expected_log = torch.digamma(alpha) - torch.digamma(alpha0).unsqueeze(-1)
    return log_norms + ((alpha - beta) * expected_log).sum(-1)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    a1, b1 = p.concentration, p.rate
    a2, b2 = q.concentration, q.rate
    return (torch.lgamma(a2) - torch.lgamma(a1) + (a1 - a2) * torch.digamma(a1)
            + a2 * torch.log(b1 / b2) + a1 * (b2 - b1) / b1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() - q.rate.log() + q.rate * mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)) * 0.5
    t4 = q.loc * mean
    t5 = q.loc.pow(2) * 0.5
    return -p.entropy() + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    result[(q.low > p.support.lower_bound) | (q.high < p.support.upper_bound)] = math.inf
    return result


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * torch.log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Gamma, Beta)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Exponential, Beta)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, Gamma)
@register_kl(Laplace, Beta)
@register_kl(Laplace, Gamma)
@register_kl(Normal, Beta)
@register_kl(Normal, Gamma)
def _kl_loc_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    beta_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = beta_scale.log() + p.concentration / beta_scale
    t3 = torch.exp(loc_scale) * (1 + beta_scale.reciprocal()).pow(-p.concentration) - loc_scale
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    beta_sqr = p.rate.pow(2)
    t1 = (0.5 * torch.log(beta_sqr * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / beta_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = torch.log(width)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - t1 - t2
    result[(p.high > q.support.upper_bound) | (p.low < q.support.lower_bound)] = math.inf
    return result


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -width.log() + t2 + t3 + t4
    result[p.low < q.support.lower_bound] = math.inf
    return result


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is "
                                  "not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    beyond = p.total_count > q.total_count
    kl[beyond] = _infinite_like(kl[beyond])
    return kl


@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)
