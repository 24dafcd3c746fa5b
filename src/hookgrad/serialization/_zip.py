"""torch's zip checkpoint format (the default since torch 1.6), both ways.

An uncompressed zip whose records sit under one folder (``archive/``):

- ``data.pkl``: the pickled object; each storage appears as the persistent id
  ``("storage", torch.FloatStorage, "<key>", "cpu", <numel>)``
- ``data/<key>``: the raw little-endian bytes of that storage, starting on a 64-byte boundary
  (padding goes into the local header's extra field, as torch pads it) so it can be memory-mapped
- ``byteorder`` (``little``), ``version`` (``3``), ``.format_version``, ``.storage_alignment``
  and ``.data/serialization_id``, as torch writes them.
"""
from __future__ import annotations

import secrets
import struct
import zipfile
from typing import Any, Callable, Optional

import numpy as np

from ._pickler import TorchName, pickle_with_storages
from ._storage import LoadedStorage, hookgrad_dtype, numpy_dtype
from ._unpickler import parse_storage_id, unpickler

ALIGNMENT = 64
_ARCHIVE = "archive"
_LOCAL_HEADER = 30
_ZIP64_EXTRA = 20  # zipfile adds this to the local header of a record over 2 GiB
_READ_CHUNK = 1 << 24


def is_zip(head: bytes) -> bool:
    return head[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def _storage_id(key: str, storage_name: str, numel: int) -> tuple:
    return ("storage", TorchName("torch", storage_name), key, "cpu", numel)


def _write_record(archive: zipfile.ZipFile, name: str, data) -> None:
    data = memoryview(data).cast("B")
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    info.file_size = data.nbytes
    zip64 = data.nbytes * 1.05 > zipfile.ZIP64_LIMIT
    start = archive.fp.tell() + _LOCAL_HEADER + len(name.encode("utf-8")) + 4
    start += _ZIP64_EXTRA if zip64 else 0
    padding = -start % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", padding) + b"Z" * padding
    with archive.open(info, "w", force_zip64=zip64) as record:
        record.write(data)


def write_zip(obj: Any, file, protocol: int = 2) -> None:
    """Write ``obj`` to the binary file ``file`` in torch's zip format."""
    data_pkl, table = pickle_with_storages(obj, _storage_id, protocol)
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        _write_record(archive, f"{_ARCHIVE}/data.pkl", data_pkl)
        _write_record(archive, f"{_ARCHIVE}/.format_version", b"1")
        _write_record(archive, f"{_ARCHIVE}/.storage_alignment", str(ALIGNMENT).encode())
        _write_record(archive, f"{_ARCHIVE}/byteorder", b"little")
        for key, flat in table.records():
            _write_record(archive, f"{_ARCHIVE}/data/{key}", flat.view(np.uint8))
        _write_record(archive, f"{_ARCHIVE}/version", b"3\n")
        serialization_id = str(secrets.randbits(128)).zfill(40).encode()
        _write_record(archive, f"{_ARCHIVE}/.data/serialization_id", serialization_id)


def _record_offset(file, info: zipfile.ZipInfo) -> int:
    """Where a stored record's bytes start in the file (after its local header)."""
    file.seek(info.header_offset)
    header = file.read(_LOCAL_HEADER)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    return info.header_offset + _LOCAL_HEADER + name_length + extra_length


def _read_record(file, archive: zipfile.ZipFile, info: zipfile.ZipInfo,
                 nbytes: int) -> np.ndarray:
    array = np.empty(nbytes, np.uint8)
    view = memoryview(array)
    if info.compress_type == zipfile.ZIP_STORED:  # straight from the file into the array
        file.seek(_record_offset(file, info))
        _fill(file.readinto, view, info.filename)
    else:
        with archive.open(info) as record:
            _fill(record.readinto, view, info.filename)
    return array


def _fill(readinto: Callable, view: memoryview, name: str) -> None:
    position = 0
    while position < view.nbytes:
        read = readinto(view[position:position + _READ_CHUNK])
        if not read:
            raise RuntimeError(f"checkpoint record {name} is truncated")
        position += read


def read_zip(file, weights_only: bool, restore: Callable, mmap_path: Optional[str],
             pickle_load_args: dict) -> Any:
    """Load the object of a torch zip checkpoint; storages are read as the pickle asks."""
    with zipfile.ZipFile(file) as archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if not pickles:
            if any(n.endswith("/constants.pkl") for n in names):
                raise RuntimeError("this zip is a TorchScript archive (torch.jit.save): hookgrad "
                                   "loads checkpoints written by torch.save only")
            raise RuntimeError("not a torch checkpoint: the zip has no <folder>/data.pkl")
        prefix = pickles[0][:-len("data.pkl")]
        byteorder = "little"
        if prefix + "byteorder" in names:
            byteorder = archive.read(prefix + "byteorder").decode("ascii").strip()
        storages: dict = {}

        def persistent_load(saved_id):
            storage_type, key, location, numel, _ = parse_storage_id(saved_id)
            if key in storages:
                return storages[key]
            dtype = None
            element = np.dtype(np.uint8)
            if storage_type.dtype_name is not None:
                dtype = hookgrad_dtype(storage_type.dtype_name, f"torch.{storage_type.name}")
                element = numpy_dtype(dtype)
            try:
                info = archive.getinfo(f"{prefix}data/{key}")
            except KeyError:
                raise RuntimeError(f"checkpoint has no record for storage {key}") from None
            nbytes = numel * element.itemsize
            if info.file_size < nbytes:
                raise RuntimeError(f"storage {key} needs {nbytes} bytes but its record has "
                                   f"{info.file_size}")
            if mmap_path is not None and info.compress_type == zipfile.ZIP_STORED and nbytes:
                array = np.memmap(mmap_path, element, "c", _record_offset(file, info), (numel,))
            else:
                array = _read_record(file, archive, info, nbytes).view(element)
            if byteorder == "big" and element.itemsize > 1:
                array = array.view(element.newbyteorder(">")).astype(element)
            storage = restore(LoadedStorage(array, dtype, location), location)
            storages[key] = storage
            return storage

        with archive.open(pickles[0]) as data_pkl:
            return unpickler(data_pkl, weights_only, persistent_load,
                             **pickle_load_args).load()
