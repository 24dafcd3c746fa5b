"""Keep freed array memory in the process for the next training step (Linux with glibc).

A training step allocates and frees the same large arrays every time (activations, gradients,
im2col columns). glibc's malloc hands a freed block at the top of its heap back to the kernel
once more than its trim threshold is free there, and serves a block above its mmap threshold
with a fresh mapping that is unmapped on free. Both thresholds start at 128 KiB and only
rise as large blocks are freed, so the end of each step returned the step's memory,
and the next step faulted every page of it in again: 2,600 page faults (6.5 ms of system time)
in each transformer step and 4,000 in each CNN step of ``benchmarks/workloads.py``. With more
than one thread each unmap must also flush the other threads' TLBs (BLAS's workers included).

At import hookgrad sets both thresholds to where glibc's own rule would take them after
freeing one 32 MiB block (the mmap threshold at its ceiling, trimming above twice that): the
memory a step frees stays mapped and is reused, and at most 64 MiB free at a heap's top is
kept from the kernel. Blocks above 32 MiB are still mapped and unmapped each time. (torch's
CUDA allocator caches freed blocks for the same reason.)

It is skipped when the user set glibc's malloc through its environment (``MALLOC_*_`` or
``GLIBC_TUNABLES``), when ``HOOKGRAD_KEEP_FREED_MEMORY=0``, and on other C libraries.
"""
from __future__ import annotations

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1  # mallopt's parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 << 20  # glibc's largest (DEFAULT_MMAP_THRESHOLD_MAX on 64-bit)
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # the ratio glibc's dynamic rule keeps

_USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_MMAP_MAX_", "MALLOC_ARENA_MAX")


def _wanted(environ) -> bool:
    if environ.get("HOOKGRAD_KEEP_FREED_MEMORY", "1").strip() == "0":
        return False
    if any(name in environ for name in _USER_SETTINGS):
        return False
    return "glibc.malloc" not in environ.get("GLIBC_TUNABLES", "")


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def keep_freed_memory(environ=os.environ) -> bool:
    """Raise glibc's trim and mmap thresholds (see the module's docstring); whether they were
    set. Called once when hookgrad is imported."""
    if not sys.platform.startswith("linux") or not _wanted(environ) or not _glibc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    # the mmap threshold first: setting either fixes both (glibc stops moving them itself)
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
