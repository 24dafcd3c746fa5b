"""Statistics composed of existing ops, as torch composes them: cov, corrcoef, trapezoid (trapz,
cumulative_trapezoid), quantile and nanquantile; and histc, a count with no gradient."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .._warnings import warn
from .. import _dtype
from ..tensor import Tensor
from ._base import not_implemented
from .arithmetic_scalar import div_scalar, mul_scalar
from ._util import normalize_dim
from .creation import zeros
from .linalg import mm


# -- cov, corrcoef --------------------------------------------------------------------------------
def _check_weights(name: str, weights: Tensor, observations: int, integral: bool) -> None:
    if weights.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {weights.ndim} dimensions")
    kind = weights._data.dtype.kind
    if integral and kind not in "iu":
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{_dtype.scalar_type_name(weights._data.dtype)} dtype")
    if not integral and kind not in "fV":
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got {name} "
                           f"with {_dtype.scalar_type_name(weights._data.dtype)} dtype")
    if weights.numel() != observations:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {weights.numel()} != "
                           f"{observations}")
    if observations and bool((weights._data < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
    """Covariance of the variables in the rows of ``input`` (observations in columns), with
    optional integer frequency weights and float observation weights."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    rows = input.reshape(1, -1) if input.ndim < 2 else input
    observations = rows.shape[1]
    weights = None
    if fweights is not None:
        _check_weights("fweights", fweights, observations, True)
        weights = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, observations, False)
        weights = aweights if weights is None else weights * aweights
    if weights is None:
        total = Tensor._make(np.asarray(observations, np.int64))
    else:
        total = weights.sum()
        if not bool(total._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    mean = (rows if weights is None else rows * weights).sum(1) / total
    if weights is not None and aweights is not None and correction != 0:
        norm = total - correction * (weights * aweights).sum() / total
    else:
        norm = total - correction
    if bool(norm._data <= 0):
        warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
             "than the number of observations.")
        norm = norm * 0
    centred = rows - mean.unsqueeze(1)
    product = mm(centred, (centred if weights is None else centred * weights).t())
    return product.true_divide(norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows, clipped to [-1, 1]."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    spread = c.diagonal().sqrt()
    c = c / spread.reshape(-1, 1)
    c = c / spread.reshape(1, -1)
    return c.clip(-1, 1)


# -- trapezoid ------------------------------------------------------------------------------------
def _spacing(y: Tensor, x: Tensor, dim: int, name: str) -> Tensor:
    if y._data.dtype.kind == "b" or x._data.dtype.kind == "b":
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return x.narrow(dim, 1, x.shape[dim] - 1) - x.narrow(dim, 0, x.shape[dim] - 1)


def _empty_integral(y: Tensor, dim: int) -> Tensor:
    shape = tuple(s for d, s in enumerate(y.shape) if d != dim)
    return zeros(shape, dtype=y.dtype)


def trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: sample points ``x`` (a tensor), or a constant
    spacing ``dx`` (1 by default)."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    dim = normalize_dim(dim, y.ndim)
    if y.shape[dim] == 0:
        return _empty_integral(y, dim)
    if isinstance(x, Tensor):
        left, right = y.narrow(dim, 0, y.shape[dim] - 1), y.narrow(dim, 1, y.shape[dim] - 1)
        return div_scalar(((right + left) * _spacing(y, x, dim, "trapezoid")).sum(dim), 2.0)
    spacing = 1 if dx is None else (x if x is not None else dx)
    ends = y.select(dim, 0) + y.select(dim, -1)
    return mul_scalar(y.sum(dim) - mul_scalar(ends, 0.5), spacing)


def trapz(y: Tensor, x: Optional[Tensor] = None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Optional[Tensor] = None, *, dx=None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one element shorter than ``y``)."""
    dim = normalize_dim(dim, y.ndim)
    left, right = y.narrow(dim, 0, y.shape[dim] - 1), y.narrow(dim, 1, y.shape[dim] - 1)
    if isinstance(x, Tensor):
        spacing = _spacing(y, x, dim, "cumulative_trapezoid")
        return div_scalar(((right + left) * spacing).cumsum(dim), 2.0)
    spacing = 1 if dx is None else dx
    return mul_scalar(left + right, spacing / 2.0).cumsum(dim)


# -- histc ----------------------------------------------------------------------------------------
def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:
    """Counts of the elements in ``bins`` equal-width bins over [min, max] (the data's range
    when both are equal); elements outside are ignored. A count: no gradient."""
    data = input._data
    if data.dtype.kind not in "fV":
        raise not_implemented("histogram_cpu", data.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    work = data.astype(np.float32) if data.dtype.kind == "V" else data
    low, high = work.dtype.type(min), work.dtype.type(max)
    if low == high and work.size:
        low, high = work.min(), work.max()
    if low == high:
        low, high = low - 1, high + 1
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"torch.histc: range of [{low}, {high}] is not finite")
    inside = work[(work >= low) & (work <= high)]
    with np.errstate(all="ignore"):
        position = ((inside - low) * work.dtype.type(bins) / (high - low)).astype(np.int64)
    position = np.minimum(position, bins - 1)  # the top edge belongs to the last bin
    counts = np.bincount(position.ravel(), minlength=bins)[:bins]
    return Tensor._make(counts.astype(data.dtype))


# -- quantile -------------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q._data.dtype != input._data.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if bool(((q._data < 0) | (q._data > 1)).any()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        scalar_q, qs = q.ndim == 0, q._data.reshape(-1)
    else:
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        scalar_q, qs = True, np.asarray([q], input._data.dtype)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is None:
        values = input.reshape(-1).sort().values
        shape = [1] * input.ndim if keepdim else []
    else:
        dim = normalize_dim(dim, input.ndim)
        if input.ndim == 0:  # a 0-d input is one slice along its dim; the result stays 0-d
            values, shape = input.reshape(1).sort().values, []
        else:
            values = input.movedim(dim, -1).sort().values
            shape = list(input.shape)
            if keepdim:
                shape[dim] = 1
            else:
                del shape[dim]
    sorted_data = values._data
    nan = np.isnan(sorted_data).any(-1, keepdims=True)
    if ignore_nan:
        counts = (~np.isnan(sorted_data)).sum(-1, keepdims=True) - 1
        ranks = np.maximum(qs * counts.astype(sorted_data.dtype), 0)
    else:
        last = sorted_data.shape[-1] - 1
        ranks = np.where(nan, sorted_data.dtype.type(last), qs * sorted_data.dtype.type(last))
    ranks = ranks.astype(sorted_data.dtype)
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as torch's round_
    below_index = Tensor._make(ranks.astype(np.int64))
    result = values.gather(-1, below_index)
    if interpolation in ("linear", "midpoint"):
        above = values.gather(-1, Tensor._make(np.ceil(ranks).astype(np.int64)))
        weight = np.full_like(ranks, 0.5) if interpolation == "midpoint" else \
            ranks - below_index._data
        result = result.lerp(above, Tensor._make(weight.astype(sorted_data.dtype)))
    # (..., len(q)) -> (len(q), *shape), or shape alone for a scalar q
    result = result.movedim(-1, 0)
    return result.reshape(shape) if scalar_q else result.reshape([len(qs)] + shape)


def quantile(input: Tensor, q, dim: Optional[int] = None, keepdim: bool = False, *,
             interpolation: str = "linear", out=None) -> Tensor:
    """The ``q``-th quantiles along ``dim`` (of all elements if None), between neighbouring
    order statistics as ``interpolation`` says; a NaN makes the answer NaN."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q, dim: Optional[int] = None, keepdim: bool = False, *,
                interpolation: str = "linear", out=None) -> Tensor:
    """``quantile`` ignoring NaNs (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


METHODS = {"cov": cov, "corrcoef": corrcoef, "histc": histc, "quantile": quantile,
           "nanquantile": nanquantile}
