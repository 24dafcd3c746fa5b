"""Tensor.unfold against torch: shapes, strides, the view relation, gradients with overlapping
windows, double backward, writes through the view and errors."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_same_error, compare, compare_double_backward

RNG = np.random.default_rng(5)
X = RNG.standard_normal((3, 7))
CUBE = RNG.standard_normal((2, 5, 4))

CASES = [  # (input, dimension, size, step)
    (X, 1, 3, 1), (X, 1, 3, 2), (X, 1, 2, 3), (X, -1, 7, 1), (X, 0, 2, 1), (X, 1, 0, 1),
    (CUBE, 1, 3, 2), (CUBE, 2, 1, 1), (CUBE, 0, 2, 5), (np.array(1.5), 0, 1, 1),
]


@pytest.mark.parametrize("array,dimension,size,step", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_values_and_gradients(array, dimension, size, step, dtype):
    compare(lambda lib, x: x.unfold(dimension, size, step), array.astype(dtype))


@pytest.mark.parametrize("array,dimension,size,step", CASES)
def test_shape_stride_and_node(array, dimension, size, step):
    outs = [lib.tensor(array, requires_grad=True).unfold(dimension, size, step)
            for lib in (torch, hookgrad)]
    assert tuple(outs[1].shape) == tuple(outs[0].shape)
    assert outs[1].stride() == outs[0].stride()
    assert outs[1].grad_fn.name() == outs[0].grad_fn.name() == "UnfoldBackward0"


@pytest.mark.parametrize("array,dimension,size,step", CASES[:4] + CASES[6:7])
def test_double_backward(array, dimension, size, step):
    compare_double_backward(lambda lib, x: x.unfold(dimension, size, step) ** 2, array)


def test_is_a_view_that_writes_through():
    def write(lib, x):
        base = x * 1
        windows = base.unfold(1, 3, 2)
        assert windows._base is base
        windows[:, 1, 0].mul_(10)  # lands in column 2 of base
        return base, windows

    compare(write, X)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(3, 4).unfold(1, 5, 1),
    lambda lib: lib.ones(3, 4).unfold(1, 2, 0),
    lambda lib: lib.ones(3, 4).unfold(3, 2, 1),
    lambda lib: lib.ones(3, 4).unfold(1, -1, 1),
    lambda lib: lib.tensor(2.0).unfold(0, 2, 1),
])
def test_errors_match_torch(fn):
    assert_same_error(fn)
