"""The gradients of relu, threshold, hardtanh, the shrinks and leaky_relu as one node each that
masks or scales ``grad`` by a pattern read from a saved tensor (torch's ``threshold_backward``
and its kin), with the node names torch gives them."""
from __future__ import annotations

import numpy as np

from .._parallel import parallel_for
from ..tensor import Tensor
from . import _layout
from ._base import Op, work_dtype


class PatternBackward(Op):
    """``grad`` masked or scaled by a pattern read from one saved tensor: the gradient of relu,
    threshold, hardtanh, the shrinks and leaky_relu, as torch's ``threshold_backward(grad,
    self, threshold)`` and its kin (subclasses carry torch's node names).

    Recorded as one node that saves the tensor, so under ``create_graph`` the gradient requires
    grad when either the incoming gradient or the saved tensor does, its own gradient is the
    same pattern applied again, and its derivative with respect to the saved tensor is a fresh
    zero that requires no grad (torch's ``zeros_like(grad)``): it reaches, say, the base of a
    view that relu_ rewrote without carrying the incoming gradient's history there.
    ``pattern(grad, saved)`` works on arrays and returns a new one."""

    saved_names = ("self",)

    @staticmethod
    def forward(ctx, grad, saved, pattern):
        ctx.pattern = pattern
        ctx.save_for_backward(saved)
        return pattern(grad, saved)

    @staticmethod
    def backward(ctx, grad):
        (saved,) = ctx.saved_tensors
        again = ctx._forward_cls.apply(grad, saved, ctx.pattern)
        return again, Tensor._make(np.zeros(saved.shape, saved._data.dtype)), None


# unsigned words as wide as each float: a float is cleared by ANDing its bits with a word
WORDS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def clear_where(values: np.ndarray, mask: np.ndarray) -> None:
    """``values[mask] = 0`` in place, for float arrays (NumPy's, or ml_dtypes' bfloat16) as
    bits: the mask becomes a word of all zeros (clear) or all ones (keep), ANDed into the
    floats' bits. NumPy's masked copies (``np.where``, ``copyto(where=)``) branch per element,
    and an activation's mask is as good as random: they ran about 8x slower. Writes +0 where
    a masked copy would, over inf and NaN too."""
    words = WORDS.get(values.itemsize) if values.dtype.kind in "fV" else None
    if words is None or mask.shape != values.shape:
        np.copyto(values, 0, where=mask)
        return
    keep = mask.astype(words)
    keep -= 1  # 1 (clear) -> 0, 0 (keep) -> all ones
    raw = values.view(words)
    np.bitwise_and(raw, keep, out=raw)


def in_float32(x: np.ndarray) -> np.ndarray:
    """``x`` as torch's threshold and hardtanh gradients compare it: float16 and bfloat16 in
    float32 (its opmath), other dtypes as they are."""
    dtype = work_dtype(x.dtype)
    return x if dtype == x.dtype else x.astype(dtype)


# elements per block of a mask made a block at a time: its words stay a quarter MiB, not an
# activation's size on top of the step's peak
BLOCK = 1 << 16
# blocks one piece of ``parallel_for`` takes at least: each block is a few NumPy calls, so a
# piece of fewer would hand the GIL over more than it computes
_PARALLEL_BLOCKS = 4


def in_blocks(size: int, body) -> None:
    """``body(block)`` for each slice of ``BLOCK`` elements of ``range(size)``, the blocks
    (which must touch disjoint memory) taken a few at a time by the intra-op threads."""
    def part(first: int, last: int) -> None:
        for start in range(first * BLOCK, min(last * BLOCK, size), BLOCK):
            body(slice(start, start + BLOCK))

    parallel_for(-(-size // BLOCK), _PARALLEL_BLOCKS, part)


def masked_where(condition):
    """A ``PatternBackward`` pattern: ``grad`` with zeros where ``condition(saved)`` holds
    (``condition`` works elementwise). For float arrays in C order, a copy of grad cleared
    as bits (``clear_where``) a block at a time, the blocks shared over the intra-op threads;
    otherwise a masked copy."""
    def pattern(grad: np.ndarray, saved: np.ndarray) -> np.ndarray:
        if (grad.shape == saved.shape and grad.dtype.kind in "fV" and grad.itemsize in WORDS
                and grad.flags.c_contiguous and saved.flags.c_contiguous):
            result = np.empty(grad.shape, grad.dtype)
            flat_grad, flat_saved = grad.reshape(-1), saved.reshape(-1)
            flat_result = result.reshape(-1)

            def clear_block(block: slice) -> None:
                np.copyto(flat_result[block], flat_grad[block])
                with np.errstate(invalid="ignore"):  # bfloat16 warns comparing NaN
                    mask = condition(flat_saved[block])
                clear_where(flat_result[block], mask)

            in_blocks(flat_grad.size, clear_block)
        else:
            with np.errstate(invalid="ignore"):
                mask = condition(saved)
            result = np.where(mask, np.zeros((), grad.dtype), grad)
        # laid out as torch's elementwise ``*_backward(grad, self)`` lays its result out
        return _layout.pointwise(result, grad, saved)
    return pattern


class ThresholdBackwardBackward(PatternBackward):
    node_name = "ThresholdBackwardBackward0"


class HardtanhBackwardBackward(PatternBackward):
    node_name = "HardtanhBackwardBackward0"


class HardshrinkBackwardBackward(PatternBackward):
    node_name = "HardshrinkBackwardBackward0"


class SoftshrinkBackwardBackward(PatternBackward):
    node_name = "SoftshrinkBackwardBackward0"


class LeakyReluBackwardBackward(PatternBackward):
    node_name = "LeakyReluBackwardBackward0"
