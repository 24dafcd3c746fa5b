"""split / chunk / unbind: several views of one input.

Their outputs are marked so that an in-place change to one of them (or to a view of one) is
refused with torch's error: torch cannot rebuild such a view's history after its base changed.
"""
from __future__ import annotations

import operator
from itertools import pairwise

import numpy as np

from ..autograd import grad_mode
from ..tensor import _NO_GRAD_VIEW_ERROR, Tensor
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


_MULTI_VIEW_TAIL = ("This view is the output of a function that returns multiple views. Such "
                    "functions do not allow the output views to be modified inplace. You should "
                    "replace the inplace operation by an out-of-place one.")


class _MultiViewReplay:
    """Stands in for the replay of a split/unbind output: torch cannot rebuild such a view's
    history after its base changed in place, so asking for it raises torch's error (rather
    than keeping a stale grad_fn, which would give a wrong gradient)."""

    __slots__ = ("name", "output_nr")

    def __init__(self, name: str, output_nr: int):
        self.name, self.output_nr = name, output_nr

    def __call__(self, root):
        raise RuntimeError(f"Output {self.output_nr} of {self.name} is a view and its base or "
                             f"another view of its base has been modified inplace. "
                             + _MULTI_VIEW_TAIL)


def _mark_multi_view(cls, outputs: tuple, input_requires_grad: bool) -> tuple:
    for index, output in enumerate(outputs):
        output._view_fn = _MultiViewReplay(_forward_name(cls.node_name), index)
        if output._grad_fn is None and grad_mode.is_grad_enabled():
            # made with grad mode on but without history: torch's words for this case
            output._extras()["view_error"] = ("A view was created in no_grad mode and is being "
                                              "modified inplace with grad mode enabled. "
                                              + _MULTI_VIEW_TAIL)
        elif output._grad_fn is None and input_requires_grad:
            output._extras()["view_error"] = _NO_GRAD_VIEW_ERROR
    return outputs


def _forward_name(node_name: str) -> str:
    """torch names the op in view errors without the ``Backward0`` suffix."""
    head, _, _ = node_name.rpartition("Backward")
    return head or node_name


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
        return _mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, sizes, dim),
                                input.requires_grad)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    sizes = tuple(min(step, size - start) for start in range(0, size, step)) if size else (0,)
    return _mark_multi_view(Split, Split.apply(input, sizes, dim), input.requires_grad)


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
        return _mark_multi_view(SplitWithSizes, SplitWithSizes.apply(input, (0,) * chunks, dim),
                                input.requires_grad)
    return split(input, -(-size // chunks), dim)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = normalize_dim(dim, input._data.ndim)
    outputs = Unbind.apply(input, (1,) * input._data.shape[dim], dim, True)
    return _mark_multi_view(Unbind, outputs, input.requires_grad)
