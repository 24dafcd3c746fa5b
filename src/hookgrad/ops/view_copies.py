"""torch's ``*_copy`` functions: what a view op gives, as a fresh row-major tensor that shares
no memory with its input (``transpose_copy``, ``view_copy``, ``split_copy``...).

Each copy op is its view op's twin (``copy_twin``): the same checks, the same saved
arguments and the same gradient formula, so double backward goes through the view ops as in
torch; only the output is a copy and the node's name gains ``_copy``
(``TransposeBackward0_copy``). ``narrow_copy`` has a node of its own (``NarrowCopyBackward0``)
and ``detach_copy`` has no derivative (torch's ``NotImplemented`` node).

``out=`` follows torch's generated ``*_copy.out`` kernels: out must have the result's dtype, is
resized as usual and is refused only when it requires grad itself; an input that requires grad
leaves out with a ``NotImplemented`` node whose backward raises. ``split_copy``,
``split_with_sizes_copy`` and ``unbind_copy`` take a list of outs, copied into as ``copy_``
does (broadcasting and casting; unbind's are resized first), and return None.
"""
from __future__ import annotations

import operator
from typing import Optional, Sequence

import numpy as np

from .. import _dtype
from ..autograd import grad_mode
from ..tensor import Tensor
from . import _layout
from ._args import _shape_args, infer_shape
from ._out import exact_dtype_error, resize_out
from ._reduce_util import shown_dim
from ._util import normalize_dim
from .alias import Alias
from .diagonal import DiagonalCopy, diagonal_with
from .join import Split, SplitWithSizes, Unbind, _split, unbind_with
from .pointwise_more import _NoDerivative
from .slicing import Select, Slice, SliceBackward, narrow_start, slice_dim
from .strided import AsStrided, as_strided_with
from .unfold import Unfold, unfold_with
from .views import (Expand, Permute, Squeeze, SqueezeDim, SqueezeDims, T, Transpose, Unsqueeze,
                    View, squeezer, view)


def fresh(array: np.ndarray) -> np.ndarray:
    """A row-major copy of ``array`` with torch's contiguous strides (size-1 and empty dims
    too), never sharing its memory."""
    return _layout.contiguous(np.array(array, order="C", copy=True))


def copy_twin(view_cls: type) -> type:
    """The copying twin of the view op ``view_cls``: its forward and gradient, a fresh output,
    and torch's ``<node>_copy`` name."""
    def forward(ctx, *args, **kwargs):
        result = view_cls.forward(ctx, *args, **kwargs)
        if type(result) is tuple:
            return tuple(fresh(piece) for piece in result)
        return fresh(result)

    return type(view_cls.__name__ + "Copy", (view_cls,), {
        "__doc__": f"{view_cls.__name__}'s result, copied (torch's ``_copy`` variant)",
        "__module__": __name__, "node_name": view_cls.node_name + "_copy", "_view_of": None,
        "_multi_view": False, "forward": staticmethod(forward)})


AliasCopy = copy_twin(Alias)
AsStridedCopy = copy_twin(AsStrided)
ExpandCopy = copy_twin(Expand)
PermuteCopy = copy_twin(Permute)
SelectCopy = copy_twin(Select)
SliceCopy = copy_twin(Slice)
SplitCopy = copy_twin(Split)
SplitWithSizesCopy = copy_twin(SplitWithSizes)
UnbindCopy = copy_twin(Unbind)
_squeeze_copy = squeezer((copy_twin(Squeeze), copy_twin(SqueezeDim), copy_twin(SqueezeDims)))
TCopy = copy_twin(T)
TransposeCopy = copy_twin(Transpose)
UnfoldCopy = copy_twin(Unfold)
UnsqueezeCopy = copy_twin(Unsqueeze)


class ViewCopy(View):
    """grad.reshape(self.shape); unlike ``view``, any layout is accepted (a copy is made)"""

    node_name = "ViewBackward0_copy"
    _view_of = None

    @staticmethod
    def forward(ctx, self, shape):
        shape = infer_shape(shape, self.size)
        ctx.self_shape = self.shape
        return fresh(self.reshape(shape))


class NarrowCopy(Slice):
    """grad written into zeros at ``start:start + length`` of ``dim`` (slice's formula)"""

    node_name = "NarrowCopyBackward0"
    _view_of = None

    @staticmethod
    def forward(ctx, self, dim, start, length, shown_start):
        result = fresh(Slice.forward(ctx, self, dim, start, start + length, 1))
        del ctx._saved_end, ctx._saved_step  # torch's node keeps the length instead
        ctx._saved_start, ctx._saved_length = shown_dim(shown_start), length
        return result

    @staticmethod
    def backward(ctx, grad):
        # slice's formula; its gradient's node shows the bounds used (this node has no end)
        return (SliceBackward.apply(grad, ctx.self_shape, ctx.dim, ctx.start, ctx.end, ctx.step),
                None, None, None, None)


class DetachCopy(_NoDerivative):
    """a copy with no derivative: torch records a node that refuses backward"""

    node_name = "torch::autograd::NotImplemented"
    _op = "detach_copy"

    @staticmethod
    def forward(ctx, self):
        return fresh(self)


class CopyInto(_NoDerivative):
    """``out=`` of a ``*_copy`` function whose input requires grad: torch writes the values
    into out and records its ``NotImplemented`` node on it, whose backward raises."""

    node_name = "torch::autograd::NotImplemented"
    _inplace = True

    @staticmethod
    def forward(ctx, out, input, values, op):
        ctx.op = op
        _dtype.copyto(out, values)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(f"derivative for aten::{ctx.op} is not implemented")


def _write_out(out: Optional[Tensor], result: Tensor, input: Tensor, op: str) -> Tensor:
    """torch's ``*_copy.out``: out refused when it requires grad, of the result's dtype,
    resized (with torch's warning when it held elements), and written; an input in a graph
    leaves out with a node that refuses backward."""
    if out is None:
        return result
    if grad_mode.is_grad_enabled() and out.requires_grad:
        raise RuntimeError(f"aten::{op}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if out._data.dtype != result._data.dtype:
        raise exact_dtype_error(result._data, out)
    resize_out(out, result._data.shape)
    CopyInto.apply(out, input, result._data, op)
    return out


def _write_outs(outs, results: tuple, op: str, out_name: str, input: Tensor = None) -> None:
    """The list ``out=`` of split_copy, split_with_sizes_copy and unbind_copy: one tensor per
    piece, written outside autograd. split's are written as ``copy_`` writes (broadcasting and
    casting); unbind's (``input`` given) refuse autograd as other ``out=`` functions do and
    are resized and of the piece's dtype."""
    if isinstance(outs, Tensor) or not isinstance(outs, (list, tuple)):
        raise TypeError(f"{op}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(outs).__name__}")
    if input is not None and grad_mode.is_grad_enabled() and any(
            isinstance(out, Tensor) and out.requires_grad for out in outs):
        raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if len(outs) != len(results):
        raise RuntimeError(f"{out_name} expected an out= argument of size {len(results)}, got "
                           f"size {len(outs)}")
    with grad_mode.no_grad():
        for out, piece in zip(outs, results):
            if input is not None:
                resize_out(out, piece._data.shape)
                if out._data.dtype != piece._data.dtype:
                    raise exact_dtype_error(piece._data, out)
            out.copy_(piece)


# ---------------------------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------------------------
def alias_copy(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """A copy of ``input`` whose gradient flows back unchanged (torch's ``alias``, copied)."""
    return _write_out(out, AliasCopy.apply(input), input, "alias_copy")


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int],
                    storage_offset: Optional[int] = None, *,
                    out: Optional[Tensor] = None) -> Tensor:
    """``as_strided(input, size, stride, storage_offset)`` copied into a fresh tensor."""
    result = as_strided_with(AsStridedCopy, input, size, stride, storage_offset)
    return _write_out(out, result, input, "as_strided_copy")


def detach_copy(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """A copy of ``input``. As in torch it has no derivative: when ``input`` requires grad
    the result does too, and backward through it raises."""
    return _write_out(out, DetachCopy.apply(input), input, "detach_copy")


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1, *,
                  out: Optional[Tensor] = None) -> Tensor:
    """``diagonal(input, offset, dim1, dim2)`` copied into a fresh tensor."""
    result = diagonal_with(DiagonalCopy, input, offset, dim1, dim2)
    return _write_out(out, result, input, "diagonal_copy")


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False,
                out: Optional[Tensor] = None) -> Tensor:
    """``input.expand(size)`` copied: the repeated elements get memory of their own.
    ``implicit`` is accepted and ignored, as in torch."""
    result = ExpandCopy.apply(input, _shape_args((size,), "expand_copy"))
    return _write_out(out, result, input, "expand_copy")


_NARROW_COPY_DIM = ("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got "
                    "false.  (Could this error message be improved?  If so, please report an "
                    "enhancement request to PyTorch.)")


def narrow_copy(input: Tensor, dim: int, start, length: int, *,
                out: Optional[Tensor] = None) -> Tensor:
    """``length`` elements from ``start`` along ``dim``, as a fresh tensor (torch's checks and
    messages for ``narrow_copy``, which differ from ``narrow``'s on a bad dim or length)."""
    ndim = input._data.ndim
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim, start, length = operator.index(dim), operator.index(start), operator.index(length)
    if dim >= ndim:
        raise RuntimeError(_NARROW_COPY_DIM)
    shown_as, dim = dim, normalize_dim(dim, ndim)
    size = input._data.shape[dim]
    first = narrow_start(start, size)
    if length < 0 or first + length > size:
        raise RuntimeError(f"start ({first}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    if out is not None and grad_mode.is_grad_enabled() and (input.requires_grad
                                                            or out.requires_grad):
        raise RuntimeError("narrow_copy(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    return _write_out(out, NarrowCopy.apply(input, shown_as, first, length, start), input,
                      "narrow_copy")


def permute_copy(input: Tensor, dims: Sequence[int], *, out: Optional[Tensor] = None) -> Tensor:
    """``input.permute(dims)`` copied into a fresh row-major tensor."""
    result = PermuteCopy.apply(input, _shape_args((dims,), "permute_copy"))
    return _write_out(out, result, input, "permute_copy")


def select_copy(input: Tensor, dim: int, index: int, *, out: Optional[Tensor] = None) -> Tensor:
    """``input.select(dim, index)`` copied into a fresh tensor."""
    result = SelectCopy.apply(input, dim, operator.index(index))
    return _write_out(out, result, input, "select_copy")


def slice_copy(input: Tensor, dim: int = 0, start: Optional[int] = None,
               end: Optional[int] = None, step: int = 1, *,
               out: Optional[Tensor] = None) -> Tensor:
    """``input[..., start:end:step]`` along ``dim`` (bounds clamped), as a fresh tensor."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    result = slice_dim(input, dim, start, end, step, SliceCopy, (shown_dim(start), shown_dim(end)))
    return _write_out(out, result, input, "slice_copy")


def split_copy(input: Tensor, split_size: int, dim: int = 0, *, out=None):
    """``split(input, split_size, dim)`` as fresh tensors; with ``out`` (one tensor per piece)
    the pieces are written there and None is returned."""
    if isinstance(split_size, (list, tuple)):
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    pieces = _split(input, split_size, dim, SplitCopy, SplitWithSizesCopy)
    if out is None:
        return pieces
    _write_outs(out, pieces, "split_copy", "split_copy_Tensor_out()")


def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int], dim: int = 0, *,
                          out=None):
    """``split_with_sizes(input, split_sizes, dim)`` as fresh tensors (or written into
    ``out``, returning None)."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes_copy(): argument 'split_sizes' (position 2) must be "
                        f"tuple of ints, not {type(split_sizes).__name__}")
    pieces = _split(input, split_sizes, dim, SplitCopy, SplitWithSizesCopy)
    if out is None:
        return pieces
    _write_outs(out, pieces, "split_with_sizes_copy", "split_with_sizes_copy_out")


def squeeze_copy(input: Tensor, dim=None, *, out: Optional[Tensor] = None) -> Tensor:
    """``squeeze(input, dim)`` copied into a fresh tensor."""
    return _write_out(out, _squeeze_copy(input, dim), input, "squeeze_copy")


def t_copy(input: Tensor, *, out: Optional[Tensor] = None) -> Tensor:
    """``input.t()`` copied into a fresh row-major tensor."""
    return _write_out(out, TCopy.apply(input), input, "t_copy")


def transpose_copy(input: Tensor, dim0: int, dim1: int, *,
                   out: Optional[Tensor] = None) -> Tensor:
    """``input.transpose(dim0, dim1)`` copied into a fresh row-major tensor."""
    return _write_out(out, TransposeCopy.apply(input, dim0, dim1), input, "transpose_copy")


def unbind_copy(input: Tensor, dim: int = 0, *, out=None):
    """``unbind(input, dim)`` as fresh tensors (or written into ``out``, returning None)."""
    pieces = unbind_with(UnbindCopy, input, dim)
    if out is None:
        return pieces
    _write_outs(out, pieces, "unbind_copy", "unbind_copy_int_out", input)


def unfold_copy(input: Tensor, dimension: int, size: int, step: int, *,
                out: Optional[Tensor] = None) -> Tensor:
    """``input.unfold(dimension, size, step)`` copied: each window gets memory of its own."""
    result = unfold_with(UnfoldCopy, input, dimension, size, step)
    return _write_out(out, result, input, "unfold_copy")


def unsqueeze_copy(input: Tensor, dim: int, *, out: Optional[Tensor] = None) -> Tensor:
    """``input.unsqueeze(dim)`` copied into a fresh tensor."""
    result = UnsqueezeCopy.apply(input, operator.index(dim))
    return _write_out(out, result, input, "unsqueeze_copy")


def view_copy(input: Tensor, size=None, *, dtype=None, out: Optional[Tensor] = None) -> Tensor:
    """``input.view(size)`` copied (any layout is accepted, as a copy is made anyway), or
    ``input.view(dtype)`` copied, which has no gradient."""
    if dtype is None and size is not None and not isinstance(size, (tuple, list, Tensor)) \
            and not isinstance(size, (int, np.integer)):
        size, dtype = None, size  # view_copy(x, torch.int32): the dtype overload
    if dtype is not None:
        with grad_mode.no_grad():
            result = Tensor._make(fresh(view(input, dtype)._data))
        return _write_out(out, result, input, "view_copy")
    result = ViewCopy.apply(input, _shape_args((size,), "view_copy"))
    return _write_out(out, result, input, "view_copy")


METHODS = {"narrow_copy": narrow_copy}
