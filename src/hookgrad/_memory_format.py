"""Memory formats: ``torch.contiguous_format``, ``preserve_format``, ``channels_last`` and
``channels_last_3d``, and the stride arithmetic behind them.

A format names an order of the dimensions in memory, not a different kind of tensor: a
channels-last ``(N, C, H, W)`` tensor is a dense block laid out as ``(N, H, W, C)`` and seen
through permuted strides. That is why the tests and constructions here are on shapes and
strides only, and why this module needs nothing but NumPy.
"""
from __future__ import annotations

from typing import Optional, Tuple


class memory_format:
    """The type of the four memory-format constants (there are no others: it cannot be built)."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> "memory_format":
        fmt = object.__new__(cls)
        object.__setattr__(fmt, "_name", name)
        return fmt

    def __setattr__(self, name, value):
        raise AttributeError("'torch.memory_format' object is read-only")

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        # pickled by name, so a loaded format is the module's constant (``is`` keeps working)
        return self._name

    def __copy__(self) -> "memory_format":
        return self

    def __deepcopy__(self, memo) -> "memory_format":
        return self


memory_format.__module__ = "hookgrad"  # where pickle finds the constants by name

contiguous_format = memory_format._make("contiguous_format")
preserve_format = memory_format._make("preserve_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")

# the rank each channels-last format needs
_RANK = {channels_last: 4, channels_last_3d: 5}


def check(fmt, fn: str, optional: bool = True) -> Optional[memory_format]:
    """``fmt`` when it is a memory format (or None where ``fn`` accepts None), else torch's
    TypeError naming the argument."""
    if isinstance(fmt, memory_format) or (fmt is None and optional):
        return fmt
    raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def check_rank(ndim: int, fmt: memory_format) -> None:
    """A channels-last format needs a 4-d (``channels_last``) or 5-d (``channels_last_3d``)
    tensor: torch's RuntimeError otherwise."""
    rank = _RANK.get(fmt)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")


def memory_order(ndim: int) -> list:
    """The channels-last order of ``ndim`` dims, slowest first: N, the spatial dims, then C."""
    return [0, *range(2, ndim), 1]


def channels_last_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    """Element strides of a dense channels-last tensor of ``shape``, as torch computes them: a
    plain running product, so a size-0 dim zeroes the strides of the slower ones (unlike
    row-major strides, which step over a size-0 dim as if it were 1)."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(memory_order(len(shape))):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def is_contiguous(shape: Tuple[int, ...], strides: Tuple[int, ...], c_contiguous: bool,
                  fmt: Optional[memory_format]) -> bool:
    """torch's ``is_contiguous(memory_format=fmt)`` from a shape and element strides: a
    channels-last format asks for its own dense order (size-1 dims may have any stride, so a
    tensor can be both row-major and channels-last); any other format asks for row-major."""
    rank = _RANK.get(fmt)
    if rank is None:
        return c_contiguous
    if len(shape) != rank:
        return False
    step = 1
    for d in reversed(memory_order(rank)):
        if shape[d] != 1:
            if strides[d] != step:
                return False
            step *= shape[d]
    return True


def suggested(shape: Tuple[int, ...], strides: Tuple[int, ...]) -> memory_format:
    """The format torch reads off a tensor's strides (its ``suggest_memory_format``):
    ``channels_last`` (or ``_3d``) when the strides grow along C, then the spatial dims from the
    last, then N; else ``contiguous_format``. Ambiguous layouts fall back to row-major, as in
    torch: a zero C stride, a size-0 dim, or an N whose stride equals C's."""
    if len(shape) == 4:
        fmt = channels_last
    elif len(shape) == 5:
        fmt = channels_last_3d
    else:
        return contiguous_format
    if strides[1] == 0:
        return contiguous_format
    least = 0
    for d in reversed(memory_order(len(shape))):
        if shape[d] == 0 or strides[d] < least:
            return contiguous_format
        if d == 0 and least == strides[1]:  # e.g. (N, 1, 1, 1) with equal strides
            return contiguous_format
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return fmt
