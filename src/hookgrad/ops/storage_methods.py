"""Tensor methods about memory rather than values: ``resize_``, ``dim_order``, element-wise
Python callbacks (``apply_``, ``map_``), pinning and sharing, and ``nonzero_static``.

hookgrad keeps every tensor in ordinary process memory, so pinning is refused as a CPU-only
torch refuses it, and ``share_memory_`` only records the request (a NumPy array is already
visible to every thread; processes get copies through pickling either way).
"""
from __future__ import annotations

import numbers

import numpy as np

from ..tensor import Tensor
from ._base import cast
from .creation import empty_strided


def _writable_without_grad(tensor: Tensor, message: str) -> None:
    if tensor.requires_grad:
        raise RuntimeError(message)


def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """Gives this tensor the shape ``sizes`` in place, contiguous: the elements it had stay in
    memory order as far as they reach, new ones are uninitialised (zero here). Tensors that
    require grad cannot be resized, as in torch."""
    _writable_without_grad(self, "cannot resize variables that require grad")
    shape = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(
        sizes[0], numbers.Integral) else tuple(sizes)
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    old = self._data
    count = int(np.prod(shape, dtype=np.int64))
    storage = _storage(old)
    if storage is not None and count <= storage.size:
        # as torch's storage, the buffer never shrinks: a later, larger resize_ finds the
        # elements a smaller one hid
        self._data = storage[:count].reshape(shape)
    else:
        fresh = np.zeros(shape, old.dtype)
        kept = min(count, old.size)
        fresh.reshape(-1)[:kept] = old.ravel(order="K")[:kept]
        self._data = fresh
    return self


def _storage(array: np.ndarray):
    """The whole flat buffer ``array`` starts, when ``array`` is a contiguous view of its
    beginning (else None)."""
    if not array.flags.c_contiguous:
        return None
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous or root.ctypes.data != array.ctypes.data:
        return None
    return root.reshape(-1)


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """``resize_`` to ``the_template``'s shape."""
    return resize_(self, the_template.shape)


def dim_order(self: Tensor, *, ambiguity_check=False) -> tuple:
    """The dims from outermost to innermost in memory (largest stride first; ties keep the
    dims' order), e.g. (0, 2, 3, 1) for a channels-last image batch."""
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def apply_(self: Tensor, callable) -> Tensor:
    """Replaces each element by ``callable(element)`` (a Python call per element, as torch's;
    refused for tensors that require grad; like torch's, it leaves the version counter alone)."""
    _writable_without_grad(self, "Can't call apply_() on Variable that requires grad. Use "
                                 "var.detach().apply_() instead.")
    values = [callable(v) for v in self._data.reshape(-1).tolist()]
    self._data[...] = cast(np.asarray(values).reshape(self._data.shape), self._data.dtype)
    return self


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """Replaces each element by ``callable(element, other's element)``, ``tensor`` broadcast
    to this tensor's shape."""
    _writable_without_grad(self, "Can't call map_() on Variable that requires grad. Use "
                                 "var.detach().map_() instead.")
    other = np.broadcast_to(tensor._data, self._data.shape).reshape(-1).tolist()
    values = [callable(a, b) for a, b in zip(self._data.reshape(-1).tolist(), other)]
    self._data[...] = cast(np.asarray(values).reshape(self._data.shape), self._data.dtype)
    return self


def is_pinned(self: Tensor, device=None) -> bool:
    """False: hookgrad has no page-locked memory."""
    return False


def pin_memory(self: Tensor, device=None) -> Tensor:
    """Refused as a CPU-only torch refuses it: there is no accelerator to pin memory for."""
    raise RuntimeError("Cannot access accelerator device when none is available.")


def share_memory_(self: Tensor) -> Tensor:
    """Marks the tensor as shared (``is_shared`` turns true); its memory is already visible to
    every thread of the process."""
    self._extras().shared = True
    return self


def is_shared(self: Tensor) -> bool:
    """Whether ``share_memory_`` was called on this tensor."""
    return self._extra is not None and self._extra.shared


def new_empty_strided(self: Tensor, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False, **kwargs) -> Tensor:
    """``empty_strided`` with this tensor's dtype unless given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device,
                         requires_grad=requires_grad)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero``'s (n, ndim) indices cut or padded with ``fill_value`` to exactly ``size``
    rows (a shape known before the data is)."""
    found = np.argwhere(input._data).astype(np.int64)[:size]
    result = np.full((size, input._data.ndim), fill_value, np.int64)
    result[:found.shape[0]] = found
    return Tensor._make(result)


METHODS = {"resize_": resize_, "resize_as_": resize_as_, "dim_order": dim_order,
           "apply_": apply_, "map_": map_, "is_pinned": is_pinned, "pin_memory": pin_memory,
           "share_memory_": share_memory_, "is_shared": is_shared,
           "new_empty_strided": new_empty_strided, "nonzero_static": nonzero_static}
