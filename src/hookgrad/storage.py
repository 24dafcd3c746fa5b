"""Storages: the memory behind tensors, as torch exposes it.

``Tensor.untyped_storage()`` gives an ``UntypedStorage``: the bytes of the NumPy array that owns
the tensor's memory (every view of it reports the same one). ``Tensor.storage()`` gives the older,
deprecated ``TypedStorage``: the same memory read as elements of the tensor's dtype. Both are
windows on that memory, never copies: writing through them changes the tensor.

The legacy classes (``FloatStorage``, ``LongStorage``, ...) make typed storages of their dtype
and answer ``isinstance`` for any typed storage of it, as torch's do. Below ``tensor.py``: this
module knows arrays and dtypes only.
"""
from __future__ import annotations

import numbers
from typing import Any, List, Optional, Union

import numpy as np

from . import _device, _dtype
from ._warnings import warn_once

__all__ = ["UntypedStorage", "TypedStorage", "is_storage"]


def _byte_view(array: np.ndarray) -> np.ndarray:
    """``array``'s whole buffer as 1-D uint8, sharing its memory (a copy only if the owner is
    not laid out in one block, which NumPy-made owners always are)."""
    if array.flags.c_contiguous:
        flat = array.reshape(-1)
    elif array.flags.f_contiguous:
        flat = array.reshape(-1, order="F")
    else:  # pragma: no cover - owners made by NumPy are always one block
        flat = np.ascontiguousarray(array).reshape(-1)
    return flat.view(np.uint8)


def _index(index: Any, size: int, what: str) -> int:
    if not isinstance(index, numbers.Integral) or isinstance(index, bool):
        raise TypeError(f"can't index a {what} with {type(index).__name__}")
    position = int(index) + size if index < 0 else int(index)
    if not 0 <= position < size:
        raise IndexError(f"index {int(index)} out of range for storage of size {size}")
    return position


class _OnTheCpu:
    """What both kinds of storage answer alike: their bytes' address and count, and that they
    are plain process memory on the CPU (shared by its threads, never pinned)."""

    __slots__ = ()

    def data_ptr(self) -> int:
        """Address of its first byte."""
        return int(self._array.__array_interface__["data"][0])

    def nbytes(self) -> int:
        """Its size in bytes."""
        return int(self._array.nbytes)

    @property
    def device(self):
        """Where the memory is: always the CPU."""
        return _device.device("cpu")

    @property
    def is_cuda(self) -> bool:
        """False: hookgrad keeps memory on the CPU."""
        return False

    def is_shared(self) -> bool:
        """False: a process's memory is shared by its threads already."""
        return False

    def share_memory_(self):
        """This storage (its memory is already visible to every thread of the process)."""
        return self

    def is_pinned(self, device: Any = None) -> bool:
        """False: hookgrad has no page-locked memory."""
        return False

    def cpu(self):
        """This storage (it is on the CPU already)."""
        return self

    def __iter__(self):
        return iter(self.tolist())


class UntypedStorage(_OnTheCpu):
    """Bytes: ``len``, ``nbytes()`` and ``size()`` count them; indexing reads and writes one
    byte as an int, and a slice is a storage on part of the same memory."""

    __slots__ = ("_array",)

    def __init__(self, size_or_array: Union[int, np.ndarray] = 0, *, device: Any = None):
        if isinstance(size_or_array, np.ndarray):
            self._array = size_or_array  # the owner of some tensor's memory
        else:
            if device is not None:
                _device.device(device)  # refuses what hookgrad cannot hold
            self._array = np.zeros(int(size_or_array), np.uint8)

    def _bytes(self) -> np.ndarray:
        return _byte_view(self._array)

    size = _OnTheCpu.nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        """1: an untyped storage counts bytes."""
        return 1

    def untyped(self) -> "UntypedStorage":
        """This storage."""
        return self

    def __getitem__(self, index):
        data = self._bytes()
        if isinstance(index, slice):
            start, stop, step = index.indices(len(data))
            if step != 1:
                raise RuntimeError("slices with a step are not supported by a storage")
            return UntypedStorage(data[start:max(start, stop)])
        return int(data[_index(index, len(data), "storage")])

    def __setitem__(self, index, value) -> None:
        data = self._bytes()
        if isinstance(index, slice):
            data[index] = value
        else:
            data[_index(index, len(data), "storage")] = value

    def tolist(self) -> List[int]:
        """Its bytes as a list of ints."""
        return self._bytes().tolist()

    def fill_(self, value: int) -> "UntypedStorage":
        """Sets every byte to ``value``."""
        self._bytes()[...] = value
        return self

    def copy_(self, source: "UntypedStorage", non_blocking: bool = False) -> "UntypedStorage":
        """Copies ``source``'s bytes in; the sizes must match."""
        other = source.untyped()._bytes()
        data = self._bytes()
        if other.size != data.size:
            raise RuntimeError(f"size mismatch: copying a storage of {other.size} bytes into "
                               f"one of {data.size}")
        data[...] = other
        return self

    def clone(self) -> "UntypedStorage":
        """A new storage holding a copy of these bytes."""
        return UntypedStorage(self._bytes().copy())

    def __repr__(self) -> str:
        body = "\n".join(f" {value}" for value in self.tolist())
        tail = f"[hookgrad.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"
        return f"{body}\n{tail}" if body else tail


DEPRECATED = ("TypedStorage is deprecated and will go; it only matters if you use storages "
               "directly. Use tensor.untyped_storage() instead of tensor.storage().")


class TypedStorage(_OnTheCpu):
    """A storage read as elements of ``dtype`` (torch's deprecated typed storage): ``size()``
    and ``len`` count elements, indexing gives Python numbers."""

    __slots__ = ("_array", "dtype")

    def __init__(self, *args: Any, dtype: Any = None, device: Any = None,
                 _array: Optional[np.ndarray] = None, _warn: bool = True):
        if _warn:
            warn_once(DEPRECATED)
        self.dtype = (_dtype.get_default_dtype() if dtype is None
                      else _dtype.from_numpy_dtype(_dtype.to_numpy_dtype(dtype)))
        if _array is not None:
            self._array = _array
            return
        if device is not None:
            _device.device(device)
        numpy_dtype = self.dtype.numpy
        if not args:
            self._array = np.zeros(0, numpy_dtype)
        elif len(args) == 1 and isinstance(args[0], numbers.Integral):
            self._array = np.zeros(int(args[0]), numpy_dtype)
        elif len(args) == 1:
            self._array = np.asarray(list(args[0])).astype(numpy_dtype).reshape(-1)
        else:
            raise TypeError("TypedStorage() takes a size or a sequence of values")

    def _elements(self) -> np.ndarray:
        numpy_dtype = self.dtype.numpy
        data = _byte_view(self._array)
        return data[:data.size - data.size % numpy_dtype.itemsize].view(numpy_dtype)

    def size(self) -> int:
        """Its size in elements of its dtype."""
        return int(self._array.nbytes // self.dtype.numpy.itemsize)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        """Bytes per element of its dtype."""
        return self.dtype.numpy.itemsize

    def untyped(self) -> UntypedStorage:
        """The same memory as bytes."""
        return UntypedStorage(self._array)

    def _new(self, array: np.ndarray) -> "TypedStorage":
        return TypedStorage(dtype=self.dtype, _array=array, _warn=False)

    def __getitem__(self, index):
        if isinstance(index, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        elements = self._elements()
        return elements[_index(index, elements.size, "storage")].item()

    def __setitem__(self, index, value) -> None:
        elements = self._elements()
        if isinstance(index, slice):
            elements[index] = value
        else:
            elements[_index(index, elements.size, "storage")] = value

    def tolist(self) -> list:
        """Its elements as Python numbers."""
        return self._elements().tolist()

    def fill_(self, value) -> "TypedStorage":
        """Sets every element to ``value``."""
        self._elements()[...] = value
        return self

    def copy_(self, source, non_blocking: bool = False) -> "TypedStorage":
        """Copies ``source``'s elements in (converted to this dtype); sizes must match."""
        other = source._elements() if isinstance(source, TypedStorage) else source._bytes()
        elements = self._elements()
        if other.size != elements.size:
            raise RuntimeError(f"size mismatch: copying {other.size} elements into a storage "
                               f"of {elements.size}")
        elements[...] = other.astype(elements.dtype, copy=False)
        return self

    def clone(self) -> "TypedStorage":
        """A new typed storage holding a copy of these elements."""
        return self._new(self._elements().copy())

    def type(self, dtype: Any = None, non_blocking: bool = False):
        """The legacy class's name (``'hookgrad.FloatStorage'``) without an argument."""
        if dtype is None:
            return f"hookgrad.{legacy_class(self.dtype).__name__}"
        raise NotImplementedError("TypedStorage.type(dtype) is not supported")

    def __repr__(self) -> str:
        body = "\n".join(f" {value}" for value in self.tolist())
        tail = (f"[hookgrad.storage.TypedStorage(dtype=hookgrad.{self.dtype.name}, device=cpu) "
                f"of size {self.size()}]")
        return f"{body}\n{tail}" if body else tail


class _LegacyStorage(type):
    """The type of ``FloatStorage`` and its kin: calling one makes a typed storage of its
    dtype, and any typed storage of that dtype is an instance of it."""

    def __call__(cls, *args: Any, **kwargs: Any) -> TypedStorage:
        return TypedStorage(*args, dtype=cls.dtype, **kwargs)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, TypedStorage) and instance.dtype == cls.dtype

    def __repr__(cls) -> str:
        return f"<class 'hookgrad.{cls.__name__}'>"


_LEGACY_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                 "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                 "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
                 "bool": "BoolStorage"}
LEGACY_CLASSES = {name: _LegacyStorage(name, (), {
    "dtype": _dtype._by_name(dtype_name), "__module__": "hookgrad",
    "__doc__": f"Typed storages of {dtype_name} (torch's legacy class): ``{name}(n)`` makes one of "
               f"n zeros, ``{name}(values)`` one holding them."})
    for dtype_name, name in _LEGACY_NAMES.items()}
FloatStorage, DoubleStorage, HalfStorage = (LEGACY_CLASSES[n] for n in (
    "FloatStorage", "DoubleStorage", "HalfStorage"))
BFloat16Storage, LongStorage, IntStorage = (LEGACY_CLASSES[n] for n in (
    "BFloat16Storage", "LongStorage", "IntStorage"))
ShortStorage, CharStorage, ByteStorage, BoolStorage = (LEGACY_CLASSES[n] for n in (
    "ShortStorage", "CharStorage", "ByteStorage", "BoolStorage"))


def legacy_class(dtype) -> type:
    """``FloatStorage`` for float32, and so on: what ``Tensor.storage_type()`` returns."""
    return LEGACY_CLASSES[_LEGACY_NAMES[str(dtype).rsplit(".", 1)[-1]]]


def is_storage(obj: Any) -> bool:
    """Whether ``obj`` is a storage (typed or untyped), as ``torch.is_storage``."""
    return isinstance(obj, (UntypedStorage, TypedStorage))
