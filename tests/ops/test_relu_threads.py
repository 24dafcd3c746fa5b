"""ReLU's and threshold's backward on several threads: the mask blocks of a large gradient are
shared among the intra-op pool's threads. Checked against torch (values, gradients, inf, NaN,
dtypes) and against the one-thread path, bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from conftest import compare
from hookgrad.ops import _pattern_backward, activation


@pytest.fixture
def two_threads():
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    yield
    hookgrad.set_num_threads(before)


def large(rng, dtype):
    # more blocks than two threads' pieces need, and a size that is no multiple of a block
    x = rng.standard_normal(9 * _pattern_backward.BLOCK + 123).astype(dtype)
    x[::97] = 0.0
    x[5], x[7], x[-1] = np.nan, np.inf, -np.inf
    return x.reshape(-1, 3)


@pytest.fixture
def blocks_split(monkeypatch):
    """The blocks counts handed to the pool (the premise: the threaded path ran)."""
    calls = []
    real = _pattern_backward.parallel_for
    monkeypatch.setattr(_pattern_backward, "parallel_for",
                        lambda total, grain, body: calls.append(total) or real(total, grain,
                                                                                body))
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_matches_torch(rng, two_threads, blocks_split, dtype):
    # the product's gradient is a fresh array relu's backward may clear in place
    compare(lambda lib, t: lib.nn.functional.relu(t * 1) * 3, large(rng, dtype))
    assert blocks_split == [10]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_threshold_backward_matches_torch(rng, two_threads, blocks_split, dtype):
    compare(lambda lib, t: lib.nn.functional.threshold(t * 1, 0.25, -2.0) * 3,
            large(rng, dtype))
    assert blocks_split == [10]


def test_two_threads_give_the_one_thread_answer(rng):
    x = large(rng, np.float32)
    grad = rng.standard_normal(x.shape).astype(np.float32)
    before = hookgrad.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            hookgrad.set_num_threads(threads)
            target = grad.copy()
            activation.zero_where_at_most(target, x, 0)
            results.append(target)
    finally:
        hookgrad.set_num_threads(before)
    assert np.array_equal(results[0].view(np.uint32), results[1].view(np.uint32))
