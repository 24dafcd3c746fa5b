"""torch.special: the special functions hookgrad computes, under torch.special's names (most
are the torch-level functions; ``ndtr`` is the normal CDF built on erfc)."""
from __future__ import annotations

import math
from typing import Optional

from . import overrides as _overrides
from .ops import _out
from .ops import orthogonal_polynomials as _polynomials
from .ops import reduce as _reduce
from .ops import pointwise as _pointwise
from .ops import pointwise_unary as _unary
from .ops.pointwise_binary import xlogy as _xlogy
from .ops.pointwise_more import erfc as _erfc
from .ops.bessel_k import (  # noqa: F401  (torch.special's names)
    modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
    scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0)
from .ops.bessel_j import (  # noqa: F401  (torch.special's names)
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1)
from .ops.bessel_erfinv import erfinv, i0, i0e, i1, i1e  # noqa: F401  (torch.special's names)
from .ops.special import digamma as _digamma, lgamma as _lgamma, mvlgamma as _mvlgamma
from .ops.special import polygamma as _polygamma
from .ops.igamma import gammainc, gammaincc  # noqa: F401  (torch.special's names)
from .ops.orthogonal_polynomials import (  # noqa: F401  (torch.special's names)
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l,
    legendre_polynomial_p, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w)
from .ops.special_normal import entr, erfcx, log_ndtr, ndtri, xlog1py  # noqa: F401
from .ops.zeta import zeta  # noqa: F401  (torch.special's name)
from .tensor import Tensor


def expit(input: Tensor, *, out=None) -> Tensor:
    """The logistic sigmoid ``1 / (1 + exp(-x))``."""
    return _pointwise.sigmoid(input)


def logit(input: Tensor, eps: Optional[float] = None, *, out=None) -> Tensor:
    """``log(p / (1 - p))``, ``p`` clamped to ``[eps, 1 - eps]`` when given."""
    return _unary.logit(input, eps)


def erf(input: Tensor, *, out=None) -> Tensor:
    """The error function."""
    return _pointwise.erf(input)


def erfc(input: Tensor, *, out=None) -> Tensor:
    """``1 - erf(x)``, accurate in the tail."""
    return _erfc(input)


def ndtr(input: Tensor, *, out=None) -> Tensor:
    """The standard normal CDF, ``erfc(-x / sqrt(2)) / 2``."""
    return _erfc(input * (-1 / math.sqrt(2))) * 0.5


def gammaln(input: Tensor, *, out=None) -> Tensor:
    """``log |Gamma(x)|``."""
    return _lgamma(input)


def digamma(input: Tensor, *, out=None) -> Tensor:
    """The logarithmic derivative of Gamma."""
    return _digamma(input)


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """The ``n``-th derivative of digamma."""
    return _polygamma(n, input)


def multigammaln(input: Tensor, p: int, *, out=None) -> Tensor:
    """The multivariate log-gamma of dimension ``p``."""
    return _mvlgamma(input, p)


def xlogy(input, other, *, out=None) -> Tensor:
    """``input * log(other)``, 0 where input is 0."""
    return _xlogy(input, other)


def exp2(input: Tensor, *, out=None) -> Tensor:
    """``2 ** x``."""
    return _unary.exp2(input)


def expm1(input: Tensor, *, out=None) -> Tensor:
    """``exp(x) - 1``, accurate near 0."""
    return _unary.expm1(input)


def log1p(input: Tensor, *, out=None) -> Tensor:
    """``log(1 + x)``, accurate near 0."""
    return _pointwise.log1p(input)


def sinc(input: Tensor, *, out=None) -> Tensor:
    """``sin(pi x) / (pi x)``, 1 at 0."""
    return _unary.sinc(input)


def round(input: Tensor, *, decimals: int = 0, out=None) -> Tensor:  # noqa: A001
    """Rounds half to even (to ``decimals`` places)."""
    return _pointwise.round(input, decimals=decimals)


def logsumexp(input: Tensor, dim, keepdim: bool = False, *, out=None) -> Tensor:
    """``log(sum(exp(x)))`` along ``dim``, computed stably."""
    return _reduce.logsumexp(input, dim, keepdim)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``."""
    return _reduce.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed stably."""
    return _reduce.log_softmax(input, dim, dtype=dtype)


for _name, _value in list(globals().items()):  # every function is visible to a mode
    if _name[0] != "_" and callable(_value) and getattr(_value, "__module__", "") == __name__:
        globals()[_name] = _overrides.wrap(_value)
# the functions that live with their kernels also honour out=, as torch's special_* do
for _name in ("entr", "erfcx", "log_ndtr", "ndtri", "xlog1py", "zeta", "spherical_bessel_j0",
              "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "airy_ai",
              "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
              "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
              *_polynomials.POLYNOMIALS):
    globals()[_name] = _overrides.wrap(_out.accept_out(globals()[_name], "special_" + _name))
psi = digamma
del _name, _value
