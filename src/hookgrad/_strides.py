"""Array layout as torch reports it: strides in elements, empty tensors' strides, the array that
owns a view's memory, and whether a layout reaches an element twice. Below ``tensor.py``, which
re-exports them."""
from __future__ import annotations

import numpy as np


def empty_strides(shape: tuple) -> tuple:
    """torch's row-major strides for a shape that holds no element: each 0 counts as 1."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def with_empty_strides(array: np.ndarray) -> np.ndarray:
    """An empty ``array`` as a view that carries torch's row-major strides, which NumPy keeps
    through later views (a permuted empty tensor then reports permuted strides, as in torch)."""
    if array.size or not array.ndim or any(array.strides) or root_array(array).size:
        return array  # not empty, or laid out on purpose (a memory format's strides, a view)
    steps = tuple(s * array.itemsize for s in empty_strides(array.shape))
    return np.lib.stride_tricks.as_strided(array, array.shape, steps)


def torch_strides(array: np.ndarray) -> tuple:
    """``array``'s strides in elements, as torch reports them."""
    itemsize = array.itemsize
    strides = tuple(abs(s) // itemsize for s in array.strides)
    if array.size == 0 and array.ndim and not any(strides) and not root_array(array).size:
        # NumPy zeroes the strides of a new empty array; torch gives it row-major ones. An
        # empty view of memory that holds elements (an expanded tensor sliced to nothing)
        # has its zero strides from its base: those are torch's too
        return empty_strides(array.shape)
    return strides


def keeping_strides(array: np.ndarray, strides: tuple) -> np.ndarray:
    """An empty array of ``array``'s shape and dtype whose ``strides`` (in elements, zeros
    included) are reported as they are: a view of a one-element buffer, which ``stride`` does
    not take for a new array (torch keeps the strides of an empty NumPy array it is given)."""
    buffer = np.empty(1, array.dtype)
    return np.lib.stride_tricks.as_strided(buffer, array.shape,
                                           tuple(s * array.itemsize for s in strides))


def root_array(array: np.ndarray) -> np.ndarray:
    """The array that owns the memory ``array`` views (its storage)."""
    while True:
        base = array.base
        if not isinstance(base, np.ndarray):
            # NumPy's as_strided hangs its view on a stand-in object that keeps the array
            base = getattr(base, "base", None)
            if not isinstance(base, np.ndarray):
                return array
        array = base


def has_internal_overlap(array: np.ndarray) -> bool:
    """Whether some element of ``array`` is reachable by two index tuples (an in-place write
    through it would be ambiguous). Exact: stride 0 on a dim of size > 1 overlaps; otherwise
    dims sorted by stride that each step past everything the smaller ones span cannot
    overlap; only a strided layout that passes neither test is resolved by its offsets."""
    if array.size < 2:
        return False
    dims = sorted((abs(stride), size) for size, stride in zip(array.shape, array.strides)
                  if size > 1)
    span = 0
    for stride, size in dims:
        if stride == 0:
            return True
        if stride <= span:
            break
        span += stride * (size - 1)
    else:
        return False
    offsets = np.zeros((), np.int64)
    for stride, size in dims:
        offsets = (offsets[..., None] + np.arange(size, dtype=np.int64) * stride).ravel()
    return np.unique(offsets).size != offsets.size


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                    "tensor refer to a single memory location. Please clone() the tensor before "
                    "performing the operation.")


def _dense(array: np.ndarray) -> bool:
    """torch's is_non_overlapping_and_dense: the elements fill one block, in some dim order."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return True
    expected = array.itemsize
    for stride, size in sorted((st, n) for n, st in zip(array.shape, array.strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def check_overlap(written: np.ndarray, read, full_ok: bool = True) -> None:
    """torch refuses to write ``written`` while reading ``read`` when the two partly share
    memory (``x[1:].add_(x[:-1])``, ``x.copy_(x.t())``). The same elements in the same layout
    (``x.add_(x)``) are fine unless ``full_ok`` is False (the index ops, which refuse any
    sharing); a layout too irregular to tell (not dense) is let through, as torch does."""
    if not isinstance(read, np.ndarray) or not written.size or not read.size:
        return
    if read is not written:
        if written.base is None and read.base is None:  # two owners never share memory
            return
        if not np.may_share_memory(written, read) or not (_dense(written) and _dense(read)):
            return
        start = written.__array_interface__["data"][0]
        read_start = read.__array_interface__["data"][0]
        end, read_end = start + written.nbytes, read_start + read.nbytes
        if not (start < read_end and read_start < end):
            return
        full = start == read_start and end == read_end and written.strides == read.strides
        if full and full_ok:
            return
    elif full_ok:
        return
    raise RuntimeError(_PARTIAL_OVERLAP)
