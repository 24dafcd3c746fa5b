"""quantize(bits): keep saved activations as 8-, 4- or 2-bit integer codes plus scales.

Affine (min/max) quantization, per tensor or per channel: ``x ≈ low + code * scale`` with
``code`` in ``0 .. 2**bits - 1``. Two choices keep gradients close to exact:
  * the minimum is exact (code 0 decodes to ``low`` itself), so a ReLU's zeros stay zeros;
  * where that minimum is an exact zero, the ReLU mask ``result > 0`` that backward reads off
    the saved output stays exact, not just close. Rounding to nearest does it by never giving a
    positive value code 0 (a bias of at most one step, small at 8 bits); stochastic rounding
    keeps its codes unbiased and stores the mask of positive values beside them, one bit a
    value, so a positive value whose code is 0 decodes to the dtype's smallest normal number
    (ActNN also keeps a ReLU's mask apart from the codes).
Codes of 4 and 2 bits are packed two and four to a byte. A tensor with many exact zeros (a
ReLU's output) is stored sparse when that is smaller: a bitmask of its nonzero values plus
their codes alone (``_sparse.py``, ``sparse=``).

The algorithm is written once (``quantize_array``) over a few kernels per framework: NumPy for
hookgrad, torch ops on the tensor's own device for torch (a CUDA tensor is quantized on the GPU).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .._backend import Backend, DType
from ._groups import decode_groups, encode_groups, pack_bits, unpack_bits
from ._sparse import NumpySparse, TorchSparse, group_sparsity, sparsify
from .base import Saver, Stored


class NumpyKernels:
    """The array operations ``quantize_array`` needs, on NumPy arrays."""

    sparse = NumpySparse

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
    def codes(scaled, levels: int, seed: Optional[int] = None):
        if seed is None:
            np.rint(scaled, out=scaled)
        else:  # stochastic rounding: floor(x + u), unbiased: E[code] = x
            scaled += np.random.default_rng(seed).random(scaled.shape, dtype=scaled.dtype)
            np.floor(scaled, out=scaled)
        np.clip(scaled, 0, levels, out=scaled)
        return scaled.astype(np.uint8)

    @staticmethod
    def at_least_one(codes, mask):
        np.maximum(codes, mask, out=codes, casting="unsafe")
        return codes

    @staticmethod
    def pack_mask(mask):
        return np.packbits(mask.reshape(-1), bitorder="little")

    @staticmethod
    def lift_zeros(result, packed):
        """Values whose mask bit is set but that decoded to 0 become the dtype's smallest
        normal number: positive, as the value they stand for, and too small to matter."""
        mask = np.unpackbits(packed, count=result.size, bitorder="little").view(bool)
        mask &= result.reshape(-1) == 0
        np.copyto(result, _tiny(result.dtype), where=mask.reshape(result.shape))
        return result

    @staticmethod
    def all_finite(value) -> bool:
        return bool(np.isfinite(value).all())

    @staticmethod
    def nbytes(value) -> int:
        return np.asarray(value).nbytes

    pack_bits = staticmethod(pack_bits)
    unpack_bits = staticmethod(unpack_bits)

    @staticmethod
    def tiny(dtype):
        return _tiny(dtype)

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
        self.sparse = TorchSparse(torch)

    def tiny(self, dtype):
        return self.torch.finfo(dtype).tiny

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

    def codes(self, scaled, levels: int, seed: Optional[int] = None):
        if seed is None:
            scaled.round_()
        else:
            generator = self.torch.Generator(device=scaled.device).manual_seed(seed)
            scaled.add_(self.torch.rand(scaled.shape, generator=generator, dtype=scaled.dtype,
                                        device=scaled.device)).floor_()
        return scaled.clamp_(0, levels).to(self.torch.uint8)

    def to_groups(self, values, group: int):
        axis = max(range(values.dim()), key=lambda d: (values.shape[d], -d)) \
            if values.dim() else 0
        moved = values.reshape(1) if values.dim() == 0 else values.movedim(axis, -1)
        length = moved.shape[-1]
        pad = (-length) % group
        if pad:
            moved = self.torch.cat([moved, moved[..., -1:].expand(*moved.shape[:-1], pad)], -1)
        return moved.contiguous().reshape(-1, group), (axis, tuple(moved.shape), length)

    @staticmethod
    def from_groups(rows, layout):
        axis, padded, length = layout
        return rows.reshape(padded)[..., :length].movedim(-1, axis).contiguous()

    def at_least_one(self, codes, mask):
        return self.torch.maximum(codes, mask.to(codes.dtype))

    def pack_mask(self, mask):
        return self.pack_bits(mask.to(self.torch.uint8), 1)

    def lift_zeros(self, result, packed):
        mask = self.unpack_bits(packed, 1, result.numel()).reshape(result.shape).bool()
        tiny = self.torch.finfo(result.dtype).tiny
        return self.torch.where(mask & (result == 0), self.torch.full_like(result, tiny), result)

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


def _tiny(dtype: Any) -> Any:
    try:
        return np.finfo(dtype).tiny
    except ValueError:  # bfloat16 and other ml_dtypes floats
        import ml_dtypes
        return ml_dtypes.finfo(dtype).tiny


class _QuantStored(Stored):
    __slots__ = ("codes", "low", "scale", "bits", "shape", "dtype", "kernels", "positive",
                 "mask", "nonzero", "folded")

    def __init__(self, codes, low, scale, bits, shape, dtype, kernels, positive=None,
                 mask=None, nonzero=0, folded=False):
        self.codes = codes
        self.low = low
        self.scale = scale
        self.bits = bits
        self.shape = shape
        self.dtype = dtype
        self.kernels = kernels
        self.positive = positive  # packed mask of the positive values (stochastic rounding)
        # sparse storage: the packed mask of the nonzero values (``codes`` are theirs alone),
        # how many there are, and whether the mask stands in for ``positive`` too
        self.mask, self.nonzero, self.folded = mask, nonzero, folded

    @property
    def kind(self) -> str:  # type: ignore[override]
        return f"int{self.bits}" + ("" if self.mask is None else " sparse")

    @property
    def nbytes(self) -> int:
        size = self.kernels.nbytes
        masks = sum(size(mask) for mask in (self.positive, self.mask) if mask is not None)
        return size(self.codes) + size(self.low) + size(self.scale) + masks

    def decode(self) -> Any:
        kernels = self.kernels
        count = math.prod(int(extent) for extent in self.shape)
        if self.mask is None:
            codes = kernels.unpack_bits(self.codes, self.bits, count)
        else:
            codes = kernels.sparse.join(
                self.mask, kernels.unpack_bits(self.codes, self.bits, self.nonzero), count)
        result = kernels.decode(codes, self.scale, self.low, self.shape, self.dtype)
        if self.mask is not None:
            result = kernels.sparse.finish(result, self.mask, self.low,
                                           kernels.tiny(result.dtype) if self.folded else None)
        if self.positive is not None:
            result = kernels.lift_zeros(result, self.positive)
        return result


class Kept(Stored):
    """An array kept as it is (a quantizer's fallback for non-finite values)."""

    __slots__ = ("array", "note")

    kind = "kept"

    def __init__(self, array: Any, note: str = ""):
        self.array = array
        self.note = note

    @property
    def nbytes(self) -> int:
        array = self.array
        return array.nbytes if isinstance(array, np.ndarray) else \
            array.numel() * array.element_size()

    def decode(self) -> Any:
        array = self.array
        return np.ascontiguousarray(array) if isinstance(array, np.ndarray) else array


class _GroupStored(Stored):
    """Codes of groups of values (rows of a ``_QuantStored``) and how to put them back."""

    __slots__ = ("rows", "layout", "shape")

    def __init__(self, rows: _QuantStored, layout: tuple, shape: tuple):
        self.rows, self.layout, self.shape = rows, layout, shape

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.rows.kind

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes

    def decode(self) -> Any:
        rows = self.rows
        if rows.kernels is NumpyKernels:  # a block at a time, into one new array
            return decode_groups(rows.codes, rows.bits, rows.low, rows.scale, rows.positive,
                                 self.layout, rows.shape, self.shape, rows.dtype,
                                 _tiny(rows.dtype), ENCODE_BLOCK_BYTES,
                                 None if rows.mask is None else (rows.mask, rows.nonzero,
                                                                 rows.folded))
        values = rows.kernels.from_groups(rows.decode(), self.layout)
        return values.reshape(self.shape)


def quantize_groups(array: Any, bits: int, group: int, kernels: Any = NumpyKernels,
                    seed: Optional[int] = None, sparse: Optional[bool] = None) -> Stored:
    """Encode ``array`` in groups of ``group`` consecutive values along its largest dimension,
    each with its own offset and scale (ActNN's per-group quantization)."""
    values = kernels.work(array)
    if values.ndim == 0:
        values = values.reshape(1)
    if kernels is NumpyKernels:  # laid out and encoded a block at a time (see _groups.py)
        levels = (1 << bits) - 1
        codes, low, scale, positive, layout, rows_shape, mask = encode_groups(
            values, group, bits, seed,
            lambda rows, low, scale, part_seed: _codes(rows, low, scale, levels, part_seed,
                                                       NumpyKernels),
            ENCODE_BLOCK_BYTES, group_sparsity(values, bits, group, seed, sparse))
        stored = _QuantStored(codes, low, scale, bits, rows_shape, array.dtype, NumpyKernels,
                              positive, *(mask or ()))
        return _GroupStored(stored, layout, tuple(array.shape))
    rows, layout = kernels.to_groups(values, group)
    stored = quantize_array(rows, bits, 0, kernels, seed, sparse)
    stored.dtype = array.dtype
    return _GroupStored(stored, layout, tuple(array.shape))


def quantize_array(array: Any, bits: int, axis: Optional[int],
                   kernels: Any = NumpyKernels, seed: Optional[int] = None,
                   sparse: Optional[bool] = None) -> _QuantStored:
    """Encode ``array``; ``axis`` is the channel dim (one scale per slice) or None (one scale,
    over the flattened array: a 0-d tensor is one value). ``seed``: round stochastically with
    noise from a generator seeded with it (None: to nearest). ``sparse``: store the nonzero
    values' codes and their mask (True), every code (False), or the smaller (None)."""
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
    if kernels is NumpyKernels and values.ndim and values.nbytes > ENCODE_BLOCK_BYTES:
        codes, positive = _codes_in_blocks(values, low, scale, levels, seed)
    else:
        codes, positive = _codes(values, low, scale, levels, seed, kernels)
    shape, dtype = tuple(array.shape), array.dtype
    kept = sparsify(kernels.sparse, values, codes, positive, bits, sparse,
                    math.prod(values.shape))
    if kept is not None:
        return _QuantStored(kernels.pack_bits(kept.codes, bits), low, scale, bits, shape,
                            dtype, kernels,
                            None if kept.positive is None else kernels.pack_mask(kept.positive),
                            kept.mask, kept.nonzero,
                            positive is not None and kept.positive is None)
    return _QuantStored(kernels.pack_bits(codes, bits), low, scale, bits, shape, dtype, kernels,
                        None if positive is None else kernels.pack_mask(positive))


# Encoding makes float temporaries as large as the activation (values - low, the rounding
# noise, masks); on NumPy a large activation is encoded this many bytes of it at a time, so
# saving it does not raise the step's peak by a multiple of its size.
ENCODE_BLOCK_BYTES = 1 << 20


def _codes(values, low, scale, levels: int, seed: Optional[int], kernels: Any) -> tuple:
    """(codes, mask of the positive values where the minimum is 0, or None). Rounding to
    nearest (``seed`` None) folds the mask into the codes: a positive value gets code 1 at
    least. Stochastic rounding must stay unbiased, so the mask is returned to keep apart."""
    scaled = values - low
    zero_floor = low == 0  # where the minimum is an exact zero (a ReLU's output)
    above = (scaled > 0) & zero_floor if bool(zero_floor.any()) else None
    scaled /= scale
    codes = kernels.codes(scaled, levels, seed)
    if above is not None and seed is None:
        return kernels.at_least_one(codes, above), None  # above zero: never code 0
    return codes, above


def _codes_in_blocks(values: np.ndarray, low, scale, levels: int, seed: Optional[int]) -> tuple:
    """``_codes`` over slices of the leading dim (offsets and scales sliced alike when they
    vary along it); each block's noise comes from the generator seeded with (seed, block)."""
    codes = np.empty(values.shape, np.uint8)
    positive = None
    rows = max(1, ENCODE_BLOCK_BYTES // max(1, values[0].nbytes))
    low, scale = np.asarray(low), np.asarray(scale)
    for number, start in enumerate(range(0, values.shape[0], rows)):
        block = slice(start, start + rows)
        part_low = low[block] if low.ndim and low.shape[0] > 1 else low
        part_scale = scale[block] if scale.ndim and scale.shape[0] > 1 else scale
        codes[block], above = _codes(values[block], part_low, part_scale, levels,
                                     None if seed is None else (seed, number), NumpyKernels)
        if above is not None:
            if positive is None:
                positive = np.zeros(values.shape, bool)
            positive[block] = above
    return codes, positive


class quantize(Saver):
    """Store saved floating activations as ``bits``-bit codes (8, 4 or 2) with a scale and an
    offset per channel (``per="channel"``, along ``dim``), per tensor (``per="tensor"``) or per
    group of ``group_size`` consecutive values along the largest dimension (``per="group"``).

    8 bits keep a quarter of float32's bytes with gradients within ~1e-2 relative error. 2 bits
    train only with small groups and ``rounding="stochastic"`` (ActNN's recipe: codes round up
    with probability equal to the remainder, so they are unbiased); the noise comes from a
    generator seeded with ``(seed, call number)``, so a run repeats exactly. On torch the codes
    are computed with torch ops on the tensor's device.

    ``sparse``: a tensor with many exact zeros (a ReLU's output is about half zeros) can be
    stored as a bitmask of its nonzero values plus their codes alone (Gist's sparse storage):
    ``None`` (the default) does so when that takes strictly fewer bytes than every code, about
    when more than 1/8 (8 bits), 1/4 (4 bits) or 1/2 (2 bits) of the values are zero; ``True``
    always, ``False`` never. Zeros decode to exact 0 and other values exactly as dense::

        with memory.quantize(8):                      # framework="torch" for a torch model
            loss = model(x).sum()
        loss.backward()
        with memory.quantize(2, per="group", rounding="stochastic"):
            ...
    """

    def __init__(self, bits: int = 8, per: str = "channel", dim: int = 1, min_bytes: int = 0,
                 framework: Optional[str] = None, group_size: int = 128,
                 rounding: str = "nearest", seed: int = 0, sparse: Optional[bool] = None):
        super().__init__(min_bytes, framework)
        if bits not in (8, 4, 2):
            raise ValueError(f"quantize() supports bits=8, 4 or 2, got {bits}")
        if per not in ("channel", "tensor", "group"):
            raise ValueError(f"per must be 'channel', 'tensor' or 'group', got {per!r}")
        if rounding not in ("nearest", "stochastic"):
            raise ValueError(f"rounding must be 'nearest' or 'stochastic', got {rounding!r}")
        if sparse not in (None, True, False):
            raise ValueError(f"sparse must be None, True or False, got {sparse!r}")
        if group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {group_size}")
        self.bits = bits
        self.per = per
        self.dim = dim
        self.group_size = int(group_size)
        self.rounding = rounding
        self.seed = int(seed)
        self.sparse = sparse
        self._calls = 0
        self._torch_kernels: Optional[TorchKernels] = None

    def accepts(self, dtype: DType) -> bool:
        return dtype.kind in "fV"

    def _next_seed(self) -> Optional[int]:
        if self.rounding == "nearest":
            return None
        self._calls += 1
        return (self.seed * 1_000_003 + self._calls) & ((1 << 63) - 1)

    def _store(self, array: Any, tensor: Any, backend: Backend) -> Stored:
        axis = None
        if self.per == "channel" and array.ndim >= 2:
            axis = self.dim % array.ndim
        if backend.name == "torch":
            if self._torch_kernels is None:
                self._torch_kernels = TorchKernels(backend.torch)
            kernels: Any = self._torch_kernels
        else:
            kernels = NumpyKernels
        with np.errstate(invalid="ignore", over="ignore"):
            if self.per == "group":
                stored: Any = quantize_groups(array, self.bits, self.group_size, kernels,
                                              self._next_seed(), self.sparse)
                rows = stored.rows
            else:
                stored = rows = quantize_array(array, self.bits, axis, kernels,
                                               self._next_seed(), self.sparse)
        if not (kernels.all_finite(rows.low) and kernels.all_finite(rows.scale)):
            # inf or nan has no affine code: keep it exact
            return Kept(array, f"{self!r}: inf or nan has no code, kept exact")
        return stored

    def _describe(self) -> str:
        text = f"{self.bits}, per={self.per!r}"
        if self.per == "channel" and self.dim != 1:
            text += f", dim={self.dim}"
        if self.per == "group":
            text += f", group_size={self.group_size}"
        if self.rounding != "nearest":
            text += f", rounding={self.rounding!r}"
            if self.seed:
                text += f", seed={self.seed}"
        if self.sparse is not None:
            text += f", sparse={self.sparse}"
        extra = super()._describe()
        return text + (", " + extra if extra else "")
