"""Storages: how tensors are laid out in a checkpoint, both when writing and when reading.

A torch checkpoint keeps each tensor as (storage, offset, size, stride): tensors that share memory
share one storage. Writing, we find which hookgrad tensors share NumPy memory and give each group
one storage covering all of them; reading, each storage becomes one 1-D array and every tensor a
strided view on it, after checking the view stays inside the storage (a crafted file must not
make us read memory that is not its own).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import hookgrad
from hookgrad._strides import keeping_strides, torch_strides

# torch's legacy storage classes (``torch.FloatStorage``) by the dtype they hold
STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
    "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
    "BFloat16Storage": "bfloat16", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128", "QInt8Storage": "qint8", "QUInt8Storage": "quint8",
    "QInt32Storage": "qint32", "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}
STORAGE_OF_DTYPE = {dtype: storage for storage, dtype in STORAGE_DTYPES.items()}
# the dtype names torch writes as globals (``torch.float32``), ours or not
TORCH_DTYPE_NAMES = frozenset(STORAGE_DTYPES.values()) | {
    "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "complex32", "bits8", "bits16",
    "bits1x8", "bits2x4", "bits4x2"} | {f"int{n}" for n in range(1, 8)} | {
    f"uint{n}" for n in range(1, 8)}


def hookgrad_dtype(name: str, where: str = ""):
    """hookgrad's dtype called ``name`` (torch's spelling), or a TypeError naming it."""
    found = getattr(hookgrad, name, None)
    if isinstance(found, hookgrad.dtype):
        return found
    where = f" ({where})" if where else ""
    raise TypeError(f"hookgrad has no dtype torch.{name}{where}: it supports "
                    f"{', '.join(supported_dtype_names())}. Convert the tensor in torch first "
                    f"(e.g. tensor.float()) and save it again.")


def supported_dtype_names() -> List[str]:
    return [name for name in sorted(TORCH_DTYPE_NAMES | {"float16", "float32", "float64"})
            if isinstance(getattr(hookgrad, name, None), hookgrad.dtype)]


def numpy_dtype(dtype) -> np.dtype:
    """The little-endian NumPy dtype of a hookgrad dtype (the byte order torch files use)."""
    array = hookgrad.empty(0, dtype=dtype).numpy()
    return array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype


class LoadedStorage:
    """One storage read from a checkpoint: a flat array of ``dtype`` (``None`` for torch's
    untyped byte storages) plus the device it was saved from."""

    __slots__ = ("array", "dtype", "location")

    def __init__(self, array: np.ndarray, dtype: Any, location: str) -> None:
        self.array = array
        self.dtype = dtype
        self.location = location

    def size(self) -> int:
        return int(self.array.size)

    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def element_size(self) -> int:
        return int(self.array.itemsize)

    def tolist(self) -> list:
        return self.array.tolist()

    def cpu(self) -> "LoadedStorage":
        return self

    def __len__(self) -> int:
        return int(self.array.size)

    def __repr__(self) -> str:
        kind = "UntypedStorage" if self.dtype is None else f"TypedStorage(dtype={self.dtype})"
        return f"<{kind} of {self.array.size} elements on {self.location}>"


def _typed_array(storage: LoadedStorage, dtype) -> np.ndarray:
    if storage.dtype is not None:
        return storage.array
    target = numpy_dtype(dtype)  # an untyped (byte) storage read as ``dtype``
    if storage.array.nbytes % target.itemsize:
        raise RuntimeError(f"a storage of {storage.array.nbytes} bytes cannot hold "
                           f"{target.name} elements")
    return storage.array.view(target)


def strided_view(flat: np.ndarray, offset: int, size, stride) -> np.ndarray:
    """``flat[offset:]`` seen with torch's ``size`` and ``stride`` (in elements), after checking
    that every element it reaches lies inside ``flat``."""
    size = tuple(int(n) for n in size)
    stride = tuple(int(s) for s in stride)
    offset = int(offset)
    if len(size) != len(stride):
        raise RuntimeError(f"size {size} and stride {stride} have different lengths")
    if offset < 0 or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"invalid tensor layout in checkpoint: offset {offset}, size {size}, "
                           f"stride {stride}")
    if 0 in size:  # nothing to read; the strides are kept as saved, as torch keeps them
        return keeping_strides(np.empty(size, flat.dtype), stride)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if last >= flat.size:
        raise RuntimeError(f"tensor with offset {offset}, size {size} and stride {stride} is "
                           f"out of bounds for a storage of {flat.size} elements")
    contiguous = _contiguous_strides(size)
    if stride == contiguous:
        count = int(np.prod(size, dtype=np.int64))
        return flat[offset:offset + count].reshape(size)
    # an ndarray on ``flat``'s buffer keeps ``flat`` as its base, so views share a root
    return np.ndarray(size, flat.dtype, buffer=flat, offset=offset * flat.itemsize,
                      strides=tuple(s * flat.itemsize for s in stride))


def _contiguous_strides(size) -> Tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def rebuild_tensor(storage: LoadedStorage, offset: int, size, stride, requires_grad=False,
                   dtype=None):
    """A hookgrad tensor viewing ``storage`` (never a copy: tensors that shared a storage when
    saved share memory again)."""
    if not isinstance(storage, LoadedStorage):
        raise RuntimeError(f"expected a storage from the checkpoint, got {type(storage).__name__}")
    if dtype is None:
        dtype = storage.dtype
    if dtype is None:
        raise RuntimeError("an untyped storage needs a dtype to be read as a tensor")
    array = strided_view(_typed_array(storage, dtype), offset, size, stride)
    tensor = hookgrad.from_numpy(array)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _byte_bounds(array: np.ndarray) -> Tuple[int, int]:
    bounds = getattr(np, "byte_bounds", None)
    if bounds is None:
        from numpy.lib.array_utils import byte_bounds as bounds
    low, high = bounds(array)
    return int(low), int(high)


def _memory_owner(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class _Placement:
    """Where one tensor's elements sit: in a shared group, or in its own compact copy."""

    __slots__ = ("array", "group", "address", "strides")

    def __init__(self, array: np.ndarray, group: Optional[tuple], address: int, strides):
        self.array = array
        self.group = group
        self.address = address
        self.strides = strides


class StorageTable:
    """Assigns storages to the tensors of one ``save``.

    ``add`` is called for every tensor first (a dry pickling pass), then ``layout`` answers
    (storage key, offset, stride) for each and ``records`` yields the bytes of every storage.
    Tensors whose arrays come from the same memory and have the same dtype share one storage
    covering them all; a tensor NumPy lays out in a way torch cannot express (negative or
    misaligned strides) gets its own contiguous copy.
    """

    def __init__(self) -> None:
        self.is_dry = True  # the pickler's first pass calls ``add``; then this turns False
        self._placements: Dict[int, _Placement] = {}
        self._bounds: Dict[tuple, List[int]] = {}  # group -> [low, high] byte addresses
        self._anchors: Dict[tuple, np.ndarray] = {}
        self._keys: Dict[Any, str] = {}
        self._storages: List[Tuple[str, np.ndarray, str]] = []  # key, flat array, storage name
        self._arrays: Dict[int, tuple] = {}  # id(tensor) -> (tensor, array): ids stay unique

    def array_of(self, tensor) -> np.ndarray:
        """The tensor's NumPy array, the same object in both pickling passes."""
        entry = self._arrays.get(id(tensor))
        if entry is None:
            entry = self._arrays[id(tensor)] = (tensor, tensor.detach().numpy())
        return entry[1]

    def add(self, array: np.ndarray) -> None:
        if id(array) in self._placements:
            return
        itemsize = array.itemsize
        address, high = _byte_bounds(array) if array.size else (0, 0)
        start = array.__array_interface__["data"][0]
        strides = []
        shareable = array.size > 0 and start == address
        for n, step, reported in zip(array.shape, array.strides, torch_strides(array)):
            if n == 1:
                strides.append(reported)  # any stride is valid for a dimension of one
            elif step < 0 or step % itemsize:
                shareable = False
            else:
                strides.append(step // itemsize)
        group = None
        if shareable:
            owner = _memory_owner(array)
            low_owner = _byte_bounds(owner)[0] if owner.size else address
            group = (id(owner), array.dtype.str, (address - low_owner) % itemsize)
            bounds = self._bounds.get(group)
            if bounds is None:
                self._bounds[group] = [address, high]
                self._anchors[group] = array
            else:
                if address < bounds[0]:
                    bounds[0] = address
                    self._anchors[group] = array
                bounds[1] = max(bounds[1], high)
        self._placements[id(array)] = _Placement(array, group, address, strides)

    def layout(self, array: np.ndarray, storage_name: str) -> Tuple[str, int, int, tuple, tuple]:
        """(key, storage numel, offset, size, stride) of an array passed to ``add``."""
        placement = self._placements[id(array)]
        size = tuple(array.shape)
        itemsize = array.itemsize
        if placement.group is None:
            key = self._new_storage(("copy", id(array)), np.ascontiguousarray(array).reshape(-1),
                                    storage_name)
            # an empty tensor keeps the strides it reports (torch saves them as they are)
            stride = torch_strides(array) if array.size == 0 else _contiguous_strides(size)
            return key, int(array.size), 0, size, stride
        low, high = self._bounds[placement.group]
        numel = (high - low) // itemsize
        if placement.group not in self._keys:
            flat = np.lib.stride_tricks.as_strided(self._anchors[placement.group],
                                                   shape=(numel,), strides=(itemsize,))
            self._new_storage(placement.group, flat, storage_name)
        key = self._keys[placement.group]
        stride = tuple(placement.strides)
        return key, numel, (placement.address - low) // itemsize, size, stride

    def _new_storage(self, group, flat: np.ndarray, storage_name: str) -> str:
        key = self._keys.get(group)
        if key is None:
            key = str(len(self._storages))
            self._keys[group] = key
            self._storages.append((key, flat, storage_name))
        return key

    def records(self):
        """(key, little-endian contiguous flat array) for every storage, in key order."""
        for key, flat, _ in self._storages:
            if flat.dtype.byteorder == ">":
                flat = flat.astype(flat.dtype.newbyteorder("<"))
            yield key, np.ascontiguousarray(flat)
