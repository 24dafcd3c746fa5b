"""Max pooling's tiling fast path (stride = kernel, no padding or dilation, e.g. 2x2 stride 2)
against torch and against the general path: values, indices, gradients, ties, NaNs, dtypes,
double backward, saved tensors, and shapes that miss the fast path."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, saved_log
from hookgrad.nn.ops import pooling


def F(lib):
    return lib.nn.functional


def pool(kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    return lambda lib, t: F(lib).max_pool2d(t, kernel, stride, padding, dilation, ceil_mode,
                                            return_indices=True)


TILED = [  # shape, kernel: every window inside the input, stride = kernel
    ((2, 3, 8, 8), 2), ((2, 3, 9, 7), 2), ((1, 2, 5, 5), 3), ((3, 6, 6), 2),
    ((2, 3, 12, 12), (2, 3)), ((2, 2, 13, 11), (3, 2)), ((1, 1, 4, 4), 4), ((2, 1, 3, 5), 1),
    ((1, 2, 6, 301), (2, 3)),  # offsets within a tile past 255 (backward's narrow winner type)
]


@pytest.mark.parametrize("shape,kernel", TILED)
def test_tiled_geometry_matches_torch(rng, shape, kernel):
    compare(pool(kernel), rng.standard_normal(shape))


@pytest.mark.parametrize("shape,kernel", TILED)
def test_tiled_geometry_takes_the_fast_path(shape, kernel):
    kernel = (kernel, kernel) if isinstance(kernel, int) else kernel
    out = pooling.pooled_size(shape[-2:], kernel, kernel, (0, 0), (1, 1), False)
    assert pooling._tiles(np.zeros(shape), out, kernel, kernel, (0, 0), (1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_ties_pick_the_first_maximum_in_row_major_order(rng, dtype):
    x = rng.integers(0, 3, (2, 3, 8, 6)).astype(dtype)  # many windows with tied maxima
    compare(pool(2), x, rtol=1e-3 if dtype == np.float16 else None)
    compare(pool((2, 3)), x, rtol=1e-3 if dtype == np.float16 else None)


def test_integer_input_matches_torch(rng):
    compare(pool(2), rng.integers(-5, 5, (2, 2, 6, 6)), grad=False)


@pytest.mark.parametrize("args", [(2,), (3,), ((2, 3),), (3, 2, 1), (2, 1), (2, 2, 0, 2)])
def test_nan_wins_and_of_several_the_last_is_reported(args):
    x = np.array([[[[np.nan, 5, 1, 0, np.nan, 2], [np.nan, 0, 2, np.nan, np.nan, 1],
                    [1, np.nan, 3, 4, 0, 0], [0, 1, 2, 3, 4, 5]]]])
    compare(pool(*args), x)


def test_all_equal_minus_infinity_windows_report_their_first_position():
    x = np.full((1, 2, 4, 4), -np.inf)
    x[0, 1, 0, 1] = 1.0
    compare(pool(2), x)


def test_non_contiguous_input(rng):
    x = rng.standard_normal((2, 8, 6, 3))
    compare(lambda lib, t: pool(2)(lib, t.permute(0, 3, 1, 2)), x)


def test_max_pool1d_and_max_pool3d_tiles(rng):
    compare(lambda lib, t: F(lib).max_pool1d(t, 3, return_indices=True),
            rng.standard_normal((2, 3, 10)))
    compare(lambda lib, t: F(lib).max_pool3d(t, 2, return_indices=True),
            rng.standard_normal((2, 2, 4, 5, 6)))


def test_modules_match_torch(rng):
    compare(lambda lib, t: lib.nn.MaxPool2d(2)(t), rng.standard_normal((4, 3, 10, 10)))


MISSES = [  # kernel, stride, padding, dilation, ceil_mode: the general path
    (2, 1, 0, 1, False), (3, 2, 1, 1, False), (2, 2, 1, 1, False), (2, 2, 0, 2, False),
    (2, 2, 0, 1, True), (3, 3, 0, 1, True),
]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MISSES)
def test_geometries_that_miss_the_fast_path_match_torch(rng, kernel, stride, padding, dilation,
                                                        ceil_mode):
    compare(pool(kernel, stride, padding, dilation, ceil_mode), rng.standard_normal((2, 2, 9, 7)))


@pytest.mark.parametrize("shape,kernel", TILED[:4])
def test_fast_path_equals_general_path(rng, shape, kernel, monkeypatch):
    x = rng.integers(0, 4, shape).astype(np.float64)
    x.flat[::7] = np.nan
    grad_output = None
    results = []
    for tiled in (True, False):
        if not tiled:
            monkeypatch.setattr(pooling, "_tiles", lambda *args: False)
        t = hookgrad.tensor(x, requires_grad=True)
        out, indices = F(hookgrad).max_pool2d(t, kernel, return_indices=True)
        if grad_output is None:
            grad_output = rng.standard_normal(tuple(out.shape))
        out.backward(hookgrad.tensor(grad_output))
        results.append((out.detach().numpy(), indices.numpy(), t.grad.numpy()))
    for fast, general in zip(*results):
        np.testing.assert_array_equal(fast, general)


@pytest.mark.parametrize("shape,kernel", [((1, 2, 4, 4), 2), ((2, 2, 7, 6), (3, 2)),
                                          ((1, 1, 5, 5), (2, 2))])
def test_higher_order_gradients_in_the_output_gradient(rng, shape, kernel):
    """The gradient is linear in the output gradient: its derivatives (scatter, then gather, then
    scatter again) match torch's, and so do the nodes."""
    x = rng.integers(0, 3, shape).astype(np.float64)  # ties too
    results = []
    for lib in (hookgrad, torch):
        local = np.random.default_rng(1)
        t = lib.tensor(x, requires_grad=True)
        out = F(lib).max_pool2d(t, kernel)
        weight = lib.tensor(local.standard_normal(tuple(out.shape)), requires_grad=True)
        (first,) = lib.autograd.grad(out, t, weight, create_graph=True)
        probe = lib.tensor(local.standard_normal(shape))
        (second,) = lib.autograd.grad((first * first * probe).sum(), weight, create_graph=True)
        (third,) = lib.autograd.grad((second * second).sum(), weight)
        results.append((first, second, third, first.grad_fn.name()))
    for ours, theirs in zip(results[0][:3], results[1][:3]):
        assert_close(ours, theirs)
    assert results[0][3] == results[1][3]


def test_saved_tensors_and_graph_match_torch(rng):
    x = rng.standard_normal((2, 3, 6, 6))

    def run(lib):
        t = lib.tensor(x, requires_grad=True)
        out = F(lib).max_pool2d(t, 2)
        node = out.grad_fn
        return (node.name(), node._saved_self is t, tuple(node._saved_result1.shape),
                str(node._saved_result1.dtype).split(".")[-1],
                saved_log(lib, lambda t: F(lib).max_pool2d(t, 2), t))

    assert run(hookgrad) == run(torch)
