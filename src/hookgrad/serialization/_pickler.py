"""The pickle inside a checkpoint, written the way torch writes it, without importing torch.

torch's ``data.pkl`` names torch's own functions (``torch._utils._rebuild_tensor_v2``) and classes
(``torch.Size``, ``torch.float32``) as pickle globals and refers to storages by persistent id.
The standard ``Pickler`` checks a global by importing its module, which would need torch, so we
use the pure-Python pickler and write those globals ourselves.
"""
from __future__ import annotations

import io
import pickle
from collections import OrderedDict
from typing import Any, Callable

import hookgrad
from ._storage import STORAGE_OF_DTYPE, StorageTable

_PicklerBase = pickle._Pickler  # type: ignore[attr-defined]  # the Python one: its globals are ours


class TorchName:
    """A global of torch's written by name: ``module.name`` in the pickle."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, *args: Any) -> None:  # pickle's reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is only a name written into a checkpoint")


REBUILD_TENSOR = TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
SIZE = TorchName("torch", "Size")
DEVICE = TorchName("torch", "device")


class _StorageRef:
    """Stands for one tensor's storage until ``persistent_id`` turns it into torch's tuple."""

    __slots__ = ("key", "storage_name", "numel")

    def __init__(self, key: str, storage_name: str, numel: int) -> None:
        self.key = key
        self.storage_name = storage_name
        self.numel = numel


class _Data:
    """A Parameter's data: pickled as a plain tensor (torch's Parameter wraps one)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor


class CheckpointPickler(_PicklerBase):
    """Pickles hookgrad objects as torch's: tensors as ``_rebuild_tensor_v2`` over a storage,
    Parameters as ``_rebuild_parameter``, dtypes, Size and device by torch's names.

    ``storage_id(key, storage_name, numel)`` returns the persistent id of a storage; the zip
    and the legacy writers differ only there.
    """

    dispatch = dict(_PicklerBase.dispatch)

    def __init__(self, file, table: StorageTable, storage_id: Callable, protocol: int = 2):
        super().__init__(file, protocol=protocol)
        self._table = table
        self._storage_id = storage_id

    def persistent_id(self, obj: Any):
        if type(obj) is _StorageRef:
            return self._storage_id(obj.key, obj.storage_name, obj.numel)
        return None

    def reducer_override(self, obj: Any):
        kind = type(obj)
        if kind is _Data or isinstance(obj, hookgrad.Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, hookgrad.Size):
            return SIZE, (tuple(int(n) for n in obj),)
        if isinstance(obj, hookgrad.device):
            return DEVICE, (str(obj),)
        return NotImplemented

    def _reduce_tensor(self, obj):
        if type(obj) is _Data:
            tensor, requires_grad = obj.tensor, False
        elif isinstance(obj, hookgrad.nn.Parameter):
            return REBUILD_PARAMETER, (_Data(obj), obj.requires_grad, OrderedDict())
        else:
            tensor, requires_grad = obj, obj.requires_grad
        table = self._table
        array = table.array_of(tensor)
        storage_name = STORAGE_OF_DTYPE.get(tensor.dtype.name)
        if storage_name is None:
            raise TypeError(f"cannot save a tensor of dtype {tensor.dtype}: torch's checkpoint "
                            "format has no storage type for it")
        if table.is_dry:  # the first pass only collects arrays
            table.add(array)
            return REBUILD_TENSOR, ()
        key, numel, offset, size, stride = table.layout(array, storage_name)
        return REBUILD_TENSOR, (_StorageRef(key, storage_name, numel), offset, size,
                                stride, requires_grad, OrderedDict())

    def _save_torch_name(self, obj: TorchName) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    def _save_dtype(self, obj) -> None:
        self._save_torch_name(TorchName("torch", obj.name))

    dispatch[TorchName] = _save_torch_name


def _register_dtype() -> None:
    CheckpointPickler.dispatch[hookgrad.dtype] = CheckpointPickler._save_dtype


class _Discard(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        return len(data)


def pickle_with_storages(obj: Any, storage_id: Callable, protocol: int = 2):
    """(pickle bytes, StorageTable) for ``obj``: a dry pass finds every tensor first, so tensors
    sharing memory get one storage whatever order they come in."""
    _register_dtype()
    table = StorageTable()
    CheckpointPickler(_Discard(), table, storage_id, protocol).dump(obj)
    table.is_dry = False
    out = io.BytesIO()
    CheckpointPickler(out, table, storage_id, protocol).dump(obj)
    return out.getvalue(), table
