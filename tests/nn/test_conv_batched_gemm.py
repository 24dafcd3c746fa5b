"""Convolution with the batch folded into one GEMM per group (the path large layers take, see
``conv.SINGLE_THREAD_GEMM``), forced for small shapes and checked against torch: forward,
gradients, double backward, groups, stride, padding, dilation, transposed, 1-D and 3-D."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import compare, compare_double_backward
from hookgrad.nn.ops import conv


@pytest.fixture(params=[0, None, "chunked"], ids=["one-gemm", "default", "chunked"])
def threshold(request, monkeypatch):
    if request.param == "chunked":  # every im2col / col2im workspace over one sample
        monkeypatch.setattr(conv, "WORKSPACE_BYTES", 1)
    elif request.param is not None:
        monkeypatch.setattr(conv, "SINGLE_THREAD_GEMM", request.param)


CASES = [  # input shape, weight shape, stride, padding, dilation, groups
    ((2, 4, 9, 8), (6, 4, 3, 3), 1, 1, 1, 1),
    ((3, 4, 10, 9), (6, 2, 3, 2), 2, (1, 0), 1, 2),
    ((2, 6, 11, 11), (6, 1, 3, 3), (2, 1), 2, 2, 6),
    ((1, 2, 7, 7), (4, 2, 1, 1), 1, 0, 1, 1),
]


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES)
def test_conv2d_matches_torch(rng, threshold, shape, weight, stride, padding, dilation, groups):
    compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride, padding, dilation,
                                                          groups),
            rng.standard_normal(shape), rng.standard_normal(weight),
            rng.standard_normal(weight[0]))


@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES[:3])
def test_conv2d_double_backward(rng, threshold, shape, weight, stride, padding, dilation, groups):
    compare_double_backward(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, stride,
                                                                       padding, dilation, groups),
                            rng.standard_normal(shape), rng.standard_normal(weight))


@pytest.mark.parametrize("stride,padding,output_padding,groups", [(2, 1, 1, 1), (3, 0, 2, 2),
                                                                  (1, 1, 0, 1)])
def test_conv_transpose2d_matches_torch(rng, threshold, stride, padding, output_padding, groups):
    compare(lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w, None, stride, padding, output_padding, groups),
        rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((4, 6 // groups, 3, 3)))


def test_conv1d_and_conv3d_match_torch(rng, threshold):
    compare(lambda lib, x, w: lib.nn.functional.conv1d(x, w, None, 2, 1),
            rng.standard_normal((3, 4, 17)), rng.standard_normal((5, 4, 3)))
    compare(lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, 1, 1, groups=2),
            rng.standard_normal((2, 4, 5, 4, 6)), rng.standard_normal((6, 2, 3, 2, 3)))


def test_float32_large_layer_takes_one_gemm_and_matches_torch(rng):
    # 32 * 288 * 196 multiply-adds per image: above the single-thread size, so one GEMM
    assert 32 * 288 * 196 > conv.SINGLE_THREAD_GEMM
    compare(lambda lib, x, w: lib.nn.functional.conv2d(x, w, None, 1, 1),
            rng.standard_normal((4, 32, 14, 14)).astype(np.float32),
            rng.standard_normal((32, 32, 3, 3)).astype(np.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("gemm", [0, None], ids=["one-gemm", "default"])
@pytest.mark.parametrize("shape,weight,stride,padding,dilation,groups", CASES[:3])
def test_bounded_workspace_gives_the_unchunked_result(rng, monkeypatch, gemm, shape, weight,
                                                      stride, padding, dilation, groups):
    # each sample's columns are those of the one-pass path; only BLAS's blocking of a GEMM with
    # fewer columns (and the weight gradient's sum over slices) may move the last bit
    if gemm is not None:
        monkeypatch.setattr(conv, "SINGLE_THREAD_GEMM", gemm)
    stride, padding, dilation = (conv_tuple(v) for v in (stride, padding, dilation))
    x = rng.standard_normal((5,) + shape[1:])
    w = rng.standard_normal(weight)

    def run():
        y = conv.correlate(x, w, stride, padding, dilation, groups)
        grad = np.cos(np.arange(y.size)).reshape(y.shape)
        return (y, conv.correlate_input_grad(grad, w, x.shape[2:], stride, padding, dilation,
                                             groups),
                conv.correlate_weight_grad(x, grad, w.shape[2:], stride, padding, dilation,
                                           groups))

    whole = run()
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", 2 * x[0].nbytes * 9)
    assert conv._batch_chunk(5, x[0].nbytes * 9 * 2) < 5  # the premise: it does chunk
    sliced = run()
    for part, one_pass in zip(sliced, whole):
        np.testing.assert_allclose(part, one_pass, rtol=1e-13, atol=1e-13)


def conv_tuple(value):
    return value if isinstance(value, tuple) else (value, value)
