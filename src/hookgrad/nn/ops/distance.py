"""Distances and similarities: ``normalize``, ``cosine_similarity``, ``pairwise_distance``.

All three are composed of public tensor ops exactly as torch composes them, so values,
gradients, double backward and the backward graph follow from those ops.
"""
from __future__ import annotations

from typing import Optional

import hookgrad
from ...ops.arithmetic_scalar import add_scalar
from ...ops.norms import norm_dim
from ...tensor import Tensor

_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
          "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Optional[Tensor] = None) -> Tensor:
    """input / max(||input||_p along dim, eps)."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return out.copy_(input / denom)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / ||x1|| * x2 / ||x2||) along dim, each norm at least eps; the norms are clamped
    outside the graph (torch's way: the gradient is that of the unclamped quotient)."""
    common = hookgrad.result_type(x1, x2)
    if not common.is_floating_point:
        name = str(common).split(".")[-1]
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{_NAMES.get(name, name)}")
    if not x1.dtype.is_floating_point:
        x1 = x1.to(common)
    if not x2.dtype.is_floating_point:
        x2 = x2.to(common)
    x1, x2 = hookgrad.broadcast_tensors(x1, x2)
    norms = []
    for x in (x1, x2):
        norm = hookgrad.linalg.vector_norm(x, 2, dim=dim, keepdim=True).clone()
        with hookgrad.no_grad():
            norm.clamp_min_(eps)
        norms.append(norm)
    return ((x1 / norms[0]) * (x2 / norms[1])).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim (of the broadcast shape)."""
    last = max(x1.ndim, x2.ndim) - 1
    return norm_dim(add_scalar(x1 - x2, eps), p, last, keepdim)
