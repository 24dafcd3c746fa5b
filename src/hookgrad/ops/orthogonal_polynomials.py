"""torch.special's orthogonal polynomials of degree ``n``: Chebyshev T, U, V, W and their
shifted forms on [0, 1], physicists' and probabilists' Hermite, Laguerre and Legendre.

Each is its three-term recurrence, run for all elements at once up to the largest degree (the
loop is over degrees, not elements; elements whose degree is reached keep their value, and the
loop stops early once every unfinished value is NaN). As torch: a negative degree gives 0, a
float degree is truncated (NaN or out of int64's range counts as negative), the closed forms
at x = +-1 are exact, and inside (-1, 1) high Chebyshev degrees use the trigonometric forms
(``T_n(cos t) = cos(n t)`` and its relatives) from degree 7 (T) or 9 (U, V, W) on. There are
no derivatives (torch records no node). Differs from torch: at NaN x torch's U, W, Laguerre
and Legendre kernels return an arbitrary value; here the result is NaN.
"""
from __future__ import annotations

import numpy as np

from .. import _dtype
from ..tensor import Tensor
from ._base import as_operand, cast, work_dtype
from ._util import quiet_errors

_INT64_LIMIT = 2.0 ** 63


def _degrees(n: np.ndarray) -> np.ndarray:
    if n.dtype.kind in "iub":
        return n.astype(np.int64)
    ok = np.isfinite(n) & (np.abs(n) < _INT64_LIMIT)
    return np.where(ok, np.trunc(np.where(ok, n, 0)), -1).astype(np.int64)


def _recurrence(x, n, first, step) -> np.ndarray:
    """degree n from degree 0 (1) and 1 (``first(x)``) by ``step(x, q, p, k)`` (degree k)"""
    previous = np.ones_like(x)
    current = first(x)
    top = int(n.max(initial=1))
    for k in range(2, top + 1):
        active = n >= k
        if not np.any(active & ~np.isnan(current)):
            break
        following = step(x, current, previous, k)
        previous = np.where(active, current, previous)
        current = np.where(active, following, current)
    return np.where(n == 0, 1.0, np.where(n < 0, 0.0, current))


def _chebyshev_step(x, q, p, k):
    return (x + x) * q - p


def _even(n):
    return n % 2 == 0


def _chebyshev(kind: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    first = {"t": lambda y: y, "u": lambda y: y + y, "v": lambda y: y + y - 1,
             "w": lambda y: y + y + 1}[kind]
    result = _recurrence(x, n, first, _chebyshev_step)
    inside = np.abs(x) < 1
    angle = np.arccos(np.where(inside, x, 0.0))
    if kind == "t":
        trig, start = np.cos(n * angle), 6
        ends = np.where((x > 0) | _even(n), 1.0, -1.0)
    elif kind == "u":
        sine = np.sin(angle)
        safe = np.where(sine != 0, sine, 1.0)
        trig = np.where(sine != 0, np.sin((n + 1) * angle) / safe,
                        (n + 1) * np.cos((n + 1) * angle) / np.where(x != 0, x, 1.0))
        start = 8
        ends = np.where((x > 0) | _even(n), n + 1.0, -(n + 1.0))
    elif kind == "v":
        trig, start = np.cos((n + 0.5) * angle) / np.cos(angle / 2), 8
        ends = np.where(x > 0, 1.0, np.where(_even(n), n + n + 1.0, -(n + n + 1.0)))
    else:
        trig, start = np.sin((n + 0.5) * angle) / np.sin(np.where(x == 1, 1.0, angle) / 2), 8
        ends = np.where(x > 0, n + n + 1.0, np.where(_even(n), 1.0, -1.0))
    result = np.where((n > start) & inside, trig, result)
    return np.where((np.abs(x) == 1) & (n >= 0), ends, result)


def _hermite(x, n):
    return _recurrence(x, n, lambda y: y + y, lambda y, q, p, k: (y + y) * q - (2 * k - 2) * p)


def _hermite_e(x, n):
    return _recurrence(x, n, lambda y: y, lambda y, q, p, k: y * q - (k - 1) * p)


def _laguerre(x, n):
    def step(y, q, p, k):
        j = k - 1
        return (((j + j) + (1 - y)) * q - j * p) / (j + 1)
    result = _recurrence(x, n, lambda y: 1 - y, step)
    return np.where((x == 0) & (n >= 0), 1.0, result)


def _legendre(x, n):
    def step(y, q, p, k):
        j = k - 1
        return ((j + j + 1) * y * q - j * p) / (j + 1)
    result = _recurrence(x, n, lambda y: y, step)
    ends = np.where((x > 0) | _even(n), 1.0, -1.0)
    return np.where((np.abs(x) == 1) & (n >= 0), ends, result)


def _shifted(kind: str):
    return lambda x, n: _chebyshev(kind, x + x - 1, n)


_KERNELS = {
    "chebyshev_polynomial_t": lambda x, n: _chebyshev("t", x, n),
    "chebyshev_polynomial_u": lambda x, n: _chebyshev("u", x, n),
    "chebyshev_polynomial_v": lambda x, n: _chebyshev("v", x, n),
    "chebyshev_polynomial_w": lambda x, n: _chebyshev("w", x, n),
    "shifted_chebyshev_polynomial_t": _shifted("t"),
    "shifted_chebyshev_polynomial_u": _shifted("u"),
    "shifted_chebyshev_polynomial_v": _shifted("v"),
    "shifted_chebyshev_polynomial_w": _shifted("w"),
    "hermite_polynomial_h": _hermite,
    "hermite_polynomial_he": _hermite_e,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


def _evaluate(name: str, input, n) -> Tensor:
    input, n = as_operand(input, f"special_{name}", 1), as_operand(n, f"special_{name}")
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"special_{name}(): expected at least one Tensor argument")
    dtype = _dtype.result_type(input, n).numpy
    if dtype.kind not in "fV":
        dtype = _dtype.get_default_dtype().numpy
    x_values = input._data if isinstance(input, Tensor) else np.asarray(input)
    n_values = n._data if isinstance(n, Tensor) else np.asarray(n)
    x_values = cast(x_values, np.dtype(np.float64))
    degrees = _degrees(np.asarray(n_values))
    x_values, degrees = np.broadcast_arrays(x_values, degrees)
    with quiet_errors():
        result = _KERNELS[name](x_values, degrees)
    result = np.ascontiguousarray(result, dtype=np.float64)
    if result.dtype != dtype:
        result = cast(cast(result, work_dtype(dtype)), dtype)
    return Tensor._make(result)


def _make(name: str, formula: str):
    def polynomial(input, n, *, out=None) -> Tensor:
        return _evaluate(name, input, n)

    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = f"{formula} of degree ``n`` (a number or a tensor broadcast with " \
                         "``input``); 0 for a negative degree, no gradient."
    return polynomial


chebyshev_polynomial_t = _make("chebyshev_polynomial_t", "The Chebyshev polynomial T_n(x)")
chebyshev_polynomial_u = _make("chebyshev_polynomial_u", "The Chebyshev polynomial U_n(x)")
chebyshev_polynomial_v = _make("chebyshev_polynomial_v", "The Chebyshev polynomial V_n(x)")
chebyshev_polynomial_w = _make("chebyshev_polynomial_w", "The Chebyshev polynomial W_n(x)")
shifted_chebyshev_polynomial_t = _make("shifted_chebyshev_polynomial_t",
                                       "The shifted Chebyshev polynomial T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _make("shifted_chebyshev_polynomial_u",
                                       "The shifted Chebyshev polynomial U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _make("shifted_chebyshev_polynomial_v",
                                       "The shifted Chebyshev polynomial V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _make("shifted_chebyshev_polynomial_w",
                                       "The shifted Chebyshev polynomial W_n(2x - 1)")
hermite_polynomial_h = _make("hermite_polynomial_h", "The physicists' Hermite polynomial H_n(x)")
hermite_polynomial_he = _make("hermite_polynomial_he",
                              "The probabilists' Hermite polynomial He_n(x)")
laguerre_polynomial_l = _make("laguerre_polynomial_l", "The Laguerre polynomial L_n(x)")
legendre_polynomial_p = _make("legendre_polynomial_p", "The Legendre polynomial P_n(x)")

POLYNOMIALS = tuple(_KERNELS)
