"""Tensor methods about memory rather than values: ``resize_``, ``dim_order``, element-wise
Python callbacks (``apply_``, ``map_``), pinning and sharing, ``nonzero_static``, and the
storage family (``storage``, ``storage_type``, ``set_``, ``is_set_to``, ``_is_view``).

hookgrad keeps every tensor in ordinary process memory, so pinning is refused as a CPU-only
torch refuses it, and ``share_memory_`` only records the request (a NumPy array is already
visible to every thread; processes get copies through pickling either way).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import storage as storages
from ..autograd import grad_mode
from .._dtype import cpp_type_name
from .._strides import root_array, torch_strides
from .._warnings import warn_once
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


def storage(self: Tensor) -> storages.TypedStorage:
    """The tensor's memory as a typed storage of its dtype (deprecated in torch, as here: it
    warns; ``untyped_storage`` is the current form)."""
    warn_once(storages.DEPRECATED)  # once a process, as torch's
    return storages.TypedStorage(dtype=self.dtype, _array=root_array(self._data), _warn=False)


def storage_type(self: Tensor) -> type:
    """The legacy storage class of the tensor's dtype (``hookgrad.FloatStorage`` for float32)."""
    return storages.legacy_class(self.dtype)


def _is_view(self: Tensor) -> bool:
    """Whether this tensor was made as a view of another (its ``_base``)."""
    return self._base is not None


def _geometry(tensor: Tensor) -> tuple:
    array = tensor._data
    return (root_array(array).__array_interface__["data"][0], tensor.storage_offset(),
            tuple(array.shape), torch_strides(array))


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same storage with the same offset, sizes and strides."""
    return _geometry(self) == _geometry(tensor)


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


def set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """Makes this tensor view other memory, in place: ``set_()`` empties it, ``set_(tensor)``
    takes that tensor's storage, offset, sizes and strides, ``set_(storage, offset, size,
    stride)`` views a storage (an untyped one is read as this tensor's dtype; sizes default to
    the whole storage, strides to contiguous ones). Unlike torch, a storage is never grown to
    fit: a view past its end is an error."""
    if self.requires_grad and self._grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if source is None:
        if size is not None or stride is not None or storage_offset:
            raise TypeError("set_() with no source takes no other argument")
        array = np.empty((0,), self._data.dtype)
    elif isinstance(source, Tensor):
        if size is None and stride is None and not storage_offset:
            if source._data.dtype != self._data.dtype:
                raise RuntimeError(f"Could not set tensor of type {cpp_type_name(self.dtype)} "
                                   f"to a tensor of type {cpp_type_name(source.dtype)}")
            array = source._data.view()
        else:
            array = _view_storage(self, root_array(source._data), source.dtype, storage_offset,
                                  size, stride)
    elif isinstance(source, (storages.TypedStorage, storages.UntypedStorage)):
        typed = isinstance(source, storages.TypedStorage)
        array = _view_storage(self, source._array, source.dtype if typed else None,
                              storage_offset, size, stride)
    else:
        raise TypeError(f"set_(): expected a Tensor or a storage as source, got "
                        f"{type(source).__name__}")
    self._data = array
    self._version_counter[0] += 1
    return self


def _view_storage(self: Tensor, owner: np.ndarray, dtype, offset, size, stride) -> np.ndarray:
    """``owner``'s memory viewed as this tensor's dtype with the geometry given."""
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {cpp_type_name(self.dtype)} to a "
                           f"tensor of type {cpp_type_name(dtype)}")
    element = self._data.dtype
    data = storages._byte_view(owner)
    available = data.size // element.itemsize
    offset = int(offset)
    shape = (available - offset,) if size is None else tuple(int(n) for n in size)
    steps = _contiguous_strides(shape) if stride is None else tuple(int(s) for s in stride)
    if len(steps) != len(shape) or offset < 0 or any(n < 0 for n in shape) or any(
            s < 0 for s in steps):
        raise RuntimeError(f"set_: invalid geometry: sizes {list(shape)}, strides "
                           f"{list(steps)}, storage offset {offset}")
    need = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    if need > available:
        raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(steps)}, storage "
                           f"offset {offset}, and itemsize {element.itemsize} requiring a "
                           f"storage size of {need * element.itemsize} are out of bounds for "
                           f"storage of size {data.size}")
    flat = data[:available * element.itemsize].view(element)
    return np.lib.stride_tricks.as_strided(flat[offset:], shape,
                                           tuple(s * element.itemsize for s in steps))


METHODS = {"resize_": resize_, "resize_as_": resize_as_, "dim_order": dim_order,
           "apply_": apply_, "map_": map_, "is_pinned": is_pinned, "pin_memory": pin_memory,
           "share_memory_": share_memory_, "is_shared": is_shared,
           "new_empty_strided": new_empty_strided, "nonzero_static": nonzero_static,
           "storage": storage, "storage_type": storage_type, "_is_view": _is_view,
           "is_set_to": is_set_to, "set_": set_}
