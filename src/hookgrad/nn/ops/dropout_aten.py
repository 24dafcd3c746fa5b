"""torch's top-level dropout spellings: ``dropout``/``dropout_``, ``feature_dropout``/``_``,
``alpha_dropout_``, ``feature_alpha_dropout_`` (positional ``(input, p, train)``, a bad ``p``
is a RuntimeError) and ``native_dropout``, which returns the boolean keep-mask too.

Masks are drawn as ``F.dropout``'s are (``bernoulli_(1 - p)`` on the default generator), so
with the same seed they equal torch's.
"""
from __future__ import annotations

import numpy as np

from ... import _dtype
from ..._generator import default_generator
from ...ops._base import Op
from ...ops.random import Bernoulli
from ...tensor import Tensor
from . import dropout as _dropout

__all__ = ["dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout_",
           "feature_alpha_dropout_", "native_dropout"]


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch's ``dropout(input, p, train)``: ``F.dropout`` with its arguments positional."""
    _check_p(p)
    return _dropout.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`dropout`; returns ``input``."""
    _check_p(p)
    return _dropout.dropout(input, p, train, inplace=True)


def _feature(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    _check_p(p)
    if train and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _dropout._feature_dropout(input, p, train, inplace, max(input.ndim - 2, 0))


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Whole feature maps (one mask entry per ``input[n, c]``) zeroed with probability p, the
    rest scaled by 1 / (1 - p)."""
    return _feature(input, p, train, inplace=False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place :func:`feature_dropout`; returns ``input``."""
    return _feature(input, p, train, inplace=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place alpha dropout (SELU's saturation for dropped units, mean and variance kept)."""
    _check_p(p)
    return _dropout._alpha_dropout(input, p, train, True, feature=False)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place alpha dropout of whole feature maps."""
    _check_p(p)
    return _dropout._alpha_dropout(input, p, train, True, feature=True)


class NativeDropout(Op):
    """out = input * mask * scale with scale = 1 / (1 - p) (0 when p = 1);  d input = grad * mask
    * scale, where torch's derivative takes scale 1 unless ``train`` was True. In evaluation
    the mask is all true."""

    node_name = "NativeDropoutBackward0"
    saved_names = ("result1",)
    saved_values = {"p": "p"}

    @staticmethod
    def forward(ctx, input, p, train, scaled_backward):
        dtype = input.dtype
        if train:
            keep = np.empty_like(input)
            Bernoulli._draw(default_generator, keep, 1.0 - p)
            mask = keep != 0
            scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
            with np.errstate(all="ignore"):
                output = input * keep * dtype.type(scale)
        else:
            mask, scale = np.ones(input.shape, bool), 1.0
            output = input.copy()
        ctx.p = p
        ctx.scale = scale if scaled_backward else 1.0
        ctx.save_for_backward(mask)
        return output.astype(dtype, copy=False), mask

    @staticmethod
    def backward(ctx, grad, _grad_mask=None):
        (mask,) = ctx.saved_tensors
        return grad * (mask.to(grad.dtype) * ctx.scale)


def native_dropout(input: Tensor, p: float, train) -> tuple:
    """``(output, mask)``: dropout that also returns the boolean keep-mask. ``train=None``
    drops as training does, but (as torch's derivative reads it) its gradient is ``grad * mask``
    without the 1 / (1 - p) scale."""
    training = True if train is None else bool(train)
    if training and not 0.0 <= 1.0 - p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1.0 - p:g}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_dtype.scalar_type_name(input.dtype)}")
    return tuple(NativeDropout.apply(input, p, training, train is not None and training))
