"""quantize(bits): keep saved activations as 8-, 4- or 2-bit integer codes plus scales.

Affine (min/max) quantization, per tensor or per channel: ``x ≈ low + code * scale`` with
``code`` in ``0 .. 2**bits - 1``. Two choices keep gradients close to exact:
  * the minimum is exact (code 0 decodes to ``low`` itself), so a ReLU's zeros stay zeros;
  * where that minimum is an exact zero, a positive value never gets code 0, so the ReLU mask
    ``result > 0`` that backward reads off the saved output is exact, not just close.
Codes of 4 and 2 bits are packed two and four to a byte.
"""
from __future__ import annotations

import numpy as np

from ...tensor import Tensor
from .base import Saver, Stored


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
    if bits == 8:
        return packed.reshape(-1)
    per_byte = 8 // bits
    shifts = (np.arange(per_byte, dtype=np.uint8) * bits)[None, :]
    codes = (packed[:, None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(-1)[:size]


class _QuantStored(Stored):
    __slots__ = ("codes", "low", "scale", "bits", "shape", "dtype")

    def __init__(self, codes, low, scale, bits, shape, dtype):
        self.codes = codes
        self.low = low
        self.scale = scale
        self.bits = bits
        self.shape = shape
        self.dtype = dtype

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"int{self.bits}"

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.low.nbytes + self.scale.nbytes

    def decode(self) -> np.ndarray:
        size = int(np.prod(self.shape, dtype=np.int64))
        codes = unpack_bits(self.codes, self.bits, size).reshape(self.shape)
        work = self.scale.dtype
        result = codes.astype(work)
        result *= self.scale
        result += self.low
        return result.astype(self.dtype, copy=False)


class Kept(Stored):
    """An array kept as it is (a quantizer's fallback for non-finite values)."""

    __slots__ = ("array",)

    kind = "kept"

    def __init__(self, array: np.ndarray):
        self.array = array

    @property
    def nbytes(self) -> int:
        return self.array.nbytes

    def decode(self) -> np.ndarray:
        return np.ascontiguousarray(self.array)


def quantize_array(array: np.ndarray, bits: int, axis) -> _QuantStored:
    """Encode ``array``; ``axis`` is the channel dim (one scale per slice) or None (one scale)."""
    work = np.float64 if array.dtype == np.float64 else np.float32
    values = np.asarray(array, dtype=work)
    if axis is None or values.ndim < 2:
        reduce = None
    else:
        reduce = tuple(d for d in range(values.ndim) if d != axis)
    low = values.min(axis=reduce, keepdims=reduce is not None)
    high = values.max(axis=reduce, keepdims=reduce is not None)
    levels = (1 << bits) - 1
    scale = (high - low) / levels
    scale = np.where(scale > 0, scale, 1).astype(work)  # a constant slice: every code is 0
    low = np.asarray(low, dtype=work)
    scaled = values - low
    zero_floor = low == 0  # where the minimum is an exact zero (a ReLU's output)
    above = (scaled > 0) & zero_floor if zero_floor.any() else None
    scaled /= scale
    np.rint(scaled, out=scaled)
    np.clip(scaled, 0, levels, out=scaled)
    codes = scaled.astype(np.uint8)
    if above is not None:
        np.maximum(codes, above, out=codes, casting="unsafe")  # above zero: never code 0
    return _QuantStored(pack_bits(codes, bits), low, scale, bits, array.shape, array.dtype)


class quantize(Saver):
    """Store saved floating activations as ``bits``-bit codes (8, 4 or 2) with a scale and an
    offset per channel (``per="channel"``, along ``dim``) or per tensor (``per="tensor"``).

    8 bits keep a quarter of float32's bytes with gradients within ~1e-2 relative error; 2 bits
    keep a sixteenth and are much rougher (see the benchmark's table)::

        with memory.quantize(8):
            loss = model(x).sum()
        loss.backward()
    """

    def __init__(self, bits: int = 8, per: str = "channel", dim: int = 1, min_bytes: int = 0):
        super().__init__(min_bytes)
        if bits not in (8, 4, 2):
            raise ValueError(f"quantize() supports bits=8, 4 or 2, got {bits}")
        if per not in ("channel", "tensor"):
            raise ValueError(f"per must be 'channel' or 'tensor', got {per!r}")
        self.bits = bits
        self.per = per
        self.dim = dim

    def accepts(self, dtype: np.dtype) -> bool:
        return dtype.kind == "f"

    def _store(self, array: np.ndarray, tensor: Tensor) -> Stored:
        axis = None
        if self.per == "channel" and array.ndim >= 2:
            axis = self.dim % array.ndim
        with np.errstate(invalid="ignore", over="ignore"):
            stored = quantize_array(array, self.bits, axis)
        if not (np.isfinite(stored.low).all() and np.isfinite(stored.scale).all()):
            return Kept(array)  # inf or nan has no affine code: keep it exact
        return stored

    def _describe(self) -> str:
        text = f"{self.bits}, per={self.per!r}"
        if self.per == "channel" and self.dim != 1:
            text += f", dim={self.dim}"
        extra = super()._describe()
        return text + (", " + extra if extra else "")
