"""select, slice and narrow: views of one index or one stepped range along a dimension, and
their backwards (the gradient written into zeros), which are ops of their own so that double
backward goes through them as torch's SelectBackwardBackward0 / SliceBackwardBackward0 do."""
from __future__ import annotations

import operator

import numpy as np

from ..tensor import Tensor
from . import _layout
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim


class Select(Op):
    """grad written into zeros at ``index`` of ``dim``"""

    node_name = "SelectBackward0"
    _view_of = 0

    @staticmethod
    def forward(ctx, self, dim, index):
        shown_as = dim
        if self.ndim == 0:
            raise IndexError("select() cannot be applied to a 0-dim tensor.")
        dim = normalize_dim(dim, self.ndim)
        size = self.shape[dim]
        if not -size <= index < size:
            raise IndexError(f"select(): index {index} out of range for tensor of size "
                             f"{list(self.shape)} at dimension {dim}")
        ctx.self_shape, ctx.dim, ctx.index = self.shape, dim, index % size
        # torch's node shows dim and index as given (a negative one read back unsigned)
        ctx._saved_self_sym_sizes = self.shape
        ctx._saved_dim, ctx._saved_index = shown_dim(shown_as), shown_dim(index)
        return self[(slice(None),) * dim + (index % size, Ellipsis)]  # ... keeps a 0-d view

    @staticmethod
    def backward(ctx, grad):
        return SelectBackward.apply(grad, ctx.self_shape, ctx.dim, ctx.index,
                                    (ctx._saved_dim, ctx._saved_index)), None, None


class SelectBackward(Op):
    node_name = "SelectBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, index, shown=None):
        ctx.dim, ctx.index = dim, index
        # torch's node shows the select's dim and index as its forward node does
        ctx._saved_dim, ctx._saved_index = (dim, index) if shown is None else shown
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (index,)] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Select.apply(grad, ctx.dim, ctx.index), None, None, None, None


class Slice(Op):
    """grad written into zeros at ``start:end:step`` of ``dim``"""

    node_name = "SliceBackward0"
    _view_of = 0

    @staticmethod
    def forward(ctx, self, dim, start, end, step, shown=None):
        if step <= 0:
            raise ValueError("step must be greater than zero")
        # torch's node shows dim, start and end as the caller gave them (``shown``: an
        # indexing slice's own bounds), a negative one read back unsigned
        ctx._saved_dim, ctx._saved_step = shown_dim(dim), step
        ctx._saved_self_sym_sizes = self.shape
        ctx._saved_start, ctx._saved_end = (shown_dim(start), shown_dim(end)) if shown is None \
            else shown
        dim = normalize_dim(dim, self.ndim)
        ctx.self_shape, ctx.dim = self.shape, dim
        ctx.start, ctx.end, ctx.step = start, end, step
        out = self[(slice(None),) * dim + (slice(start, end, step),)]
        if out.size:
            return out
        # NumPy drops the step from an empty slice's stride and leaves its start behind;
        # torch keeps stride * step and starts at the slice's start
        strides = [s * out.itemsize for s in _layout.torch_strides(self)]
        shift = start * strides[dim] + (self.__array_interface__["data"][0]
                                         - out.__array_interface__["data"][0])
        strides[dim] *= step
        if out.strides == tuple(strides) and not shift:
            return out
        return _layout.restrided(out, tuple(strides), shift)

    @staticmethod
    def backward(ctx, grad):
        shown = (ctx._saved_dim, ctx._saved_start, ctx._saved_end, ctx._saved_step)
        return (SliceBackward.apply(grad, ctx.self_shape, ctx.dim, ctx.start, ctx.end, ctx.step,
                                    shown), None, None, None, None)


class SliceBackward(Op):
    node_name = "SliceBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, shape, dim, start, end, step, shown=None):
        ctx.args = (dim, start, end, step)
        # torch's node shows the slice's arguments as its forward node does
        (ctx._saved_dim, ctx._saved_start, ctx._saved_end,
         ctx._saved_step) = ctx.args if shown is None else shown
        out = np.zeros(shape, grad.dtype)
        out[(slice(None),) * dim + (slice(start, end, step),)] = grad
        return out

    @staticmethod
    def backward(ctx, grad):
        return Slice.apply(grad, *ctx.args), None, None, None, None, None, None


def select(input: Tensor, dim: int, index) -> Tensor:
    """A view of index ``index`` along ``dim``; that dimension is removed."""
    return Select.apply(input, dim, operator.index(index))


def slice_dim(input: Tensor, dim: int, start, stop, step: int = 1, cls=Slice,
              shown=None) -> Tensor:
    """``input[..., start:stop:step]`` along ``dim`` with Python's clamping (torch's slice),
    through ``cls`` (the view, or ``slice_copy``'s twin, which shows ``shown`` bounds)."""
    size = input._data.shape[normalize_dim(dim, input._data.ndim)]
    if step is not None and step <= 0:
        raise ValueError("step must be greater than zero")
    begin, end, step = slice(start, stop, step).indices(size)
    return cls.apply(input, dim, begin, max(begin, end), step, shown)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    """A view of ``length`` elements from ``start`` along ``dim``."""
    if input._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    shown_as, dim = dim, normalize_dim(dim, input._data.ndim)
    start, length = operator.index(start), operator.index(length)
    size = input._data.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start = narrow_start(start, size)
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return Slice.apply(input, shown_as, start, start + length, 1)


def narrow_start(start: int, size: int) -> int:
    """``narrow``'s start, checked against a dimension of ``size`` and made non-negative."""
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    return start + size if start < 0 else start
