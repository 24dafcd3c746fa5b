"""as_strided_scatter (function and method), as_strided_ and resize_as_ at torch level:
values, result strides, node names, gradients as torch 2.13 gives them, and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare

LIBS = (torch, hookgrad)


@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), 1), ((2, 2), (1, 2), 0),
                                                ((3,), (2,), None), ((2, 3), (3, 1), 0),
                                                ((), (), 4), ((0, 2), (1, 1), 0)])
def test_as_strided_scatter_values_and_gradients(size, stride, offset):
    src_values = np.random.default_rng(0).standard_normal(size)
    compare(lambda lib, base, src: lib.as_strided_scatter(base * 1, src, size, stride, offset),
            np.arange(6.0), src_values)
    compare(lambda lib, base, src: (base * 1).as_strided_scatter(src, size, stride, offset),
            np.arange(6.0), src_values)


@pytest.mark.parametrize("make", [lambda lib: lib.arange(6.0).reshape(2, 3).t(),
                                  lambda lib: lib.arange(6.0).reshape(2, 3)[:, :2],
                                  lambda lib: lib.arange(12.0).reshape(3, 4)[::2]])
def test_the_geometry_is_read_on_a_copy_with_the_input_strides(make):
    results = []
    for lib in LIBS:
        out = lib.as_strided_scatter(make(lib), lib.full((2,), -1.0), (2,), (1,), 1)
        results.append(out)
    assert_close(results[1], results[0])
    assert results[1].stride() == results[0].stride()


def test_node_name_and_src_dtype_cast():
    names = []
    for lib in LIBS:
        x = lib.zeros(6, requires_grad=True)
        out = lib.as_strided_scatter(x, lib.ones(2, dtype=lib.float64), (2,), (1,), 3)
        names.append((type(out.grad_fn).__name__, out.dtype, out.tolist()))
    assert names[1] == (names[0][0], hookgrad.float32, names[0][2])


@pytest.mark.parametrize("call", [
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(3), (2,), (1,)),
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(2), (2,), (4,), 3),
    lambda lib: lib.as_strided_scatter(lib.zeros(6), lib.ones(2), (2,), (1, 1)),
])
def test_as_strided_scatter_errors(call):
    assert_same_error(call)


def test_torch_level_in_place_spellings():
    results = []
    for lib in LIBS:
        x = lib.arange(6.0)
        same = lib.as_strided_(x, (2, 2), (1, 2), 1) is x
        y = lib.ones(2)
        resized = lib.resize_as_(y, lib.zeros(2, 2))
        results.append((same, x.tolist(), x.stride(), resized is y, tuple(y.shape)))
    assert results[1] == results[0]


@pytest.mark.parametrize("dim,start,end,step", [(1, 1, 3, 1), (0, 1, 2, 1), (1, 0, 3, 2)])
def test_slice_inverse(dim, start, end, step):
    results = []
    for lib in LIBS:
        leaf = lib.arange(12.0).reshape(3, 4).requires_grad_()
        base = leaf * 1
        piece = base[(slice(None),) * dim + (slice(start, end, step),)]
        whole = lib.slice_inverse(piece, lib.zeros(3, 4), dim, start, end, step)
        (whole * lib.arange(12.0).reshape(3, 4)).sum().backward()
        results.append((whole.detach().numpy().tolist(), whole.stride(),
                        type(whole.grad_fn).__name__, leaf.grad.numpy().tolist()))
    assert results[1] == results[0]


def test_slice_inverse_method():
    results = []
    for lib in LIBS:
        base = lib.arange(6.0).reshape(2, 3)
        whole = base[:, 1:3].slice_inverse(base, 1, 1, 3)
        results.append((whole.tolist(), whole.stride(), whole.data_ptr() == base.data_ptr()))
    assert results[1] == results[0]
