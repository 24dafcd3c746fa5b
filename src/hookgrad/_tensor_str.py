"""``repr(tensor)`` character for character as torch prints it.

The rules, learned from torch's printing: one formatter per tensor decides, from the nonzero
finite values only (of the summarized data when the tensor has more than ``threshold`` elements),
between integer mode (``1.``), fixed point with ``precision`` decimals and scientific notation
(a max/min ratio above 1000, a value above 1e8 or one below 1e-4), and pads every element to the
widest of those values. Rows wrap at ``linewidth``; suffixes such as ``dtype=`` follow the last
line or start a new one when it would pass ``linewidth``.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass

import numpy as np

from . import _dtype


@dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: object = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """torch.set_printoptions: digits, summarization threshold and edge items, line width,
    and ``sci_mode`` (None lets each tensor choose)."""
    if profile is not None:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options (precision, threshold, edgeitems, linewidth, sci_mode), a dict."""
    return asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Set print options for the duration of a ``with`` block."""
    previous = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**previous)


class _Formatter:
    """Chooses the notation and the common width for the elements of one tensor."""

    __slots__ = ("floating", "int_mode", "sci_mode", "width")

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind in "fV"
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        if not self.floating:
            self.width = max([self.width] + [len(str(v)) for v in values.ravel().tolist()])
            return
        flat = values.ravel()
        chosen = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if chosen.size == 0:
            return
        magnitude = np.abs(chosen)
        low, high = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(chosen == np.ceil(chosen)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        else:
            self.sci_mode = bool(PRINT_OPTS.sci_mode)
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            texts = [f"{v:.{precision}e}" for v in chosen.tolist()]
        elif self.int_mode:
            texts = [f"{v:.0f}." for v in chosen.tolist()]  # the "." marks a float tensor
        else:
            texts = [f"{v:.{precision}f}" for v in chosen.tolist()]
        self.width = max(len(text) for text in texts)

    def format(self, value) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{PRINT_OPTS.precision}f}"
        return " " * (self.width - len(text)) + text


def _summarized(array: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows: ``edgeitems`` from each end of every dim."""
    edge = PRINT_OPTS.edgeitems
    if array.ndim == 0:
        return array
    if array.ndim == 1:
        if array.shape[0] > 2 * edge:
            return np.concatenate((array[:edge], array[array.shape[0] - edge:]))
        return array
    if not edge:
        return np.zeros((0,) * array.ndim, array.dtype)
    rows = range(array.shape[0])
    if array.shape[0] > 2 * edge:
        rows = list(range(edge)) + list(range(array.shape[0] - edge, array.shape[0]))
    return np.stack([_summarized(array[i]) for i in rows])


def _vector(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (formatter.width + 2)))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        items = ["..."]
    elif summarize and array.shape[0] > 2 * edge:
        items = ([formatter.format(v) for v in array[:edge].tolist()] + [" ..."] +
                 [formatter.format(v) for v in array[array.shape[0] - edge:].tolist()])
    else:
        items = [formatter.format(v) for v in array.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(array: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if array.ndim == 0:
        return formatter.format(array.item())
    if array.ndim == 1:
        return _vector(array, indent, summarize, formatter)
    edge = PRINT_OPTS.edgeitems
    size = array.shape[0]
    if summarize and size > 2 * edge:
        pieces = ([_nested(array[i], indent + 1, summarize, formatter) for i in range(edge)] +
                  ["..."] + [_nested(array[i], indent + 1, summarize, formatter)
                             for i in range(size - edge, size)])
    else:
        pieces = [_nested(array[i], indent + 1, summarize, formatter) for i in range(size)]
    return "[" + ("," + "\n" * (array.ndim - 1) + " " * (indent + 1)).join(pieces) + "]"


def array_str(array: np.ndarray, indent: int) -> str:
    """The bracketed body of a non-empty tensor's repr."""
    summarize = array.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized(array) if summarize else array)
    return _nested(array, indent, summarize, formatter)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(tensor, prefix: str = "tensor(") -> str:
    """torch's repr: body, then dtype (unless default float, int64 or bool), then grad_fn or
    requires_grad."""
    array = tensor._data
    indent = len(prefix)
    dtype = _dtype.from_numpy_dtype(array.dtype)
    default = _dtype.get_default_dtype()
    suffixes = []
    if array.size == 0:
        if array.ndim != 1:
            suffixes.append(f"size={tuple(array.shape)}")
        if dtype is not default:  # nothing in "[]" tells an int64 or bool tensor apart
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(array.shape)}")
        if dtype not in (default, _dtype.int64, _dtype.bool_):
            suffixes.append(f"dtype={dtype!r}")
        body = array_str(array, indent)
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name().rsplit('::', 1)[-1]}>")
    elif tensor.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
