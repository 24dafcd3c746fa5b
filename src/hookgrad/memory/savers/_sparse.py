"""Sparse storage of exact zeros for the quantize saver (Gist's "sparse storage", Jain et al.,
2018): a ReLU's output is about half zeros, and a bitmask of the nonzero positions (one bit a
value) plus the codes of the nonzero values alone is smaller than every value's code once
enough of them are zero.

With ``n`` values of which ``k`` are nonzero, ``bits``-bit codes packed ``8 // bits`` to a byte
take ``ceil(n * bits / 8)`` bytes dense and ``ceil(n / 8) + ceil(k * bits / 8)`` sparse
(offsets and scales are the same either way), so sparse wins once the zero fraction passes
about ``1 / bits``: 1/8 at 8 bits, 1/4 at 4 bits, 1/2 at 2 bits. Stochastic rounding stores a
mask of the positive values where a slice's minimum is 0 (a ReLU's mask, see quantize.py); the
nonzero mask is that same mask there, so one bitmask does both jobs and sparse costs no more
than dense's codes plus mask.

"Zero" here means +0.0, the value whose bits are all 0: it decodes to exact +0.0. -0.0, like
every other value, keeps its code and decodes as the dense path decodes it, so storing sparse
never changes a decoded value the dense path would give, except that a +0.0 in a slice whose
minimum is negative comes back exact rather than within half a step of 0. (Dense decodes -0.0
to +0.0 where the minimum is 0; a gradient sees zero's sign only through a division by it.)

One kernel class per framework, as in quantize.py: NumPy for hookgrad, torch ops on the
tensor's own device for torch. No loop over elements: counting, compressing and expanding are
one boolean-mask pass each.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np


def dense_bytes(count: int, bits: int) -> int:
    """Bytes of ``count`` codes of ``bits`` bits, packed ``8 // bits`` to a byte."""
    return -(-count * bits // 8)


def sparse_bytes(count: int, nonzero: int, bits: int) -> int:
    """Bytes of a ``count``-bit mask plus the ``nonzero`` values' packed codes."""
    return dense_bytes(count, 1) + dense_bytes(nonzero, bits)


# NumPy compresses and expands this many values at a time: np.compress and index assignment
# make 8-byte indices of the nonzero values, which for a whole activation would be twice its
# float32 size; a multiple of 8, so each chunk's mask is whole bytes
CHUNK = 1 << 17


class Sparse(NamedTuple):
    codes: Any  # the nonzero values' codes (unpacked uint8), in C order
    mask: Any  # the packed mask of the nonzero positions, one bit a value, low bits first
    nonzero: int
    positive: Any  # a separate positive mask still needed (stochastic, -0.0 in a ReLU slice)


def sparsify(ops: Any, values: Any, codes: Any, positive: Any, bits: int,
             sparse: Optional[bool], count: int, nonzero: Optional[int] = None
             ) -> Optional[Sparse]:
    """The sparse form of ``codes`` (the dense codes of ``values``) when ``sparse`` is True, or
    when it is None and it takes strictly fewer bytes than dense; else None. ``positive`` is
    the dense path's mask of positive values (stochastic rounding) or None. ``nonzero``: the
    count of nonzero values if known."""
    if sparse is False or count == 0:
        return None
    if nonzero is None:
        nonzero = ops.count_nonzero(values)
    mask_bytes = dense_bytes(count, 1)
    # the nonzero mask is the positive mask wherever the latter has bits (a slice whose
    # minimum is 0 holds values >= 0) unless such a slice holds a -0.0
    fold = positive is not None and not ops.has_negative_zero(values, count - nonzero)
    dense = dense_bytes(count, bits) + (mask_bytes if positive is not None else 0)
    small = sparse_bytes(count, nonzero, bits) + \
        (mask_bytes if positive is not None and not fold else 0)
    if sparse is None and small >= dense:
        return None
    kept, mask = ops.split(values, codes, nonzero)
    return Sparse(kept, mask, nonzero, None if fold or positive is None else positive)


def group_sparsity(values: np.ndarray, bits: int, group: int, seed: Optional[int],
                   sparse: Optional[bool]) -> Optional[bool]:
    """Whether NumPy's grouped encoding (``_groups.py``, a block at a time) stores sparse:
    None (dense), else whether the nonzero mask stands in for the positive mask too. Decided
    before the groups' minima are known, so by the codes' bytes alone (a positive mask that
    dense would keep beside them is not counted: sparse may be the smaller yet not chosen)."""
    if sparse is False or values.size == 0:
        return None
    ops = NumpySparse
    moved = np.moveaxis(values, int(np.argmax(values.shape)), -1)
    pad = (-moved.shape[-1]) % group  # the padding repeats each row's last value
    own = ops.count_nonzero(values)
    nonzero = own + pad * ops.count_nonzero(moved[..., -1])
    count = (values.size // moved.shape[-1]) * (moved.shape[-1] + pad)
    if sparse is None and sparse_bytes(count, nonzero, bits) >= dense_bytes(count, bits):
        return None
    return seed is not None and not ops.has_negative_zero(values, values.size - own)


class NumpySparse:
    """The sparse operations on NumPy arrays (float32 or float64 work arrays)."""

    @staticmethod
    def _bits(values: np.ndarray) -> np.ndarray:
        # the same bytes as integers: +0.0, and only it, is 0 (a view, no copy, any strides)
        return values.view(np.uint64 if values.itemsize == 8 else np.uint32)

    @staticmethod
    def count_nonzero(values: np.ndarray) -> int:
        return int(np.count_nonzero(NumpySparse._bits(values)))

    @staticmethod
    def has_negative_zero(values: np.ndarray, zeros: int) -> bool:
        """Whether ``values`` holds a -0.0 (``zeros``: how many +0.0 it holds)."""
        return int(np.count_nonzero(values == 0)) != zeros

    @staticmethod
    def split(values: np.ndarray, codes: np.ndarray, nonzero: int) -> tuple:
        """(the codes of the nonzero values, the packed mask of where they are), a chunk at
        a time."""
        bits = NumpySparse._bits(values)
        # a view when contiguous; else the mask, made once (a view's layout is not flat)
        source = bits.reshape(-1) if bits.flags.c_contiguous else (bits != 0).reshape(-1)
        flat = codes.reshape(-1)
        kept = np.empty(nonzero, np.uint8)
        packed = np.empty(-(-flat.size // 8), np.uint8)
        taken = 0
        for start in range(0, flat.size, CHUNK):  # a loop over chunks, not elements
            mask = source[start:start + CHUNK] != 0
            part = flat[start:start + CHUNK][np.flatnonzero(mask)]  # as in ``join``
            kept[taken:taken + part.size] = part
            taken += part.size
            packed[start // 8:start // 8 + -(-mask.size // 8)] = np.packbits(
                mask, bitorder="little")
        return kept, packed

    @staticmethod
    def join(packed: np.ndarray, kept: np.ndarray, count: int) -> np.ndarray:
        """Every value's code: ``kept`` where the mask is set, 0 elsewhere (chunk by chunk)."""
        full = np.zeros(count, np.uint8)
        taken = 0
        for start in range(0, count, CHUNK):
            stop = min(count, start + CHUNK)
            mask = np.unpackbits(packed[start // 8:-(-stop // 8)], count=stop - start,
                                 bitorder="little").view(bool)
            # indices of a bool array, then an index assignment: ~20x faster than
            # np.flatnonzero of the uint8 bits or a boolean-mask assignment
            where = np.flatnonzero(mask)
            full[start:stop][where] = kept[taken:taken + where.size]
            taken += where.size
        return full

    @staticmethod
    def finish(result: np.ndarray, packed: np.ndarray, low: Any, lift: Any = None
               ) -> np.ndarray:
        """Zeros where the mask is clear (code 0 decodes to ``low``, which is 0 only where a
        slice's minimum is); with ``lift`` (the dtype's smallest normal number), a nonzero
        value that decoded to 0 where the minimum is 0 becomes ``lift``, as the dense path's
        positive mask does. The mask is unpacked only if needed (not for a ReLU's output)."""
        low = np.asarray(low)
        zero = bool((low != 0).any())
        if not zero and lift is None:
            return result
        mask = np.unpackbits(packed, count=result.size, bitorder="little").view(bool)
        mask = mask.reshape(result.shape)
        if zero:
            # arithmetic, not np.where: a random mask makes a select many times slower
            np.multiply(result, mask, out=result, casting="unsafe")
            result += 0  # -0.0 (a negative value times 0) becomes +0.0
        if lift is not None:
            result += lift * (mask & (result == 0) & (low == 0))
        return result


class TorchSparse:
    """The same operations with torch ops, on the tensor's device."""

    def __init__(self, torch: Any):
        self.torch = torch

    def _bits(self, values: Any) -> Any:
        torch = self.torch
        return values.view(torch.int64 if values.element_size() == 8 else torch.int32)

    def count_nonzero(self, values: Any) -> int:
        return int(self.torch.count_nonzero(self._bits(values)))

    def has_negative_zero(self, values: Any, zeros: int) -> bool:
        return int(self.torch.count_nonzero(values == 0)) != zeros

    def split(self, values: Any, codes: Any, nonzero: int) -> tuple:
        mask = (self._bits(values) != 0).reshape(-1)
        return codes.reshape(-1)[mask], self.pack(mask)
    def pack(self, mask: Any) -> Any:
        flat = mask.reshape(-1).to(self.torch.uint8)
        pad = (-flat.numel()) % 8
        if pad:
            flat = self.torch.cat([flat, flat.new_zeros(pad)])
        weights = self.torch.tensor([1 << j for j in range(8)], dtype=self.torch.uint8,
                                    device=flat.device)
        # eight bits a byte, low bits first (NumPy's ``packbits(bitorder="little")``)
        return (flat.reshape(-1, 8) * weights).sum(1, dtype=self.torch.uint8)

    def unpack(self, packed: Any, count: int) -> Any:
        shifts = self.torch.arange(8, dtype=self.torch.uint8, device=packed.device)
        return ((packed[:, None] >> shifts) & 1).reshape(-1)[:count].bool()

    def join(self, packed: Any, kept: Any, count: int) -> Any:
        mask = self.unpack(packed, count)
        full = self.torch.zeros(count, dtype=self.torch.uint8, device=kept.device)
        full[mask] = kept
        return full

    def finish(self, result: Any, packed: Any, low: Any, lift: Any = None) -> Any:
        torch = self.torch
        zero = bool((low != 0).any())
        if not zero and lift is None:
            return result
        mask = self.unpack(packed, result.numel()).reshape(result.shape)
        if zero:
            result = torch.where(mask, result, torch.zeros((), dtype=result.dtype,
                                                           device=result.device))
        if lift is not None:
            result = torch.where(mask & (result == 0) & (low == 0),
                                 torch.full_like(result, lift), result)
        return result
