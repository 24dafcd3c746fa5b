"""BLAS's thread count for work hookgrad's pool splits: lowered to one inside
``one_blas_thread`` (also nested), given back after, also on an error; small
products on one thread give NumPy's answer, and a Linear on two threads matches torch."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare
from hookgrad import _blas, _parallel

pytestmark = pytest.mark.skipif(not _blas.available(), reason="needs threadpoolctl")


def counts():
    return [c.get_num_threads() for c in _blas._blas_controllers()]


@pytest.fixture
def two_blas_threads():
    before = counts()
    for controller in _blas._blas_controllers():
        controller.set_num_threads(2)
    yield
    for controller, count in zip(_blas._blas_controllers(), before):
        controller.set_num_threads(count)


def test_one_thread_inside_and_the_count_given_back(two_blas_threads):
    with _blas.one_blas_thread():
        assert set(counts()) == {1}
        with _blas.one_blas_thread():
            assert set(counts()) == {1}
        assert set(counts()) == {1}  # the outer body is still running
    assert set(counts()) == {2}


def test_the_count_is_given_back_after_an_error(two_blas_threads):
    with pytest.raises(ValueError):
        with _blas.one_blas_thread():
            raise ValueError("inside")
    assert set(counts()) == {2}


def test_only_the_main_thread_sets_the_count():
    # OpenBLAS takes up a count set from the main thread only: elsewhere callers keep BLAS's
    # own threading
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_blas.available()))
    thread.start()
    thread.join()
    assert seen == [False] and _blas.available()


@pytest.mark.parametrize("shape", [(64, 3136, 10), (3, 4, 5), (512, 512, 512)])
def test_matmul_is_numpys(rng, two_blas_threads, shape):
    m, k, n = shape
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    np.testing.assert_allclose(_blas.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
    assert set(counts()) == {2}


def test_linear_on_two_threads_matches_torch(rng, two_blas_threads):
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    try:
        compare(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
                rng.standard_normal((64, 3136)).astype(np.float32),
                rng.standard_normal((10, 3136)).astype(np.float32),
                rng.standard_normal(10).astype(np.float32), rtol=1e-4, atol=1e-3)
    finally:
        hookgrad.set_num_threads(before)


def test_threaded_reads_the_live_count(two_blas_threads):
    assert _blas._threaded()
    with _blas.one_blas_thread():
        assert not _blas._threaded()
    assert _blas._threaded()


def test_a_mid_size_product_on_one_blas_thread_sets_no_count(rng, monkeypatch):
    # BLAS on one thread already: the product runs as it is, without the lock and the
    # count's round trip (a small MLP step made five of them for nothing)
    before = counts()
    for controller in _blas._blas_controllers():
        controller.set_num_threads(1)
    lowered = []
    monkeypatch.setattr(_blas, "_lower", lambda: lowered.append(1))
    try:
        a, b = rng.standard_normal((64, 3136)), rng.standard_normal((3136, 10))
        np.testing.assert_allclose(_blas.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
        assert lowered == []
    finally:
        for controller, count in zip(_blas._blas_controllers(), before):
            controller.set_num_threads(count)


def _split_just_now(monkeypatch) -> None:
    monkeypatch.setattr(_parallel, "_last_split", time.monotonic())


def _mid_size_product_counts(rng, monkeypatch) -> list:
    """BLAS's counts seen inside a mid-size product's np.matmul; checks its value."""
    seen = []
    real_matmul = np.matmul
    monkeypatch.setattr(np, "matmul", lambda a, b: seen.append(counts()) or real_matmul(a, b))
    a, b = rng.standard_normal((64, 3136)), rng.standard_normal((3136, 10))
    np.testing.assert_allclose(_blas.matmul(a, b), real_matmul(a, b), rtol=1e-12, atol=1e-12)
    assert set(counts()) == {2}  # given back
    return seen


def test_a_mid_size_product_while_the_pool_works_runs_on_one_blas_thread(rng, two_blas_threads,
                                                                          monkeypatch):
    _split_just_now(monkeypatch)
    assert _mid_size_product_counts(rng, monkeypatch) == [[1] * len(counts())]


def test_a_mid_size_product_without_pool_work_keeps_blas_threads(rng, two_blas_threads,
                                                                 monkeypatch):
    # nothing of hookgrad's own wants the cores that BLAS's spinning workers hold
    monkeypatch.setattr(_parallel, "_last_split", time.monotonic() - 2 * _parallel.RECENT_SPLIT)
    assert _mid_size_product_counts(rng, monkeypatch) == [[2] * len(counts())]


def test_a_split_over_the_pool_counts_as_pool_work(two_blas_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "_last_split", float("-inf"))
    monkeypatch.setattr(_parallel, "_last_threaded_blas", float("-inf"))
    monkeypatch.setattr(_parallel, "_threads", 2)
    assert not _parallel.split_recently()
    _parallel.parallel_for(4, 1, lambda first, last: None)
    assert _parallel.split_recently()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, inner, columns", [
    (4, 128, 256), (16, 784, 512), (32, 512, 128), (16, 128, 128),  # taken the other way
    (3, 784, 512), (33, 784, 512), (8, 128, 128), (16, 127, 512), (16, 512, 10)])  # not
def test_few_rows_by_a_transposed_matrix_equal_numpys_product(rows, inner, columns, dtype):
    """x @ W.T at a small batch is computed as (W @ x.T).T (OpenBLAS takes it twice as fast),
    laid out in rows as NumPy's own result; the same values to rounding."""
    rng = np.random.default_rng(rows * inner + columns)
    x = rng.standard_normal((rows, inner)).astype(dtype)
    weight = rng.standard_normal((columns, inner)).astype(dtype)
    expected = np.matmul(x, weight.T)
    result = _blas.matmul(x, weight.T)
    assert result.flags.c_contiguous and result.dtype == expected.dtype
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance * inner ** 0.5)
    swapped = _blas._few_rows_by_transposed(x, weight.T)
    assert swapped == (4 <= rows <= 32 and inner >= 128 and columns >= 128
                       and (columns >= 256 or rows >= 16))
    # C-ordered operands on both sides take NumPy's own path
    assert not _blas._few_rows_by_transposed(x, np.ascontiguousarray(weight.T))
    assert not _blas._few_rows_by_transposed(np.asfortranarray(x), weight.T)


def test_a_linear_layer_at_batch_16_equals_torchs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 784))
    weight, bias = rng.standard_normal((512, 784)), rng.standard_normal(512)
    ours = hookgrad.nn.functional.linear(hookgrad.tensor(x, requires_grad=True),
                                         hookgrad.tensor(weight), hookgrad.tensor(bias))
    theirs = torch.nn.functional.linear(torch.tensor(x), torch.tensor(weight),
                                        torch.tensor(bias))
    np.testing.assert_allclose(ours.detach().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert ours.stride() == theirs.stride()
