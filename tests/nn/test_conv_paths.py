"""Convolution's execution paths, each forced at small shapes and checked against torch:
the batch folded into one GEMM per group (``conv.SINGLE_THREAD_GEMM``), the default choice,
a small weight gradient summed from a GEMM per sample or folded like the rest
(``conv.PER_SAMPLE_WEIGHT_GRAD``),
im2col / col2im workspaces bounded to one sample (``conv.WORKSPACE_BYTES``), and slices of
the batch on the intra-op pool with one BLAS thread each (``conv.PARALLEL_BYTES``), with the
default and with one-sample workspaces. Forward, gradients, double backward, strides, padding,
dilation, groups, transposed, 1-D and 3-D; then the paths against each other, and the bounds
and thread counts they keep."""
from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from conftest import compare, compare_double_backward
from hookgrad import _blas
from hookgrad.nn.ops import conv

needs_threadpoolctl = pytest.mark.skipif(not _blas.available(), reason="needs threadpoolctl")


def _two_threads(monkeypatch):
    if not _blas.available():
        pytest.skip("the pooled path needs threadpoolctl")
    monkeypatch.setattr(conv, "PARALLEL_BYTES", 0)  # every batch of two or more is split
    hookgrad.set_num_threads(2)


@pytest.fixture(params=["one-gemm", "default", "chunked", "threads", "threads-chunked",
                        "folded-weight-grad", "threads-folded-weight-grad"])
def path(request, monkeypatch):
    before = hookgrad.get_num_threads()
    if request.param == "one-gemm":
        monkeypatch.setattr(conv, "SINGLE_THREAD_GEMM", 0)
    if "folded" in request.param:  # the weight gradient as one GEMM over the batch, however small
        monkeypatch.setattr(conv, "PER_SAMPLE_WEIGHT_GRAD", -1)
    if request.param.endswith("chunked"):  # every im2col / col2im workspace over one sample
        monkeypatch.setattr(conv, "WORKSPACE_BYTES", 1)
    if request.param.startswith("threads"):
        _two_threads(monkeypatch)
    yield request.param
    hookgrad.set_num_threads(before)


CASES = [  # input shape, weight shape, stride, padding, dilation, groups
    ((5, 4, 9, 8), (6, 4, 3, 3), 1, 1, 1, 1),
    ((3, 4, 10, 9), (6, 2, 3, 2), 2, (1, 0), 1, 2),
    ((4, 6, 11, 11), (6, 1, 3, 3), (2, 1), 2, 2, 6),
    ((2, 2, 7, 7), (4, 2, 1, 1), 1, 0, 1, 1),
]


def _pairs(*values):
    return tuple(v if isinstance(v, tuple) else (v, v) for v in values)


def _correlate_all(x, w, stride, padding, dilation, groups):
    """Forward, input gradient and weight gradient of one correlation on arrays, for a
    fixed incoming gradient: what two paths must agree on."""
    stride, padding, dilation = _pairs(stride, padding, dilation)
    y = conv.correlate(x, w, stride, padding, dilation, groups)
    grad = np.cos(np.arange(y.size)).reshape(y.shape)
    return (y, conv.correlate_input_grad(grad, w, x.shape[2:], stride, padding, dilation, groups),
            conv.correlate_weight_grad(x, grad, w.shape[2:], stride, padding, dilation, groups))


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES)
def test_conv2d_matches_torch(rng, path, shape, weight, stride, padding, dilation, groups):
    compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride, padding, dilation,
                                                          groups),
            rng.standard_normal(shape), rng.standard_normal(weight),
            rng.standard_normal(weight[0]))


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES[:3])
def test_conv2d_double_backward(rng, path, shape, weight, stride, padding, dilation, groups):
    compare_double_backward(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, stride,
                                                                       padding, dilation, groups),
                            rng.standard_normal(shape), rng.standard_normal(weight))


@pytest.mark.parametrize("stride,padding,output_padding,groups", [(2, 1, 1, 1), (3, 0, 2, 2),
                                                                  (1, 1, 0, 1)])
def test_conv_transpose2d_matches_torch(rng, path, stride, padding, output_padding, groups):
    compare(lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w, None, stride, padding, output_padding, groups),
        rng.standard_normal((5, 4, 5, 6)), rng.standard_normal((4, 6 // groups, 3, 3)))


def test_conv1d_and_conv3d_match_torch(rng, path):
    compare(lambda lib, x, w: lib.nn.functional.conv1d(x, w, None, 2, 1),
            rng.standard_normal((6, 4, 17)), rng.standard_normal((5, 4, 3)))
    compare(lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, 1, 1, groups=2),
            rng.standard_normal((3, 4, 5, 4, 6)), rng.standard_normal((6, 2, 3, 2, 3)))


# -- the paths against each other ----------------------------------------------------------------
@pytest.mark.parametrize("gemm", [0, None], ids=["one-gemm", "default"])
@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES[:3])
def test_bounded_workspace_gives_the_unchunked_result(rng, monkeypatch, gemm, shape, weight,
                                                      stride, padding, dilation, groups):
    # each sample's columns are those of the one-pass path; only BLAS's blocking of a GEMM with
    # fewer columns (and the weight gradient's sum over slices) may move the last bit
    if gemm is not None:
        monkeypatch.setattr(conv, "SINGLE_THREAD_GEMM", gemm)
    x, w = rng.standard_normal((5,) + shape[1:]), rng.standard_normal(weight)
    whole = _correlate_all(x, w, stride, padding, dilation, groups)
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", 2 * x[0].nbytes * 9)
    assert conv._batch_chunk(5, x[0].nbytes * 9 * 2) < 5  # the premise: it does chunk
    sliced = _correlate_all(x, w, stride, padding, dilation, groups)
    for part, one_pass in zip(sliced, whole):
        np.testing.assert_allclose(part, one_pass, rtol=1e-13, atol=1e-13)


@needs_threadpoolctl
@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES)
def test_two_threads_give_the_one_thread_answer(rng, monkeypatch, shape, weight, stride,
                                                padding, dilation, groups):
    # each sample's columns and GEMM are the one-thread path's; only BLAS's blocking of a
    # narrower GEMM and the weight gradient's sum over other slices may move the last bit
    x, w = rng.standard_normal(shape), rng.standard_normal(weight)
    monkeypatch.setattr(conv, "PARALLEL_BYTES", 0)
    before = hookgrad.get_num_threads()
    try:
        hookgrad.set_num_threads(1)
        one = _correlate_all(x, w, stride, padding, dilation, groups)
        hookgrad.set_num_threads(2)
        two = _correlate_all(x, w, stride, padding, dilation, groups)
    finally:
        hookgrad.set_num_threads(before)
    for a, b in zip(one, two):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES + [
    ((4, 3, 6, 5), (8, 3, 3, 3), 1, 1, 1, 1), ((3, 6, 7, 7), (6, 1, 3, 3), 1, 1, 1, 6)])
def test_per_sample_weight_gradient_gives_the_folded_one(rng, monkeypatch, shape, weight,
                                                         stride, padding, dilation, groups):
    # the same products summed in another order: only the last bits may move
    stride, padding, dilation = _pairs(stride, padding, dilation)
    x, w = rng.standard_normal(shape), rng.standard_normal(weight)
    grad = rng.standard_normal(conv.correlate(x, w, stride, padding, dilation, groups).shape)

    def weight_grad(limit):
        monkeypatch.setattr(conv, "PER_SAMPLE_WEIGHT_GRAD", limit)
        return conv.correlate_weight_grad(x, grad, weight[2:], stride, padding, dilation, groups)

    per_sample, folded = weight_grad(1 << 30), weight_grad(-1)
    assert per_sample.shape == folded.shape == weight
    np.testing.assert_allclose(per_sample, folded, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("channels,spatial", [(1, (28,)), (3, (9, 8)), (1, (5, 6, 4))],
                         ids=["1-D", "2-D", "3-D"])
def test_small_weight_gradients_match_torch(rng, channels, spatial):
    # float32, grouped, at a first layer's proportions: the per-sample weight gradient
    x = rng.standard_normal((6, channels * 2) + spatial).astype(np.float32)
    w = rng.standard_normal((8, channels) + (3,) * len(spatial)).astype(np.float32)
    assert 4 * channels * 3 ** len(spatial) <= conv.PER_SAMPLE_WEIGHT_GRAD  # per group
    op = getattr(hookgrad.nn.functional, f"conv{len(spatial)}d").__name__
    compare(lambda lib, x, w: getattr(lib.nn.functional, op)(x, w, None, 1, 1, 1, 2), x, w,
            rtol=1e-4, atol=1e-4)


# -- what each path is for, and what it keeps ------------------------------------------------------
def test_float32_large_layer_takes_one_gemm_and_matches_torch(rng):
    # 32 * 288 * 196 multiply-adds per image: above the single-thread size, so one GEMM
    assert 32 * 288 * 196 > conv.SINGLE_THREAD_GEMM
    compare(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, 1, 1),
            rng.standard_normal((4, 32, 14, 14)).astype(np.float32),
            rng.standard_normal((32, 32, 3, 3)).astype(np.float32), rtol=1e-4, atol=1e-4)


@needs_threadpoolctl
def test_the_premise_slices_run_on_the_pool(monkeypatch):
    before = hookgrad.get_num_threads()
    try:
        _two_threads(monkeypatch)
        bounds, parallel = conv._batch_parts(5, 1000)
        assert parallel and len(bounds) - 1 >= 2
        hookgrad.set_num_threads(1)
        assert conv._batch_parts(5, 1000) == ([0, 5], False)
    finally:
        hookgrad.set_num_threads(before)
