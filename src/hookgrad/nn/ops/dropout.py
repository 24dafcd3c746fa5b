"""dropout, dropout1d, dropout2d: torch's keep-mask (``bernoulli_(1 - p)`` on the default
generator, so the masks equal torch's for the same seed), multiplied in (so the saved tensor is
the scaled noise, as torch's MulBackward0 keeps it)."""
from __future__ import annotations

import numpy as np

from ..._generator import default_generator
from ...ops.random import Bernoulli
from ...tensor import Tensor


def _noise(array: np.ndarray, p: float) -> Tensor:
    """``array`` (an empty buffer, in the layout torch's would have) filled by
    ``bernoulli_(1 - p)`` from the default generator, then divided by 1 - p in its dtype."""
    Bernoulli._draw(default_generator, array, 1.0 - p)
    with np.errstate(all="ignore"):
        return Tensor._make(array / array.dtype.type(1.0 - p))


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p); the saved mask
    is that scaled noise (torch saves it for MulBackward0)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        noise = Tensor._make(np.zeros((), input._data.dtype))
    else:
        noise = _noise(np.empty_like(input._data), p)
    return input.mul_(noise) if inplace else input * noise


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, nd: int) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    batched = input.ndim == nd + 2
    shape = tuple(input.shape[:2] if batched else input.shape[:1]) + (1,) * nd
    noise = (Tensor._make(np.zeros(shape, input._data.dtype)) if p == 1.0
             else _noise(np.empty(shape, input._data.dtype), p))
    return input.mul_(noise) if inplace else input * noise


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout of ``(N, C, L)`` input: whole channels zeroed with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout of ``(N, C, H, W)`` input: whole channels zeroed with probability ``p``."""
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False) -> Tensor:
    """Channel dropout of ``(N, C, D, H, W)`` input: whole channels zeroed with probability
    ``p``."""
    return _feature_dropout(input, p, training, inplace, 3)


# SELU's negative saturation value, -scale * alpha: alpha dropout sets dropped units to it
_SELU_SATURATION = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool,
                   feature: bool) -> Tensor:
    """Dropped units take SELU's saturation value and the result is then scaled and shifted
    back to the input's mean and variance: ``input * a * keep + b`` with ``a`` and ``b``
    chosen from ``p`` for inputs of zero mean and unit variance."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        zero = Tensor._make(np.zeros((), dtype))
        return input.mul_(zero) if inplace else input * zero
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        keep = np.empty(tuple(input.shape[:2]) + (1,) * (input.ndim - 2), dtype)
    else:
        keep = np.empty_like(input._data)
    Bernoulli._draw(default_generator, keep, 1.0 - p)
    scale = 1.0 / ((_SELU_SATURATION ** 2 * p + 1) * (1 - p)) ** 0.5
    t = dtype.type
    with np.errstate(all="ignore"):
        shift = Tensor._make((keep - t(1)) * t(_SELU_SATURATION * scale)
                             + t(_SELU_SATURATION * scale * p))
        noise = Tensor._make(keep * t(scale))
    return input.mul_(noise).add_(shift) if inplace else (input * noise).add_(shift)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout for self-normalizing (SELU) networks: keeps the input's mean and variance."""
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels (dims 0 and 1 index the mask)."""
    return _alpha_dropout(input, p, training, inplace, feature=True)
