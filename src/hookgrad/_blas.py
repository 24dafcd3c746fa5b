"""BLAS's own thread count, lowered to one for a stretch of work that hookgrad's pool splits.

Work that ``_parallel.parallel_for`` cuts into parts (a convolution's GEMM per slice of the
batch) already keeps every core busy; if each part's GEMM asked BLAS for its threads too,
OpenBLAS would serialize the parts behind its lock and its workers would spin between calls on
the cores the pool needs. So such work runs inside ``one_blas_thread()``.

The count is read and set through ``threadpoolctl`` (the ``threads`` extra), which finds the
BLAS NumPy loaded. Only OpenBLAS is handled: its count is process-wide, set from the main
thread (a count set from another thread is not taken up; MKL's is per thread, so the pool's
threads would not see it). Elsewhere ``available()`` is False and callers keep BLAS's own
threading (their one-thread path).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from . import _parallel

_controllers: list | None = None
_lock = threading.Lock()


def _blas_controllers() -> list:
    global _controllers
    if _controllers is None:
        try:
            from threadpoolctl import ThreadpoolController
            found = [c for c in ThreadpoolController().lib_controllers
                     if c.internal_api == "openblas"]
        except Exception:  # not installed, or a library it cannot read: keep BLAS as it is
            found = []
        _controllers = found
    return _controllers


def available() -> bool:
    """Whether BLAS's thread count can be set here: threadpoolctl found OpenBLAS, and this is
    the main thread."""
    return threading.current_thread() is threading.main_thread() and bool(_blas_controllers())


_depth = 0
_before: list = []


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the body with OpenBLAS on one thread, then give back the count it had (bodies may
    nest: the last one out restores). Call it where ``available()``; the count is process-wide:
    another thread's GEMM in the meantime also runs on one thread (slower, never wrong)."""
    _lower()
    try:
        yield
    finally:
        _restore()


def _lower() -> None:
    """``one_blas_thread``'s entry; ``matmul`` calls it directly (no generator per product)."""
    global _depth, _before
    with _lock:
        if _depth == 0:
            controllers = _blas_controllers()
            _before = [c.get_num_threads() for c in controllers]
            for controller, count in zip(controllers, _before):
                if count != 1:
                    controller.set_num_threads(1)
        _depth += 1


def _restore() -> None:
    """``one_blas_thread``'s exit."""
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            for controller, count in zip(_blas_controllers(), _before):
                if count != 1:
                    controller.set_num_threads(count)


# OpenBLAS splits a GEMM over its threads from 4 * 65536 multiply-adds up. After the call its
# workers spin for ~0.1 s waiting for the next one, on the cores hookgrad's pool
# (``_parallel``) wants: a CNN's 64x3136x10 linear layer took 15-90 ms a step that way at 2
# threads, 0.5 ms at 1. So while the pool is in use (work split within the last
# ``_parallel.RECENT_SPLIT`` seconds), products below SMALL_GEMM multiply-adds run on one thread
# (at 8M a batch-16 MLP's 16x784x512 and 16x512x512 products stayed on one thread too, and
# letting BLAS's two threads have them made its step 15-19 % faster, so the line is at 4M).
# Work that does not use the pool (an MLP) leaves nothing for the spinning to slow down and
# keeps BLAS's threads for every product: lowering the count around its mid-size products and
# giving it back cost its step ~7 % (``benchmarks/blas_switching.py``).
SMALL_GEMM = 1 << 22
_THREADED_GEMM = 4 * 65536


_count_getters: list | None = None


def _threaded() -> bool:
    """Whether any BLAS found runs more than one thread now. Read through OpenBLAS's own
    getter, kept from the first call (threadpoolctl's method is ten Python calls a read, and
    a product lowered for nothing paid ~30 of them: a fifth of a small MLP step's calls)."""
    global _count_getters
    getters = _count_getters
    if getters is None:
        getters = []
        for controller in _blas_controllers():
            raw = None
            if getattr(controller, "threading_layer", None) != "openmp":
                try:  # the C function threadpoolctl itself ends in, for this library's symbols
                    raw = controller._get_symbol("openblas_get_num_threads")
                except Exception:
                    raw = None
            getters.append(raw if raw is not None else controller.get_num_threads)
        _count_getters = getters
    for getter in getters:
        count = getter()
        if count is not None and count > 1:
            return True
    return False


def _few_rows_by_transposed(a, b) -> bool:
    """Whether ``a @ b`` is a few rows of ``a`` times a transposed matrix ``b`` (a Linear
    layer's ``x @ W.T`` at a small batch), which OpenBLAS computes at about half the speed of
    the same product taken the other way round, ``(W @ x.T).T`` (4 to 32 rows by 512 x 784:
    0.4-0.7 of the time, at one thread and two; torch's own is as fast as the latter). The
    line is where that held for every shape measured (K and N from 128 to 2048): at 64 rows
    and more, or with fewer than 128 columns out, either way is as fast or the copy costs."""
    rows, inner = a.shape
    columns = b.shape[1]
    if rows < 4 or rows > 32 or inner < 128 or columns < 128 or (columns < 256 and rows < 16):
        return False
    return a.flags.c_contiguous and b.flags.f_contiguous and not b.flags.c_contiguous


def matmul(a, b):
    """``np.matmul(a, b)``; a 2-D product too small for BLAS's threads to pay runs on one
    (nothing to do when BLAS is on one thread already: then no lock and no count is set), and
    a few rows times a transposed matrix is taken the other way round (``_few_rows_by_
    transposed``), the result laid out in rows as NumPy's."""
    import numpy as np
    if a.ndim == 2 and b.ndim == 2:
        if _few_rows_by_transposed(a, b) and a.dtype == b.dtype and a.dtype.kind == "f":
            return np.ascontiguousarray(np.matmul(b.T, a.T).T)
        size = a.shape[0] * a.shape[1] * b.shape[1]
        if (_THREADED_GEMM < size < SMALL_GEMM and _parallel.split_recently() and _threaded()
                and available()):
            _lower()  # one_blas_thread's body, inline: a mid-size product is often a layer's
            try:
                return np.matmul(a, b)
            finally:
                _restore()
        if size >= SMALL_GEMM and _threaded():
            result = np.matmul(a, b)
            _parallel.note_threaded_blas()  # its workers spin now: the pool waits (_parallel)
            return result
    return np.matmul(a, b)


# OpenBLAS splits a matrix-vector product over its threads from a few hundred thousand
# elements up; on a loaded machine a (2048, 256) one then took ~1 ms of the caller's CPU
# waiting for the worker, against ~40 us on one thread. Products are cut into row blocks of
# at most this many elements, which it keeps on the calling thread.
_MATVEC_BLOCK = 1 << 17


def matvec(matrix, vector):
    """``matrix @ vector`` (a 2-D C-ordered matrix) on the calling thread: BLAS's product in
    row blocks, or einsum's loop for rows longer than a block."""
    import numpy as np
    rows, columns = matrix.shape
    if rows * columns <= _MATVEC_BLOCK:
        return matrix @ vector
    if columns > _MATVEC_BLOCK:
        return np.einsum("ij,j->i", matrix, vector)
    result = np.empty(rows, np.result_type(matrix, vector))
    step = _MATVEC_BLOCK // columns
    for first in range(0, rows, step):
        np.matmul(matrix[first:first + step], vector, out=result[first:first + step])
    return result


def vecmat(vector, matrix):
    """``vector @ matrix`` (a 2-D C-ordered matrix) on the calling thread: the sum of BLAS's
    products over row blocks, or einsum's loop for rows longer than a block."""
    import numpy as np
    rows, columns = matrix.shape
    if rows * columns <= _MATVEC_BLOCK:
        return vector @ matrix
    if columns > _MATVEC_BLOCK:
        return np.einsum("i,ij->j", vector, matrix)
    step = _MATVEC_BLOCK // columns
    result = vector[:step] @ matrix[:step]
    for first in range(step, rows, step):
        result += vector[first:first + step] @ matrix[first:first + step]
    return result


# ``y += alpha * x`` for the optimizers' updates (torch's ``add_(x, alpha=...)``). NumPy needs
# two passes and a temporary the size of the parameter, and rounds twice; BLAS's axpy is one
# pass, about half the time for a 784x512 float32 weight, and rounds as torch's kernel does
# (one fused multiply-add where the CPU has it: bit for bit torch's on this machine's
# OpenBLAS, where NumPy's differed in the last bit in 2 % of the elements). Below this size
# the ctypes call costs more than the second pass saves.
_AXPY_MIN_SIZE = 2048
# OpenBLAS splits an axpy over its threads above this many elements; a pass limited by memory
# gains little from that, and its workers then spin on the cores the pool wants, so while the
# pool is in use longer ones run with BLAS lowered to one thread, as mid-size products
_AXPY_THREADED = 10000
_axpy_functions: dict | None = None


def _axpy_table() -> dict:
    """``{dtype: C function}`` for OpenBLAS's ``cblas_saxpy``/``cblas_daxpy``, with the integer
    width its build uses (``USE64BITINT`` in its config); empty where it is not found."""
    global _axpy_functions
    if _axpy_functions is None:
        import ctypes

        import numpy as np
        table = {}
        try:
            controller = _blas_controllers()[0]
            config = controller._get_symbol("openblas_get_config")
            config.restype = ctypes.c_char_p
            integer = ctypes.c_int64 if b"USE64BITINT" in config() else ctypes.c_int
            for dtype, name, real in ((np.dtype(np.float32), "cblas_saxpy", ctypes.c_float),
                                      (np.dtype(np.float64), "cblas_daxpy", ctypes.c_double)):
                function = controller._get_symbol(name)
                if function is not None:
                    function.restype = None
                    function.argtypes = [integer, real, ctypes.c_void_p, integer,
                                         ctypes.c_void_p, integer]
                    table[dtype] = function
        except Exception:  # no threadpoolctl, no OpenBLAS, a build without these symbols
            table = {}
        _axpy_functions = table
    return _axpy_functions


def axpy(alpha: float, x, y) -> None:
    """``y += alpha * x`` in place (NumPy arrays, ``x`` broadcastable to ``y``): BLAS's axpy
    for two large dense float arrays of one dtype and layout that do not overlap, else
    NumPy's ``y += alpha * x``. ``alpha == 0`` stays with NumPy: axpy would skip the pass,
    where torch still gives ``0 * inf = nan``."""
    import numpy as np
    if (y.size >= _AXPY_MIN_SIZE and alpha != 0 and x.dtype is y.dtype
            and x.shape == y.shape and x.flags.c_contiguous and y.flags.c_contiguous
            and y.flags.writeable and not np.may_share_memory(x, y)):
        function = (_axpy_functions if _axpy_functions is not None else _axpy_table()).get(
            y.dtype)
        if function is not None:
            if (y.size > _AXPY_THREADED and _parallel.split_recently() and _threaded()
                    and available()):
                _lower()
                try:
                    function(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
                finally:
                    _restore()
            else:
                function(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
            return
    y += y.dtype.type(alpha) * x
