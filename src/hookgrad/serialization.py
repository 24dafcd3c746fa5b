"""torch.save / torch.load: pickle with hookgrad's tensors (their arrays pickle natively).

The files are hookgrad's own (not torch's zip format); they round-trip tensors, Parameters,
state_dicts and any picklable structure holding them.
"""
from __future__ import annotations

import io
import os
import pickle
from typing import Any, BinaryIO, Union

FileLike = Union[str, os.PathLike, BinaryIO, io.BytesIO]


def save(obj: Any, f: FileLike, pickle_module=pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            pickle_module.dump(obj, handle, protocol=max(pickle_protocol, 2))
    else:
        pickle_module.dump(obj, f, protocol=max(pickle_protocol, 2))


def load(f: FileLike, map_location=None, pickle_module=pickle, *, weights_only=None,
         mmap=None, **pickle_load_args) -> Any:
    """Read what ``save`` wrote. ``map_location`` is accepted and ignored (CPU only)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as handle:
            return pickle_module.load(handle, **pickle_load_args)
    return pickle_module.load(f, **pickle_load_args)
