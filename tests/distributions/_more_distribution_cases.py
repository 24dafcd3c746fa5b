"""Cases for the distributions added after the first set (same ``build(L, dtype)`` shape as
``_distribution_cases``): name -> (build, value to score)."""
from __future__ import annotations

import numpy as np

from _distribution_cases import COUNTS, LOC, PROBS, SCALE, SIMPLEX, TRIL, leaf

POSITIVE = np.abs(LOC) + 0.3


def _params(cls_name, *arrays, **keywords):
    def build(L, dtype):
        tensors = [leaf(L, a, dtype) for a in arrays]
        named = {k: leaf(L, a, dtype) for k, a in keywords.items()}
        cls = getattr(L.distributions, cls_name)
        return cls(*tensors, **named), tensors + list(named.values())
    return build


def _logistic_normal(L, dtype):
    loc, scale = leaf(L, LOC, dtype), leaf(L, SCALE, dtype)
    return L.distributions.LogisticNormal(loc, scale), [loc, scale]


def _low_rank(L, dtype):
    loc = leaf(L, LOC, dtype)
    factor = leaf(L, TRIL[:, :, :2], dtype)
    diag = leaf(L, SCALE, dtype)
    return L.distributions.LowRankMultivariateNormal(loc, factor, diag), [loc, factor, diag]


SIGMA = TRIL @ np.swapaxes(TRIL, -1, -2)
PD_VALUE = SIGMA[::-1] * 3 + np.eye(3)
CORR_X = np.array([[0.3, -0.5, 1.2], [0.1, 0.2, -2.0]])


def _wishart(keyword):
    def build(L, dtype):
        df, tril = leaf(L, [4.5, 6.0], dtype), leaf(L, TRIL, dtype)
        matrix = {"scale_tril": tril, "covariance_matrix": tril @ tril.mT,
                  "precision_matrix": L.linalg.inv(tril @ tril.mT)}[keyword]
        return L.distributions.Wishart(df, **{keyword: matrix}), [df, tril]
    return build


def _lkj(L, dtype):
    concentration = leaf(L, [0.5, 2.0], dtype)
    return L.distributions.LKJCholesky(3, concentration), [concentration]


def _corr_cholesky_value():
    import torch
    x = torch.tensor(CORR_X)
    return torch.distributions.transforms.CorrCholeskyTransform()(x).numpy()


CB_PROBS = np.array([[0.2, 0.4995, 0.5], [0.7, 0.95, 0.5008]])
MORE_CASES = {
    "Pareto": (_params("Pareto", SCALE, SCALE * 2), SCALE + POSITIVE),
    "Weibull": (_params("Weibull", SCALE, SCALE[::-1].copy() * 1.5), POSITIVE),
    "HalfCauchy": (_params("HalfCauchy", SCALE), POSITIVE),
    "Kumaraswamy": (_params("Kumaraswamy", SCALE, SCALE[::-1].copy()), PROBS),
    "LogisticNormal": (_logistic_normal, np.concatenate([SIMPLEX[:, :3], SIMPLEX[:, :1]], -1)
                       / np.concatenate([SIMPLEX[:, :3], SIMPLEX[:, :1]], -1).sum(
                           -1, keepdims=True)),
    "ContinuousBernoulli(probs)": (_params("ContinuousBernoulli", CB_PROBS), PROBS),
    "ContinuousBernoulli(logits)": (_params("ContinuousBernoulli", logits=LOC), PROBS),
    "LowRankMultivariateNormal": (_low_rank, LOC - 0.2),
    "FisherSnedecor": (_params("FisherSnedecor", SCALE * 3, SCALE[::-1].copy() * 4), POSITIVE),
    "NegativeBinomial(probs)": (_params("NegativeBinomial", SCALE * 2, probs=PROBS), COUNTS),
    "NegativeBinomial(logits)": (_params("NegativeBinomial", SCALE * 2, logits=LOC), COUNTS),
    "VonMises": (_params("VonMises", LOC, np.array([[0.01, 0.5, 3.0], [3.8, 20.0, 100.0]])),
                 LOC[::-1].copy()),
    "Wishart(scale_tril)": (_wishart("scale_tril"), PD_VALUE),
    "Wishart(covariance)": (_wishart("covariance_matrix"), PD_VALUE),
    "Wishart(precision)": (_wishart("precision_matrix"), PD_VALUE),
    "LKJCholesky": (_lkj, _corr_cholesky_value()),
    "InverseGamma": (_params("InverseGamma", SCALE * 2, SCALE[::-1].copy()), POSITIVE),
}
# drawn through Gamma / Chi2 / Beta: their samples are compared in test_gamma_based_samples
GAMMA_BASED = {"InverseGamma", "FisherSnedecor", "NegativeBinomial(probs)",
               "NegativeBinomial(logits)", "Wishart(scale_tril)", "Wishart(covariance)",
               "Wishart(precision)", "LKJCholesky"}
