"""The on-disk format: readable without hookgrad.

A run directory holds ``capture.json`` (what was captured, which file format), ``index.jsonl``
(one JSON object per record, appended and flushed as the record arrives: key, module, kind,
position, call, step, shape, dtype, file, stats) and one file per record under
``<key>/step<step>_call<call>``: ``.safetensors`` (the tensor stored under the record's key)
when the ``safetensors`` package is installed, else ``.npy``. Reading it back::

    import json, numpy as np
    from safetensors.numpy import load_file
    for line in open("run1/index.jsonl"):
        entry = json.loads(line)
        array = load_file("run1/" + entry["file"])[entry["key"]]   # or np.load for .npy

Runs written from hookgrad and from torch models are the same format (``capture.json`` says
which framework wrote it); a torch dtype NumPy lacks is stored widened, its name in the index
line's ``source_dtype``. A crash while a line is appended leaves the last line torn: ``load``
skips it with a warning (the record it described is lost; every earlier one is intact).
"""
from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path
from typing import IO, Any, Dict, List, Optional, Union

import numpy as np

from ._backend import backend
from .storage import Reader, Record

FORMAT_VERSION = 1
INDEX = "index.jsonl"
META = "capture.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")

PathLike = Union[str, "os.PathLike[str]"]


def safetensors_available() -> bool:
    try:
        import safetensors.numpy  # noqa: F401
    except ImportError:
        return False
    return True


def _choose_format(file_format: Optional[str]) -> str:
    if file_format is None:
        return "safetensors" if safetensors_available() else "npy"
    if file_format not in ("safetensors", "npy"):
        raise ValueError(f"format must be 'safetensors', 'npy' or None, got {file_format!r}")
    if file_format == "safetensors" and not safetensors_available():
        raise ImportError("format='safetensors' needs the safetensors package: "
                          "pip install safetensors (or pip install hookgrad[demo])")
    return file_format


class DiskWriter:
    """Streams records into a run directory; keeps only the open index file."""

    def __init__(self, root: PathLike, meta: Dict[str, Any], file_format: Optional[str] = None,
                 overwrite: bool = False) -> None:
        self.root = Path(root)
        self.format = _choose_format(file_format)
        if (self.root / INDEX).exists():
            if not overwrite:
                raise FileExistsError(f"{self.root} already holds a capture ({INDEX}); pass "
                                      "overwrite=True to replace it, or choose another directory")
            _remove_run(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / META, "w", encoding="utf-8") as file:
            json.dump({"format": "hookgrad.capture", "version": FORMAT_VERSION,
                       "file_format": self.format, **meta}, file, indent=1)
        self._index: Optional[IO[str]] = open(  # noqa: SIM115 - kept open while streaming
            self.root / INDEX, "a", encoding="utf-8")

    def write(self, record: Record, array: np.ndarray) -> None:
        folder = _UNSAFE.sub("_", record.key)
        stem = f"{folder}/step{record.step:06d}_call{record.call:03d}"
        name = f"{stem}.{self.format}"
        serial = 1
        while (self.root / name).exists():  # only if the same step and call were seen twice
            name = f"{stem}_{serial}.{self.format}"
            serial += 1
        (self.root / folder).mkdir(exist_ok=True)
        array = np.require(array, requirements="C")  # (ascontiguousarray makes 0-d 1-d)
        if self.format == "safetensors":
            from safetensors.numpy import save_file

            save_file({record.key: array}, str(self.root / name),
                      metadata={"module": record.module, "kind": record.kind,
                                "step": str(record.step), "call": str(record.call)})
        else:
            np.save(self.root / name, array, allow_pickle=False)
        record.file = name
        if self._index is None:
            raise RuntimeError("this capture is closed; its files are complete")
        self._index.write(json.dumps(record.as_dict()) + "\n")
        self._index.flush()

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None


def _remove_run(root: Path) -> None:
    """Delete what an earlier capture wrote here (only files its index lists)."""
    for record in read_index(root):
        path = root / record.file if record.file else None
        if path is not None and path.is_file():
            path.unlink()
            if path.parent != root and not any(path.parent.iterdir()):
                path.parent.rmdir()
    (root / INDEX).unlink()
    if (root / META).exists():
        (root / META).unlink()


def read_index(root: Path) -> List[Record]:
    """The records an index lists. A torn last line (a crash while it was appended) is skipped
    with a warning; a bad line anywhere else is an error naming it."""
    with open(root / INDEX, encoding="utf-8") as file:
        lines = file.readlines()
    numbered = [(number, line) for number, line in enumerate(lines, 1) if line.strip()]
    records = []
    for number, line in numbered:
        try:
            records.append(Record.from_dict(json.loads(line)))
        except (ValueError, KeyError, TypeError) as error:
            if number == numbered[-1][0]:
                warnings.warn(f"{root / INDEX}:{number}: skipping a torn last line (the capture "
                              f"that wrote it was interrupted?): {error}", RuntimeWarning,
                              stacklevel=2)
                break
            raise ValueError(f"{root / INDEX}:{number}: not a capture index line "
                             f"({error})") from error
    return records


def read_array(root: Path, record: Record) -> np.ndarray:
    path = root / record.file
    if path.suffix == ".safetensors":
        try:
            from safetensors.numpy import load_file
        except ImportError as error:
            raise ImportError(f"{path} is a safetensors file: pip install safetensors "
                              "(or pip install hookgrad[demo]) to read it") from error
        return load_file(str(path))[record.key]
    return np.load(path, allow_pickle=False)


class DiskRun(Reader):
    """A capture directory read back: ``run["conv1.output"]``, ``keys()``, ``summary()``.

    ``run[key]`` gives NumPy arrays, or tensors of ``framework`` ("hookgrad" or "torch") when
    one is given; torch tensors get back the dtype they were captured in (bfloat16 included)."""

    def __init__(self, root: PathLike, framework: Optional[str] = None) -> None:
        self.root = Path(root)
        self.framework = framework
        self._backend = None if framework is None else backend(framework=framework)
        if not (self.root / INDEX).is_file():
            raise FileNotFoundError(f"{self.root} holds no capture: {INDEX} is missing")
        meta_path = self.root / META
        self.meta: Dict[str, Any] = {}
        if meta_path.is_file():
            with open(meta_path, encoding="utf-8") as file:
                self.meta = json.load(file)
            version = self.meta.get("version", FORMAT_VERSION)
            if version > FORMAT_VERSION:
                raise ValueError(f"{self.root} was written by a newer hookgrad (capture format "
                                 f"{version}; this one reads up to {FORMAT_VERSION})")

    def _records(self) -> List[Record]:
        # read on every call: a streaming capture may still be appending
        return read_index(self.root)

    def _load(self, record: Record) -> np.ndarray:
        return read_array(self.root, record)

    def __getitem__(self, key: str) -> List[Any]:
        """One array (or tensor of ``framework``) per call, ordered by step, then call."""
        if self._backend is None:
            return super().__getitem__(key)
        return [self._backend.from_numpy(self._load(record), record.source_dtype)
                for record in self.records(key)]

    def __repr__(self) -> str:
        return f"<capture run {str(self.root)!r}: {len(self)} keys>"


def load(path: PathLike, *, framework: Optional[str] = None) -> DiskRun:
    """Read a capture directory written with ``capture(..., to=path)``, by either framework.

    ``framework=None`` reads NumPy arrays and never imports torch; ``"torch"`` or ``"hookgrad"``
    reads tensors of that framework."""
    return DiskRun(path, framework)
