"""dropout, dropout1d, dropout2d: a random keep-mask from hookgrad's generator, multiplied in
(so the saved tensor is the scaled noise, as torch's MulBackward0 keeps it)."""
from __future__ import annotations

import numpy as np

from ... import _dtype
from ...ops.random import rand
from ...tensor import Tensor


def _noise(shape: tuple, p: float, dtype: np.dtype) -> Tensor:
    """Bernoulli(1 - p) keep-mask scaled by 1 / (1 - p), from hookgrad's generator."""
    keep = rand(shape, dtype=_dtype.float64)._data < (1 - p)
    return Tensor._make((keep / (1 - p)).astype(dtype))


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
        noise = _noise(tuple(input.shape), p, input._data.dtype)
    return input.mul_(noise) if inplace else input * noise


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, nd: int) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    batched = input.ndim == nd + 2
    shape = tuple(input.shape[:2] if batched else input.shape[:1]) + (1,) * nd
    noise = (Tensor._make(np.zeros(shape, input._data.dtype)) if p == 1.0
             else _noise(shape, p, input._data.dtype))
    return input.mul_(noise) if inplace else input * noise


def dropout1d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False) -> Tensor:
    return _feature_dropout(input, p, training, inplace, 2)
