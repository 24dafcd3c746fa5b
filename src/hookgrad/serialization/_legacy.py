"""torch's legacy (pre-1.6, non-zip) checkpoint format, both ways.

Five pickles in a row — a magic number, the protocol version 1001, a dict describing the
machine, the object (storages as persistent ids ``("storage", torch.FloatStorage, key, "cpu",
numel, None)``) and the list of storage keys — then each storage's bytes, in that order, every
one preceded by its element count as a little-endian int64.
"""
from __future__ import annotations

import pickle
import struct
from typing import Any, Callable

import numpy as np

from ._pickler import TorchName, pickle_with_storages
from ._storage import LoadedStorage, hookgrad_dtype, numpy_dtype
from ._unpickler import UnpicklingError, parse_storage_id, unpickler

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
MAGIC_BYTES = MAGIC_NUMBER.to_bytes(10, "little")  # as pickle's LONG1 opcode spells it
_SYSTEM = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
           "type_sizes": {"short": 2, "int": 4, "long": 4}}


def is_legacy(head: bytes) -> bool:
    return head[:1] == b"\x80" and MAGIC_BYTES in head[:32]


def _storage_id(key: str, storage_name: str, numel: int) -> tuple:
    return ("storage", TorchName("torch", storage_name), key, "cpu", numel, None)


def write_legacy(obj: Any, file, protocol: int = 2) -> None:
    """Write ``obj`` in torch's legacy format (``_use_new_zipfile_serialization=False``)."""
    data_pkl, table = pickle_with_storages(obj, _storage_id, protocol)
    records = list(table.records())
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYSTEM):
        pickle.dump(header, file, protocol=protocol)
    file.write(data_pkl)
    pickle.dump([key for key, _ in records], file, protocol=protocol)
    for _, flat in records:
        file.write(struct.pack("<q", flat.size))
        file.write(memoryview(flat.view(np.uint8)))


def _read_exactly(file, buffer: memoryview) -> None:
    position = 0
    while position < buffer.nbytes:
        read = file.readinto(buffer[position:])
        if not read:
            raise RuntimeError("legacy checkpoint is truncated")
        position += read


def read_legacy(file, weights_only: bool, restore: Callable, pickle_load_args: dict) -> Any:
    """Load the object of a legacy torch checkpoint from the binary file ``file``."""
    def header():
        return unpickler(file, weights_only, **pickle_load_args).load()

    if header() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = header()
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    system = header()
    little = system.get("little_endian", True) if isinstance(system, dict) else True
    storages: dict = {}
    position = file.tell()
    remaining = file.seek(0, 2) - position  # no storage can hold more bytes than the file has
    file.seek(position)

    def persistent_load(saved_id):
        if isinstance(saved_id, tuple) and saved_id[:1] in (("module",), (b"module",)):
            raise UnpicklingError("this legacy checkpoint pickles whole modules; hookgrad "
                                  "loads tensors and state dicts only")
        storage_type, key, location, numel, view = parse_storage_id(saved_id)
        if key not in storages:
            dtype = None
            element = np.dtype(np.uint8)
            if storage_type.dtype_name is not None:
                dtype = hookgrad_dtype(storage_type.dtype_name, f"torch.{storage_type.name}")
                element = numpy_dtype(dtype)
            if numel * element.itemsize > remaining:
                raise RuntimeError(f"storage {key} claims {numel * element.itemsize} bytes but "
                                   f"the file holds only {remaining} more")
            storage = LoadedStorage(np.empty(numel, element), dtype, location)
            storages[key] = restore(storage, location)
        root = storages[key]
        if view is None:
            return root
        view_key, offset, size = view
        if str(view_key) not in storages:
            if offset < 0 or size < 0 or offset + size > root.array.size:
                raise RuntimeError(f"storage view {view!r} is out of bounds")
            storages[str(view_key)] = LoadedStorage(root.array[offset:offset + size],
                                                    root.dtype, root.location)
        return storages[str(view_key)]

    result = unpickler(file, weights_only, persistent_load, **pickle_load_args).load()
    keys = header()
    if not isinstance(keys, list):
        raise RuntimeError("legacy checkpoint has no list of storage keys")
    for key in keys:
        storage = storages.get(str(key))
        if storage is None:
            raise RuntimeError(f"legacy checkpoint has data for unknown storage {key!r}")
        count = bytearray(8)
        _read_exactly(file, memoryview(count))
        (numel,) = struct.unpack("<q", bytes(count))
        if numel != storage.array.size:
            raise RuntimeError(f"storage {key} holds {numel} elements, expected "
                               f"{storage.array.size}")
        _read_exactly(file, memoryview(storage.array.view(np.uint8)))
        if not little and storage.array.itemsize > 1:
            storage.array[...] = storage.array.byteswap()
    return result
