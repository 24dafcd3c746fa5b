"""Convolution on several threads: slices of the batch run on the intra-op pool, each GEMM on one
BLAS thread. Forced for small shapes (``conv.PARALLEL_BYTES`` = 0) and checked against torch
(values, gradients, double backward, odd strides, padding, dilation, groups, transposed, 1-D
and 3-D), against the one-thread path, and for the workspace bound shared by the threads."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, compare_double_backward, traced_peak
from hookgrad import _blas
from hookgrad.nn.ops import conv

pytestmark = pytest.mark.skipif(not _blas.available(), reason="needs threadpoolctl")


@pytest.fixture
def two_threads(monkeypatch):
    before = hookgrad.get_num_threads()
    hookgrad.set_num_threads(2)
    monkeypatch.setattr(conv, "PARALLEL_BYTES", 0)  # every batch of two or more is split
    yield
    hookgrad.set_num_threads(before)


@pytest.fixture(params=[None, 1], ids=["default-workspace", "one-sample-slices"])
def workspace(request, monkeypatch):
    if request.param is not None:
        monkeypatch.setattr(conv, "WORKSPACE_BYTES", request.param)


CASES = [  # input shape, weight shape, stride, padding, dilation, groups
    ((5, 4, 9, 8), (6, 4, 3, 3), 1, 1, 1, 1),
    ((3, 4, 10, 9), (6, 2, 3, 2), 2, (1, 0), 1, 2),
    ((4, 6, 11, 11), (6, 1, 3, 3), (2, 1), 2, 2, 6),
    ((2, 2, 7, 7), (4, 2, 1, 1), 1, 0, 1, 1),
]


def test_the_premise_slices_run_on_the_pool(two_threads):
    bounds, parallel = conv._batch_parts(5, 1000)
    assert parallel and len(bounds) - 1 >= 2
    hookgrad.set_num_threads(1)
    assert conv._batch_parts(5, 1000) == ([0, 5], False)


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES)
def test_conv2d_matches_torch(rng, two_threads, workspace, shape, weight, stride, padding,
                              dilation, groups):
    compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride, padding, dilation,
                                                          groups),
            rng.standard_normal(shape), rng.standard_normal(weight),
            rng.standard_normal(weight[0]))


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES[:3])
def test_conv2d_double_backward(rng, two_threads, shape, weight, stride, padding, dilation,
                                groups):
    compare_double_backward(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, stride,
                                                                       padding, dilation, groups),
                            rng.standard_normal(shape), rng.standard_normal(weight))


@pytest.mark.parametrize("stride,padding,output_padding,groups", [(2, 1, 1, 1), (3, 0, 2, 2),
                                                                  (1, 1, 0, 1)])
def test_conv_transpose2d_matches_torch(rng, two_threads, workspace, stride, padding,
                                        output_padding, groups):
    compare(lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w, None, stride, padding, output_padding, groups),
        rng.standard_normal((5, 4, 5, 6)), rng.standard_normal((4, 6 // groups, 3, 3)))


def test_conv1d_and_conv3d_match_torch(rng, two_threads, workspace):
    compare(lambda lib, x, w: lib.nn.functional.conv1d(x, w, None, 2, 1),
            rng.standard_normal((6, 4, 17)), rng.standard_normal((5, 4, 3)))
    compare(lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, 1, 1, groups=2),
            rng.standard_normal((3, 4, 5, 4, 6)), rng.standard_normal((6, 2, 3, 2, 3)))


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


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES)
def test_two_threads_give_the_one_thread_answer(rng, monkeypatch, shape, weight, stride,
                                                padding, dilation, groups):
    # each sample's columns and GEMM are the one-thread path's; only BLAS's blocking of a
    # narrower GEMM and the weight gradient's sum over other slices may move the last bit
    stride, padding, dilation = (v if isinstance(v, tuple) else (v, v)
                                 for v in (stride, padding, dilation))
    x, w = rng.standard_normal(shape), rng.standard_normal(weight)
    monkeypatch.setattr(conv, "PARALLEL_BYTES", 0)
    before = hookgrad.get_num_threads()

    def run(threads):
        hookgrad.set_num_threads(threads)
        y = conv.correlate(x, w, stride, padding, dilation, groups)
        grad = np.cos(np.arange(y.size)).reshape(y.shape)
        return (y, conv.correlate_input_grad(grad, w, x.shape[2:], stride, padding, dilation,
                                             groups),
                conv.correlate_weight_grad(x, grad, w.shape[2:], stride, padding, dilation,
                                           groups))
    try:
        one, two = run(1), run(2)
    finally:
        hookgrad.set_num_threads(before)
    for a, b in zip(one, two):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


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


def test_blas_threads_are_given_back(rng, two_threads):
    before = [c.get_num_threads() for c in _blas._blas_controllers()]
    hookgrad.nn.functional.conv2d(hookgrad.tensor(rng.standard_normal((4, 3, 8, 8))),
                                  hookgrad.tensor(rng.standard_normal((5, 3, 3, 3))))
    assert [c.get_num_threads() for c in _blas._blas_controllers()] == before
