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
