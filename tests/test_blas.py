"""Products split over the intra-op threads with OpenBLAS on one thread (``_blas.matmul``):
the same values as one ``np.matmul``, in every split (by columns, by rows, stacked, transposed
operands), OpenBLAS's own thread count put back, and convolutions through it against torch."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import hookgrad
from hookgrad import _blas
from hookgrad.nn.ops import conv


@pytest.fixture
def restore_threads(monkeypatch):
    # blocks of a few hundred multiply-adds, so that small products are split too
    monkeypatch.setattr(_blas, "_BLOCK_WORK", 256)
    before = hookgrad.get_num_threads()
    yield
    hookgrad.set_num_threads(before)


SHAPES = {"columns": ((64, 288), (288, 3000)), "rows": ((900, 40), (40, 70)),
          "stacked": ((3, 20, 50), (3, 50, 400)), "one block": ((2, 3), (3, 4))}


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SHAPES))
def test_split_products_equal_one_matmul(case, dtype, threads, restore_threads, monkeypatch):
    hookgrad.set_num_threads(threads)
    rng = np.random.default_rng(0)
    a_shape, b_shape = SHAPES[case]
    a = rng.standard_normal(a_shape).astype(dtype)
    b_transposed = b_shape[:-2] + b_shape[:-3:-1]
    b = rng.standard_normal(b_transposed).astype(dtype).swapaxes(-1, -2)  # a transposed view
    controls = _blas._openblas()
    before = controls[0]() if controls else None
    calls = []
    original = _blas.parallel_for
    monkeypatch.setattr(_blas, "parallel_for", lambda total, grain, body: (
        calls.append(total // grain), original(total, grain, body)))
    got = _blas.matmul(a, b, threshold=0)
    if threads > 1 and controls is not None and case != "one block":
        assert calls and calls[0] >= threads  # split into at least one block per thread
    expected = np.matmul(a, b)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    # float32 sums of up to 288 products, rounded in another order by another blocking
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    if controls:
        assert controls[0]() == before


def test_products_on_several_python_threads_put_openblas_back(restore_threads):
    controls = _blas._openblas()
    if controls is None:
        pytest.skip("NumPy's BLAS here is not OpenBLAS")
    hookgrad.set_num_threads(2)
    before = controls[0]()
    a = np.ones((64, 200), np.float32)
    b = np.ones((200, 5000), np.float32)
    errors = []

    def run():
        try:
            for _ in range(5):
                assert np.array_equal(_blas.matmul(a, b, threshold=0), a @ b)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=run) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors
    assert controls[0]() == before


@pytest.mark.parametrize("threads", [2, 3])
def test_conv_gemms_split_over_threads_match_torch(threads, restore_threads, monkeypatch):
    hookgrad.set_num_threads(threads)
    monkeypatch.setattr(conv, "SINGLE_THREAD_GEMM", 0)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((5, 6, 13, 11)), rng.standard_normal((8, 3, 3, 3)),
              rng.standard_normal(8)]
    results = []
    for lib in (torch, hookgrad):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.nn.functional.conv2d(x, w, b, 1, 1, 1, 2)
        grads = lib.autograd.grad((out * out).sum(), (x, w, b))
        results.append([out.detach().numpy()] + [g.numpy() for g in grads])
    for h, t in zip(results[1], results[0]):
        np.testing.assert_allclose(h, t, rtol=1e-10, atol=1e-10)
