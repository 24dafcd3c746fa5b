"""Copies and fills: clone, to(dtype), copy_, fill_, zero_."""
from __future__ import annotations

import numpy as np

from .. import _dtype, _memory_format as _mf
from ..tensor import Tensor
from . import _layout
from ._base import Op, _check_writable, cast, check_number_fits
from ._util import quiet


# ---------------------------------------------------------------------------------------------
# clone and to(dtype)
# ---------------------------------------------------------------------------------------------
class Clone(Op):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, self, memory_format=None):
        # preserve_format: a dense input's strides, else row-major (NumPy's copy would keep
        # an expanded input's order); other formats: their own dense layout
        order = "C" if memory_format is _mf.contiguous_format else "K"  # one copy, not two
        return _layout.in_format(np.array(self, copy=True, order=order), self, memory_format)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ToCopy(Op):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, self, dtype, memory_format=None):
        ctx.self_dtype = self.dtype
        # nan/inf to int: torch casts silently
        return _layout.in_format(quiet(_dtype.astype, self, dtype), self, memory_format)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.self_dtype), None, None


# ---------------------------------------------------------------------------------------------
# copy_ / fill_ / zero_
# ---------------------------------------------------------------------------------------------
def _zeros_like(grad: Tensor) -> Tensor:
    return Tensor._make(np.zeros(grad._data.shape, grad._data.dtype))


class Copy(Op):
    """self.copy_(src): self's old value gets no gradient; src gets grad (summed, cast)"""

    node_name = "torch::autograd::CopyBackwards"
    _inplace = True

    @staticmethod
    def forward(ctx, self, src):
        _check_writable(self)
        if np.shape(src) != self.shape:
            _check_broadcast(self.shape, np.shape(src))
        _dtype.copyto(self, src)
        return self

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), grad


def _check_broadcast(target: tuple, shape: tuple) -> None:
    """``shape`` must broadcast to ``target``: torch first names the first dim (from the last)
    where the two cannot broadcast at all, then refuses a broadcast shape other than
    ``target``."""
    ndim = max(len(target), len(shape))
    for i in range(1, min(len(target), len(shape)) + 1):
        if shape[-i] != target[-i] and shape[-i] != 1 and target[-i] != 1:
            raise RuntimeError(f"The size of tensor a ({target[-i]}) must match the size of "
                               f"tensor b ({shape[-i]}) at non-singleton dimension {ndim - i}")
    broadcast = np.broadcast_shapes(target, shape)
    if tuple(broadcast) != tuple(target):
        raise RuntimeError(f"output with shape {list(target)} doesn't match the broadcast shape "
                           f"{list(broadcast)}")


class Fill(Op):
    """self.fill_(number): no gradient for self's old value"""

    node_name = "FillBackward2"
    _inplace = True
    _overlap_ok = True

    @staticmethod
    def forward(ctx, self, value):
        # torch's one-element fill skips the check for the 16-bit floats
        check_number_fits(value, self.dtype, halves=self.size != 1)
        self[...] = cast(value, self.dtype)  # a negative number into uint8 wraps
        return self

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), None


class FillTensor(Fill):
    """self.fill_(0-dim tensor): the value gets the sum of grad"""
    _operand_overlap = None  # torch reads the 0-d value first

    node_name = "FillBackward3"

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), grad.sum()


class Zero(Fill):
    node_name = "ZeroBackward0"


def copy_(self: Tensor, src, non_blocking: bool = False) -> Tensor:
    """Copies ``src``'s values into this tensor in place (broadcasting and casting); gradient flows
    to ``src``."""
    if src is None or isinstance(src, (list, tuple, str)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    if not isinstance(src, Tensor):
        src = Tensor._make(np.asarray(src, dtype=self._data.dtype))
    return Copy.apply(self, src)


def fill_(self: Tensor, value) -> Tensor:
    """Sets every element to ``value`` in place."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return FillTensor.apply(self, value)
    return Fill.apply(self, value)


def zero_(self: Tensor) -> Tensor:
    """Sets every element to zero in place."""
    return Zero.apply(self, 0)


class FillOutOfPlace(Op):
    """torch.fill(self, number): a new tensor like self holding the number; self gets zeros"""

    node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, self, value):
        result = np.empty_like(self)
        result[...] = value
        return result

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), None


class FillOutOfPlaceTensor(FillOutOfPlace):
    """torch.fill(self, 0-dim tensor): the value gets the sum of grad"""

    node_name = "FillBackward1"

    @staticmethod
    def backward(ctx, grad):
        return _zeros_like(grad), grad.sum()


def fill(input: Tensor, value) -> Tensor:
    """A new tensor of ``input``'s shape, dtype and layout with every element ``value`` (a number
    or a 0-dim tensor, which then receives the gradient's sum)."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        return FillOutOfPlaceTensor.apply(input, value)
    return FillOutOfPlace.apply(input, value)
