"""Which reshapes can be views, and the strides torch gives them: ``view``'s stride rule
(``view_strides``) and its application to a NumPy reshape."""
from __future__ import annotations

import numpy as np

from . import _layout


def view_array(x: np.ndarray, shape: tuple):
    """``x`` reshaped without a copy, or None when its strides do not allow it."""
    try:
        return x.reshape(shape, copy=False)  # the method: no Python wrapper around it
    except ValueError:
        return None


def _with_view_strides(source: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out`` (a NumPy reshape of ``source``) with the strides torch's ``view`` gives it: the
    two agree wherever a stride addresses memory, not on size-1 dimensions or empty results."""
    if out.size and 1 not in out.shape:
        return out
    strides = tuple(s * out.itemsize for s in view_strides(
        source.shape, _layout.torch_strides(source), out.shape))
    return out if out.strides == strides else _layout.restrided(out, strides)


def view_strides(old_shape: tuple, old_strides: tuple, shape: tuple) -> tuple:
    """torch's strides for a view of ``shape`` over a tensor of ``old_shape`` and (element)
    ``old_strides`` that allows one (its ``computeStride``): the old dimensions are cut into
    chunks that are contiguous among themselves, and each chunk's new dimensions, size-1 ones
    included, step by the running count of elements from the chunk's innermost stride."""
    if not old_shape:
        return (1,) * len(shape)
    if 0 in old_shape:  # any strides would do: the old ones if the shape stays, else row-major
        if tuple(old_shape) == tuple(shape):
            return tuple(old_strides)
        strides, step = [0] * len(shape), 1
        for d in range(len(shape) - 1, -1, -1):
            strides[d] = step
            step *= max(shape[d], 1)
        return tuple(strides)
    strides = [0] * len(shape)
    view_d = len(shape) - 1
    base, old_count, new_count = old_strides[-1], 1, 1
    for d in range(len(old_shape) - 1, -1, -1):
        old_count *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != old_count * base):
            while view_d >= 0 and (new_count < old_count or shape[view_d] == 1):
                strides[view_d] = new_count * base
                new_count *= shape[view_d]
                view_d -= 1
            if d > 0:
                base, old_count, new_count = old_strides[d - 1], 1, 1
    return tuple(strides)
