"""The reparameterised gradients torch's CPU kernels give for gamma and Dirichlet draws.

``standard_gamma_grad(alpha, x)`` is -(d/d alpha of the Gamma(alpha) cdf at x) / pdf at x, and
``dirichlet_grad(x, alpha, total)`` the same for Beta(alpha, total - alpha), divided by 1 - x.
Neither has a closed form; torch evaluates piecewise approximations (Jankowiak and Obermeyer,
"Pathwise derivatives beyond the reparameterization trick", 2018), choosing the piece per
element. These are the same pieces, with the same switch points and the same split between the
parameter's precision (``work``) and double, evaluated on whole arrays: one mask per piece.
"""
from __future__ import annotations

import math

import numpy as np

from ._distributions import exact_log, exact_pow

F32, F64 = np.float32, np.float64
_PSI_10 = 2.25175258906672110764  # digamma(10)
# the asymptotic series of digamma in 1/x^2, highest power first
_DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2,
                   7.57575757575757575758E-3, -4.16666666666666666667E-3,
                   3.96825396825396825397E-3, -8.33333333333333333333E-3,
                   8.33333333333333333333E-2)


def _log(x: np.ndarray) -> np.ndarray:
    """The C library's log in the array's own precision (logf for float: the double result
    rounded once, which is what a correctly rounded logf gives)."""
    return exact_log(x).astype(x.dtype)


def _pow(x: np.ndarray, y) -> np.ndarray:
    """The C library's pow (powf for float, as ``_log``)."""
    return exact_pow(x, np.broadcast_to(y, x.shape)).astype(x.dtype)


def _exp(x: np.ndarray) -> np.ndarray:
    return _EXP(x).astype(F64) if x.size else x


_EXP = np.frompyfunc(math.exp, 1, 1)


def digamma_one(values: np.ndarray) -> np.ndarray:
    """torch's ``digamma_one``: steps of psi(x) = psi(x + 1) - 1/x in the argument's precision
    (accumulated in double) up to x >= 10, then the asymptotic series; poles give +inf."""
    work = values.dtype.type
    x = values.copy()
    reflected = np.zeros(x.shape, F64)
    negative = x < 0
    pole = (x == 0) | (negative & (x == np.floor(x)))
    if negative.any():
        pi = work(np.pi)
        reflected[negative] = -pi / np.tan(pi * x[negative])
        x = np.where(negative, work(1) - x, x)
    total = np.zeros(x.shape, F64)
    for _ in range(12):
        low = x < 10
        if not low.any():
            break
        total = np.where(low, total - (work(1) / x), total)
        x = np.where(low, x + work(1), x)
    square = (x * x).astype(F64)
    z = 1.0 / square
    series = np.zeros(x.shape, F64)
    for coefficient in _DIGAMMA_SERIES:
        series = series * z + coefficient
    tail = np.where(x < F32(1.0e17), z * series, 0.0)
    result = ((total + _log(x)) - (work(0.5) / x)) - tail + reflected
    result = np.where(x == 10, total + _PSI_10 + reflected, result)
    return np.where(pole, np.inf, result).astype(values.dtype)


# -- Gamma --------------------------------------------------------------------------------------
_RATIONAL_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07]])


def _gamma_small_x(alpha, x):
    """Taylor series of the incomplete gamma in x (x < 0.8)."""
    numer, denom = np.ones_like(x), alpha.copy()
    first, second = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / float(i))
        denom = denom + 1
        first = first + numer / denom
        second = second + numer / (denom * denom)
    power = exact_pow(x, alpha)
    pdf = exact_pow(x, alpha - 1) * _exp(-x)
    cdf_alpha = (exact_log(x) - digamma_one(alpha)) * (power * first) - power * second
    result = -cdf_alpha / pdf
    return np.where(np.isnan(result), 0.0, result)


def _gamma_saddle(alpha, x):
    """Rice's saddle point expansion for alpha > 8."""
    near = (F64(F32(0.9)) * alpha <= x) & (x <= F64(F32(1.1)) * alpha)
    square = alpha * alpha
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = (1440 * square + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
               + alpha * (107 + 3600 * x))
    at_mode = numer_1 * numer_2 / (1244160 * square * square)
    denom = np.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    ratio_log = exact_log(x / alpha)
    term3 = exact_pow(x - alpha - alpha * ratio_log, -1.5)
    term23 = np.where(x < alpha, term2 - term3, term2 + term3)
    term1 = ratio_log * term23 - np.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    away = -stirling * (x * term1) / denom
    return np.where(near, at_mode, away)


def _gamma_rational(alpha, x):
    """A fitted rational function of log(x / alpha) and log(alpha)."""
    u, v = exact_log(x / alpha), exact_log(alpha)
    c = [_RATIONAL_UV[0, i] + u * (_RATIONAL_UV[1, i] + u * _RATIONAL_UV[2, i])
         for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return _exp(p / q)


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d x / d alpha for x ~ Gamma(alpha, 1) held at the same quantile, in alpha's dtype."""
    alpha64, x64 = alpha.astype(F64).reshape(-1), x.astype(F64).reshape(-1)
    out = np.empty(alpha64.shape, F64)
    small = x64 < F64(F32(0.8))
    large = ~small & (alpha64 > 8)
    rest = ~small & ~large
    with np.errstate(all="ignore"):
        for mask, piece in ((small, _gamma_small_x), (large, _gamma_saddle),
                            (rest, _gamma_rational)):
            if mask.any():
                out[mask] = piece(alpha64[mask], x64[mask])
    return out.astype(alpha.dtype).reshape(alpha.shape)


# -- Beta / Dirichlet ---------------------------------------------------------------------------
def _beta_small_x(x, alpha, beta):
    """Taylor series near x = 0 for the gradient in alpha (in the parameter's precision)."""
    factor = (digamma_one(alpha) - digamma_one(alpha + beta)) - _log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        step = x.dtype.type(i)
        numer = numer * ((step - beta) * x / step)
        denom = alpha + step
        series = series + numer / denom * (factor + 1 / denom)
    result = x * _pow(1 - x, -beta) * series
    return np.where(np.isnan(result), 0, result)


def _beta_small_1mx(y, alpha, beta):
    """Taylor series near y = 1 - x = 0 for the gradient in beta, arguments swapped."""
    factor = digamma_one(alpha + beta) - digamma_one(beta)
    numer, betas, dbetas = np.ones_like(y), np.ones_like(y), np.zeros_like(y)
    series = factor / alpha
    for i in range(1, 9):
        step = y.dtype.type(i)
        numer = numer * (-y / step)
        dbetas = dbetas * (beta - step) + betas
        betas = betas * (beta - step)
        series = series + numer / (alpha + step) * (dbetas + factor * betas)
    result = -_pow(1 - y, 1 - beta) * series
    return np.where(np.isnan(result), 0, result)


def _beta_saddle(x, alpha, beta):
    """Rice saddle point expansion when alpha and beta both exceed 6 (in double)."""
    total = alpha + beta
    mean = alpha / total
    spread = np.sqrt(alpha * beta / (total + 1)) / total
    near = (mean - 0.1 * spread <= x) & (x <= mean + 0.1 * spread)
    bb = beta * beta
    poly = 47 * x * bb * bb + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * bb + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    numer = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    denom = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
    at_mean = numer / (1 - x) * poly / denom
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * bb
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * exact_pow(total, 1.5) * axbx * axbx)
    log_alpha_part = exact_log(alpha / (total * x))
    term2 = 0.5 * log_alpha_part
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = exact_pow(beta * exact_log(beta / (total * (1 - x))) + alpha * log_alpha_part, -1.5)
    away = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where(near, at_mean, away)


# numerator [0] and denominator [1] of the rational correction: [i][j][k] multiplies
# log(x)^i * log(alpha / x)^j * b^k, b = log(total) - log(alpha / x)
_BETA_RATIONAL = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]]])


def _beta_rational(x, alpha, total, work):
    """An analytic approximation times a fitted rational correction (in double)."""
    u = exact_log(x)
    a = exact_log(alpha) - u
    b = exact_log(total) - a
    powers_u, powers_a = (1.0, u, u * u), (1.0, a, a * a)
    sums = []
    for table in _BETA_RATIONAL:
        acc = np.zeros_like(x)
        for i in range(3):
            for j in range(3):
                k = table[i, j]
                acc = acc + powers_u[i] * powers_a[j] * (k[0] + b * (k[1] + b * (k[2] + b * k[3])))
        sums.append(acc)
    difference = (digamma_one(total.astype(work)) - digamma_one(alpha.astype(work)))
    approx = x * difference.astype(F64) / (total - alpha)
    return sums[0] / sums[1] * approx


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """torch's ``_dirichlet_grad``: for x ~ Beta(alpha, total - alpha), -(d cdf / d alpha) /
    pdf / (1 - x), elementwise on same-shaped arrays, in x's dtype."""
    work = x.dtype.type
    x, alpha, total = (np.asarray(a, work).reshape(-1) for a in (x, alpha, total))
    beta = total - alpha
    boundary = total * x * (1 - x)
    near_zero = (x <= work(0.5)) & (boundary < work(2.5))
    near_one = ~near_zero & (x >= work(0.5)) & (boundary < work(0.75))
    both_large = ~near_zero & ~near_one & (alpha > 6) & (beta > 6)
    rest = ~(near_zero | near_one | both_large)
    out = np.empty(x.shape, work)
    with np.errstate(all="ignore"):
        if near_zero.any():
            m = near_zero
            out[m] = _beta_small_x(x[m], alpha[m], beta[m])
        if near_one.any():
            m = near_one
            out[m] = -_beta_small_1mx(1 - x[m], beta[m], alpha[m])
        wide = [a.astype(F64) for a in (x, alpha, total)]
        if both_large.any():
            m = both_large
            out[m] = _beta_saddle(wide[0][m], wide[1][m], wide[2][m] - wide[1][m])
        if rest.any():
            m = rest
            out[m] = _beta_rational(wide[0][m], wide[1][m], wide[2][m], work)
    return out
