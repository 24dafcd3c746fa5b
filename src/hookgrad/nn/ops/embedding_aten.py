"""torch's top-level ``embedding_bag`` (weight first, mode as an integer, four results) and
``embedding_renorm_``.

``embedding_bag`` returns ``(output, offset2bag, bag_size, max_indices)`` as torch's CPU kernel
fills them: the bag of each index (empty on the float32 sum path, which does not build it), the
number of non-padding indices per bag (zeros for sum), and per bag and column the row that won
the maximum (max mode) or, for mean, the bag sizes again, for sum zeros. The output and its
gradients come from ``F.embedding_bag``'s code.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

import hookgrad
from ... import _dtype
from ...autograd import grad_mode
from ...tensor import Tensor
from . import embedding_bag as _bag
from .sparse import renorm_rows

__all__ = ["embedding_bag", "embedding_renorm_"]

_MODES = ("sum", "mean", "max")


def embedding_renorm_(weight: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rows of ``weight`` named in ``indices`` whose ``norm_type``-norm exceeds ``max_norm`` are
    scaled to norm ``max_norm`` (by max_norm / (norm + 1e-7)), in place; returns ``weight``."""
    if indices.dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {indices.type()} "
                           f"instead (while checking arguments for embedding_renorm_)")
    if weight.requires_grad and weight.grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    values = indices.numpy().reshape(-1)
    rows = weight.shape[0]
    bad = np.flatnonzero((values < -rows) | (values >= rows))
    if bad.size:
        raise IndexError(f"select(): index {values[bad[0]]} out of range for tensor of size "
                         f"{list(weight.shape)} at dimension 0")
    renorm_rows(weight, values % max(rows, 1), max_norm, norm_type)
    return weight


def _side_outputs(indices: np.ndarray, starts: np.ndarray, weight: Tensor, mode: int,
                  include_last_offset: bool, padding_idx: Optional[int], kind) -> tuple:
    """offset2bag, bag_size and max_indices, as torch's CPU kernel returns them."""
    bags = max(starts.size - 1, 0) if include_last_offset else starts.size
    bag = np.searchsorted(starts[:bags], np.arange(indices.size), side="right") - 1
    bag = np.minimum(np.maximum(bag, 0), max(bags - 1, 0))
    keep = np.ones(indices.size, bool) if padding_idx is None else indices != padding_idx
    fast_sum = mode == 0 and weight.dtype == _dtype.float32 and padding_idx is None
    offset2bag = np.zeros(0, kind) if fast_sum else bag.astype(kind)
    if mode == 0:
        zeros = np.zeros(bags, kind)
        return offset2bag, zeros, zeros.copy()
    sizes = np.bincount(bag[keep], minlength=bags).astype(kind)
    if mode == 1:
        return offset2bag, sizes, sizes.copy()
    table = weight.detach().numpy()
    winners = np.zeros((bags, table.shape[1]), kind)
    for b in range(bags):
        members = indices[(bag == b) & keep]
        if members.size:
            winners[b] = members[np.argmax(table[members], axis=0)]
    return offset2bag, sizes, winners


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None,
                  include_last_offset: bool = False, padding_idx: Optional[int] = None) -> tuple:
    """torch's ``embedding_bag(weight, indices, offsets, ...)`` with ``mode`` 0 sum, 1 mean,
    2 max: returns ``(output, offset2bag, bag_size, max_indices)`` (see the module note)."""
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    if indices.ndim != 1:
        length = indices.shape[0] if indices.ndim else 1
        last = int(offsets[-1]) if offsets.numel() else 0
        if last > length:  # torch reads the first dim as the input's length
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} "
                               f"but got offsets[-1] of {last}")
        raise RuntimeError(f"embedding_bag: input has to be a 1-D tensor, got {indices.ndim}-D")
    num_weights = weight.shape[0]
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, "
                               f"-{num_weights} through {num_weights - 1}, but got "
                               f"{padding_idx}")
        padding_idx %= num_weights
    _bag._check_indices(indices, offsets, num_weights,
                        mode != 2 and weight.dtype == _dtype.float32)
    name = _MODES[mode]
    starts = offsets.numpy().astype(np.int64)
    output = _bag._reduce_bags(indices, weight, starts, name, per_sample_weights,
                               include_last_offset, padding_idx, scale_grad_by_freq)
    both_int32 = indices.dtype == _dtype.int32 and offsets.dtype == _dtype.int32
    kind = np.int32 if both_int32 else np.int64
    side = _side_outputs(indices.numpy().astype(np.int64), starts, weight, mode,
                         include_last_offset, padding_idx, kind)
    return (output,) + tuple(hookgrad.tensor(array) for array in side)
