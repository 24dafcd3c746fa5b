"""``repr(tensor)`` as torch prints it (a simplified port of its formatting rules)."""
from __future__ import annotations

import numpy as np

from . import _dtype

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


def _format_floats(values: np.ndarray):
    finite = values[np.isfinite(values)]
    nonzero = np.abs(finite[finite != 0])
    int_mode = finite.size == 0 or bool(np.all(finite == np.ceil(finite)))
    sci = False
    if nonzero.size:
        high, low = float(nonzero.max()), float(nonzero.min())
        if int_mode:
            sci = high / low > 1000.0 or high > 1.0e8
        else:
            sci = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
    if sci:
        return lambda v: f"{v:.{PRECISION}e}"
    if int_mode:
        return lambda v: (f"{v:.0f}." if np.isfinite(v) else _special(v))
    return lambda v: (f"{v:.{PRECISION}f}" if np.isfinite(v) else _special(v))


def _special(v) -> str:
    return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")


def _formatter(array: np.ndarray):
    sample = _summary_values(array)
    if array.dtype.kind == "f":
        fmt = _format_floats(sample.astype(np.float64))
    elif array.dtype.kind == "b":
        fmt = lambda v: "True" if v else "False"  # noqa: E731
    else:
        fmt = lambda v: str(int(v))  # noqa: E731
    width = max((len(fmt(v)) for v in sample.ravel()), default=1)
    return lambda v: fmt(v).rjust(width), width


def _summary_values(array: np.ndarray) -> np.ndarray:
    if array.size <= THRESHOLD or array.ndim == 0:
        return array.ravel()
    parts = []

    def walk(a):
        if a.ndim == 1:
            if a.shape[0] > 2 * EDGEITEMS:
                parts.append(a[:EDGEITEMS])
                parts.append(a[-EDGEITEMS:])
            else:
                parts.append(a)
            return
        rows = range(a.shape[0])
        if a.shape[0] > 2 * EDGEITEMS:
            rows = list(range(EDGEITEMS)) + list(range(a.shape[0] - EDGEITEMS, a.shape[0]))
        for i in rows:
            walk(a[i])

    walk(array)
    return np.concatenate(parts) if parts else array.ravel()


def _render(array: np.ndarray, fmt, width: int, indent: int, summarize: bool) -> str:
    if array.ndim == 0:
        return fmt(array.item())
    if array.ndim == 1:
        items = [fmt(v) for v in array.tolist()] if not (
            summarize and array.shape[0] > 2 * EDGEITEMS) else (
            [fmt(v) for v in array[:EDGEITEMS].tolist()] + ["..."] +
            [fmt(v) for v in array[-EDGEITEMS:].tolist()])
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(array.shape[0])
    if summarize and array.shape[0] > 2 * EDGEITEMS:
        rows = list(range(EDGEITEMS)) + [None] + list(range(array.shape[0] - EDGEITEMS,
                                                            array.shape[0]))
    pieces = [("..." if i is None else _render(array[i], fmt, width, indent + 1, summarize))
              for i in rows]
    separator = "," + "\n" * (array.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(pieces) + "]"


def tensor_repr(tensor, prefix: str = "tensor(") -> str:
    array = tensor._data
    summarize = array.size > THRESHOLD
    suffixes = []
    dtype = _dtype.from_numpy_dtype(array.dtype)
    if array.size == 0:
        body = "[]"
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
    else:
        fmt, width = _formatter(array)
        body = _render(array, fmt, width, len(prefix), summarize)
    implicit = (dtype is _dtype.get_default_dtype() or dtype is _dtype.int64 or
                dtype is _dtype.bool_)
    if not implicit:
        suffixes.append(f"dtype={dtype!r}")
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif tensor._requires_grad:
        suffixes.append("requires_grad=True")
    if suffixes:
        body += ", " + ", ".join(suffixes)
    return prefix + body + ")"
