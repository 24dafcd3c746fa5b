"""Pooling against torch: max (indices, ceil_mode, dilation, padding), average (count_include_pad,
divisor_override, ceil_mode), adaptive average; gradients, double backward, graphs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hookgrad
from conftest import assert_close, compare, raised, saved_log


def F(lib):
    return lib.nn.functional


def grad_of_grad(fn, x, seed=0):
    """d/d(grad_output) of <grad_input, v>: pooling gradients are linear in the output grad."""
    rng = np.random.default_rng(seed)
    results = []
    for lib in (hookgrad, torch):
        rng = np.random.default_rng(seed)
        inp = lib.tensor(np.array(x, copy=True), requires_grad=True)
        out = fn(lib, inp)
        grad_out = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
        (grad_in,) = lib.autograd.grad(out, inp, grad_out, create_graph=True)
        probe = lib.tensor(rng.standard_normal(tuple(grad_in.shape)))
        (second,) = lib.autograd.grad((grad_in * probe).sum(), grad_out)
        results.append((grad_in, second, grad_in.grad_fn.name()))
    (h_in, h_second, h_name), (t_in, t_second, t_name) = results
    assert_close(h_in, t_in)
    assert_close(h_second, t_second)
    assert h_name == t_name


MAX = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False), (3, 2, 1, 1, True), (3, 1, 1, 2, False), ((3, 2), (2, 1), (1, 0),
                                                                      (2, 1), True),
    (3, 3, 1, 1, True), (2, 2, 0, 1, True), (1, 1, 0, 1, False),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX)
def test_max_pool2d_values_indices_and_grad(rng, kernel, stride, padding, dilation, ceil_mode):
    x = rng.standard_normal((2, 3, 9, 8))
    compare(lambda lib, t: F(lib).max_pool2d(t, kernel, stride, padding, dilation, ceil_mode,
                                             return_indices=True), x)


def test_max_pool2d_unbatched_and_float32(rng):
    compare(lambda lib, t: F(lib).max_pool2d(t, 3, 2, 1), rng.standard_normal((3, 8, 7)))
    compare(lambda lib, t: F(lib).max_pool2d(t, 2),
            rng.standard_normal((2, 3, 8, 8)).astype(np.float32))


def test_max_pool2d_ties_pick_first_and_nan_wins():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 1] = np.nan
    compare(lambda lib, t: F(lib).max_pool2d(t, 2, return_indices=True), x)


def test_max_pool2d_graph_and_saved(rng):
    def run(lib):
        x = lib.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
        out = F(lib).max_pool2d(x, 2)
        return out.grad_fn.name(), saved_log(lib, lambda x: F(lib).max_pool2d(x, 2), x)
    assert run(hookgrad) == run(torch)


def test_max_pool2d_double_backward(rng):
    grad_of_grad(lambda lib, t: F(lib).max_pool2d(t, 3, 2, 1), rng.standard_normal((2, 2, 7, 7)))


AVG = [  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None), (3, 2, 1, True, True, None), (3, 2, 1, True, False, None),
    ((3, 2), (2, 1), (1, 0), False, False, None), (3, 3, 1, True, True, 5),
    (3, 2, 1, False, False, 2), (2, 3, 1, True, True, None),
]


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,include,divisor", AVG)
def test_avg_pool2d_matches_torch(rng, kernel, stride, padding, ceil_mode, include, divisor):
    x = rng.standard_normal((2, 3, 9, 8))
    compare(lambda lib, t: F(lib).avg_pool2d(t, kernel, stride, padding, ceil_mode, include,
                                             divisor), x)


def test_avg_pool2d_float32_and_unbatched(rng):
    compare(lambda lib, t: F(lib).avg_pool2d(t, 3, 2, 1),
            rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    compare(lambda lib, t: F(lib).avg_pool2d(t, 2), rng.standard_normal((3, 6, 6)))


def test_avg_pool2d_graph_saved_and_double_backward(rng):
    def run(lib):
        x = lib.tensor(rng.standard_normal((2, 3, 6, 6)), requires_grad=True)
        out = F(lib).avg_pool2d(x, 2)
        return out.grad_fn.name(), saved_log(lib, lambda x: F(lib).avg_pool2d(x, 2), x)
    assert run(hookgrad) == run(torch)
    grad_of_grad(lambda lib, t: F(lib).avg_pool2d(t, 3, 2, 1, True, False),
                 rng.standard_normal((2, 2, 7, 7)))


@pytest.mark.parametrize("size", [(3, 3), (4, 5), (9, 8), (2, 1), 5, (None, 3), (7, 11)])
def test_adaptive_avg_pool2d_matches_torch(rng, size):
    compare(lambda lib, t: F(lib).adaptive_avg_pool2d(t, size), rng.standard_normal((2, 3, 9, 8)))


def test_adaptive_avg_pool2d_to_one_is_a_mean_like_torch(rng):
    names = []
    for lib in (hookgrad, torch):
        x = lib.tensor(rng.standard_normal((2, 3, 5, 5)), requires_grad=True)
        names.append((F(lib).adaptive_avg_pool2d(x, 1).grad_fn.name(),
                      F(lib).adaptive_avg_pool2d(x, (2, 2)).grad_fn.name()))
    assert names[0] == names[1]
    compare(lambda lib, t: F(lib).adaptive_avg_pool2d(t, (1, 1)), rng.standard_normal((2, 3, 5, 4)))


def test_adaptive_avg_pool2d_double_backward_and_float32(rng):
    grad_of_grad(lambda lib, t: F(lib).adaptive_avg_pool2d(t, (3, 4)),
                 rng.standard_normal((2, 2, 7, 9)))
    compare(lambda lib, t: F(lib).adaptive_avg_pool2d(t, (3, 4)),
            rng.standard_normal((2, 2, 7, 9)).astype(np.float32))


ERRORS = {
    "pad too big": lambda lib: F(lib).max_pool2d(lib.zeros(1, 1, 5, 5), 3, padding=2),
    "output too small": lambda lib: F(lib).max_pool2d(lib.zeros(1, 3, 1, 1), 3),
    "avg pad too big": lambda lib: F(lib).avg_pool2d(lib.zeros(1, 1, 5, 5), 3, padding=2),
    "pad beyond kernel": lambda lib: F(lib).max_pool2d(lib.zeros(1, 1, 9, 9), (3, 1), 1, (2, 0),
                                                       (2, 1)),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_pool_errors_match_torch(case):
    assert raised(ERRORS[case], hookgrad) == raised(ERRORS[case], torch)


POOL1D = {
    "max": lambda lib, t: lib.nn.functional.max_pool1d(t, 3, 2, 1, ceil_mode=True,
                                                       return_indices=True),
    "max dilated": lambda lib, t: lib.nn.functional.max_pool1d(t, 2, dilation=3),
    "avg": lambda lib, t: lib.nn.functional.avg_pool1d(t, 3, 2, 1, count_include_pad=False),
    "adaptive": lambda lib, t: lib.nn.functional.adaptive_avg_pool1d(t, 4),
}


@pytest.mark.parametrize("case", list(POOL1D))
def test_pool1d_is_pool2d_over_a_row_like_torch(rng, case):
    compare(POOL1D[case], rng.standard_normal((2, 3, 11)))
    compare(POOL1D[case], rng.standard_normal((3, 11)))
    names = []
    for lib in (hookgrad, torch):
        out = POOL1D[case](lib, lib.tensor(rng.standard_normal((2, 3, 11)), requires_grad=True))
        out = out[0] if isinstance(out, tuple) else out
        names.append((out.grad_fn.name(), out.grad_fn.next_functions[0][0].name()))
    assert names[0] == names[1]


@st.composite
def pool_geometry(draw):
    kernel = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    stride = (draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    size = tuple(draw(st.integers(max(d * (k - 1) + 1 - 2 * p, 1), 9))
                 for k, d, p in zip(kernel, dilation, padding))
    return kernel, stride, dilation, padding, size, draw(st.booleans())


@settings(max_examples=40, deadline=None)
@given(pool_geometry(), st.booleans(), st.integers(0, 2 ** 31))
def test_pooling_fuzz_against_torch(geometry, include_pad, seed):
    kernel, stride, dilation, padding, size, ceil_mode = geometry
    x = np.random.default_rng(seed).standard_normal((2, 2) + size)
    out = F(torch).max_pool2d(torch.tensor(x), kernel, stride, padding, dilation,
                              ceil_mode).shape[2:]
    for o, k, s, p, d, n in zip(out, kernel, stride, padding, dilation, size):
        taps = (np.arange(o) * s - p)[:, None] + np.arange(k) * d
        # a window of padding only makes torch's max-pool backward write out of bounds
        assume(((taps >= 0) & (taps < n)).any(1).all())
    compare(lambda lib, t: F(lib).max_pool2d(t, kernel, stride, padding, dilation, ceil_mode,
                                             return_indices=True), x)
    compare(lambda lib, t: F(lib).avg_pool2d(t, kernel, stride, padding, ceil_mode,
                                             include_pad), x)
