"""Memory layouts of results, as torch lays them out (``stride()``, ``is_contiguous()`` and so
which ``view`` calls are legal).

torch has three rules and every op follows one of them:

* ``contiguous``: most ops that are not elementwise (scans, softmax, scatter, sort of a tensor that
  is not dense) allocate a plain row-major result.
* ``preserve``: ``clone``, casts, ``*_like`` factories and sort allocate "like the input": the same
  strides when the input is dense and non-overlapping (a transposed tensor stays transposed), else
  dense strides in the input's memory order (``dense_strides``: a sliced transpose stays
  transposed, an expanded dimension keeps its place).
* ``pointwise``: elementwise ops follow torch's TensorIterator. When every operand has the
  result's shape (a number is a 0-d operand, so it breaks this) and all are row-major, all
  channels-last, or all dense with one set of strides, the result takes that layout. Otherwise
  the dimensions are ranked by an insertion sort that asks each operand's strides in turn (a
  broadcast or zero stride tells nothing, a size-1 dimension's own stride does, equal strides
  put the smaller dimension inside, else the next operand decides), and the result is dense in
  that order with a plain running product of sizes (so an empty result's slower dimensions
  get stride 0). An operand of another dtype than the one computed in is first copied to it
  as ``Tensor.to`` copies (``promoted``), and that copy is what is ranked.

Each helper takes NumPy's answer and copies it only when its layout is not torch's, so the
common case (contiguous operands) costs one flag test.
"""
from __future__ import annotations

import numpy as np

from .. import _memory_format as _mf
from ..tensor import keeping_strides, torch_strides


def contiguous(result: np.ndarray) -> np.ndarray:
    """``result`` row-major, with the strides torch gives size-1 dimensions (NumPy keeps the
    source's there, e.g. after a keepdim reduction of a transposed input)."""
    if not result.flags.c_contiguous:
        return np.ascontiguousarray(result)
    if result.size == 0 and result.ndim:  # NumPy gives an empty array zero strides, often
        strides = _row_major_strides(result)
        return result if result.strides == strides else restrided(result, strides)
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


def _zero_strided_empty(source: np.ndarray) -> bool:
    """An empty array whose torch strides are all zero (an expanded tensor sliced to nothing):
    torch counts it dense, so a copy like it keeps those zeros."""
    return not source.size and source.ndim and not any(torch_strides(source))


def preserve(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``result`` laid out as torch's ``empty_like(source)`` (memory_format=preserve_format):
    ``source``'s strides when it is dense; else dense strides in the order of ``source``'s
    (torch's ``infer_dense_strides``: a transposed slice stays transposed, an expanded dimension
    keeps its place)."""
    if _zero_strided_empty(source):
        return keeping_strides(result, (0,) * source.ndim)
    if _row_major(source):
        return contiguous(result)
    if not is_dense(source):
        return _strided(result, tuple(s * result.itemsize for s in dense_strides(
            source.shape, torch_strides(source))))
    scale = result.itemsize / source.itemsize
    return _strided(result, tuple(int(abs(s) * scale) for s in source.strides))


def pointwise(result: np.ndarray, *operands, common=None) -> np.ndarray:
    """``result`` laid out as torch's TensorIterator lays out an elementwise result of
    ``operands`` (arrays, numbers, or :func:`promoted` stand-ins, in torch's argument order).

    ``common``: the dtype torch computes in, when it is given; an operand of another dtype is
    first copied to it as ``Tensor.to`` copies (:func:`promoted`), and that copy's layout is
    the one ranked (an expanded ``float32`` operand added to a ``float64`` one is dense by
    then)."""
    shape = result.shape
    if len(shape) < 2:  # a 0-d or 1-d result has one layout: row-major
        return result if result.flags.c_contiguous else np.ascontiguousarray(result)
    for operand in operands:  # torch's own shortcut: row-major operands of the result's shape
        if type(operand) is not np.ndarray or operand.shape != shape \
                or not operand.flags.c_contiguous:
            break
    else:
        return contiguous(result)
    first = operands[0]
    if type(first) is np.ndarray and result.size and len(shape) < 4:
        # torch's other shortcut, as cheaply: operands of one shape and one dense layout give
        # the result their strides (a promoted copy of a dense operand keeps them too)
        strides = first.strides
        for operand in operands:
            if type(operand) is not np.ndarray or operand.shape != shape \
                    or operand.strides != strides:
                break
        else:
            if is_dense(first):
                itemsize = first.itemsize
                return _strided(result, tuple(abs(s) // itemsize * result.itemsize
                                              for s in strides))
    if result.size:  # row-major operands (size-1 strides too) broadcast to a row-major result
        for operand in operands:
            if isinstance(operand, np.ndarray):
                if not _row_major(operand):
                    break
            elif type(operand) is _Strides:
                break
        else:
            return contiguous(result)
    return _iterated(result, operands, common)


def promoted(operand, dtype):
    """``operand`` as TensorIterator sees it after promoting it to ``dtype``: the array itself
    when it has that dtype, else a stand-in with the strides of ``operand.to(dtype)``
    (``operand``'s own when dense, else :func:`dense_strides`). Numbers pass through."""
    if not isinstance(operand, np.ndarray) or operand.dtype == dtype:
        return operand
    strides = torch_strides(operand)
    if not _dense(operand.shape, strides):
        strides = dense_strides(operand.shape, strides)
    return _Strides(operand.shape, strides, 1)


def _iterated(result: np.ndarray, operands: tuple, common) -> np.ndarray:
    """The general rule (TensorIterator's ``fast_set_up``, else ``compute_strides``,
    ``reorder_dimensions`` and ``allocate_or_resize_outputs``)."""
    shape = result.shape
    ndim = len(shape)
    tensors = []  # (shape, element strides) of each tensor operand
    same = True  # torch's all_ops_same_shape: a number (a wrapped 0-d tensor) breaks it
    for operand in operands:
        if isinstance(operand, np.ndarray):
            if common is not None:
                operand = promoted(operand, common)
        elif type(operand) is not _Strides:
            same = False
            continue
        if isinstance(operand, np.ndarray):
            tensors.append((operand.shape, torch_strides(operand)))
        else:
            tensors.append((operand.shape, operand.element_strides))
        same = same and operand.shape == shape
    if same:
        if all(_contiguous(shape, strides) for _, strides in tensors):
            return contiguous(result)
        if ndim in (4, 5):
            fmt = _mf.channels_last if ndim == 4 else _mf.channels_last_3d
            if all(_mf.is_contiguous(shape, strides, False, fmt) for _, strides in tensors):
                return _strided(result, tuple(s * result.itemsize
                                              for s in _mf.channels_last_strides(shape)))
        first = tensors[0][1]
        if all(strides == first and _dense(shape, strides) for _, strides in tensors):
            return _strided(result, tuple(s * result.itemsize for s in first))
    ranked = []
    for operand_shape, strides in tensors:  # broadcast dimensions say nothing: stride 0
        offset = ndim - len(operand_shape)
        ranked.append([0] * offset + [0 if n == 1 and shape[offset + i] != 1 else s
                                      for i, (n, s) in enumerate(zip(operand_shape, strides))])
    fastest_first = _rank(shape, ranked)
    if fastest_first == list(range(ndim - 1, -1, -1)):
        return contiguous(result)
    strides, step = [0] * ndim, result.itemsize
    for d in fastest_first:  # a plain running product: a size-0 dimension zeroes the rest
        strides[d] = step
        step *= shape[d]
    return _strided(result, tuple(strides))


def _contiguous(shape: tuple, strides: tuple) -> bool:
    """torch's ``is_contiguous()`` from a shape and element strides."""
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size == 0:
            return True
        if size != 1:
            if stride != step:
                return False
            step *= size
    return True


def _dense(shape: tuple, strides: tuple) -> bool:
    """torch's ``is_non_overlapping_and_dense()`` from a shape and element strides."""
    if _contiguous(shape, strides):
        return True
    step = 1
    for stride, size in sorted((s, n) for s, n in zip(strides, shape) if n > 1):
        if stride != step:
            return False
        step *= size
    return True


def dense_strides(shape: tuple, strides: tuple) -> tuple:
    """Dense element strides in the memory order of ``strides`` (torch's
    ``infer_dense_strides``, for copies of a tensor that is not dense): a zero stride leaves
    two dimensions in place, equal strides put the smaller dimension inside, and size-0 and
    size-1 dimensions take no room."""
    fastest_first = _rank(shape, [strides])
    result, step = [0] * len(shape), 1
    for d in fastest_first:
        result[d] = step
        if shape[d] > 1:
            step *= shape[d]
    return tuple(result)


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
    """Shape and strides of an operand that exists only to be ranked (``element_strides`` in
    elements; ``strides`` in bytes of ``itemsize``, as NumPy's)."""

    def __init__(self, shape: tuple, strides, itemsize: int = 1):
        self.shape, self.ndim = tuple(shape), len(shape)
        self.element_strides = tuple(s // itemsize for s in strides)
        self.strides = tuple(strides)


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
    order = _rank(shape, strides)[::-1]
    return None if order == list(range(ndim)) else order


def _rank(shape: tuple, strides: list) -> list:
    """TensorIterator's ``reorder_dimensions``: the dimensions fastest first, by an insertion
    sort that asks each operand's ``strides`` in turn (a zero stride tells nothing, equal
    strides put the smaller dimension inside, else the next operand decides) and keeps two
    dimensions in place when no operand tells them apart."""
    ndim = len(shape)
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
    return fastest_first


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
    if _zero_strided_empty(source):
        return keeping_strides(np.empty(source.shape, dtype), (0,) * source.ndim)
    if _row_major(source):
        return contiguous(np.empty(source.shape, dtype))
    if not is_dense(source):
        return _empty_strided(source.shape, tuple(s * dtype.itemsize for s in dense_strides(
            source.shape, torch_strides(source))), dtype)
    strides = tuple(abs(s) // source.itemsize * dtype.itemsize for s in source.strides)
    return _empty_strided(source.shape, strides, dtype)


def restrided(view: np.ndarray, strides: tuple, shift: int = 0) -> np.ndarray:
    """``view`` with other byte ``strides`` on the same memory (for size-1 dimensions, whose
    stride NumPy and torch choose differently), still a view of the array that owns it.
    ``shift``: bytes to move the start by, for an empty view (NumPy leaves an empty slice's
    start where the slice began; torch moves its storage offset to the slice's start)."""
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    offset = view.__array_interface__["data"][0] - root.__array_interface__["data"][0] + shift
    try:
        result = np.ndarray(view.shape, view.dtype, buffer=root, offset=offset, strides=strides)
    except (TypeError, ValueError, BufferError):  # an owner without a plain buffer
        if view.size and any(n > 1 and old != new
                             for n, old, new in zip(view.shape, view.strides, strides)):
            return view
        # only strides that address no memory change (size-1 dims, or no element at all),
        # so NumPy's unchecked view is safe; its stand-in base still leads to the owner (an
        # empty view's start stays where it was)
        return np.lib.stride_tricks.as_strided(view, view.shape, strides,
                                               writeable=view.flags.writeable)
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
