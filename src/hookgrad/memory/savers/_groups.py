"""Per-group quantization on NumPy a block at a time.

Groups run along an activation's largest dimension, which is seldom its last (a conv
activation's largest is often the batch), so the rows of groups are not a view of it. Laying
the whole activation out as rows would copy it, and decoding would copy it twice more: the
step's peak would rise above running with no saver at all. Here the activation is laid out,
encoded and decoded in blocks of its leading dimension of about ``block_bytes`` each; the rows,
their order, offsets and scales are those of the whole-array layout, so only the transient
memory changes (stochastic rounding draws its noise per block).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Optional

import numpy as np


def pack_bits(codes: np.ndarray, bits: int) -> np.ndarray:
    """uint8 codes below ``2**bits`` → bytes holding ``8 // bits`` codes each (low bits first)."""
    if bits == 8:
        return codes
    per_byte = 8 // bits
    flat = codes.reshape(-1)
    pad = (-flat.size) % per_byte
    if pad:
        flat = np.concatenate([flat, np.zeros(pad, np.uint8)])
    groups = flat.reshape(-1, per_byte)
    packed = groups[:, 0].copy()
    for j in range(1, per_byte):  # a loop over bit positions, not elements
        packed |= groups[:, j] << np.uint8(bits * j)
    return packed


def unpack_bits(packed: np.ndarray, bits: int, size: int) -> np.ndarray:
    """The inverse of ``pack_bits``: the first ``size`` codes."""
    if bits == 8:
        return packed.reshape(-1)
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits)[None, :]
    codes = (packed[:, None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(-1)[:size]


def _spans(shape: tuple, itemsize: int, block_bytes: int) -> Iterator[tuple]:
    """(start, stop) ranges of the first dimension of an array of ``shape`` (the groups'
    dimension last), each about ``block_bytes``; one range over everything for a vector."""
    if len(shape) < 2:
        yield 0, None
        return
    step = max(1, block_bytes // max(1, math.prod(shape[1:]) * itemsize))
    for start in range(0, shape[0], step):
        yield start, min(shape[0], start + step)


def _rows(part: np.ndarray, group: int, pad: int) -> np.ndarray:
    """A block of the moved activation as rows of ``group`` values (its end padded with the
    last value, which changes no group's minimum or maximum)."""
    part = np.ascontiguousarray(part)
    if pad:
        part = np.concatenate([part, np.repeat(part[..., -1:], pad, axis=-1)], axis=-1)
    return part.reshape(-1, group)


class _Packed:
    """Rows of codes (and of the positive mask) packed into bytes. When a group fills whole
    bytes, each block of rows packs into (and unpacks from) its own slice of the bytes, so
    no unpacked array of the whole activation ever exists; otherwise the whole is packed at
    the end (or unpacked at the start)."""

    def __init__(self, total: int, group: int, bits: int):
        self.group, self.bits = group, bits
        self.whole = (group * bits) % 8 == 0 and group % 8 == 0
        self.codes = np.empty(total * group * bits // 8 if self.whole else (total, group),
                              np.uint8)
        self.mask = None

    def put(self, row: int, end: int, codes: np.ndarray, above: Optional[np.ndarray]) -> None:
        group, bits = self.group, self.bits
        if above is not None and self.mask is None:
            rows = self.codes.size * 8 // (group * bits) if self.whole else len(self.codes)
            self.mask = np.zeros(rows * group // 8 if self.whole else (rows, group),
                                 np.uint8 if self.whole else bool)
        if not self.whole:
            self.codes[row:end] = codes
            if above is not None:
                self.mask[row:end] = above
            return
        start, stop = row * group * bits // 8, end * group * bits // 8
        self.codes[start:stop] = pack_bits(codes, bits).reshape(-1)
        if above is not None:
            self.mask[row * group // 8:end * group // 8] = np.packbits(above.reshape(-1),
                                                                      bitorder="little")

    def done(self) -> tuple:
        if self.whole:
            return self.codes, self.mask
        mask = None if self.mask is None else np.packbits(self.mask.reshape(-1),
                                                          bitorder="little")
        return pack_bits(self.codes, self.bits), mask


def encode_groups(values: np.ndarray, group: int, bits: int, seed: Optional[int],
                  codes_of: Callable, block_bytes: int, sparse: Optional[bool] = None) -> tuple:
    """(packed codes, low (rows, 1), scale (rows, 1), packed positive mask or None, layout,
    (rows, group), sparse) for ``values`` in groups along its largest dimension. ``codes_of(rows,
    low, scale, seed)`` is the quantizer's rounding (it returns codes and the positive mask).
    ``sparse`` None: every code; else the codes of the nonzero values (not +0.0) alone, and
    ``sparse`` (the last item) is (packed nonzero mask, count, whether the mask stands in for
    the positive mask, which is then not kept): True says it does (see _sparse.py)."""
    axis = int(np.argmax(values.shape))
    moved = np.moveaxis(values, axis, -1)
    length = moved.shape[-1]
    pad = (-length) % group
    padded = moved.shape[:-1] + (length + pad,)
    total = math.prod(padded) // group
    levels = (1 << bits) - 1
    packed = _Packed(total, group, bits)
    if sparse is not None:  # the nonzero mask, laid out as 1-bit codes, and the kept codes
        marks, kept = _Packed(total, group, 1), []
    low = np.empty((total, 1), values.dtype)
    scale = np.empty((total, 1), values.dtype)
    row = 0
    for number, (start, stop) in enumerate(_spans(moved.shape, values.itemsize, block_bytes)):
        rows = _rows(moved[start:stop], group, pad)
        end = row + rows.shape[0]
        part_low = rows.min(axis=1, keepdims=True)
        part_scale = (rows.max(axis=1, keepdims=True) - part_low) / levels
        part_scale[part_scale <= 0] = 1  # a constant group: every code is 0
        low[row:end], scale[row:end] = part_low, part_scale
        codes, above = codes_of(rows, part_low, part_scale,
                                None if seed is None else (seed, number))
        if sparse is None:
            packed.put(row, end, codes, above)
        else:
            nonzero = rows.view(np.uint64 if rows.itemsize == 8 else np.uint32) != 0
            kept.append(codes.reshape(-1)[np.flatnonzero(nonzero)])
            marks.put(row, end, nonzero.view(np.uint8), None if sparse else above)
        row = end
    layout, rows_shape = (axis, padded, length), (total, group)
    if sparse is None:
        codes, mask = packed.done()
        return codes, low, scale, mask, layout, rows_shape, None
    nonzeros, positive = marks.done()
    codes = np.concatenate(kept) if kept else np.zeros(0, np.uint8)
    folded = sparse and bool((low == 0).any())
    return (pack_bits(codes, bits), low, scale, positive, layout, rows_shape,
            (nonzeros, codes.size, folded))


def decode_groups(codes: np.ndarray, bits: int, low: np.ndarray, scale: np.ndarray,
                  positive: Optional[np.ndarray], layout: tuple, rows_shape: tuple,
                  shape: tuple, dtype: Any, tiny: Any, block_bytes: int,
                  sparse: Optional[tuple] = None) -> np.ndarray:
    """The inverse of ``encode_groups``, written into one new array of ``shape`` a block at a
    time: a positive value (``positive``'s bit set) whose code decodes to 0 becomes ``tiny``."""
    axis, padded, length = layout
    total, group = rows_shape
    whole = (group * bits) % 8 == 0 and group % 8 == 0
    if sparse is not None:
        return _decode_sparse(codes, bits, low, scale, positive, layout, rows_shape, shape,
                              dtype, tiny, block_bytes, sparse)
    if not whole:  # unpacked once, then read a block at a time
        codes = unpack_bits(codes, bits, total * group).reshape(total, group)
        if positive is not None:
            positive = np.unpackbits(positive, count=total * group,
                                     bitorder="little").view(bool).reshape(total, group)
    result = np.empty(shape, dtype)
    target = np.moveaxis(result.reshape(shape if len(shape) else (1,)), axis, -1)
    row = 0
    for start, stop in _spans(padded, scale.itemsize, block_bytes):
        count = math.prod(padded[1:] if stop is not None else padded) // group
        end = row + count * (1 if stop is None else stop - start)
        if whole:
            part = unpack_bits(codes[row * group * bits // 8:end * group * bits // 8], bits,
                               (end - row) * group).reshape(end - row, group)
            mask = None if positive is None else np.unpackbits(
                positive[row * group // 8:end * group // 8],
                bitorder="little").view(bool).reshape(end - row, group)
        else:
            part = codes[row:end]
            mask = None if positive is None else positive[row:end]
        values = part.astype(scale.dtype)
        values *= scale[row:end]
        values += low[row:end]
        if mask is not None:
            values[mask & (values == 0)] = tiny
        block = values.reshape(((-1,) + padded[1:]) if stop is not None else padded)
        target[start:stop] = block[..., :length]
        row = end
    return result


def _decode_sparse(codes: np.ndarray, bits: int, low: np.ndarray, scale: np.ndarray,
                   positive: Optional[np.ndarray], layout: tuple, rows_shape: tuple,
                   shape: tuple, dtype: Any, tiny: Any, block_bytes: int,
                   sparse: tuple) -> np.ndarray:
    """``decode_groups`` for codes stored sparse: each block's codes are the next ones after
    the previous block's, as many as its mask has bits set."""
    axis, padded, length = layout
    total, group = rows_shape
    nonzeros, count, folded = sparse
    whole = group % 8 == 0  # a block's masks are whole bytes
    kept = unpack_bits(codes, bits, count)
    unpack = np.unpackbits
    if not whole:
        nonzeros = unpack(nonzeros, count=total * group, bitorder="little").view(bool)
        if positive is not None:
            positive = unpack(positive, count=total * group, bitorder="little").view(bool)
    result = np.empty(shape, dtype)
    target = np.moveaxis(result.reshape(shape if len(shape) else (1,)), axis, -1)
    row = taken = 0
    for start, stop in _spans(padded, scale.itemsize, block_bytes):
        count = math.prod(padded[1:] if stop is not None else padded) // group
        end = row + count * (1 if stop is None else stop - start)
        lo, hi = (row * group // 8, end * group // 8) if whole else (row * group, end * group)
        mask = nonzeros[lo:hi]
        mask = (unpack(mask, bitorder="little").view(bool) if whole else mask)
        part = np.zeros(mask.shape, np.uint8)
        number = int(np.count_nonzero(mask))
        part[np.flatnonzero(mask)] = kept[taken:taken + number]
        taken += number
        mask = mask.reshape(end - row, group)
        values = part.reshape(end - row, group).astype(scale.dtype)
        values *= scale[row:end]
        values += low[row:end]
        part_low = low[row:end]
        if bool((part_low != 0).any()):
            values *= mask  # arithmetic, not a select: a random mask makes that slow
            values += 0  # -0.0 (a negative offset times 0) becomes +0.0
        lift = None
        if positive is not None:
            lift = positive[lo:hi]
            lift = (unpack(lift, bitorder="little").view(bool) if whole
                    else lift).reshape(end - row, group)
        elif folded:
            lift = mask & (part_low == 0)
        if lift is not None:
            values[lift & (values == 0)] = tiny
        block = values.reshape(((-1,) + padded[1:]) if stop is not None else padded)
        target[start:stop] = block[..., :length]
        row = end
    return result
