"""Max pooling's tiling fast path on several threads: the planes split over the intra-op pool
(forced for small shapes with ``pool_tiles.PLANES_GRAIN`` = 1), checked against torch (values,
indices, gradients, double backward, NaNs, dtypes, 1-D and 3-D, cropped edges, channels-last
inputs that stay on one thread) and against the one-thread path, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from conftest import compare, compare_double_backward
from hookgrad.nn.ops import pool_tiles


@pytest.fixture
def two_threads(monkeypatch):
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    monkeypatch.setattr(pool_tiles, "PLANES_GRAIN", 1)
    yield
    hookgrad.set_num_threads(before)


TILED = [  # shape, kernel: every window inside the input, stride = kernel
    ((2, 3, 8, 8), 2), ((2, 3, 9, 7), 2), ((3, 2, 5, 5), 3), ((3, 6, 6), 2),
    ((2, 3, 12, 12), (2, 3)), ((2, 2, 13, 11), (3, 2)), ((4, 1, 4, 4), 4), ((2, 3, 3, 5), 1),
]


def max_pool(kernel):
    return lambda lib, t: lib.nn.functional.max_pool2d(t, kernel, return_indices=True)


def test_the_premise_planes_are_split(two_threads, monkeypatch):
    calls = []
    real = pool_tiles._parallel.parallel_for
    monkeypatch.setattr(pool_tiles._parallel, "parallel_for",
                        lambda total, grain, body, *a: calls.append(total) or real(
                            total, grain, body, *a))
    hookgrad.nn.functional.max_pool2d(hookgrad.randn(2, 3, 8, 8, requires_grad=True),
                                      2).sum().backward()
    assert calls == [6, 6]  # forward and backward, over the 6 planes


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,kernel", TILED)
def test_tiled_pooling_matches_torch(rng, two_threads, shape, kernel, dtype):
    compare(max_pool(kernel), rng.standard_normal(shape).astype(dtype))


def test_nans_and_ties_match_torch(rng, two_threads):
    x = rng.integers(0, 3, (4, 3, 8, 10)).astype(np.float64)  # many ties
    x[0, 0, 0, 0] = x[1, 2, 3, 3] = x[1, 2, 2, 2] = np.nan
    compare(max_pool(2), x)


def test_1d_and_3d_match_torch(rng, two_threads):
    compare(lambda lib, t: lib.nn.functional.max_pool1d(t, 3, return_indices=True),
            rng.standard_normal((3, 4, 14)))
    compare(lambda lib, t: lib.nn.functional.max_pool3d(t, 2, return_indices=True),
            rng.standard_normal((2, 3, 5, 4, 6)))


def test_channels_last_input_matches_torch(rng, two_threads):
    compare(lambda lib, t: lib.nn.functional.max_pool2d(t.permute(0, 3, 1, 2), 2,
                                                        return_indices=True),
            rng.standard_normal((2, 8, 6, 3)))


def test_double_backward_matches_torch(rng, two_threads):
    compare_double_backward(lambda lib, t: lib.nn.functional.max_pool2d(t, 2),
                            rng.standard_normal((3, 4, 6, 8)))


@pytest.mark.parametrize("shape,kernel", TILED)
def test_two_threads_give_the_one_thread_answer(rng, monkeypatch, shape, kernel):
    x = rng.standard_normal(shape).astype(np.float32)
    monkeypatch.setattr(pool_tiles, "PLANES_GRAIN", 1)
    before = hookgrad.get_num_threads()

    def run(threads):
        hookgrad.set_num_threads(threads)
        t = hookgrad.tensor(x, requires_grad=True)
        values, indices = hookgrad.nn.functional.max_pool2d(t, kernel, return_indices=True)
        (values * values).sum().backward()
        return values.detach().numpy(), indices.numpy(), t.grad.numpy()
    try:
        one, two = run(1), run(2)
    finally:
        hookgrad.set_num_threads(before)
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and np.array_equal(a, b)
