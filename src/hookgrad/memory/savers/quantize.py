"""quantize(bits): keep saved activations as 8-, 4- or 2-bit integer codes plus scales.

Affine (min/max) quantization, per tensor or per channel: ``x ≈ low + code * scale`` with
``code`` in ``0 .. 2**bits - 1``. Two choices keep gradients close to exact:
  * the minimum is exact (code 0 decodes to ``low`` itself), so a ReLU's zeros stay zeros;
  * where that minimum is an exact zero, a positive value never gets code 0, so the ReLU mask
    ``result > 0`` that backward reads off the saved output is exact, not just close.
Codes of 4 and 2 bits are packed two and four to a byte.

The algorithm is written once (``quantize_array``) over a few kernels per framework: NumPy for
hookgrad, torch ops on the tensor's own device for torch (a CUDA tensor is quantized on the GPU).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._backend import Backend, DType
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


class NumpyKernels:
    """The array operations ``quantize_array`` needs, on NumPy arrays."""

    @staticmethod
    def work(array):
        return np.asarray(array, dtype=np.float64 if array.dtype == np.float64 else np.float32)

    @staticmethod
    def reduce(values, reduce, largest: bool):
        if reduce is None:
            return values.max() if largest else values.min()
        return values.max(axis=reduce, keepdims=True) if largest else \
            values.min(axis=reduce, keepdims=True)

    @staticmethod
    def positive_or_one(scale, like):
        return np.asarray(np.where(scale > 0, scale, 1), dtype=like.dtype)

    @staticmethod
    def codes(scaled, levels: int):
        np.rint(scaled, out=scaled)
        np.clip(scaled, 0, levels, out=scaled)
        return scaled.astype(np.uint8)

    @staticmethod
    def at_least_one(codes, mask):
        np.maximum(codes, mask, out=codes, casting="unsafe")
        return codes

    @staticmethod
    def all_finite(value) -> bool:
        return bool(np.isfinite(value).all())

    @staticmethod
    def nbytes(value) -> int:
        return np.asarray(value).nbytes

    pack_bits = staticmethod(pack_bits)
    unpack_bits = staticmethod(unpack_bits)

    @staticmethod
    def decode(codes, scale, low, shape, dtype):
        result = codes.reshape(shape).astype(np.asarray(scale).dtype)
        result *= scale
        result += low
        return result.astype(dtype, copy=False)


class TorchKernels:
    """The same operations with torch ops, on the tensor's device."""

    def __init__(self, torch):
        self.torch = torch

    def work(self, array):
        torch = self.torch
        return array.to(torch.float64 if array.dtype == torch.float64 else torch.float32)

    @staticmethod
    def reduce(values, reduce, largest: bool):
        if reduce is None:
            return values.amax() if largest else values.amin()
        return values.amax(dim=reduce, keepdim=True) if largest else \
            values.amin(dim=reduce, keepdim=True)

    def positive_or_one(self, scale, like):
        return self.torch.where(scale > 0, scale, self.torch.ones_like(scale))

    def codes(self, scaled, levels: int):
        return scaled.round_().clamp_(0, levels).to(self.torch.uint8)

    def at_least_one(self, codes, mask):
        return self.torch.maximum(codes, mask.to(codes.dtype))

    def all_finite(self, value) -> bool:
        return bool(self.torch.isfinite(value).all())

    @staticmethod
    def nbytes(value) -> int:
        return value.numel() * value.element_size()

    def pack_bits(self, codes, bits: int):
        if bits == 8:
            return codes
        per_byte = 8 // bits
        flat = codes.reshape(-1)
        pad = (-flat.numel()) % per_byte
        if pad:
            flat = self.torch.cat([flat, flat.new_zeros(pad)])
        groups = flat.reshape(-1, per_byte)
        packed = groups[:, 0].clone()
        for j in range(1, per_byte):  # a loop over bit positions, not elements
            packed |= groups[:, j] << (bits * j)
        return packed

    def unpack_bits(self, packed, bits: int, size: int):
        if bits == 8:
            return packed.reshape(-1)
        per_byte = 8 // bits
        shifts = self.torch.arange(per_byte, dtype=self.torch.uint8, device=packed.device) * bits
        codes = (packed[:, None] >> shifts[None, :]) & ((1 << bits) - 1)
        return codes.reshape(-1)[:size]

    @staticmethod
    def decode(codes, scale, low, shape, dtype):
        return (codes.reshape(shape).to(scale.dtype) * scale + low).to(dtype)


class _QuantStored(Stored):
    __slots__ = ("codes", "low", "scale", "bits", "shape", "dtype", "kernels")

    def __init__(self, codes, low, scale, bits, shape, dtype, kernels):
        self.codes = codes
        self.low = low
        self.scale = scale
        self.bits = bits
        self.shape = shape
        self.dtype = dtype
        self.kernels = kernels

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"int{self.bits}"

    @property
    def nbytes(self) -> int:
        size = self.kernels.nbytes
        return size(self.codes) + size(self.low) + size(self.scale)

    def decode(self) -> Any:
        kernels = self.kernels
        count = 1
        for extent in self.shape:
            count *= int(extent)
        codes = kernels.unpack_bits(self.codes, self.bits, count)
        return kernels.decode(codes, self.scale, self.low, self.shape, self.dtype)


class Kept(Stored):
    """An array kept as it is (a quantizer's fallback for non-finite values)."""

    __slots__ = ("array",)

    kind = "kept"

    def __init__(self, array: Any):
        self.array = array

    @property
    def nbytes(self) -> int:
        array = self.array
        return array.nbytes if isinstance(array, np.ndarray) else \
            array.numel() * array.element_size()

    def decode(self) -> Any:
        array = self.array
        return np.ascontiguousarray(array) if isinstance(array, np.ndarray) else array


def quantize_array(array: Any, bits: int, axis: Optional[int],
                   kernels: Any = NumpyKernels) -> _QuantStored:
    """Encode ``array``; ``axis`` is the channel dim (one scale per slice) or None (one scale,
    over the flattened array: a 0-d tensor is one value)."""
    values = kernels.work(array)
    if axis is None or values.ndim < 2:
        values = values.reshape(-1)
        reduce = None
    else:
        reduce = tuple(d for d in range(values.ndim) if d != axis)
    low = kernels.reduce(values, reduce, largest=False)
    high = kernels.reduce(values, reduce, largest=True)
    levels = (1 << bits) - 1
    scale = kernels.positive_or_one((high - low) / levels, values)  # constant: every code is 0
    scaled = values - low
    zero_floor = low == 0  # where the minimum is an exact zero (a ReLU's output)
    above = (scaled > 0) & zero_floor if bool(zero_floor.any()) else None
    scaled /= scale
    codes = kernels.codes(scaled, levels)
    if above is not None:
        codes = kernels.at_least_one(codes, above)  # above zero: never code 0
    return _QuantStored(kernels.pack_bits(codes, bits), low, scale, bits, tuple(array.shape),
                        array.dtype, kernels)


class quantize(Saver):
    """Store saved floating activations as ``bits``-bit codes (8, 4 or 2) with a scale and an
    offset per channel (``per="channel"``, along ``dim``) or per tensor (``per="tensor"``).

    8 bits keep a quarter of float32's bytes with gradients within ~1e-2 relative error; 2 bits
    keep a sixteenth and are much rougher (see the benchmark's table). On torch the codes are
    computed with torch ops on the tensor's device::

        with memory.quantize(8):                      # framework="torch" for a torch model
            loss = model(x).sum()
        loss.backward()
    """

    def __init__(self, bits: int = 8, per: str = "channel", dim: int = 1, min_bytes: int = 0,
                 framework: Optional[str] = None):
        super().__init__(min_bytes, framework)
        if bits not in (8, 4, 2):
            raise ValueError(f"quantize() supports bits=8, 4 or 2, got {bits}")
        if per not in ("channel", "tensor"):
            raise ValueError(f"per must be 'channel' or 'tensor', got {per!r}")
        self.bits = bits
        self.per = per
        self.dim = dim
        self._torch_kernels: Optional[TorchKernels] = None

    def accepts(self, dtype: DType) -> bool:
        return dtype.kind in "fV"

    def _store(self, array: Any, tensor: Any, backend: Backend) -> Stored:
        axis = None
        if self.per == "channel" and array.ndim >= 2:
            axis = self.dim % array.ndim
        if backend.name == "torch":
            if self._torch_kernels is None:
                self._torch_kernels = TorchKernels(backend.torch)
            stored = quantize_array(array, self.bits, axis, self._torch_kernels)
        else:
            with np.errstate(invalid="ignore", over="ignore"):
                stored = quantize_array(array, self.bits, axis)
        kernels = stored.kernels
        if not (kernels.all_finite(stored.low) and kernels.all_finite(stored.scale)):
            return Kept(array)  # inf or nan has no affine code: keep it exact
        return stored

    def _describe(self) -> str:
        text = f"{self.bits}, per={self.per!r}"
        if self.per == "channel" and self.dim != 1:
            text += f", dim={self.dim}"
        extra = super()._describe()
        return text + (", " + extra if extra else "")
