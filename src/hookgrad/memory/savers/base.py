"""What every saver shares: which tensors to leave alone, storing one buffer once, min_bytes.

A subclass only says how to encode one array (``_store``) into a ``Stored`` object and how that
object decodes (``Stored.decode``); the base class turns that into a pack/unpack pair.
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

import numpy as np

from ...autograd.graph import current_saved_tensor, saved_tensors_hooks
from ...tensor import Tensor
from .._packed import Held, Packed, array_of, kind_of, root_of, tensor_of, unpack_any


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

    def decode(self) -> np.ndarray:
        """The array back, C-contiguous, with the shape and dtype it was stored with."""
        raise NotImplementedError


class View(Packed):
    """What a saver's pack hook returns: a shared ``Stored`` plus how to view it."""

    __slots__ = ("stored", "shape", "dtype", "strides", "offset")

    def __init__(self, stored: Stored, shape: tuple, dtype: np.dtype, strides: Optional[tuple],
                 offset: int):
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

    def buffers(self):
        return ((id(self.stored), self.stored.nbytes),)

    def unpack(self) -> Tensor:
        array = self.stored.decode()
        if self.strides is not None:
            array = np.ndarray(self.shape, array.dtype, buffer=array, offset=self.offset,
                               strides=self.strides)
        return tensor_of(array)


class Saver:
    """A pack/unpack pair that stores saved activations differently.

    Use it as a pair (``saved_tensors_hooks(*saver)``), as a context manager (``with saver:``,
    composed after any enclosing hooks), or as a policy entry. It never touches parameters,
    buffers or inputs (they stay alive anyway: copying them would only add memory), tensors
    smaller than ``min_bytes``, or dtypes it cannot encode; views of one buffer are stored once.
    """

    kind = "saver"

    def __init__(self, min_bytes: int = 0):
        if min_bytes < 0:
            raise ValueError(f"min_bytes must be >= 0, got {min_bytes}")
        self.min_bytes = int(min_bytes)
        self._stored: "weakref.WeakValueDictionary[tuple, Stored]" = \
            weakref.WeakValueDictionary()
        self._contexts: list = []

    def __iter__(self):
        return iter((self.pack, self.unpack))

    def __enter__(self) -> "Saver":
        context = saved_tensors_hooks(self.pack, self.unpack, compose=True)
        context.__enter__()
        self._contexts.append(context)
        return self

    def __exit__(self, *exc) -> bool:
        self._contexts.pop().__exit__(*exc)
        return False

    def pack(self, value: Any) -> Any:
        """The pack hook: an activation becomes a ``View`` of a ``Stored``; others pass."""
        if isinstance(value, Held):  # a ledger saw it first: pack what it holds, tell it
            return value.repack(self._pack_value)
        return self._pack_value(value)

    def unpack(self, value: Any) -> Tensor:
        """The unpack hook: the tensor back, same shape and dtype."""
        return unpack_any(value)

    def accepts(self, dtype: np.dtype) -> bool:
        return True

    def _store(self, array: np.ndarray, tensor: Tensor) -> Stored:
        raise NotImplementedError

    def _pack_value(self, value: Any) -> Any:
        if not isinstance(value, Tensor):  # already packed by an earlier hook
            return value
        info = current_saved_tensor()
        if (kind_of(value, info) != "activation" or value.nbytes < self.min_bytes
                or not self.accepts(value.dtype.numpy)):
            # an output returned as-is would point at the saving node: a reference cycle
            return value.detach() if info is not None and info.is_output else value
        array = array_of(value)
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
            stored = self._store(root if whole else array, value)
            stored.root_ref = weakref.ref(root)
            self._stored[key] = stored
        if not whole:
            return View(stored, array.shape, array.dtype, None, 0)
        offset = start - root.__array_interface__["data"][0]
        return View(stored, array.shape, array.dtype, array.strides, offset)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return f"min_bytes={self.min_bytes}" if self.min_bytes else ""
