"""What every saver shares: which tensors to leave alone, storing one buffer once, min_bytes.

A subclass only says how to encode one array (``_store``) into a ``Stored`` object and how that
object decodes (``Stored.decode``); the base class turns that into a pack/unpack pair. The array
is a NumPy array for a hookgrad tensor and the (detached) tensor itself for a torch tensor, so
each saver is written once for both frameworks (``quantize.py`` asks a small kernel class per
framework for its array operations).
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

import numpy as np

from .._backend import Backend, DType, backend_for, backend_of_tensor
from .._packed import Held, Packed, note_kept, take_note, unpack_any


def root_of(array: np.ndarray) -> np.ndarray:
    """The allocation a NumPy array views."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class Stored:
    """One encoded buffer; several ``View``s (views of one allocation) may share it."""

    __slots__ = ("root_ref", "__weakref__")

    kind = "stored"

    @property
    def nbytes(self) -> int:
        raise NotImplementedError

    @property
    def disk_nbytes(self) -> int:
        return 0

    def decode(self) -> Any:
        """The array back, contiguous, with the shape and dtype it was stored with."""
        raise NotImplementedError


_NARROW = ("uint8", "int8", "int16", "int32")  # tried in order; torch has all four


class Narrowed(Stored):
    """Integers (pool indices) kept losslessly in the narrowest type that holds their range."""

    __slots__ = ("data", "dtype", "name")

    def __init__(self, data: Any, dtype: Any):
        self.data, self.dtype = data, dtype
        self.name = str(data.dtype).replace("torch.", "")  # kept when ``data`` is on disk

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.name

    @property
    def nbytes(self) -> int:
        data = self.data
        return data.nbytes if isinstance(data, np.ndarray) else data.numel() * data.element_size()

    def decode(self) -> Any:
        data = self.data
        return data.astype(self.dtype) if isinstance(data, np.ndarray) else data.to(self.dtype)


def narrow(array: Any, backend: Backend) -> Optional[Narrowed]:
    """``array`` (integers) in the narrowest type that holds its values, or None if none is
    narrower than its own."""
    if backend.nbytes(array) == 0:
        return None
    low, high = int(array.min()), int(array.max())
    size = array.itemsize if isinstance(array, np.ndarray) else array.element_size()
    for name in _NARROW:
        info = np.iinfo(name)
        if info.bits // 8 >= size:
            return None
        if info.min <= low and high <= info.max:
            if backend.name == "torch":
                return Narrowed(array.to(getattr(backend.torch, name)), array.dtype)
            return Narrowed(array.astype(name), array.dtype)
    return None


class View(Packed):
    """What a saver's pack hook returns: a shared ``Stored`` plus how to view it."""

    __slots__ = ("stored", "shape", "dtype", "strides", "offset", "backend")

    def __init__(self, stored: Stored, shape: tuple, dtype: Any, strides: Optional[tuple],
                 offset: int, backend: Backend):
        self.backend = backend
        self.stored = stored
        self.shape = shape
        self.dtype = dtype
        self.strides = strides  # None: the stored array is this tensor, as it is
        self.offset = offset

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.stored.kind

    @property
    def disk_nbytes(self) -> int:
        return self.stored.disk_nbytes

    @property
    def note(self) -> str:  # type: ignore[override]
        return getattr(self.stored, "note", "")

    def buffers(self):
        return ((id(self.stored), self.stored.nbytes),)

    def unpack(self) -> Any:
        array = self.stored.decode()
        if self.backend.name == "torch":
            return array
        if self.strides is not None:
            array = np.ndarray(self.shape, array.dtype, buffer=array, offset=self.offset,
                               strides=self.strides)
        return self.backend.hookgrad.from_numpy(array)


class Saver:
    """A pack/unpack pair that stores saved activations differently.

    Use it as a pair (``saved_tensors_hooks(*saver)``), as a context manager (``with saver:``,
    composed after any enclosing hooks), or as a policy entry. It never touches parameters,
    buffers or inputs (they stay alive anyway: copying them would only add memory), tensors
    smaller than ``min_bytes``, or dtypes it cannot encode; views of one buffer are stored once.
    """

    kind = "saver"

    def __init__(self, min_bytes: int = 0, framework: Optional[str] = None):
        if min_bytes < 0:
            raise ValueError(f"min_bytes must be >= 0, got {min_bytes}")
        self.min_bytes = int(min_bytes)
        self.framework = framework  # whose hooks ``with saver:`` sets; packing serves both
        self._stored: "weakref.WeakValueDictionary[tuple, Stored]" = \
            weakref.WeakValueDictionary()
        self._contexts: list = []

    def __iter__(self):
        return iter((self.pack, self.unpack))

    def __enter__(self) -> "Saver":
        backend = backend_for(framework=self.framework or "hookgrad")
        context = backend.saved_tensors_hooks(self.pack, self.unpack)
        context.__enter__()
        self._contexts.append(context)
        return self

    def __exit__(self, *exc) -> bool:
        self._contexts.pop().__exit__(*exc)
        return False

    def pack(self, value: Any) -> Any:
        """The pack hook: an activation becomes a ``View`` of a ``Stored``; others pass."""
        if isinstance(value, Held):  # a ledger saw it first: pack what it holds, tell it
            # a torch ledger hands over a detached tensor: the kind it found comes along
            kind, original = value.record.kind, value.original()
            value.repack(lambda inner: self._pack_value(inner, kind, original))
            why = take_note(value.innermost())
            box = value
            while why and isinstance(box, Held):
                box.record.note = why
                box = box.value
            return value
        return self._pack_value(value)

    def unpack(self, value: Any) -> Any:
        """The unpack hook: the tensor back, same shape and dtype."""
        return unpack_any(value)

    def accepts(self, dtype: DType) -> bool:
        """Whether this saver encodes ``dtype`` (``kind`` and ``itemsize`` as NumPy's)."""
        return True

    def _store(self, array: Any, tensor: Any, backend: Backend) -> Stored:
        raise NotImplementedError

    def _store_any(self, array: Any, tensor: Any, backend: Backend) -> Optional[Stored]:
        """Integers the saver does not encode are narrowed losslessly (None: they cannot be)."""
        if self.accepts(backend.dtype_of(tensor)):
            return self._store(array, tensor, backend)
        return narrow(array, backend)

    def _pack_value(self, value: Any, kind: Optional[str] = None, original: Any = None) -> Any:
        backend = backend_of_tensor(value)
        if backend is None:  # already packed by an earlier hook
            return value
        info = backend.current_info()
        if kind is None:
            kind = backend.kind_of(value, info)
        if kind != "activation":  # alive anyway: copying it would only add memory
            return backend.as_packable(value, info)
        dtype = backend.dtype_of(value)
        integers = dtype.kind in "iu" and not self.accepts(dtype)
        if not self.accepts(dtype) and not integers:
            return note_kept(backend.as_packable(value, info),
                             f"{self!r} cannot encode {dtype}: kept as it is")
        if backend.nbytes(value) < self.min_bytes:
            return note_kept(backend.as_packable(value, info),
                             f"{self!r}: under min_bytes, kept as it is")
        if backend.name == "torch":
            return self._pack_torch(value, backend, original)
        array = backend.array_of(value)
        root = root_of(array)
        whole = (array.nbytes == root.nbytes and array.dtype == root.dtype
                 and root.flags.c_contiguous)
        start = array.__array_interface__["data"][0]
        if whole:
            key: tuple = (id(root), value._version)
        else:
            key = (id(root), value._version, start, array.shape, array.strides)
        stored = self._stored.get(key)
        if stored is None or stored.root_ref() is not root:
            stored = self._store_any(root if whole else array, value, backend)
            if stored is None:
                return note_kept(backend.as_packable(value, info),
                                 f"{self!r}: {array.dtype} already as narrow as its values")
            stored.root_ref = weakref.ref(root)
            self._stored[key] = stored
        if not whole:
            return View(stored, array.shape, array.dtype, None, 0, backend)
        offset = start - root.__array_interface__["data"][0]
        return View(stored, array.shape, array.dtype, array.strides, offset, backend)

    def _pack_torch(self, value: Any, backend: Backend, original: Any = None) -> View:
        """A torch tensor is encoded as it is (a view is stored alone); one saved twice (a
        ReLU's output the next layer saves again) is stored once, found by its storage, place,
        layout and version, and by being the same tensor object (a freed storage's address may
        be reused)."""
        tensor = value.detach()
        value = original if original is not None else value
        key = (backend.storage_key(value), value.storage_offset(), tuple(value.shape),
               value.stride(), value._version)
        stored = self._stored.get(key)
        if stored is None or stored.root_ref() is not value:
            stored = self._store_any(tensor, value, backend)
            if stored is None:
                return note_kept(tensor, f"{self!r}: {tensor.dtype} already as narrow as "
                                         "its values")
            stored.root_ref = weakref.ref(value)
            self._stored[key] = stored
        return View(stored, tuple(value.shape), value.dtype, None, 0, backend)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return f"min_bytes={self.min_bytes}" if self.min_bytes else ""
