"""Max pooling's tiling fast path: windows that tile the input (stride = kernel, no padding or
dilation, e.g. 2x2 stride 2) are reshapes of it, so the maximum is one pass per kernel offset
and no window is copied; on several threads the planes are split over the intra-op pool."""
from __future__ import annotations

import math

import numpy as np

from ... import _parallel

Ints = tuple


def _tiles(x: np.ndarray, out: Ints, kernel: Ints, stride: Ints, padding: Ints,
           dilation: Ints) -> bool:
    nd = len(kernel)
    return (x.size > 0 and tuple(kernel) == tuple(stride) and not any(padding)
            and all(d == 1 for d in dilation)
            and all(o * k <= s for o, k, s in zip(out, kernel, x.shape[-nd:])))


def _tile_slices(x: np.ndarray, out: Ints, kernel: Ints):
    """(offset within the plane, x's values at that kernel offset for every output) in row-major
    kernel order; x is cropped to whole tiles and seen as (..., o1, k1, o2, k2, ...)."""
    nd = len(kernel)
    lead = x.shape[:-nd]
    cropped = x[(Ellipsis,) + tuple(slice(0, o * k) for o, k in zip(out, kernel))]
    tiled = cropped.reshape(lead + tuple(n for pair in zip(out, kernel) for n in pair))
    size = x.shape[-nd:]
    plane_strides = [math.prod(size[axis + 1:]) for axis in range(nd)]
    for offset in np.ndindex(*kernel):
        where = sum(o * st for o, st in zip(offset, plane_strides))
        pick = tuple(part for o in offset for part in (slice(None), o))
        yield where, tiled[(Ellipsis,) + pick]


def _tile_origins(size: Ints, out: Ints, kernel: Ints) -> np.ndarray:
    """The in-plane flat index of each window's first element, shaped ``out``."""
    origin = np.zeros((), np.int64)
    for s, o, k in zip(size, out, kernel):
        origin = origin[..., None] * s + np.arange(o, dtype=np.int64) * k
    return origin


def _tile_max(x: np.ndarray, out: Ints, kernel: Ints, values=None, indices=None):
    """Values and in-plane indices of each tile's maximum: the first one in row-major order, but
    a NaN beats every number and of several NaNs the last wins, as in torch and the general path.
    Which kernel offset won is kept in the smallest integer type first, so the only array of
    the output's size in int64 is the indices themselves."""
    slices = list(_tile_slices(x, out, kernel))
    if values is None:
        result = slices[0][1].copy()
    else:  # a slice of the caller's array
        result = values
        result[...] = slices[0][1]
    for _, values in slices[1:]:
        np.maximum(result, values, out=result)  # NaN propagates
    winner = np.full(result.shape, len(slices) - 1, np.min_scalar_type(len(slices) - 1))
    for number in range(len(slices) - 2, -1, -1):  # walk back so the first match is kept
        # winner = number where this slice holds the maximum, by arithmetic (winner >= number
        # here): a masked copy branches per element, and which slice wins is random
        matches = slices[number][1] == result
        winner -= matches * (winner - winner.dtype.type(number))
    if x.dtype.kind in "fV" and np.isnan(result).any():
        for number, (_, values) in enumerate(slices):  # walk forward so the last NaN is kept
            np.copyto(winner, number, where=np.isnan(values))
    # np.take, not fancy indexing: half the time on 401K outputs (0.30 against 0.57 ms). It
    # widens the winners to intp first, so it goes a block at a time and that copy stays small
    # (the whole pooling: 0.90 of the time); every winner is in range, and mode="clip" spares
    # take its buffered path
    table = np.array([where for where, _ in slices], np.int64)
    index = np.empty(winner.shape, np.int64) if indices is None else indices
    flat_winner, flat_index = winner.reshape(-1), index.reshape(-1)
    for start in range(0, flat_winner.size, _TAKE_BLOCK):
        np.take(table, flat_winner[start:start + _TAKE_BLOCK], mode="clip",
                out=flat_index[start:start + _TAKE_BLOCK])
    index += _tile_origins(x.shape[-len(kernel):], out, kernel)
    return result, index


_TAKE_BLOCK = 1 << 13  # winners looked up per np.take (its intp copy of them: 64 KiB)

# Poolings of fewer input elements than this a piece stay on the calling thread: a piece is some
# twenty NumPy calls, each a GIL hand-over (see ``_parallel.parallel_for``)
PLANES_GRAIN = 1 << 16


def _planes_view(a: np.ndarray, nd: int) -> "np.ndarray | None":
    """``a`` as (planes, *last nd dims) without a copy, or None when its leading dims cannot be
    merged (a permuted, channels-last array); an expanded gradient merges fine."""
    lead = a.shape[:-nd]
    for i in range(len(lead) - 1):
        if lead[i] != 1 and a.strides[i] != a.strides[i + 1] * lead[i + 1]:
            return None
    step = a.strides[len(lead) - 1] if lead else 0
    return np.lib.stride_tricks.as_strided(a, (math.prod(lead),) + a.shape[-nd:],
                                           (step,) + a.strides[-nd:],
                                           writeable=a.flags.writeable)


def _pays(planes: int, plane: int, *views) -> bool:
    """Whether to split the planes over the intra-op pool: several threads, enough work, and
    every array seen as planes (``views`` has no None)."""
    return (_parallel.get_num_threads() > 1 and planes * plane >= 2 * PLANES_GRAIN
            and all(v is not None for v in views))


def _split_planes(planes: int, plane: int, body) -> None:
    """``body(start, stop)`` over slices of the planes on the intra-op pool; each plane is
    computed as on one thread."""
    _parallel.parallel_for(planes, max(1, PLANES_GRAIN // max(plane, 1)), body)


def _tile_max_planes(x: np.ndarray, out: Ints, kernel: Ints):
    """``_tile_max`` with the planes split over the intra-op pool where that pays."""
    nd = len(kernel)
    lead = x.shape[:-nd]
    planes, plane = math.prod(lead), math.prod(x.shape[-nd:])
    flat = _planes_view(x, nd)
    if not _pays(planes, plane, flat):
        return _tile_max(x, out, kernel)
    values = np.empty((planes,) + tuple(out), x.dtype)
    indices = np.empty((planes,) + tuple(out), np.int64)

    def body(start: int, stop: int) -> None:
        _tile_max(flat[start:stop], out, kernel, values[start:stop], indices[start:stop])

    _split_planes(planes, plane, body)
    return values.reshape(lead + tuple(out)), indices.reshape(lead + tuple(out))


_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _copy_where(target: np.ndarray, source: np.ndarray, mask: np.ndarray) -> None:
    """``target = source where mask else +0``, for a target each element of which is written
    by exactly one call: the mask becomes words of all ones or zeros ANDed with the source's
    bits, with no per-element branch (NumPy's masked copy branches, and pooling's winners are
    random)."""
    bits = _BITS.get(source.itemsize) if source.dtype.kind in "fV" else None
    if bits is None or target.dtype != source.dtype:
        np.copyto(target, source, where=mask)
        return
    words = mask.astype(bits)
    np.negative(words, out=words)  # 1 -> all ones, 0 -> 0
    np.bitwise_and(source.view(bits), words, out=target.view(bits))
