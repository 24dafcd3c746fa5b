"""safetensors for hookgrad tensors, with ``safetensors.torch``'s names.

``from hookgrad.utils.safetensors import save_file, load_file`` reads and writes the same files
as ``safetensors.torch.save_file`` / ``load_file``: a JSON header (dtype, shape, byte range of
each tensor) and the raw bytes, nothing executable, so loading is safe by construction. Built on
the ``safetensors`` package (``pip install safetensors``), imported only when used.
``hookgrad.load`` also recognises a safetensors file and returns its dict of tensors.
``save_model`` / ``load_model`` handle models whose parameters share memory (tied weights).
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Union

import numpy as np

import hookgrad
from ..serialization._atomic import atomic_path
from ..serialization._storage import hookgrad_dtype, numpy_dtype

# safetensors' dtype codes by torch's dtype names
_DTYPE_NAMES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
                "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
                "BOOL": "bool", "U16": "uint16", "U32": "uint32", "U64": "uint64",
                "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "C64": "complex64",
                "C128": "complex128"}
_NUMPY_CODES = {"F64", "F32", "F16", "I64", "I32", "I16", "I8", "U8", "BOOL"}
_MAX_HEADER = 100_000_000  # safetensors' own limit on the JSON header

__all__ = ["save", "save_file", "load", "load_file", "save_model", "load_model"]


def _package():
    try:
        import safetensors
    except ImportError:
        raise ImportError("hookgrad.utils.safetensors needs the safetensors package: "
                          "pip install safetensors (or pip install hookgrad[safetensors])"
                          ) from None
    return safetensors


def is_safetensors(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts a safetensors file: a little-endian
    header length, then the JSON header's opening brace."""
    if len(head) < 9:
        return False
    length = int.from_bytes(head[:8], "little")
    return 2 <= length <= _MAX_HEADER and head[8:9] == b"{"


def _arrays(tensors: Dict[str, "object"]) -> Dict[str, np.ndarray]:
    """The tensors' arrays, checked as ``safetensors.torch`` checks them."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    arrays = {}
    for name, tensor in tensors.items():
        if not isinstance(tensor, hookgrad.Tensor):
            raise ValueError(f"Key `{name}` is invalid, expected torch.Tensor but received "
                             f"{type(tensor)}")
        arrays[name] = tensor.detach().numpy()
    shared = _shared_groups(arrays)
    if shared:
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on "
                           f"disk and potential differences when loading them again: {shared}. "
                           "Save clones of all but one of them (tensor.clone()).")
    for name, array in arrays.items():
        if not array.flags.c_contiguous:
            raise ValueError(f"You are trying to save a non contiguous tensor: `{name}` which "
                             "is not allowed. Call `.contiguous()` on it before saving.")
    return arrays


def _shared_groups(arrays: Dict[str, np.ndarray]) -> List[set]:
    names = [name for name, array in arrays.items() if array.size]
    groups: List[set] = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            if np.may_share_memory(arrays[first], arrays[second]):
                for group in groups:
                    if first in group or second in group:
                        group.update((first, second))
                        break
                else:
                    groups.append({first, second})
    return groups


def save(tensors: Dict[str, "object"], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """The bytes of a safetensors file holding ``tensors`` (name -> contiguous tensor)."""
    _package()
    from safetensors.numpy import save as save_arrays

    return save_arrays(_arrays(tensors), metadata=metadata)


def save_file(tensors: Dict[str, "object"], filename: Union[str, os.PathLike],
              metadata: Optional[Dict[str, str]] = None) -> None:
    """Write ``tensors`` to ``filename`` (atomically: a temporary file renamed when done)."""
    _package()
    from safetensors.numpy import save_file as save_arrays  # optional package, only when used

    arrays = _arrays(tensors)
    with atomic_path(filename) as temporary:
        save_arrays(arrays, temporary, metadata=metadata)


def _tensor(name: str, code: str, shape, data: bytes):
    dtype = hookgrad_dtype(_DTYPE_NAMES.get(code, code), f"safetensors {code} of '{name}'")
    array = np.frombuffer(bytearray(data), numpy_dtype(dtype)).reshape(shape)
    return hookgrad.from_numpy(array)


def load(data: bytes) -> Dict[str, "object"]:
    """The tensors of a safetensors file given as bytes."""
    package = _package()
    return {name: _tensor(name, view["dtype"], view["shape"], view["data"])
            for name, view in package.deserialize(bytes(data))}


def load_file(filename: Union[str, os.PathLike], device: Union[str, int] = "cpu"
              ) -> Dict[str, "object"]:
    """The tensors of the safetensors file ``filename``, on the CPU (hookgrad's only device)."""
    if str(device) != "cpu":
        raise RuntimeError(f"hookgrad runs on the CPU only; cannot load to device {device!r}")
    package = _package()
    if not set(_header_dtypes(filename).values()) <= _NUMPY_CODES:
        with open(filename, "rb") as raw:  # dtypes NumPy lacks: decoded by hookgrad's table
            return load(raw.read())
    tensors = {}
    with package.safe_open(os.fspath(filename), framework="numpy") as handle:
        for name in handle.keys():
            array = handle.get_tensor(name)
            if not array.flags.writeable:
                array = array.copy()
            tensors[name] = hookgrad.from_numpy(array)
    return tensors


def _header_dtypes(filename: Union[str, os.PathLike]) -> Dict[str, str]:
    with open(filename, "rb") as raw:
        length = int.from_bytes(raw.read(8), "little")
        if not 2 <= length <= _MAX_HEADER:
            raise ValueError(f"{filename} is not a safetensors file")
        header = json.loads(raw.read(length))
    return {name: entry["dtype"] for name, entry in header.items() if name != "__metadata__"}


def _is_complete(array: np.ndarray) -> bool:
    """Whether ``array`` covers all the memory it is a view of (safe to keep for a group)."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (array.__array_interface__["data"][0] == owner.__array_interface__["data"][0]
            and array.nbytes == owner.nbytes)


def _duplicates(state: Dict[str, "object"], preferred=()) -> Dict[str, List[str]]:
    """For each group of names sharing memory: the name to keep -> the names to drop."""
    arrays = {name: tensor.detach().numpy() for name, tensor in state.items()}
    dropped: Dict[str, List[str]] = {}
    for group in _shared_groups(arrays):
        complete = sorted(name for name in group if _is_complete(arrays[name]))
        if not complete:
            raise RuntimeError(f"None of {sorted(group)} covers all of their shared memory; "
                               "refusing to save or load only a part of it")
        keep = sorted(set(preferred) & set(complete)) or complete
        dropped[keep[0]] = sorted(group - {keep[0]})
    return dropped


def save_model(model, filename: Union[str, os.PathLike],
               metadata: Optional[Dict[str, str]] = None, force_contiguous: bool = False) -> None:
    """Save ``model.state_dict()`` once per shared memory: of tied parameters one name is
    written and the others are recorded in the metadata (``dropped name -> kept name``)."""
    state = dict(model.state_dict())
    for keep, names in _duplicates(state).items():
        for name in names:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, keep)
            del state[name]
    if force_contiguous:
        state = {name: tensor.contiguous() for name, tensor in state.items()}
    try:
        save_file(state, filename, metadata=metadata)
    except ValueError as error:
        raise ValueError(f"{error} Or use save_model(..., force_contiguous=True).") from None


def load_model(model, filename: Union[str, os.PathLike], strict: bool = True,
               device: Union[str, int] = "cpu"):
    """Load a file written by ``save_model`` (here or by ``safetensors.torch``) into ``model``;
    returns ``(missing, unexpected)`` key lists and raises on either when ``strict``."""
    state = load_file(filename, device=device)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = set(missing)
    for names in _duplicates(model.state_dict(), preferred=state.keys()).values():
        for name in names:  # a tied name is filled through the one it shares memory with
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        lines = []
        if missing:
            lines.append("Missing key(s) in state_dict: " + ", ".join(
                f'"{name}"' for name in sorted(missing)))
        if unexpected:
            lines.append("Unexpected key(s) in state_dict: " + ", ".join(
                f'"{name}"' for name in sorted(unexpected)))
        raise RuntimeError(f"Error(s) in loading state_dict for {type(model).__name__}:\n\t"
                           + "\n\t".join(lines))
    return missing, unexpected
