"""Intra-op threads: a small pool that splits one large piece of NumPy work into parts.

NumPy lets go of the GIL inside its loops, so parts of one array computed by several Python
threads do run on several cores. This pays for work that does many passes per element (erf's
series, GELU's kernels, im2col's copies) or many small BLAS calls (attention over a batch of
heads); a single cheap pass is limited by memory, not by the core, and stays on one thread.
``torch.set_num_threads`` / ``torch.get_num_threads`` read and set the number of
threads used here (BLAS keeps its own, set by its environment variables); the default, as in
torch, is ``OMP_NUM_THREADS`` when set, else the number of cores.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

_lock = threading.Lock()
_threads: int | None = None
_pool: ThreadPoolExecutor | None = None
_local = threading.local()  # a worker never splits its own part again


def _default_threads() -> int:
    value = os.environ.get("OMP_NUM_THREADS", "")
    if value.strip().isdigit() and int(value) > 0:
        return int(value)
    return os.cpu_count() or 1


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism."""
    global _threads
    if _threads is None:
        _threads = _default_threads()
    return _threads


def set_num_threads(count: int) -> None:
    """Use ``count`` threads (a positive integer) for intra-op parallelism."""
    global _threads, _pool
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    with _lock:
        if count != _threads and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _threads = count


def _forget_pool_after_fork() -> None:
    # a forked child (a DataLoader worker) inherits the pool but none of its threads: work
    # handed to it would wait forever, so the child starts a pool of its own when it needs one
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hookgrad")
        return _pool


def parallel_for(total: int, grain: int, body: Callable[[int, int], None]) -> None:
    """Call ``body(start, stop)`` over ``range(total)`` cut into at most ``get_num_threads()``
    parts of at least ``grain`` items; one part runs on the calling thread. The parts must
    write disjoint memory. An exception in any part is raised here after all have finished."""
    parts = min(get_num_threads(), total // max(grain, 1))
    if parts <= 1 or getattr(_local, "inside", False):
        body(0, total)
        return
    bounds = [total * i // parts for i in range(parts + 1)]
    pool = _get_pool(get_num_threads() - 1)
    futures = [pool.submit(_run_part, body, bounds[i], bounds[i + 1]) for i in range(1, parts)]
    error = None
    try:
        _run_part(body, bounds[0], bounds[1])
    except BaseException as exc:  # wait for the others before raising: they use our arrays
        error = exc
    for future in futures:
        try:
            future.result()
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error


def _run_part(body, start: int, stop: int) -> None:
    _local.inside = True
    try:
        body(start, stop)
    finally:
        _local.inside = False
