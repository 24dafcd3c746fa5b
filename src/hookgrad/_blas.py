"""Large products split over the intra-op threads, with NumPy's OpenBLAS on one thread.

OpenBLAS's own threads wait for each other by spinning: when another process holds a core, a
2-thread GEMM waits for its descheduled half, and its idle worker keeps spinning for ~0.1 s
after every call, on the core hookgrad's pool threads want. ``matmul`` instead cuts the
product's output into column (or row) blocks that the intra-op threads claim in turn
(``parallel_for``: a slow thread takes fewer blocks) while OpenBLAS runs each block on one
thread. Where OpenBLAS cannot be found (another BLAS, another platform) it is plain
``np.matmul``. While such a product runs, NumPy code on other Python threads also gets
OpenBLAS on one thread.
"""
from __future__ import annotations

import ctypes
import os
import threading
from contextlib import contextmanager
from typing import Callable, Optional, Tuple

import numpy as np

from ._parallel import get_num_threads, parallel_for

_SYMBOLS = ("scipy_openblas_{}64_", "scipy_openblas_{}", "openblas_{}64_", "openblas_{}")
_lock = threading.Lock()
_controls: Optional[Tuple[Callable, Callable]] = None
_looked = False


def _find_openblas() -> Optional[Tuple[Callable, Callable]]:
    """(get_num_threads, set_num_threads) of the OpenBLAS loaded in this process, if any."""
    try:
        with open("/proc/self/maps") as maps:
            fields = [line.split() for line in maps]
    except OSError:
        return None
    paths = {f[5] for f in fields
             if len(f) >= 6 and "openblas" in os.path.basename(f[5]).lower()}
    for path in sorted(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for pattern in _SYMBOLS:
            getter = getattr(library, pattern.format("get_num_threads"), None)
            setter = getattr(library, pattern.format("set_num_threads"), None)
            if getter is not None and setter is not None:
                getter.restype, setter.restype = ctypes.c_int, None
                setter.argtypes = (ctypes.c_int,)
                return getter, setter
    return None


def _openblas() -> Optional[Tuple[Callable, Callable]]:
    global _controls, _looked
    if not _looked:
        _controls, _looked = _find_openblas(), True
    return _controls


_users = 0  # products running with OpenBLAS on one thread, from any Python thread
_restore = 1


@contextmanager
def _one_blas_thread(controls):
    """OpenBLAS on one thread while any product of this module runs; the first to enter
    records its count and the last to leave puts it back (products on several Python
    threads at once would otherwise restore each other's 1)."""
    global _users, _restore
    getter, setter = controls
    with _lock:
        if _users == 0:
            _restore = getter()
            setter(1)
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                setter(_restore)


_BLAS_TYPES = (np.dtype(np.float32), np.dtype(np.float64))

# OpenBLAS runs a GEMM of at most this many multiply-adds on one thread whatever its thread
# count (GEMM_MULTITHREAD_THRESHOLD times SMP_THRESHOLD_MIN): smaller products are left to it
OPENBLAS_SINGLE_THREAD = 4 * 65536

# the least work (multiply-adds) per block: a block costs a Python call and a wake-up
_BLOCK_WORK = 1 << 21


def matmul(a: np.ndarray, b: np.ndarray, threshold: int) -> np.ndarray:
    """``np.matmul(a, b)`` for 2-D or stacked (3-D) float operands; with more than one
    intra-op thread and a product above ``threshold`` multiply-adds (per matrix), split into
    blocks of the output over the threads, OpenBLAS on one thread."""
    if a.ndim < 2 or b.ndim < 2 or a.dtype not in _BLAS_TYPES or b.dtype != a.dtype:
        return np.matmul(a, b)
    m, k = a.shape[-2:]
    n = b.shape[-1]
    controls = _openblas() if get_num_threads() > 1 and m * n * k > threshold else None
    if controls is None:
        return np.matmul(a, b)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (m, n)
    out = np.empty(shape, np.result_type(a, b))
    by_columns = n >= m
    length = n if by_columns else m
    grain = max(1, _BLOCK_WORK // max(1, (m if by_columns else n) * k))

    def block(start: int, stop: int) -> None:
        if by_columns:
            np.matmul(a, b[..., start:stop], out=out[..., start:stop])
        else:
            np.matmul(a[..., start:stop, :], b, out=out[..., start:stop, :])

    with _one_blas_thread(controls):
        parallel_for(length, grain, block)
    return out
