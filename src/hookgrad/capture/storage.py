"""What a capture keeps: one ``Record`` per tensor seen, running statistics, and the reading API
shared by in-memory captures, streaming captures and ``load``-ed runs.

Statistics are computed once per record (in float64) and merged with Chan's formula, so a
summary costs O(keys) memory however many steps were captured, and a run read back from disk
summarises to exactly the same numbers as the capture that wrote it.
"""
from __future__ import annotations

import difflib
import math
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

KINDS = ("input", "output", "grad_input", "grad_output")


class CaptureKeyError(KeyError):
    """A KeyError whose message prints as written (KeyError would quote it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def close_names_error(what: str, wanted: str, names: Sequence[str]) -> CaptureKeyError:
    """``KeyError`` naming ``wanted`` and the closest of ``names`` (difflib), or some of them."""
    close = difflib.get_close_matches(wanted, list(names), n=5, cutoff=0.5)
    if close:
        hint = "did you mean " + ", ".join(repr(name) for name in close) + "?"
    else:
        shown = list(names)[:12]
        hint = "available: " + ", ".join(repr(name) for name in shown)
        if len(names) > len(shown):
            hint += f", ... ({len(names)} in all)"
    return CaptureKeyError(f"{what} {wanted!r} not found; {hint}")


class Stats:
    """count, mean, sum of squared deviations, min, max of a set of values (float64)."""

    __slots__ = ("count", "mean", "m2", "min", "max")

    def __init__(self, count: int = 0, mean: float = 0.0, m2: float = 0.0,
                 min: float = math.inf, max: float = -math.inf) -> None:  # noqa: A002
        self.count, self.mean, self.m2, self.min, self.max = count, mean, m2, min, max

    @classmethod
    def of(cls, array: np.ndarray) -> "Stats":
        if array.size == 0:
            return cls()
        values = array.astype(np.float64, copy=False)
        with np.errstate(invalid="ignore", over="ignore"):  # inf and NaN give NaN, quietly
            mean = float(values.mean())
            m2 = float(np.square(values - mean).sum())
        return cls(int(values.size), mean, m2, float(values.min()), float(values.max()))

    def merge(self, other: "Stats") -> None:
        if other.count == 0:
            return
        if self.count == 0:
            self.count, self.mean, self.m2 = other.count, other.mean, other.m2
            self.min, self.max = other.min, other.max
            return
        total = self.count + other.count
        delta = other.mean - self.mean
        self.mean += delta * other.count / total
        self.m2 += other.m2 + delta * delta * self.count * other.count / total
        self.count = total
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    @property
    def std(self) -> float:
        """Population standard deviation (``np.std``'s default, ddof=0)."""
        return math.sqrt(self.m2 / self.count) if self.count else math.nan

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


class Record:
    """One captured tensor: which module, which kind, which call of which step, and where.

    ``dtype`` is the stored array's; ``source_dtype`` is the tensor's when storing changed it
    (a torch bfloat16 tensor is stored as float32), else ``None``."""

    __slots__ = ("key", "module", "kind", "position", "call", "step", "shape", "dtype", "file",
                 "stats", "source_dtype")

    def __init__(self, key: str, module: str, kind: str, position: str, call: int, step: int,
                 shape: Tuple[int, ...], dtype: str, stats: Stats,
                 file: Optional[str] = None, source_dtype: Optional[str] = None) -> None:
        self.key, self.module, self.kind, self.position = key, module, kind, position
        self.call, self.step, self.shape, self.dtype = call, step, shape, dtype
        self.stats, self.file, self.source_dtype = stats, file, source_dtype

    def as_dict(self) -> dict:
        """The index line written to disk (JSON types only)."""
        entry = {"key": self.key, "module": self.module, "kind": self.kind,
                 "position": self.position, "call": self.call, "step": self.step,
                 "shape": list(self.shape), "dtype": self.dtype, "file": self.file,
                 "stats": self.stats.as_dict()}
        if self.source_dtype is not None:
            entry["source_dtype"] = self.source_dtype
        return entry

    @classmethod
    def from_dict(cls, entry: Dict[str, Any]) -> "Record":
        return cls(entry["key"], entry["module"], entry["kind"], entry.get("position", ""),
                   int(entry["call"]), int(entry["step"]), tuple(entry["shape"]),
                   entry["dtype"], Stats(**entry["stats"]), entry.get("file"),
                   entry.get("source_dtype"))

    def __repr__(self) -> str:
        source = f" from {self.source_dtype}" if self.source_dtype else ""
        return (f"Record({self.key!r}, step={self.step}, call={self.call}, shape={self.shape}, "
                f"dtype={self.dtype}{source})")


class SummaryRow:
    __slots__ = ("key", "count", "shapes", "dtype", "mean", "std", "min", "max")

    def __init__(self, key: str, count: int, shapes: List[Tuple[int, ...]], dtype: str,
                 stats: Stats) -> None:
        self.key, self.count, self.shapes, self.dtype = key, count, shapes, dtype
        self.mean, self.std, self.min, self.max = stats.mean, stats.std, stats.min, stats.max
        if stats.count == 0:
            self.mean = self.min = self.max = math.nan

    def __repr__(self) -> str:
        return (f"SummaryRow({self.key!r}, count={self.count}, shapes={self.shapes}, "
                f"dtype={self.dtype}, mean={self.mean:.4g}, std={self.std:.4g})")


class Summary:
    """Per key: number of records, shape(s), dtype, mean/std/min/max over every value captured.
    ``print(cap.summary())`` shows a table; ``summary[key]`` is one row."""

    def __init__(self, rows: List[SummaryRow]) -> None:
        self.rows = rows

    def __getitem__(self, key: str) -> SummaryRow:
        for row in self.rows:
            if row.key == key:
                return row
        raise close_names_error("key", key, [row.key for row in self.rows])

    def __iter__(self) -> Iterator[SummaryRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __str__(self) -> str:
        if not self.rows:
            return "(nothing captured)"
        header = ("key", "n", "shape", "dtype", "mean", "std", "min", "max")
        lines = [header]
        for row in self.rows:
            shape = _format_shapes(row.shapes)
            lines.append((row.key, str(row.count), shape, row.dtype, f"{row.mean:.4g}",
                          f"{row.std:.4g}", f"{row.min:.4g}", f"{row.max:.4g}"))
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        left = {0, 2, 3}
        return "\n".join("  ".join(cell.ljust(w) if i in left else cell.rjust(w)
                                   for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
                         for line in lines)

    __repr__ = __str__


def _format_shapes(shapes: List[Tuple[int, ...]]) -> str:
    text = " | ".join(str(tuple(shape)) for shape in shapes[:2])
    return text + (f" | ... ({len(shapes)} shapes)" if len(shapes) > 2 else "")


def _shown_dtype(dtype: str, source_dtype: Optional[str]) -> str:
    return f"{dtype} (from {source_dtype})" if source_dtype else dtype


class KeyStats:
    """What a summary needs of one key, kept as records arrive: O(1) memory per key."""

    __slots__ = ("count", "shapes", "dtype", "stats")

    def __init__(self, dtype: str, source_dtype: Optional[str] = None) -> None:
        self.count = 0
        self.shapes: List[Tuple[int, ...]] = []
        self.dtype = _shown_dtype(dtype, source_dtype)
        self.stats = Stats()

    def add(self, record: Record) -> None:
        self.count += 1
        if record.shape not in self.shapes and len(self.shapes) < 8:
            self.shapes.append(record.shape)
        dtype = _shown_dtype(record.dtype, record.source_dtype)
        if dtype != self.dtype and self.dtype != "mixed":
            self.dtype = "mixed"
        self.stats.merge(record.stats)


class Reader:
    """The reading API: ``reader["conv1.output"]`` (arrays ordered by step then call),
    ``keys()``, ``records(key)``, ``summary()``. Subclasses provide ``_records`` and ``_load``."""

    def _records(self) -> List[Record]:
        raise NotImplementedError

    def _load(self, record: Record) -> np.ndarray:
        raise NotImplementedError

    def _key_stats(self) -> Dict[str, KeyStats]:
        stats: Dict[str, KeyStats] = {}
        for record in self._records():
            entry = stats.get(record.key)
            if entry is None:
                entry = stats[record.key] = KeyStats(record.dtype, record.source_dtype)
            entry.add(record)
        return stats

    def keys(self) -> List[str]:
        """Keys ``"<module>.<kind>"`` (plus ``.<position>`` for multi-tensor values), in the
        order they were first seen."""
        return list(self._key_stats())

    def __contains__(self, key: object) -> bool:
        return key in self._key_stats()

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._key_stats())

    def records(self, key: Optional[str] = None) -> List[Record]:
        """Metadata of every record (of ``key``), ordered by step, then call."""
        records = self._records()
        if key is not None:
            self._check_key(key)
            records = [record for record in records if record.key == key]
        return sorted(records, key=lambda record: (record.step, record.call))

    def _check_key(self, key: str) -> None:
        if not isinstance(key, str):
            raise TypeError(f"capture keys are strings like 'conv1.output', got "
                            f"{type(key).__name__}")
        names = self.keys()
        if key not in names:
            raise close_names_error("key", key, names)

    def __getitem__(self, key: str) -> List[np.ndarray]:
        """One array per call of the module, ordered by step, then call."""
        return [self._load(record) for record in self.records(key)]

    def summary(self) -> Summary:
        return Summary([SummaryRow(key, entry.count, entry.shapes, entry.dtype, entry.stats)
                        for key, entry in self._key_stats().items()])
