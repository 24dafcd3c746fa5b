"""offload(): keep saved activations in files until backward needs them.

Each saved tensor is written to a file in a private directory as it is saved, on the thread
that saves it, and read back ahead of need during backward by a background thread: backward
visits saved tensors in about the reverse of the order they were saved, so each read schedules
the next few older ones. A read that thread has not started when backward needs it is made on
the calling thread instead of waited for.

Why writes stay on the calling thread (unless ``non_blocking=True``): a hand-off to another
thread makes offload's cost depend on where the operating system runs that thread, which
neither offload nor the planner can see. On the benchmark CNN of ``benchmarks/memory.py``
(14 MiB written a step, tensors of 0.5 to 8 MiB), with the main thread on one core, writes on
a worker thread added 15 to 18 ms of CPU time per step with that thread on the same core and
27 to 66 ms with it on the other, busy core: the arrays cross between the cores' caches and
the main thread waits (``max_pending_bytes``, then reads) for a thread that is not running.
Written on the calling thread: 13 to 18 ms and 15 to 24 ms (what remains is the reads ahead;
``prefetch=0``, no worker at all, 13 to 20 ms). Handing only small tensors to the calling
thread does not help: any write left to the worker makes the step wait for it (with the bound
at 4 MiB, +40 ms on the other core). Nor does pinning the worker to its creator's CPU set: on
Linux a new thread inherits that set already, and an unpinned process's set is every core
(``benchmarks/offload_placement.py``; docs/memory.md, "What moves offload's cost").

What was read back is kept only while backward uses it (a weak reference): a buffer two nodes
saved (a ReLU's output that max pooling saves again) is not held from the first node's turn to
the second's, where it would add a whole activation to the peak between them; the second reads
its file again.

Files never outlive their use. A file is removed as soon as the last saved tensor stored in it is
freed (autograd frees a node's saved tensors right after the node has run), and whatever way that
happens (graph freed without backward, exception) its file goes with it, through
``weakref.finalize``;
an exception or KeyboardInterrupt leaving the ``with`` block removes that block's files at once;
interpreter exit removes the directory (``weakref.finalize`` runs at exit); and a directory left
by a killed process is removed the next time offload starts: each live directory holds an
exclusive lock on its ``.lock`` file, which the system releases when its process dies however it
dies (the lock is on the directory itself: no extra file). A directory is stale when its lock can
be taken and either its PID is gone or it has not changed for a while (so a reused PID cannot
keep it alive, and a directory made a moment ago, not yet locked, is not taken); where locks are
unavailable the owner's PID alone is asked.

On torch, each tensor's bytes reach the file without NumPy arithmetic: a CPU tensor's memory is
written as it is; a CUDA tensor is first copied into pinned host memory on a side stream (the
writer thread waits for that copy's event), and read back through pinned memory on the side
stream, which the current stream then waits for.
"""
from __future__ import annotations

import copy
import itertools
import os
import shutil
import tempfile
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional

import numpy as np

from .._backend import Backend
from ._directories import PREFIX, _hold_lock, clean_stale
from .base import Saver, Stored, View, narrow

def _remove_file(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _close_store(path: str, pool: ThreadPoolExecutor, lock: Any) -> None:
    # the last reference may die on the worker itself: it must not wait for itself
    on_worker = threading.current_thread().name.startswith("hookgrad-offload")
    pool.shutdown(wait=not on_worker, cancel_futures=True)
    shutil.rmtree(path, ignore_errors=True)
    if lock is not None:
        os.close(lock)


class _Store:
    """One private directory and one worker thread (reads ahead, and writes when
    ``non_blocking``, in submission order)."""

    def __init__(self, base: Optional[str], prefetch: int, max_pending_bytes: int,
                 non_blocking: bool = False):
        base = base if base is not None else tempfile.gettempdir()
        os.makedirs(base, exist_ok=True)
        clean_stale(base)
        self.path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base)
        self.lock_file = _hold_lock(self.path)
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="hookgrad-offload")
        self.prefetch = prefetch
        self.max_pending_bytes = max_pending_bytes
        self.non_blocking = non_blocking
        self.items: list = []  # weakrefs to _DiskStored, in pack order (index = position)
        self.live = 0
        self.pending: list = []  # (future, nbytes) of writes not yet done, oldest first
        self.lock = threading.Lock()
        self.names = itertools.count()
        self.closer = weakref.finalize(self, _close_store, self.path, self.pool, self.lock_file)

    def add(self, arrays: dict, template: Optional[Stored], tensor: Any,
            backend: Backend) -> "_DiskStored":
        size = sum(a.nbytes for a in arrays.values())
        if self.non_blocking:
            self._bound_pending(size)
        path = os.path.join(self.path, f"{next(self.names)}.bin")
        with self.lock:  # counted live first, so the order cannot be reset under us
            index = len(self.items)
            self.items.append(None)
            self.live += 1
        item = _DiskStored(self, index, path, arrays, template, tensor, backend)
        self.items[index] = weakref.ref(item)
        weakref.finalize(item, self._forget, path)
        if not self.non_blocking:
            item.write_file()  # here and now: no thread to wait for, nothing held unwritten
            return item
        item.write = self.pool.submit(item.write_file)
        self.pending.append((item.write, size))
        return item

    def _bound_pending(self, incoming: int) -> None:
        """Keep at most ``max_pending_bytes`` of unwritten arrays alive (wait for old writes)."""
        pending = [(f, n) for f, n in self.pending if not f.done()]
        total = sum(n for _, n in pending) + incoming
        while pending and total > self.max_pending_bytes:
            future, size = pending.pop(0)
            try:
                future.result()
            except Exception:  # noqa: BLE001 - the item reports it when unpacked
                pass
            total -= size
        self.pending = pending

    def _forget(self, path: str) -> None:
        _remove_file(path)
        with self.lock:
            self.live -= 1
            if self.live == 0:
                self.items = []  # every saved tensor is gone: start the order afresh

    def prefetch_before(self, index: int) -> None:
        """Read the next older saved tensors in the background (backward comes to them next).

        The window is the ``prefetch`` next older live items, read or not: counting only new
        reads would let each unpack start two more, and the reads waiting in memory would grow
        through backward until they held the step's peak."""
        window = self.prefetch
        position = min(index, len(self.items)) - 1
        scanned = 0
        while window > 0 and position >= 0 and scanned < 64:
            ref = self.items[position]
            item = ref() if ref is not None else None
            if item is not None and not item.discarded:
                if item.read is None and not item.consumed:
                    item.read = self.pool.submit(_read_ahead, weakref.ref(item))
                    if _READS_DONE_AT_ONCE[0]:
                        item.read.result()  # a measured step's worst case (see below)
                window -= 1
            position -= 1
            scanned += 1

    def discard(self, since: int) -> None:
        """Remove the files of every saved tensor packed from position ``since`` on."""
        for ref in self.items[since:]:
            item = ref() if ref is not None else None
            if item is not None:
                item.discard()


# While a step's peak is measured for a plan, each read ahead is waited for when scheduled: its
# array is then in memory as early as it can be, the worst case of a race with backward. The
# measured peak then repeats from step to step (a read landing before or after a node's own
# buffers moved it by one saved tensor), so plans built on it repeat too.
_READS_DONE_AT_ONCE = [False]


class reads_done_at_once:
    """Within this block, offload's reads ahead are waited for as they are scheduled."""

    def __enter__(self) -> "reads_done_at_once":
        self.previous = _READS_DONE_AT_ONCE[0]
        _READS_DONE_AT_ONCE[0] = True
        return self

    def __exit__(self, *exc) -> bool:
        _READS_DONE_AT_ONCE[0] = self.previous
        return False


def _read_ahead(ref: "weakref.ref") -> Optional[dict]:
    # a weak reference: a read ahead that backward cancelled (it read the file itself) waits in
    # the worker's queue until the worker runs, and must not keep its saved tensor, and with it
    # the file, alive until then
    item = ref()
    return None if item is None else item.read_file()


class _DiskStored(Stored):
    """Arrays in one file: a saved tensor's, or the arrays of another saver's ``Stored``
    (``template``, kept without them), so ``compose_hooks(cast(...), offload())`` writes the
    cast form."""

    __slots__ = ("store", "index", "path", "layout", "template", "size", "arrays", "tensor",
                 "version", "write", "read", "loaded", "consumed", "modified", "discarded",
                 "backend", "device", "staged")

    def __init__(self, store: _Store, index: int, path: str, arrays: dict,
                 template: Optional[Stored], tensor: Any, backend: Backend):
        self.store = store
        self.index = index
        self.path = path
        self.backend = backend
        self.device = backend.device_of(next(iter(arrays.values()), None))
        self.layout = [(name, a.dtype, tuple(a.shape), a.nbytes) for name, a in arrays.items()]
        # a CUDA array starts its copy to pinned host memory now, on a side stream
        self.staged = {name: backend.stage(a) for name, a in arrays.items()}
        self.template = template
        self.size = sum(a.nbytes for a in arrays.values())
        self.arrays = arrays  # until written
        # shares the version counter: an in-place change after saving is noticed
        self.tensor = tensor.detach() if tensor is not None else None
        self.version = tensor._version if tensor is not None else 0
        self.write: Optional[Future] = None
        self.read: Optional[Future] = None
        # what was read back: a weak reference while the file is there to read it again, the
        # array itself when it never reached a file
        self.loaded: Any = None
        self.consumed = False  # read by backward once: a read ahead would only hold it again
        self.modified = False
        self.discarded = False

    @property
    def kind(self) -> str:  # type: ignore[override]
        return "disk" if self.template is None else f"{self.template.kind} on disk"

    @property
    def nbytes(self) -> int:
        return 0  # resident: nothing once written (at most max_pending_bytes wait for the thread)

    @property
    def disk_nbytes(self) -> int:
        return self.size

    def _changed(self) -> bool:
        return self.tensor is not None and self.tensor._version != self.version

    def write_file(self) -> None:  # on the worker thread
        arrays = self.arrays
        if arrays is None or self.discarded:
            return
        with self._missing_directory():
            with open(self.path, "wb") as handle:
                for name, array in arrays.items():
                    staged = self.staged.get(name)
                    if staged is not None:  # pragma: no cover - needs a GPU
                        pinned, event = staged
                        event.synchronize()
                        array = pinned
                    self.backend.host_bytes(array).tofile(handle)
        self.modified = self._changed()
        self.arrays = None
        self.tensor = None
        self.staged = {}
        if self.discarded:  # discarded while we were writing
            _remove_file(self.path)

    def read_file(self) -> dict:  # on the worker thread, or inline when not read ahead
        if self.discarded:
            raise RuntimeError("an offloaded saved tensor was discarded (its step was abandoned "
                               "by an exception); run forward again")
        arrays = {}
        with self._missing_directory():
            with open(self.path, "rb") as handle:
                for name, dtype, shape, size in self.layout:
                    buffer = np.fromfile(handle, dtype=np.uint8, count=size)
                    arrays[name] = self.backend.from_bytes(buffer, dtype, shape, self.device)
        return arrays

    def _missing_directory(self):
        return _explain_missing(self.store.path)

    def _decoded(self, arrays: dict) -> np.ndarray:
        if self.template is None:
            return arrays["data"]
        stored = copy.copy(self.template)
        for name, array in arrays.items():
            setattr(stored, name, array)
        return stored.decode()

    def _cached(self) -> Any:
        loaded = self.loaded
        return loaded() if isinstance(loaded, weakref.ref) else loaded

    def decode(self) -> np.ndarray:
        data = self._cached()
        if data is not None:  # still in use (one buffer saved by two nodes)
            return data
        if self.discarded:
            self.read_file()  # raises
        written = True
        # a read ahead the worker has not started is cancelled and made below: the worker may
        # not be running at all (its core busy), and waiting for it costs more than reading here
        if self.read is not None and not self.read.cancel():
            data = self.read.result()
        elif self.write is not None and self.write.cancel():
            data = self.arrays  # never written: the arrays are still here
            self.modified = self._changed()
            self.arrays = self.tensor = None
            written = False
        else:
            if self.write is not None:
                self.write.result()
            data = self.read_file()
        if self.modified:
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation after it was offloaded: its file may hold the new values. "
                "Hint: clone the tensor before modifying it in place.")
        data = self._decoded(data)
        self.loaded = weakref.ref(data) if written else data
        self.read = None
        first = not self.consumed
        self.consumed = True
        if first:
            self.store.prefetch_before(self.index)
        return data

    def discard(self) -> None:
        self.discarded = True
        if self.write is not None:
            self.write.cancel()
        self.arrays = self.tensor = None
        self.staged = {}
        _remove_file(self.path)


class _explain_missing:
    """Turn a file error caused by the offload directory having vanished (removed by hand or
    by a temp cleaner while a graph still needed it) into an error that says so."""

    def __init__(self, directory: str):
        self.directory = directory

    def __enter__(self):
        return self

    def __exit__(self, exc_type, error, traceback) -> bool:
        if exc_type is not None and issubclass(exc_type, FileNotFoundError) \
                and not os.path.isdir(self.directory):
            raise RuntimeError(
                f"offload(): the directory holding offloaded saved tensors, {self.directory}, "
                "was removed while a graph still needed them; run forward again (and keep "
                "the directory, or pass offload(directory=...) somewhere it is not cleaned)"
            ) from error
        return False


def _slots(obj: Any) -> list:
    names = []
    for cls in type(obj).__mro__:
        names.extend(n for n in getattr(cls, "__slots__", ()) if n not in ("__weakref__",))
    return names


class offload(Saver):
    """Keep saved activations in files in a private temporary directory (under ``directory``,
    default the system's temp dir) instead of memory; they are read back ahead of need during
    backward by a background thread (``prefetch`` tensors ahead; each one read ahead is
    resident until its node runs, so the default is one). Gradients are exact::

        with memory.offload():
            loss = model(x).sum()
        loss.backward()

    Each tensor is written as it is saved, on the thread that saves it: forward waits for the
    copy into the file (about 0.5 ms per MiB on a CPU), but that cost hardly depends on where
    the operating system runs offload's thread. ``non_blocking=True`` hands writes to the
    background thread instead, as ``Tensor.to(..., non_blocking=True)`` does a copy: forward
    goes on while it writes, which saves time when a core is free for it (and lets a GPU
    tensor's copy to host memory run without the Python thread waiting for it), and costs
    more when not: with the thread on a busy second core the benchmark CNN's step took 33 to
    57 ms longer, against 15 to 24 ms with writes on the saving thread (module docstring).
    ``max_pending_bytes`` then bounds how much memory waits for that thread: past it, saving
    waits for older writes, so the queue never keeps many activations alive that forward
    would already have dropped (the default, 4 MiB, keeps about one layer's output in
    flight). Without ``non_blocking`` nothing waits unwritten.
    """

    def __init__(self, directory: Optional[str] = None, prefetch: int = 1,
                 max_pending_bytes: int = 4 << 20, min_bytes: int = 0,
                 framework: Optional[str] = None, non_blocking: bool = False):
        super().__init__(min_bytes, framework)
        if prefetch < 0:
            raise ValueError(f"prefetch must be >= 0, got {prefetch}")
        self.directory = None if directory is None else os.fspath(directory)
        self.prefetch = prefetch
        self.max_pending_bytes = max_pending_bytes
        self.non_blocking = non_blocking
        self._store_obj: Optional[_Store] = None
        self._marks: list = []

    @property
    def path(self) -> Optional[str]:
        """The private directory, once something was offloaded."""
        return None if self._store_obj is None else self._store_obj.path

    def _disk(self) -> _Store:
        if self._store_obj is None:
            self._store_obj = _Store(self.directory, self.prefetch, self.max_pending_bytes,
                                     self.non_blocking)
        return self._store_obj

    def _store(self, array: Any, tensor: Any, backend: Backend) -> Stored:
        if backend.dtype_of(tensor).kind in "iu":
            # integers (pool indices) go to the file in the narrowest type that holds them:
            # fewer bytes wait for the writer, are written, and are held when read ahead
            narrowed = narrow(array, backend)
            if narrowed is not None:
                data, narrowed.data = narrowed.data, None
                return self._disk().add({"data": data}, narrowed, tensor, backend)
        return self._disk().add({"data": array}, None, tensor, backend)

    def _pack_value(self, value: Any, kind: Optional[str] = None, original: Any = None) -> Any:
        if isinstance(value, View) and not isinstance(value.stored, _DiskStored):
            return self._pack_view(value)  # another saver's packed form: write that
        return super()._pack_value(value, kind, original)

    def _pack_view(self, view: View) -> View:
        stored = view.stored
        backend = view.backend
        arrays = {name: getattr(stored, name) for name in _slots(stored)
                  if backend.is_array(getattr(stored, name, None))}
        if sum(a.nbytes for a in arrays.values()) < self.min_bytes:
            return view
        template = copy.copy(stored)
        for name in arrays:
            setattr(template, name, None)
        disk = self._disk().add(arrays, template, None, backend)
        return View(disk, view.shape, view.dtype, view.strides, view.offset, backend)

    def __enter__(self) -> "offload":
        super().__enter__()
        store = self._store_obj
        self._marks.append((store, len(store.items) if store is not None else 0))
        return self

    def __exit__(self, exc_type, *rest) -> bool:
        store, since = self._marks.pop()
        super().__exit__(exc_type, *rest)
        if exc_type is not None and self._store_obj is not None:
            # the step was abandoned: its graph will never run backward
            self._store_obj.discard(since if store is self._store_obj else 0)
        return False

    def close(self) -> None:
        """Remove the directory now (files of still-alive graphs too) and stop the thread."""
        store, self._store_obj = self._store_obj, None
        if store is not None:
            for ref in store.items:
                item = ref() if ref is not None else None
                if item is not None:
                    item.discard()
            store.closer()

    def _describe(self) -> str:
        parts = [] if self.directory is None else [f"directory={self.directory!r}"]
        if self.non_blocking:
            parts.append("non_blocking=True")
        extra = super()._describe()
        return ", ".join(parts + ([extra] if extra else []))
