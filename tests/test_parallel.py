"""Intra-op threads: torch's set_num_threads/get_num_threads contract, and work split over the
pool gives the same result as on one thread."""
import threading

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import _parallel


@pytest.fixture
def restore_threads(monkeypatch):
    # no threaded BLAS product just before (an earlier test's): the pool may split
    monkeypatch.setattr(_parallel, "_last_threaded_blas", float("-inf"))
    before = hookgrad.get_num_threads()
    yield
    hookgrad.set_num_threads(before)


def test_set_num_threads_is_read_back(restore_threads):
    hookgrad.set_num_threads(3)
    assert hookgrad.get_num_threads() == 3


@pytest.mark.parametrize("bad", [0, -2])
def test_set_num_threads_rejects_non_positive_like_torch(bad, restore_threads):
    with pytest.raises(RuntimeError) as expected:
        torch.set_num_threads(bad)
    with pytest.raises(type(expected.value), match="positive integer"):
        hookgrad.set_num_threads(bad)


def test_parallel_for_covers_the_range_once_and_raises_errors(restore_threads):
    hookgrad.set_num_threads(3)
    seen = np.zeros(1000, int)

    def body(start, stop):
        seen[start:stop] += 1

    _parallel.parallel_for(1000, 10, body)
    assert np.all(seen == 1)

    def failing(start, stop):
        if start > 0:
            raise ValueError("part failed")

    with pytest.raises(ValueError, match="part failed"):
        _parallel.parallel_for(1000, 10, failing)


def test_a_busy_pool_thread_leaves_its_pieces_to_the_caller(restore_threads):
    # the only pool thread is held by other work: the caller claims every piece itself
    # instead of waiting for that thread
    hookgrad.set_num_threads(2)
    release = threading.Event()
    _parallel._get_pool(1).submit(release.wait, 30)
    seen, runners = np.zeros(1000, int), set()

    def body(start, stop):
        seen[start:stop] += 1
        runners.add(threading.get_ident())

    try:
        _parallel.parallel_for(1000, 10, body)
    finally:
        release.set()
    assert np.all(seen == 1)
    assert runners == {threading.get_ident()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_on_several_threads_matches_torch(dtype, restore_threads):
    x = np.random.default_rng(3).standard_normal((301, 517)).astype(dtype) * 3
    expected = torch.erf(torch.tensor(x)).numpy()
    results = []
    for threads in (1, 2, 3):
        hookgrad.set_num_threads(threads)
        results.append(hookgrad.erf(hookgrad.tensor(x)).numpy())
    assert all(np.array_equal(results[0], other) for other in results[1:])
    spacing = np.spacing(np.abs(expected)) * (2 if dtype == "float64" else 1)
    assert np.all(np.abs(results[0].astype(np.float64) - expected) <= spacing)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_gets_a_working_pool(restore_threads):
    import multiprocessing

    hookgrad.set_num_threads(2)
    x = np.linspace(-3, 3, 300_000)
    hookgrad.erf(hookgrad.tensor(x))  # the parent's pool now exists
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        got = pool.apply_async(_erf_sum, (x,)).get(timeout=60)
    assert got == pytest.approx(float(torch.erf(torch.tensor(x)).sum()), abs=1e-9)


def _erf_sum(x):
    return float(hookgrad.erf(hookgrad.tensor(x)).sum())


@pytest.mark.parametrize("pieces_per_thread, expected", [(None, 3), (1, 3), (2, 6), (4, 12)])
def test_pieces_per_thread_bounds_the_pieces(pieces_per_thread, expected, restore_threads):
    # few large pieces for work that is many NumPy calls per piece (each hands the GIL over):
    # by default one per thread
    hookgrad.set_num_threads(3)
    pieces, seen = [], np.zeros(1000, int)

    def body(start, stop):
        seen[start:stop] += 1
        pieces.append(stop - start)

    given = {} if pieces_per_thread is None else {"pieces_per_thread": pieces_per_thread}
    _parallel.parallel_for(1000, 10, body, **given)
    assert np.all(seen == 1)
    assert len(pieces) == expected and max(pieces) - min(pieces) <= 1


def test_no_split_while_blas_workers_spin_after_a_threaded_product(restore_threads,
                                                                   monkeypatch):
    """For BLAS_SPIN seconds after BLAS ran a product on several threads its workers spin on
    the other cores: work is then done on the calling thread alone, and split again after."""
    hookgrad.set_num_threads(2)
    runners, seen = set(), np.zeros(1000, int)

    def body(start, stop):
        seen[start:stop] += 1
        runners.add((start, stop))

    _parallel.note_threaded_blas()
    _parallel.parallel_for(1000, 10, body)
    assert runners == {(0, 1000)} and np.all(seen == 1)
    monkeypatch.setattr(_parallel, "_last_threaded_blas",
                        _parallel._last_threaded_blas - 2 * _parallel.BLAS_SPIN)
    runners.clear()
    _parallel.parallel_for(1000, 10, body)
    assert len(runners) > 1 and np.all(seen == 2)


def test_a_large_product_on_several_blas_threads_is_noted(monkeypatch):
    from hookgrad import _blas
    monkeypatch.setattr(_parallel, "_last_threaded_blas", float("-inf"))
    monkeypatch.setattr(_blas, "_threaded", lambda: True)
    a = np.ones((256, 128), np.float32)
    b = np.ones((128, 256), np.float32)  # 8M multiply-adds: above SMALL_GEMM
    np.testing.assert_array_equal(_blas.matmul(a, b), a @ b)
    assert _parallel._last_threaded_blas > float("-inf")
    monkeypatch.setattr(_parallel, "_last_threaded_blas", float("-inf"))
    monkeypatch.setattr(_blas, "_threaded", lambda: False)  # BLAS on one thread: nothing spins
    _blas.matmul(a, b)
    assert _parallel._last_threaded_blas == float("-inf")
