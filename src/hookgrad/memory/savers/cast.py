"""cast(dtype): keep saved activations in float16 or bfloat16, give them back in their dtype.

On torch the cast is torch's own ``.to()`` on the tensor's device. NumPy has no bfloat16, so for
hookgrad it is stored as the upper 16 bits of the float32 pattern, rounded to nearest with ties
to even (what torch's ``.to(torch.bfloat16)`` does), NaN kept a NaN.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._backend import Backend, DType
from .base import Saver, Stored


_BLOCK = 1 << 18  # values encoded at a time: the uint32 temporaries stay at 1 MiB


def to_bfloat16_bits(array: np.ndarray) -> np.ndarray:
    """float → uint16 holding bfloat16, round-to-nearest-even. A large array is encoded a block
    at a time, so the 32-bit rounding temporaries do not add twice its size to the peak."""
    single = np.ascontiguousarray(array, dtype=np.float32)
    flat = single.reshape(-1).view(np.uint32)
    result = np.empty(flat.shape, np.uint16)
    for start in range(0, flat.size, _BLOCK):
        bits = flat[start:start + _BLOCK]
        rounded = bits >> 16
        rounded &= 1  # the lowest kept bit: a tie rounds towards the even pattern
        rounded += 0x7FFF
        rounded += bits
        rounded >>= 16
        chunk = result[start:start + _BLOCK]
        chunk[...] = rounded
        nan = bits & 0x7FFFFFFF > 0x7F800000
        if nan.any():  # rounding could carry a NaN's low payload into an infinity
            chunk[nan] = ((bits[nan] >> 16) & 0x8000) | 0x7FC0
    return result.reshape(single.shape)


def from_bfloat16_bits(bits: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """uint16 bfloat16 patterns → float array of ``dtype``."""
    wide = bits.astype(np.uint32)
    wide <<= 16
    return wide.view(np.float32).astype(dtype, copy=False)


class _CastStored(Stored):
    __slots__ = ("data", "dtype", "bfloat16")

    def __init__(self, data: np.ndarray, dtype: np.dtype, bfloat16: bool):
        self.data = data
        self.dtype = dtype
        self.bfloat16 = bfloat16

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "bfloat16" if self.bfloat16 else "float16"

    @property
    def nbytes(self) -> int:
        data = self.data
        return data.nbytes if isinstance(data, np.ndarray) else data.numel() * data.element_size()

    def decode(self) -> Any:
        if not isinstance(self.data, np.ndarray):  # a torch tensor: cast back on its device
            return self.data.to(self.dtype)
        if self.bfloat16:
            return from_bfloat16_bits(self.data, self.dtype)
        return self.data.astype(self.dtype)


def _dtype_name(dtype: Any) -> str:
    name = getattr(dtype, "name", None) or str(dtype)
    return name.replace("torch.", "")


class cast(Saver):
    """Store saved floating activations as ``float16`` or ``bfloat16`` (half the bytes of float32,
    a quarter of float64); unpack casts back. ``bfloat16`` keeps float32's range (no overflow)
    with 8 bits of mantissa; ``float16`` has 11 bits but overflows past 65504::

        with memory.cast("bfloat16"):
            loss = model(x).sum()
        loss.backward()
    """

    def __init__(self, dtype: Any = "bfloat16", min_bytes: int = 0,
                 framework: Optional[str] = None):
        super().__init__(min_bytes, framework)
        name = _dtype_name(dtype)
        if name in ("half",):
            name = "float16"
        if name not in ("float16", "bfloat16"):
            raise ValueError(f"cast() stores float16 or bfloat16, got {dtype!r}")
        self.dtype = name

    def accepts(self, dtype: DType) -> bool:
        # a float16 tensor cast to bfloat16 would lose bits for no saving
        return dtype.kind in "fV" and dtype.itemsize > 2

    def _store(self, array: Any, tensor: Any, backend: Backend) -> Stored:
        if backend.name == "torch":
            torch = backend.torch
            target = torch.bfloat16 if self.dtype == "bfloat16" else torch.float16
            return _CastStored(array.to(target), array.dtype, self.dtype == "bfloat16")
        if self.dtype == "bfloat16":
            return _CastStored(to_bfloat16_bits(array), array.dtype, True)
        return _CastStored(np.ascontiguousarray(array, dtype=np.float16), array.dtype, False)

    def _describe(self) -> str:
        extra = super()._describe()
        return repr(self.dtype) + (", " + extra if extra else "")
