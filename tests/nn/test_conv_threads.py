"""Convolution on two threads at the sizes that take the pool by default: a layer of the
benchmark CNN against torch, the workspace bound shared by the threads, and BLAS's thread count
given back. The paths at small, forced sizes are checked in ``test_conv_paths.py``."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, traced_peak
from hookgrad import _blas
from hookgrad.nn.ops import conv

pytestmark = pytest.mark.skipif(not _blas.available(), reason="needs threadpoolctl")


@pytest.mark.parametrize("dtype,rtol,atol", [(np.float32, 1e-4, 5e-3), (np.float64, 1e-12, 1e-10)])
def test_cnn_sized_layer_matches_torch_at_the_default_threshold(rng, dtype, rtol, atol):
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    try:
        # the second layer of the benchmark's CNN: 8 slices of 8 samples, above PARALLEL_BYTES
        assert conv._batch_parts(64, 32 * 9 * 196 * 4)[1]
        compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, 1, 1),
                rng.standard_normal((64, 32, 14, 14)).astype(dtype),
                rng.standard_normal((64, 32, 3, 3)).astype(dtype),
                rng.standard_normal(64).astype(dtype), rtol=rtol, atol=atol)  # sums of 12544
    finally:
        hookgrad.set_num_threads(before)


def test_the_workspace_bound_holds_on_two_threads(rng, monkeypatch):
    x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
    grad = rng.standard_normal((8, 32, 32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    bound = 2 << 20
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", bound)
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    try:
        results = {}
        peaks = [traced_peak(lambda: results.setdefault("w", conv.correlate_weight_grad(
                     x, grad, (3, 3), (1, 1), (1, 1), (1, 1), 1))),
                 traced_peak(lambda: results.setdefault("y", conv.correlate(
                     x, w, (1, 1), (1, 1), (1, 1), 1)))]
    finally:
        hookgrad.set_num_threads(before)
    # two threads' workspaces at once, each half the bound (the forward's result comes on top)
    assert peaks[0] < bound
    assert peaks[1] < bound + results["y"].nbytes
    tx, tw, tg = torch.tensor(x), torch.tensor(w), torch.tensor(grad)
    assert_close(results["w"], torch.nn.grad.conv2d_weight(tx, tw.shape, tg, padding=1),
                 rtol=1e-4, atol=5e-3)
    assert_close(results["y"], torch.nn.functional.conv2d(tx, tw, padding=1), rtol=1e-4,
                 atol=1e-3)


def test_blas_threads_are_given_back(rng, monkeypatch):
    monkeypatch.setattr(conv, "PARALLEL_BYTES", 0)
    threads = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    try:
        before = [c.get_num_threads() for c in _blas._blas_controllers()]
        hookgrad.nn.functional.conv2d(hookgrad.tensor(rng.standard_normal((4, 3, 8, 8))),
                                      hookgrad.tensor(rng.standard_normal((5, 3, 3, 3))))
        assert [c.get_num_threads() for c in _blas._blas_controllers()] == before
    finally:
        hookgrad.set_num_threads(threads)
