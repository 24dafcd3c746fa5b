"""torch.save / torch.load: checkpoints that torch reads, and torch's checkpoints read safely.

``save`` writes torch's zip format, so ``torch.load(f, weights_only=True)`` reads hookgrad's
tensors, Parameters, state dicts and optimizer states (and containers of them).

``load`` reads torch's zip and legacy formats, safetensors files and hookgrad's older pickles,
without torch installed. With ``weights_only=True`` (the default, as in torch >= 2.6) it runs
one restricted unpickler that only builds tensors, storages, Parameters, ``OrderedDict``,
containers and primitives (see ``_unpickler``): a file that names anything else is refused with
``pickle.UnpicklingError`` naming that global, and no code from the file runs.
``weights_only=False`` is full pickle: it can run arbitrary code from the file, so use it only
for files you wrote or trust.

See docs/checkpoints.md for the format, the safety model and moving weights to and from torch.
"""
from __future__ import annotations

import io
import os
import pickle
import tempfile
from contextlib import contextmanager
from typing import Any, BinaryIO, Callable, Iterator, Optional, Union

from ._atomic import atomic_path
from ._legacy import is_legacy, read_legacy, write_legacy
from ._storage import LoadedStorage
from ._unpickler import (UnpicklingError, add_safe_globals, clear_safe_globals,
                         get_safe_globals, safe_globals, unpickler)
from ._zip import is_zip, read_zip, write_zip

FileLike = Union[str, os.PathLike, BinaryIO, io.BytesIO]
DEFAULT_PROTOCOL = 2

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "UnpicklingError", "DEFAULT_PROTOCOL"]


def _is_path(f: Any) -> bool:
    return isinstance(f, (str, os.PathLike))


def save(obj: Any, f: FileLike, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors, Parameters, state dicts, optimizer states, containers of them)
    to a path or a binary file object, in torch's zip format — or in torch's legacy format with
    ``_use_new_zipfile_serialization=False``.

    Tensors that share memory are written sharing one storage, with their offsets and strides,
    as torch does. A path is written atomically: to a temporary file in the same directory,
    renamed over ``f`` once complete. ``pickle_module`` is accepted for torch's signature; the
    pickle itself is always written by hookgrad's own pickler (it must name torch's functions).
    """
    protocol = max(int(pickle_protocol), 2)
    write = write_zip if _use_new_zipfile_serialization else write_legacy
    if _is_path(f):
        with atomic_path(f) as temporary, open(temporary, "wb") as handle:
            write(obj, handle, protocol)
    else:
        write(obj, f, protocol)


def _restorer(map_location: Any) -> Callable:
    """torch's ``map_location`` semantics over hookgrad's single device, the CPU."""
    def check(location: Any) -> str:
        location = str(location)
        if location == "cpu" or location.startswith("cpu:"):
            return location
        if location.startswith("cuda"):
            raise RuntimeError(f"Attempting to deserialize object on a CUDA device "
                               f"({location}), but hookgrad runs on the CPU only. Pass "
                               "map_location='cpu' (or torch.device('cpu')) to load the "
                               "storages on the CPU.")
        raise RuntimeError(f"don't know how to restore data location {location!r}: hookgrad "
                           "runs on the CPU only; pass map_location='cpu'")

    def restore(storage: LoadedStorage, location: str) -> LoadedStorage:
        if map_location is None:
            target = location
        elif isinstance(map_location, dict):
            target = map_location.get(location, location)
        elif isinstance(map_location, (str, bytes)) or hasattr(map_location, "type"):
            target = (map_location.decode() if isinstance(map_location, bytes)
                      else map_location)
        elif callable(map_location):
            result = map_location(storage, location)
            if result is None:
                target = location
            elif isinstance(result, LoadedStorage):
                check(result.location)
                return result
            else:
                raise TypeError(f"map_location returned {type(result).__name__}; hookgrad "
                                "expects the storage it was given (or None)")
        else:
            raise TypeError(f"map_location must be None, a str, a device, a dict or a "
                            f"callable, not {type(map_location).__name__}")
        storage.location = check(target)
        return storage

    return restore


def _peek(file: BinaryIO, count: int = 512) -> bytes:
    position = file.tell()
    head = file.read(count)
    file.seek(position)
    return head


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: Optional[bool] = None, mmap: Optional[bool] = None,
         **pickle_load_args: Any) -> Any:
    """Load what ``torch.save`` or ``hookgrad.save`` wrote (zip or legacy format), a
    safetensors file, or an older hookgrad pickle; tensors come back as hookgrad tensors.

    ``weights_only`` defaults to True: only tensors, storages, Parameters, ``OrderedDict``,
    containers and primitives load, and anything else raises ``pickle.UnpicklingError``
    naming it. ``weights_only=False`` is UNSAFE (plain pickle: the file can run any code);
    use it only for files you trust. ``map_location`` takes what torch takes (a string, a
    device, a dict from saved to wanted locations, or ``fn(storage, location)``), but every
    storage must end on the CPU: a CUDA location raises, as torch does where CUDA is absent.
    ``mmap=True`` maps storages of a zip checkpoint at a path copy-on-write instead of reading
    them.
    """
    if weights_only is None:
        weights_only = pickle_module is None
    elif weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restorer(map_location)
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    if _is_path(f):
        with open(f, "rb") as handle:
            return _load_file(handle, weights_only, restore,
                              os.fspath(f) if mmap else None, bool(mmap), pickle_load_args)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_file(f, weights_only, restore, None, False, pickle_load_args)


def _load_file(file: BinaryIO, weights_only: bool, restore: Callable, mmap_path: Optional[str],
               mmap: bool, pickle_load_args: dict) -> Any:
    head = _peek(file)
    if is_zip(head):
        return read_zip(file, weights_only, restore, mmap_path, pickle_load_args)
    if mmap:
        raise RuntimeError("mmap can only be used with files saved with "
                           "`torch.save(_use_new_zipfile_serialization=True)`, please "
                           "torch.save your checkpoint with this option in order to use mmap.")
    if is_legacy(head):
        return read_legacy(file, weights_only, restore, pickle_load_args)
    from ..utils import safetensors  # it imports this package's modules

    if safetensors.is_safetensors(head):
        return safetensors.load(file.read())
    if head[257:262] == b"ustar":
        raise RuntimeError("this is torch's .tar checkpoint format (torch < 0.4); hookgrad "
                           "does not read it: load and save it again with a newer torch")
    # anything else is hookgrad's older plain pickle (or not a checkpoint at all)
    return unpickler(file, weights_only, hookgrad_file=True, **pickle_load_args).load()
