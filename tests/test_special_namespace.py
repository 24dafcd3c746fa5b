"""hookgrad.special (torch.special's names) against torch: values and gradients."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare

R = np.random.default_rng(41)
X = R.standard_normal((3, 5))
POSITIVE = np.abs(X) + 0.3
CASES = {
    "expit": (lambda s, a: s.expit(a), X), "logit": (lambda s, a: s.logit(a, 1e-3), POSITIVE / 3),
    "erf": (lambda s, a: s.erf(a), X), "erfc": (lambda s, a: s.erfc(a * 3), X),
    "ndtr": (lambda s, a: s.ndtr(a * 4), X), "gammaln": (lambda s, a: s.gammaln(a), POSITIVE),
    "digamma": (lambda s, a: s.digamma(a), POSITIVE), "psi": (lambda s, a: s.psi(a), POSITIVE),
    "polygamma": (lambda s, a: s.polygamma(2, a), POSITIVE),
    "multigammaln": (lambda s, a: s.multigammaln(a + 1, 2), POSITIVE),
    "xlogy": (lambda s, a: s.xlogy(a, a.abs()), X), "exp2": (lambda s, a: s.exp2(a), X),
    "expm1": (lambda s, a: s.expm1(a), X), "log1p": (lambda s, a: s.log1p(a), POSITIVE),
    "sinc": (lambda s, a: s.sinc(a), X), "round": (lambda s, a: s.round(a * 10, decimals=1), X),
    "logsumexp": (lambda s, a: s.logsumexp(a, 1), X),
    "softmax": (lambda s, a: s.softmax(a, 0), X),
    "log_softmax": (lambda s, a: s.log_softmax(a, 1, dtype=torch.float64 if s is torch.special
                                                else hookgrad.float64), X),
}


@pytest.mark.parametrize("name", CASES)
def test_special_function(name):
    fn, x = CASES[name]
    rtol = 1e-8 if name in ("digamma", "psi", "polygamma") else None  # torch's own accuracy
    compare(lambda lib, a: fn(lib.special, a), x, rtol=rtol)
    compare(lambda lib, a: fn(lib.special, a), x.astype(np.float32))
