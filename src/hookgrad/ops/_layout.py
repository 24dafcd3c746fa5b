"""Memory layouts of results, as torch lays them out (``stride()``, ``is_contiguous()`` and so
which ``view`` calls are legal).

torch has three rules and every op follows one of them:

* ``contiguous``: most ops that are not elementwise (scans, softmax, scatter, sort of a tensor that
  is not dense) allocate a plain row-major result.
* ``preserve``: ``clone``, casts, ``*_like`` factories and sort allocate "like the input": the same
  strides when the input is dense and non-overlapping (a transposed tensor stays transposed), else
  contiguous (an expanded or sliced input gives a row-major result).
* ``pointwise``: elementwise ops (torch's TensorIterator) order the result's dimensions by the
  operands' strides, the first operand that tells two dimensions apart deciding, broadcast
  (stride 0) dimensions telling nothing. NumPy's ``order="K"`` is close but differs where operands
  disagree (NumPy falls back to row-major, torch follows the first) and on expanded inputs.

Each helper takes NumPy's answer and copies it only when its layout is not torch's, so the
common case (contiguous operands) costs one flag test.
"""
from __future__ import annotations

import numpy as np

from .. import _memory_format as _mf


def contiguous(result: np.ndarray) -> np.ndarray:
    """``result`` row-major, with the strides torch gives size-1 dimensions (NumPy keeps the
    source's there, e.g. after a keepdim reduction of a transposed input)."""
    if not result.flags.c_contiguous:
        return np.ascontiguousarray(result)
    # a row-major array's strides can differ from torch's only on size-1 dimensions (and on
    # every dimension of an empty array, where NumPy may give zeros)
    if result.ndim > 1 and (1 in result.shape or result.size == 0) \
            and result.strides != _row_major_strides(result):
        return result.reshape(-1).reshape(result.shape)  # a view with canonical strides
    return result


def _row_major_strides(array: np.ndarray) -> tuple:
    strides, step = [], array.itemsize
    for size in reversed(array.shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def is_dense(array: np.ndarray) -> bool:
    """Non-overlapping and dense: the elements fill a block of memory exactly, in some order of
    the dimensions (torch's ``is_non_overlapping_and_dense``)."""
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return True
    step = array.itemsize
    for stride, size in sorted((abs(s), n) for s, n in zip(array.strides, array.shape)
                               if n != 1):
        if stride != step:
            return False
        step *= size
    return True


def preserve(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``result`` laid out as torch's ``empty_like(source)`` (memory_format=preserve_format):
    ``source``'s strides when it is dense; else dense strides in the order of ``source``'s
    (torch's ``infer_dense_strides``: a transposed slice stays transposed, an expanded dimension
    keeps its place)."""
    if _row_major(source):
        return contiguous(result)
    if not is_dense(source):
        order = iterator_order(result.shape, [source])
        return contiguous(result) if order is None else _in_order(result, order)
    scale = result.itemsize / source.itemsize
    return _strided(result, tuple(int(abs(s) * scale) for s in source.strides))


def pointwise(result: np.ndarray, *operands) -> np.ndarray:
    """``result`` laid out as torch's TensorIterator lays out an elementwise result of
    ``operands`` (arrays, or numbers, in torch's argument order)."""
    shape = result.shape
    if len(shape) < 2:  # a 0-d or 1-d result has one layout: row-major
        return result if result.flags.c_contiguous else np.ascontiguousarray(result)
    for operand in operands:  # the most common case: row-major operands of the result's shape
        if type(operand) is not np.ndarray or operand.shape != shape \
                or not operand.flags.c_contiguous:
            break
    else:
        return contiguous(result)
    # torch's shortcut (row-major operands, row-major result) holds when every operand has
    # the result's shape; when broadcasting, a size-1 dimension's stride is ranked too
    same = all(getattr(operand, "shape", ()) == result.shape for operand in operands)
    for operand in operands:
        if isinstance(operand, np.ndarray) and not (
                operand.flags.c_contiguous if same else _row_major(operand)):
            break
    else:  # row-major operands (the common case) give a row-major result
        return contiguous(result)
    arrays = [a for a in operands if isinstance(a, np.ndarray)]
    first = arrays[0]
    if len(arrays) == len(operands) and all(a.shape == result.shape for a in arrays) and all(
            a.strides == first.strides for a in arrays) and is_dense(first):
        # operands of one shape and one dense layout: the result takes their strides
        scale = result.itemsize / first.itemsize
        return _strided(result, tuple(int(abs(s) * scale) for s in first.strides))
    order = iterator_order(result.shape, arrays)
    return contiguous(result) if order is None else _in_order(result, order)


def _row_major(operand: np.ndarray) -> bool:
    """Row-major including its size-1 dimensions' strides (NumPy's flag ignores those, and
    torch ranks them when operands broadcast: a permuted ``(4, 1, 1, 1)`` minus a
    ``(1, 2, 1, 4)`` is not row-major in torch)."""
    return operand.flags.c_contiguous and (
        (1 not in operand.shape and operand.size != 0)
        or operand.strides == _row_major_strides(operand))


def advanced_index(result: np.ndarray, source: np.ndarray, key: tuple) -> np.ndarray:
    """``result = source[key]`` (``key``: full slices and index arrays) laid out as torch's
    advanced indexing lays it out: an elementwise pass over ``source`` with the indexed
    dimensions replaced by the indices' (stride 0 in ``source``), so the kept dimensions keep
    ``source``'s memory order (``x.t()[:, [0, 2]]`` stays transposed) and the indexed ones take
    the index tensors' order. Indices that are not next to each other go first, in torch as in
    NumPy."""
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    if all(_row_major(a) for a in (source, *arrays)):
        return contiguous(result)
    positions = [i for i, k in enumerate(key) if isinstance(k, np.ndarray)]
    index_shape = np.broadcast_shapes(*(a.shape for a in arrays))
    kept = [d for d in range(source.ndim) if d not in positions]
    if positions == list(range(positions[0], positions[-1] + 1)):
        before = [d for d in kept if d < positions[0]]
        after = [d for d in kept if d > positions[-1]]
    else:
        before, after = [], kept
    outer, inner = len(before), len(after)
    operands = [_Strides(result.shape, [source.strides[d] for d in before]
                         + [0] * len(index_shape) + [source.strides[d] for d in after])]
    # each index tensor is broadcast, then reshaped to the result's rank: its padding
    # dimensions get row-major strides (they matter where the result's size is 1 too)
    padded = (1,) * outer + index_shape + (1,) * inner
    padding = _row_major_strides(np.empty(padded, np.int8))
    for array in arrays:
        spread = np.broadcast_to(array, index_shape).strides
        operands.append(_Strides(padded, [s * array.itemsize for s in padding[:outer]]
                                 + list(spread)
                                 + [s * array.itemsize for s in padding[outer + len(spread):]]))
    order = iterator_order(result.shape, operands)
    return contiguous(result) if order is None else _in_order(result, order)


class _Strides:
    """Shape and byte strides of an operand that exists only to be ranked."""

    def __init__(self, shape: tuple, strides: list):
        self.shape, self.strides, self.ndim = tuple(shape), tuple(strides), len(shape)


def iterator_order(shape: tuple, arrays: list):
    """The order (slowest dimension first) TensorIterator gives its output, or None for
    row-major."""
    ndim = len(shape)
    if ndim < 2:
        return None
    strides = []
    for array in arrays:  # broadcast dimensions say nothing: stride 0
        offset = ndim - array.ndim
        strides.append([0] * offset + [0 if n == 1 and shape[offset + i] != 1 else abs(s)
                                       for i, (n, s) in enumerate(zip(array.shape,
                                                                      array.strides))])
    fastest_first = list(range(ndim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):  # insertion sort that stops at the first "keep"
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(fastest_first[d0], fastest_first[d1])
            if comparison > 0:
                fastest_first[d0], fastest_first[d1] = fastest_first[d1], fastest_first[d0]
                d1 = d0
            elif comparison < 0:
                break
    order = fastest_first[::-1]
    return None if order == list(range(ndim)) else order


def _in_order(result: np.ndarray, order: list) -> np.ndarray:
    """``result``'s values in memory laid out with dimension ``order[0]`` slowest."""
    strides = [0] * result.ndim
    step = result.itemsize
    for d in reversed(order):
        strides[d] = step
        step *= result.shape[d]
    return _strided(result, tuple(strides))


def _strided(result: np.ndarray, strides: tuple) -> np.ndarray:
    """``result``'s values in a fresh dense block with these byte ``strides``."""
    if result.strides == strides:
        return result
    if result.size == 0:
        return restrided(result, strides)
    out = _empty_strided(result.shape, strides, result.dtype)
    out[...] = result
    return out


def _empty_strided(shape: tuple, strides: tuple, dtype: np.dtype) -> np.ndarray:
    """A fresh dense array with these byte ``strides`` (a permutation of row-major ones, up to
    size-1 dimensions): a transposed ``np.empty``, so it owns its memory as any result does."""
    order = sorted(range(len(shape)), key=lambda d: (-strides[d], d))
    out = np.empty([shape[d] for d in order], dtype).transpose(np.argsort(order))
    return out if out.strides == tuple(strides) else restrided(out, tuple(strides))


def empty_like(source: np.ndarray, dtype=None) -> np.ndarray:
    """An uninitialised array shaped as ``source``, laid out as torch's ``empty_like``
    (``source``'s strides when it is dense, else dense ones in ``source``'s order)."""
    dtype = source.dtype if dtype is None else np.dtype(dtype)
    if _row_major(source):
        return contiguous(np.empty(source.shape, dtype))
    if not is_dense(source):
        order = iterator_order(source.shape, [source])
        out = np.empty(source.shape, dtype)
        return out if order is None else _in_order(out, order)
    strides = tuple(abs(s) // source.itemsize * dtype.itemsize for s in source.strides)
    return _empty_strided(source.shape, strides, dtype)


def restrided(view: np.ndarray, strides: tuple) -> np.ndarray:
    """``view`` with other byte ``strides`` on the same memory (for size-1 dimensions, whose
    stride NumPy and torch choose differently), still a view of the array that owns it."""
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    offset = view.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        result = np.ndarray(view.shape, view.dtype, buffer=root, offset=offset, strides=strides)
    except (TypeError, ValueError, BufferError):  # an owner without a plain buffer
        return view
    if not view.flags.writeable:
        result.flags.writeable = False
    return result


def suggested(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``result`` laid out as torch's ops that allocate in the input's suggested memory format
    (pooling, interpolation, padding, batch norm): channels-last when ``source``'s strides read
    as channels-last (:func:`suggests_channels_last`), else row-major."""
    if suggests_channels_last(source):
        return channels_last(result)
    return contiguous(result)


def is_channels_last(array: np.ndarray) -> bool:
    """A 4-d or 5-d array laid out channels-last (and not also row-major)."""
    if array.ndim not in (4, 5) or array.flags.c_contiguous:
        return False
    step = array.itemsize
    for d in [1, *range(array.ndim - 1, 1, -1), 0]:  # channels fastest, then W, H (, D), N
        if array.shape[d] != 1 and array.strides[d] != step:
            return False
        step *= array.shape[d]
    return True


def in_format(result: np.ndarray, source: np.ndarray, fmt) -> np.ndarray:
    """``result`` laid out as torch lays out a copy of ``source`` made with ``memory_format=fmt``:
    ``preserve_format`` (or None) keeps :func:`preserve`'s rule, ``contiguous_format`` is
    row-major, and a channels-last format gives torch's dense channels-last strides."""
    if fmt is None or fmt is _mf.preserve_format:
        return preserve(result, source)
    _mf.check_rank(result.ndim, fmt)
    if fmt is _mf.contiguous_format:
        return contiguous(result)
    strides = tuple(s * result.itemsize for s in _mf.channels_last_strides(result.shape))
    if result.strides == strides:
        return result
    out = _in_order(np.empty_like(result, order="C"), _mf.memory_order(result.ndim)) \
        if result.size else np.empty(result.shape, result.dtype)
    if out.strides != strides:  # size-0/size-1 dims: NumPy picks other strides than torch
        out = restrided(out, strides)
    if result.size:
        out[...] = result
    return out


def empty_in_format(shape: tuple, dtype: np.dtype, fmt) -> np.ndarray:
    """A fresh zero-filled array of ``shape`` in memory format ``fmt`` (torch's ``empty``;
    ``preserve_format`` has nothing to preserve there and raises as in torch)."""
    if fmt is _mf.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    array = np.zeros(shape, dtype)
    return array if fmt is None else in_format(array, array, fmt)


def suggests_channels_last(array: np.ndarray) -> bool:
    """torch's ``suggest_memory_format()`` is a channels-last format for this 4-d or 5-d array:
    its strides read as channels-last (wider than :func:`is_channels_last`: a ``(1, C, 1, 1)``
    tensor permuted from NHWC counts, although NumPy also calls it row-major, and so does a
    sliced channels-last tensor)."""
    return array.ndim in (4, 5) and _mf.suggested(
        array.shape, tuple(s // array.itemsize for s in array.strides)) \
        is not _mf.contiguous_format


def channels_last(result: np.ndarray) -> np.ndarray:
    """``result`` laid out channels-last (copied only when its strides are not already
    torch's dense channels-last ones)."""
    return _in_order(result, _mf.memory_order(result.ndim))
