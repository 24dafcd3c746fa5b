"""Convolutions against torch: values, gradients of input/weight/bias, double backward, grad_fn
chains, saved tensors, float32, and torch's error messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import hookgrad
from conftest import assert_close, compare, raised, saved_log


def F(lib):
    return lib.nn.functional


def double_backward(fn, *arrays, rtol=None, atol=None, seed=0, check_names=True):
    """Second derivatives: grads (with create_graph) of a random projection of the output, then
    the gradient of a random projection of those grads, in both libraries."""
    rng = np.random.default_rng(seed)
    results, names = [], []
    for lib in (hookgrad, torch):
        inputs = [lib.tensor(np.array(a, copy=True), requires_grad=True) for a in arrays]
        out = fn(lib, *inputs)
        out_rng = np.random.default_rng(seed + 1)
        project = lib.tensor(out_rng.standard_normal(tuple(out.shape)).astype(arrays[0].dtype))
        grads = lib.autograd.grad((out * project).sum(), inputs, create_graph=True)
        names.append([g.grad_fn.name() for g in grads])
        grad_rng = np.random.default_rng(seed + 2)
        total = sum((g * lib.tensor(grad_rng.standard_normal(tuple(g.shape)).astype(
            arrays[0].dtype))).sum() for g in grads)
        results.append((grads, lib.autograd.grad(total, inputs, allow_unused=True)))
    (hg_first, hg_second), (th_first, th_second) = results
    assert names[0] == names[1] or not check_names
    for h, t in zip(hg_first, th_first):
        assert_close(h, t, rtol, atol, "first grad")
    for h, t in zip(hg_second, th_second):
        if t is None:
            assert h is None or not np.any(h.detach().numpy())
        else:
            assert_close(h, t, rtol, atol, "second grad")
    del rng


CONV2D = [  # (input shape, weight shape, kwargs)
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": 1}),
    ((2, 3, 9, 8), (4, 3, 3, 2), {"stride": (2, 1), "padding": (1, 0)}),
    ((2, 4, 9, 8), (6, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 2}),
    ((2, 4, 9, 8), (4, 1, 3, 3), {"groups": 4, "stride": 2}),
    ((1, 2, 8, 8), (3, 2, 1, 1), {}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": "valid"}),
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": "same"}),
    ((2, 3, 7, 6), (4, 3, 2, 4), {"padding": "same", "dilation": (1, 2)}),
    ((3, 7, 6), (4, 3, 3, 3), {"padding": 1}),  # unbatched
]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("x_shape,w_shape,kwargs", CONV2D)
def test_conv2d_matches_torch(rng, x_shape, w_shape, kwargs, bias):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    if bias:
        arrays.append(rng.standard_normal(w_shape[0]))
    compare(lambda lib, x, w, *b: F(lib).conv2d(x, w, *b, **kwargs), *arrays)


CONV1D = [((2, 3, 10), (5, 3, 3), {}), ((2, 4, 11), (6, 2, 4), {"stride": 3, "groups": 2}),
          ((2, 3, 10), (5, 3, 3), {"padding": 2, "dilation": 3}),
          ((2, 3, 10), (5, 3, 4), {"padding": "same"}), ((3, 10), (5, 3, 3), {})]


@pytest.mark.parametrize("x_shape,w_shape,kwargs", CONV1D)
def test_conv1d_matches_torch(rng, x_shape, w_shape, kwargs):
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              rng.standard_normal(w_shape[0])]
    compare(lambda lib, x, w, b: F(lib).conv1d(x, w, b, **kwargs), *arrays)


TRANSPOSED = [
    ((2, 4, 5, 6), (4, 3, 3, 3), {}),
    ((2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ((2, 4, 5, 6), (4, 2, 3, 2), {"stride": (2, 3), "groups": 2, "dilation": (1, 2),
                                  "output_padding": (1, 2)}),
    ((2, 4, 5, 6), (4, 3, 1, 1), {"stride": 2}),
    ((4, 5, 6), (4, 3, 3, 3), {"padding": 1}),
]


@pytest.mark.parametrize("x_shape,w_shape,kwargs", TRANSPOSED)
def test_conv_transpose2d_matches_torch(rng, x_shape, w_shape, kwargs):
    groups = kwargs.get("groups", 1)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              rng.standard_normal(w_shape[1] * groups)]
    compare(lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, **kwargs), *arrays)


def test_conv_transpose1d_matches_torch(rng):
    arrays = [rng.standard_normal((2, 4, 7)), rng.standard_normal((4, 3, 3))]
    compare(lambda lib, x, w: F(lib).conv_transpose1d(x, w, stride=2, output_padding=1), *arrays)


def test_conv2d_float32_stays_float32(rng):
    arrays = [rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
              rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
              rng.standard_normal(4).astype(np.float32)]
    compare(lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1), *arrays)


@pytest.mark.parametrize("kwargs", [{"padding": 1}, {"stride": 2, "groups": 2, "dilation": 2}])
def test_conv2d_double_backward(rng, kwargs):
    x = rng.standard_normal((2, 4, 7, 7))
    w = rng.standard_normal((4, 2 if "groups" in kwargs else 4, 3, 3))
    double_backward(lambda lib, x, w: F(lib).conv2d(x, w, **kwargs), x, w)


def test_conv_transpose2d_double_backward(rng):
    x = rng.standard_normal((2, 4, 4, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    double_backward(lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2, padding=1,
                                                              output_padding=1), x, w)


def test_conv2d_grad_fn_and_saved_tensors(rng):
    def run(lib):
        x = lib.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
        w = lib.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
        b = lib.tensor(rng.standard_normal(4), requires_grad=True)
        out = F(lib).conv2d(x, w, b, padding=1)
        return out.grad_fn.name(), saved_log(lib, lambda x, w, b: F(lib).conv2d(x, w, b), x, w, b)
    assert run(hookgrad) == run(torch)


def test_conv2d_same_with_even_kernel_pads_first_like_torch(rng):
    def chain(lib):
        x = lib.tensor(rng.standard_normal((1, 2, 6, 6)), requires_grad=True)
        w = lib.tensor(rng.standard_normal((3, 2, 2, 2)), requires_grad=True)
        out = F(lib).conv2d(x, w, padding="same")
        return out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch and hookgrad warn once about the padded copy
        assert chain(hookgrad) == chain(torch)


def test_conv2d_saves_both_operands_when_only_weight_needs_grad(rng):
    def run(lib):
        x = lib.tensor(rng.standard_normal((2, 3, 5, 5)))
        w = lib.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
        return saved_log(lib, lambda x, w: F(lib).conv2d(x, w), x, w)
    assert run(hookgrad) == run(torch)


ERRORS = {
    "channels": lambda lib: F(lib).conv2d(lib.zeros(1, 2, 5, 5), lib.zeros(4, 3, 3, 3)),
    "input dims": lambda lib: F(lib).conv2d(lib.zeros(5, 5), lib.zeros(4, 3, 3, 3)),
    "kernel too big": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 2, 2), lib.zeros(4, 3, 3, 3)),
    "stride": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3), stride=0),
    "padding": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                         padding=-1),
    "same strided": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                              padding="same", stride=2),
    "bad string": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                            padding="full"),
    "dtype": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5, dtype=lib.float64),
                                       lib.zeros(4, 3, 3, 3)),
    "bias dtype": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                            lib.zeros(4, dtype=lib.float64)),
    "bias size": lambda lib: F(lib).conv2d(lib.zeros(1, 3, 5, 5), lib.zeros(4, 3, 3, 3),
                                           lib.zeros(3)),
    "groups": lambda lib: F(lib).conv2d(lib.zeros(1, 4, 5, 5), lib.zeros(5, 2, 3, 3), groups=2),
    "output padding": lambda lib: F(lib).conv_transpose2d(
        lib.zeros(1, 3, 5, 5), lib.zeros(3, 2, 3, 3), stride=2, output_padding=2),
    "transposed channels": lambda lib: F(lib).conv_transpose2d(
        lib.zeros(1, 2, 5, 5), lib.zeros(3, 2, 3, 3)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_conv_errors_match_torch(case):
    assert raised(ERRORS[case], hookgrad) == raised(ERRORS[case], torch)


def test_conv2d_gradcheck():
    rng = np.random.default_rng(5)
    x = hookgrad.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)
    w = hookgrad.tensor(rng.standard_normal((2, 1, 2, 3)), requires_grad=True)
    b = hookgrad.tensor(rng.standard_normal(2), requires_grad=True)
    assert hookgrad.autograd.gradcheck(
        lambda x, w, b: F(hookgrad).conv2d(x, w, b, stride=(2, 1), padding=1, groups=2),
        (x, w, b))


@st.composite
def conv_geometry(draw):
    nd = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 2]))
    in_channels = groups * draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(nd))
    size = tuple(draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(kernel, dilation))
    transposed = draw(st.booleans())
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1))
                           for s, d in zip(stride, dilation)) if transposed else (0,) * nd
    return (nd, groups, in_channels, out_channels, kernel, stride, dilation, padding, size,
            transposed, output_padding)


@settings(max_examples=40, deadline=None)
@given(conv_geometry(), st.integers(0, 2 ** 31))
def test_convolution_fuzz_against_torch(geometry, seed):
    (nd, groups, in_channels, out_channels, kernel, stride, dilation, padding, size,
     transposed, output_padding) = geometry
    rng = np.random.default_rng(seed)
    if transposed:
        weight_shape = (in_channels, out_channels // groups) + kernel
        padding = tuple(min(p, (s - 1) * st_ + d * (k - 1) + op) // 2 for p, s, st_, d, k, op in
                        zip(padding, size, stride, dilation, kernel, output_padding))
    else:
        weight_shape = (out_channels, in_channels // groups) + kernel
    arrays = [rng.standard_normal((2, in_channels) + size), rng.standard_normal(weight_shape),
              rng.standard_normal(out_channels)]
    compare(lambda lib, x, w, b: lib.convolution(x, w, b, stride, padding, dilation, transposed,
                                                 output_padding, groups), *arrays, seed=seed % 7)


def test_conv_transpose_output_padding_beyond_stride_double_backward(rng):
    """output_padding may reach the stride when it is below the dilation: extra output positions
    that no input reaches, which every gradient must crop away."""
    x, w = rng.standard_normal((2, 2, 3, 3)), rng.standard_normal((2, 3, 2, 2))
    double_backward(lambda lib, x, w: F(lib).conv_transpose2d(x, w, dilation=3,
                                                              output_padding=(1, 2)), x, w,
                    check_names=False)  # the crop adds a SliceBackward0 here
