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

import itertools
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

_lock = threading.Lock()
_threads: int | None = None
_pool: ThreadPoolExecutor | None = None
_local = threading.local()  # a worker never splits its own part again
# when work was last split over the pool's threads (time.monotonic); ``_blas`` reads it
_last_split = float("-inf")
# BLAS's idle workers spin for ~0.1 s after each threaded call before they sleep, on the cores
# the pool's threads want; a process that split work this recently is taken to do so again soon
RECENT_SPLIT = 0.25
# when BLAS last ran a product on several threads (``_blas.matmul`` notes it): for BLAS_SPIN
# seconds after, its workers spin on the other cores, and a piece of work split over the pool
# then puts more runnable threads than cores (a transformer step with its GELU and attention
# split: 17.3-18.0 ms on 2 cores, against 16.6 ms with them on the calling thread)
_last_threaded_blas = float("-inf")
BLAS_SPIN = 0.1


def note_threaded_blas() -> None:
    """Called after a product BLAS ran on several threads: its workers now spin for a while."""
    global _last_threaded_blas
    _last_threaded_blas = time.monotonic()


def split_recently() -> bool:
    """Whether work was split over the pool's threads within the last ``RECENT_SPLIT``
    seconds (a convolution or GELU in the step running now)."""
    return time.monotonic() - _last_split < RECENT_SPLIT


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


# pieces per thread. More pieces let a thread that runs slowly (another process on its core)
# leave its share to the others, but every piece is one more series of NumPy calls, and each
# call hands the GIL over: at 4 a thread, the CNN step's pooling ran no faster on two threads
# than on one (its second pooling 1.4x slower), and at 1 the step took 0.89-0.92 of the time
# (2 threads, paired in one process: ``benchmarks/pool_pieces.py``). A thread slow to wake
# still costs nothing: the caller takes the piece it has not claimed yet.
PIECES_PER_THREAD = 1


def parallel_for(total: int, grain: int, body: Callable[[int, int], None],
                 pieces_per_thread: int = PIECES_PER_THREAD) -> None:
    """Call ``body(start, stop)`` over ``range(total)`` cut into pieces of at least ``grain``
    items (and at most ``pieces_per_thread`` pieces per thread), run by the calling thread and
    up to ``get_num_threads() - 1`` pool threads. The pieces must write disjoint memory. An
    exception in any piece is raised here after all started pieces have finished.

    Each NumPy call in a piece lets go of the GIL and takes it back, and a thread that wants
    it back while another runs Python waits for a futex wake-up: hence one piece per thread by
    default (GELU's and erf's passes, attention's, pooling's are many short calls a piece);
    more suit a body of a few long calls (a convolution's GEMM per slice of the batch).

    Each thread claims the next piece until none is left, and the caller waits only for
    pieces another thread has started: a pool thread that is slow to wake or runs at half
    speed takes fewer pieces instead of holding the caller up, so several threads are never
    much slower than one."""
    global _last_split
    threads = get_num_threads()
    most = total // max(grain, 1)
    if min(threads, most) <= 1 or getattr(_local, "inside", False):
        body(0, total)
        return
    now = time.monotonic()
    if now - _last_threaded_blas < BLAS_SPIN:  # BLAS's workers hold the other cores
        body(0, total)
        return
    _last_split = now
    pieces = min(max(pieces_per_thread, 1) * threads, most)
    bounds = [total * i // pieces for i in range(pieces + 1)]
    work = _Work(body, bounds)
    pool = _get_pool(threads - 1)
    for _ in range(min(threads, pieces) - 1):
        pool.submit(work.run)
    work.run()
    work.wait()


class _Work:
    """The pieces of one ``parallel_for``: a claim counter, and a count of pieces finished."""

    def __init__(self, body, bounds: list) -> None:
        self.body, self.bounds = body, bounds
        self.claim = itertools.count().__next__  # one call at a time under the GIL
        self.finished = 0
        self.done = threading.Condition(threading.Lock())
        self.error: BaseException | None = None

    def run(self) -> None:
        _local.inside = True
        try:
            pieces = len(self.bounds) - 1
            while (index := self.claim()) < pieces:
                try:
                    self.body(self.bounds[index], self.bounds[index + 1])
                except BaseException as exc:  # kept for the caller: the others use its arrays
                    self.error = self.error or exc
                with self.done:
                    self.finished += 1
                    if self.finished == pieces:
                        self.done.notify_all()
        finally:
            _local.inside = False

    def wait(self) -> None:
        """Return once every piece has finished (each was claimed: the caller's ``run`` ran
        out of pieces); raise the first error a piece raised."""
        pieces = len(self.bounds) - 1
        with self.done:
            while self.finished < pieces:
                self.done.wait()
        if self.error is not None:
            raise self.error
