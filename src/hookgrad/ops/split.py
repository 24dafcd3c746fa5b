"""split / chunk / unbind: several views of one input.

Their outputs are marked so that an in-place change to one of them (or to a view of one) is
refused with torch's error: torch cannot rebuild such a view's history after its base changed.
"""
from __future__ import annotations

import operator
from itertools import pairwise

import numpy as np

from ..autograd.views import mark_multi_view
from ..tensor import Tensor
from ._util import normalize_dim
from .elementwise import _Op


class Split(_Op):
    """split / chunk / unbind: several views; modifying one in place is refused (as torch)."""

    node_name = "SplitBackward0"
    _view_of = 0
    _multi_view = True

    @staticmethod
    def forward(ctx, self, sizes, dim, squeeze=False):
        ctx.dim, ctx.squeeze = dim, squeeze
        offsets = np.cumsum((0,) + tuple(sizes))
        lead = (slice(None),) * dim
        if squeeze:
            return tuple(self[lead + (int(o), Ellipsis)] for o in offsets[:-1])
        return tuple(self[lead + (slice(int(a), int(b)),)] for a, b in pairwise(offsets))

    @staticmethod
    def backward(ctx, *grads):
        from .shape import cat, stack

        if ctx.squeeze:
            return stack(grads, ctx.dim), None, None, None
        return cat(grads, ctx.dim), None, None, None


class SplitWithSizes(Split):
    node_name = "SplitWithSizesBackward0"


class Unbind(Split):
    node_name = "UnbindBackward0"


def split(input: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(operator.index(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got split_sizes="
                               f"{list(sizes)}")
        return mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, sizes, dim),
                                input.requires_grad)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    sizes = tuple(min(step, size - start) for start in range(0, size, step)) if size else (0,)
    return mark_multi_view(Split, Split.apply(input, sizes, dim), input.requires_grad)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """torch's rule: pieces of ceil(size / chunks), so there may be fewer than ``chunks``."""
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    dim = normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if size == 0:
        return mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, (0,) * chunks, dim),
                                input.requires_grad)
    return split(input, -(-size // chunks), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, input._data.ndim)
    outputs = Unbind.apply(input, (1,) * input._data.shape[dim], dim, True)
    return mark_multi_view(Unbind, outputs, input.requires_grad)
