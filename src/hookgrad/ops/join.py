"""Joining and splitting along a dim: cat, stack, hstack, vstack; split, chunk, unbind.

split's outputs are several views of one input. They are marked so that an in-place change to
one of them (or to a view of one) is refused with torch's error: torch cannot rebuild such a
view's history after its base changed.
"""
from __future__ import annotations

import operator
from itertools import pairwise

import numpy as np

from .. import _dtype, _memory_format as _mf
from ..autograd import grad_mode
from ..autograd.views import mark_multi_view
from ..tensor import Tensor
from ._out import resize_out, write_out
from . import _layout
from ._base import Op
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .views import Slice

_SKIPPED = (0,)  # torch's legacy rule: 1-D empty tensors are left out of cat


def _promoted(tensors) -> np.dtype:
    for position, tensor in enumerate(tensors):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"expected Tensor as element {position} in argument 0, but got "
                            f"{type(tensor).__name__}")
    dtype = tensors[0]._data.dtype
    for tensor in tensors[1:]:
        if tensor._data.dtype != dtype:
            dtype = _dtype.promote_types(_dtype.from_numpy_dtype(dtype), tensor.dtype).numpy
    return dtype


# ---------------------------------------------------------------------------------------------
# cat / stack
# ---------------------------------------------------------------------------------------------
def _joined_layout(joined: np.ndarray, tensors, new_last_dim: bool = False) -> np.ndarray:
    """cat's result laid out as torch's: channels-last when every input (a skipped empty one
    too) suggests that format, else row-major (NumPy would follow the inputs' own order).
    ``new_last_dim``: the inputs are read as torch's ``unsqueeze(-1)`` of each (stride 1)."""
    if new_last_dim:
        suggests = (_mf.suggested(t.shape + (1,), tuple(s // t.itemsize for s in t.strides)
                                  + (1,)) is not _mf.contiguous_format for t in tensors)
    else:
        suggests = (_layout.suggests_channels_last(t) for t in tensors)
    if all(suggests):
        return _layout.channels_last(joined)
    return np.require(joined, requirements="C")


class Cat(Op):
    """gradient: the slice of grad that each input filled"""

    node_name = "CatBackward0"
    _tensor_list = True

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        for position, t in enumerate(tensors):
            if t.ndim == 0:
                raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be "
                                   "concatenated")
        ctx._saved_dim = shown_dim(dim)  # as given, a negative one read back unsigned
        kept = [(i, t) for i, t in enumerate(tensors) if t.shape != _SKIPPED]
        ctx.shapes = [t.shape for t in tensors]
        if not kept:
            ctx.dim = 0
            return np.zeros(_SKIPPED, dtype)
        first = kept[0][1]
        dim = normalize_dim(dim, first.ndim)
        ctx.dim = dim
        for position, t in kept[1:]:
            if t.ndim != first.ndim:
                raise RuntimeError(f"Tensors must have same number of dimensions: got "
                                   f"{first.ndim} and {t.ndim}")
            for d in range(first.ndim):
                if d != dim and t.shape[d] != first.shape[d]:
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                       f"Expected size {first.shape[d]} but got size "
                                       f"{t.shape[d]} for tensor number {position} in the list.")
        joined = np.concatenate([t for _, t in kept], axis=dim, dtype=dtype)
        return _joined_layout(joined, tensors)

    @staticmethod
    def backward(ctx, grad):
        grads = []
        offset = 0
        for shape in ctx.shapes:
            if shape == _SKIPPED:
                grads.append(Tensor._make(np.zeros(_SKIPPED, grad._data.dtype)))
                continue
            size = shape[ctx.dim]
            grads.append(Slice.apply(grad, ctx.dim, offset, offset + size, 1))
            offset += size
        return (None, None, *grads)


def cat(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Joins tensors along an existing dimension ``dim``."""
    tensors = tuple(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    result = Cat.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _cat_out(out, result, "cat")


def concatenate(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    """Alias of ``cat``."""
    return cat(tensors, dim if axis is None else axis, out=out)


concat = cat


class Stack(Op):
    """gradient: grad unbound along the new dim"""

    node_name = "StackBackward0"
    _tensor_list = True

    @staticmethod
    def forward(ctx, dim, dtype, *tensors):
        shape = tensors[0].shape
        for i, t in enumerate(tensors):
            if t.shape != shape:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shape)} at entry 0 and {list(t.shape)} at entry {i}")
        ctx._saved_dim = shown_dim(dim)
        ctx.dim = dim = normalize_dim(dim, len(shape) + 1)
        # torch's stack is cat along ``dim`` seen with that dim split in two (a new last dim:
        # cat of the inputs unsqueezed there), so its result takes cat's layout
        if dim == len(shape):
            return _joined_layout(np.stack(tensors, axis=dim, dtype=dtype), tensors, True)
        joined = _joined_layout(np.concatenate(tensors, axis=dim, dtype=dtype), tensors)
        return joined.reshape(shape[:dim] + (len(tensors),) + shape[dim:])  # a view

    @staticmethod
    def backward(ctx, grad):
        return (None, None, *unbind(grad, ctx.dim))


def stack(tensors, dim: int = 0, *, out=None) -> Tensor:
    """Joins tensors of equal shape along a new dimension ``dim``."""
    tensors = tuple(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    result = Stack.apply(operator.index(dim), _promoted(tensors), *tensors)
    return _cat_out(out, result, "stack")


def _cat_out(out, result: Tensor, op_name: str) -> Tensor:
    """``out=`` of cat and stack: torch's cat refuses an out its inputs' dtype cannot be cast
    to with its own TypeError (stack resizes out before it hands it to cat)."""
    if out is None or (grad_mode.is_grad_enabled() and (result.requires_grad or
                                                        out.requires_grad)):
        return write_out(out, result, op_name)  # its autograd refusal
    if op_name == "stack":
        resize_out(out, result._data.shape)
    if not _dtype.can_cast(result.dtype, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_dtype.scalar_type_name(out.dtype)}")
    return write_out(out, result, op_name)


def _atleast(tensor: Tensor, ndim: int) -> Tensor:
    if tensor._data.ndim >= ndim:
        return tensor
    if tensor._data.ndim == 0:
        return tensor.reshape((1,) * ndim)
    return tensor.unsqueeze(0)


def hstack(tensors, *, out=None) -> Tensor:
    """Joins along dimension 1 (dimension 0 for 1-d inputs)."""
    tensors = [_atleast(t, 1) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    """Joins along dimension 0 after making inputs at least 2-d."""
    return cat([_atleast(t, 2) for t in tensors], 0, out=out)


# ---------------------------------------------------------------------------------------------
# split / chunk / unbind
# ---------------------------------------------------------------------------------------------
class Split(Op):
    """split / chunk / unbind: several views; modifying one in place is refused (as torch)."""

    node_name = "SplitBackward0"
    _view_of = 0
    _multi_view = True

    @staticmethod
    def forward(ctx, self, sizes, dim, squeeze=False, shown=None):
        ctx.dim, ctx.squeeze = dim, squeeze
        if shown is not None:  # torch's arguments as given: {"dim": ..., "split_size": ...}
            for name, value in shown.items():
                setattr(ctx, "_saved_" + name, value)
        offsets = np.cumsum((0,) + tuple(sizes))
        lead = (slice(None),) * dim
        if squeeze:
            return tuple(self[lead + (int(o), Ellipsis)] for o in offsets[:-1])
        return tuple(self[lead + (slice(int(a), int(b)),)] for a, b in pairwise(offsets))

    @staticmethod
    def backward(ctx, *grads):
        if ctx.squeeze:
            return stack(grads, ctx.dim), None, None, None
        return cat(grads, ctx.dim), None, None, None


class SplitWithSizes(Split):
    node_name = "SplitWithSizesBackward0"


class Unbind(Split):
    node_name = "UnbindBackward0"


class UnsafeSplit(Split):
    """unsafe_split / unsafe_chunk: the pieces share the input's memory but are not tracked as
    its views (each has its own version counter, in-place on one is allowed), as in torch."""

    node_name = "UnsafeSplitBackward0"
    _view_of = None
    _multi_view = False


class UnsafeSplitWithSizes(UnsafeSplit):
    node_name = "UnsafeSplitWithSizesBackward0"


def _pieces(cls, input: Tensor, sizes: tuple, dim: int, shown: dict) -> tuple:
    outputs = cls.apply(input, sizes, dim, False, shown)
    return mark_multi_view(cls, outputs, input.requires_grad) if cls._multi_view else outputs


def _split(input: Tensor, split_size_or_sections, dim: int, by_size, by_sizes) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    given, dim = dim, normalize_dim(dim, input._data.ndim)
    size = input._data.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = tuple(operator.index(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got split_sizes="
                               f"{list(sizes)}")
        shown = {"dim": shown_dim(given), "self_sym_sizes": input._data.shape,
                 "split_sizes": sizes}
        return _pieces(by_sizes, input, sizes, dim, shown)
    step = operator.index(split_size_or_sections)
    if step < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
    if step == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {size}")
    sizes = tuple(min(step, size - start) for start in range(0, size, step)) if size else (0,)
    shown = {"dim": shown_dim(given), "self_sym_sizes": input._data.shape, "split_size": step}
    return _pieces(by_size, input, sizes, dim, shown)


def split(input: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim``: equal pieces of ``split_size`` or the listed
    sizes."""
    return _split(input, split_size_or_sections, dim, Split, SplitWithSizes)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """Views of consecutive pieces along ``dim`` of the listed sizes."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be tuple of ints, "
                        f"not {type(split_sizes).__name__}")
    return _split(input, split_sizes, dim, Split, SplitWithSizes)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple:
    """``split`` into equal pieces that share memory with ``input`` without being its views
    (torch's "unsafe": nothing stops in-place changes to them)."""
    if isinstance(split_size, (list, tuple)):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return _split(input, split_size, dim, UnsafeSplit, UnsafeSplitWithSizes)


def unsafe_split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    """``unsafe_split`` with the listed sizes."""
    return _split(input, list(split_sizes), dim, UnsafeSplitWithSizes, UnsafeSplitWithSizes)


def _chunked(input: Tensor, chunks: int, dim, splitter, by_sizes) -> tuple:
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    chunks = operator.index(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input._data.shape[normalize_dim(dim, input._data.ndim)]
    if size == 0:
        return by_sizes(input, [0] * chunks, dim)
    return splitter(input, -(-size // chunks), dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """torch's rule: pieces of ceil(size / chunks), so there may be fewer than ``chunks``."""
    return _chunked(input, chunks, dim, split, split)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """``chunk`` whose pieces share memory with ``input`` without being its views."""
    return _chunked(input, chunks, dim, unsafe_split, unsafe_split_with_sizes)


def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The views along ``dim``, one per index, with that dimension removed."""
    return unbind_with(Unbind, input, dim)


def unbind_with(cls, input: Tensor, dim: int = 0) -> tuple:
    """``unbind`` through ``cls``: the views, or ``unbind_copy``'s fresh tensors."""
    if input._data.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    given, dim = dim, normalize_dim(dim, input._data.ndim)
    outputs = cls.apply(input, (1,) * input._data.shape[dim], dim, True,
                        {"dim": shown_dim(given)})
    return mark_multi_view(cls, outputs, input.requires_grad) if cls._multi_view else outputs
