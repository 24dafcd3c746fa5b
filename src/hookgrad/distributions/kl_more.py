"""KL pairs torch registers for the continuous Bernoulli, Pareto and low-rank normal, each
with the others already in ``kl`` and ``kl_gamma_family``.

Cross pairs are -H(p) - E_p[log q(x)] with the expectation in closed form; where q's support
does not cover p's the divergence is infinite.
"""
from __future__ import annotations

import math

import hookgrad as torch

from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _batch_mahalanobis, _infinite_like, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _lowrank_logdet,
                                          _lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform

__all__: list = []

# torch's messages keep the run of spaces its line continuations leave in them
_GAP = " " * 26


def _cb_expected_log_density(q, mean):
    """E[log q(x)] for a continuous Bernoulli q under any p on [0, 1] with mean ``mean``:
    log C(lam) + E[x] logit(lam) + log(1 - lam)."""
    return q._cont_bern_log_norm() + mean * q.logits + torch.log1p(-q.probs)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    mean = p.mean
    own = p._cont_bern_log_norm() + mean * p.logits + torch.log1p(-p.probs)
    return own - _cb_expected_log_density(q, mean)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - _cb_expected_log_density(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -torch.log(p.high - p.low) - _cb_expected_log_density(q, p.mean)
    # as torch's: a uniform reaching 0 or 1 itself counts as leaving q's support
    outside = (p.low <= q.support.lower_bound) | (p.high >= q.support.upper_bound)
    return torch.where(outside, math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - torch.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    # E[(x - mu)^2] = Var + (E x - mu)^2
    spread = p.variance + (p.mean - q.loc).pow(2)
    return (-p.entropy() + 0.5 * math.log(2.0 * math.pi) + torch.log(q.scale)
            + spread / (2.0 * q.scale.pow(2)))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + torch.log(q.high - q.low)
    # as torch's: a uniform whose ends touch 0 or 1 counts as not covering [0, 1]
    uncovered = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return torch.where(uncovered, math.inf, result)


@register_kl(Exponential, ContinuousBernoulli)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Pareto)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Pareto)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Pareto)
def _kl_located_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Exponential, Pareto)
def _kl_exponential_pareto_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    # log(a1/a2) + a2 log(m1/m2) + a2/a1 - 1, infinite where p reaches below q's minimum
    result = (torch.log(p.alpha / q.alpha) + q.alpha * torch.log(p.scale / q.scale)
              + q.alpha / p.alpha - 1)
    return torch.where(p.support.lower_bound < q.support.lower_bound, math.inf, result)


def _pareto_expected_log(p):
    """E[log x] = log scale + 1 / alpha."""
    return torch.log(p.scale) + p.alpha.reciprocal()


def _pareto_raw_moments(p):
    """The mean and variance formulas without their infinite tails (entries where they do not
    exist are overwritten by the caller), so no infinity reaches a gradient."""
    alpha, scale = p.alpha, p.scale
    mean = alpha * scale / (alpha - 1)
    variance = scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2))
    return mean, variance


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    mean, _ = _pareto_raw_moments(p)
    result = -p.entropy() - torch.log(q.rate) + q.rate * mean
    return torch.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    expected_log_q = (q.concentration * torch.log(q.rate) - torch.lgamma(q.concentration)
                      + (q.concentration - 1) * _pareto_expected_log(p)
                      - q.rate * _pareto_raw_moments(p)[0])
    result = -p.entropy() - expected_log_q
    return torch.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    mean, variance = _pareto_raw_moments(p)
    spread = variance + (mean - q.loc).pow(2)
    result = (-p.entropy() + 0.5 * math.log(2.0 * math.pi) + torch.log(q.scale)
              + spread / (2.0 * q.scale.pow(2)))
    return torch.where(p.alpha <= 2, math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # E_U[log x] = (b log b - a log a) / (b - a) - 1
    width = p.high - p.low
    expected_log = (torch.xlogy(p.high, p.high) - torch.xlogy(p.low, p.low)) / width - 1
    expected_log_q = (torch.log(q.alpha) + q.alpha * torch.log(q.scale)
                      - (q.alpha + 1) * expected_log)
    result = -torch.log(width) - expected_log_q
    return torch.where(p.low < q.support.lower_bound, math.inf, result)


# -- low-rank normals -------------------------------------------------------------------------
def _check_same_event(p, q, what: str) -> None:
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with{_GAP}different event shapes "
                         "cannot be computed")


def _frobenius_sq(matrix):
    return matrix.pow(2).sum((-2, -1))


def _whitened_factor(q):
    """L_K^-1 W^T D^-1 of a low-rank q: Sigma_q^-1 = D^-1 - A^T A with A this matrix."""
    scaled = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return torch.linalg.solve_triangular(q._capacitance_tril, scaled, upper=False)


def _gaussian_kl(log_det_q, log_det_p, trace, mahalanobis, n):
    return 0.5 * (log_det_q - log_det_p + trace + mahalanobis - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_same_event(p, q, "Low Rank Multivariate Normals")
    q_factor, q_diag = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    p_factor, p_diag = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    log_det_q = _lowrank_logdet(q_factor, q_diag, q._capacitance_tril)
    log_det_p = _lowrank_logdet(p_factor, p_diag, p._capacitance_tril)
    mahalanobis = _lowrank_mahalanobis(q_factor, q_diag, q.loc - p.loc, q._capacitance_tril)
    # tr(Sigma_q^-1 Sigma_p) = tr(D_q^-1 Sigma_p) - |A W_p|^2 - |A sqrt(D_p)|^2
    whitened = _whitened_factor(q)
    trace = ((p_diag / q_diag).sum(-1) + (p_factor.pow(2) / q_diag.unsqueeze(-1)).sum((-2, -1))
             - _frobenius_sq(whitened @ p_factor)
             - _frobenius_sq(whitened * p_diag.sqrt().unsqueeze(-2)))
    return _gaussian_kl(log_det_q, log_det_p, trace, mahalanobis, p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    q_factor, q_diag = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    p_tril = p._unbroadcasted_scale_tril
    log_det_q = _lowrank_logdet(q_factor, q_diag, q._capacitance_tril)
    log_det_p = 2 * p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    mahalanobis = _lowrank_mahalanobis(q_factor, q_diag, q.loc - p.loc, q._capacitance_tril)
    trace = ((p_tril.pow(2) / q_diag.unsqueeze(-1)).sum((-2, -1))
             - _frobenius_sq(_whitened_factor(q) @ p_tril))
    return _gaussian_kl(log_det_q, log_det_p, trace, mahalanobis, p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _check_same_event(p, q, "(Low Rank) Multivariate Normals")
    p_factor, p_diag = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    q_tril = q._unbroadcasted_scale_tril
    log_det_q = 2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    log_det_p = _lowrank_logdet(p_factor, p_diag, p._capacitance_tril)
    mahalanobis = _batch_mahalanobis(q_tril, q.loc - p.loc)
    n = p.event_shape[0]
    batch = torch.broadcast_shapes(tuple(q_tril.shape[:-2]), tuple(p_factor.shape[:-2]))
    # tr(Sigma_q^-1 Sigma_p) = |L_q^-1 W_p|^2 + |L_q^-1 sqrt(D_p)|^2
    tril = q_tril.expand(batch + (n, n))
    solved_factor = torch.linalg.solve_triangular(
        tril, p_factor.expand(batch + tuple(p_factor.shape[-2:])), upper=False)
    solved_diag = torch.linalg.solve_triangular(
        tril, torch.diag_embed(p_diag.sqrt()).expand(batch + (n, n)), upper=False)
    trace = _frobenius_sq(solved_factor) + _frobenius_sq(solved_diag)
    return _gaussian_kl(log_det_q, log_det_p, trace, mahalanobis, n)
