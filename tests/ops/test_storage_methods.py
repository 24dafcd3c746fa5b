"""resize_, dim_order, apply_/map_, pinning and sharing, new_empty_strided and nonzero_static
against torch."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, compare, raised

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("steps", [[(2, 2)], [(3,)], [(6,)], [(2, 3), (4,)], [(0,), (2,)],
                                   [[3, 1]]])
def test_resize_keeps_the_leading_elements(steps):
    for lib in (hookgrad, torch):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0])
        for shape in steps:
            assert x.resize_(*shape) is x if isinstance(shape, tuple) else x.resize_(shape) is x
    hg, th = hookgrad.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 2.0, 3.0, 4.0])
    for shape in steps:
        hg.resize_(shape), th.resize_(shape)
        assert hg.shape == th.shape and hg.is_contiguous()
        kept = min(hg.numel(), 4)
        assert_close(hg.reshape(-1)[:kept], th.reshape(-1)[:kept])


def test_resize_as_and_refusals():
    for lib in (hookgrad, torch):
        assert lib.zeros(5).resize_as_(lib.ones(2, 2)).shape == (2, 2)
    for make in (lambda lib: lib.zeros(2, requires_grad=True).resize_(3),
                 lambda lib: lib.zeros(2, requires_grad=True).apply_(abs),
                 lambda lib: lib.randn(2).pin_memory()):
        assert raised(make, hookgrad) == raised(make, torch)


@pytest.mark.parametrize("make", [lambda lib: lib.randn(2, 3, 4),
                                  lambda lib: lib.randn(2, 3, 4).permute(2, 0, 1),
                                  lambda lib: lib.randn(2, 3, 4).transpose(0, 1),
                                  lambda lib: lib.randn(2, 1, 3),
                                  lambda lib: lib.randn(3, 1).t(),
                                  lambda lib: lib.randn(2, 3, 4, 5).contiguous(
                                      memory_format=lib.channels_last)])
def test_dim_order(make):
    assert make(hookgrad).dim_order() == make(torch).dim_order()


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_apply_and_map(dtype):
    data = (RNG.standard_normal((2, 3)) * 4).astype(dtype)
    compare(lambda lib, x: x.apply_(lambda v: v * 1.5 + 1), data, grad=False)
    compare(lambda lib, x, y: x.map_(y, lambda a, b: a * b - 1), data, data[:1], grad=False)
    for lib in (hookgrad, torch):
        x = lib.zeros(3)
        version = x._version
        x.apply_(lambda v: 1)
        assert x._version == version  # torch does not count it as an in-place change


def test_pinning_and_sharing():
    for lib in (hookgrad, torch):
        x = lib.zeros(2)
        assert not x.is_pinned() and not x.is_shared()
        assert x.share_memory_() is x and x.is_shared()


def test_new_empty_strided():
    for lib in (hookgrad, torch):
        y = lib.zeros(1, dtype=lib.float64).new_empty_strided((2, 3), (1, 2))
        assert y.stride() == (1, 2) and y.dtype == lib.float64


@pytest.mark.parametrize("data,size,fill", [([0, 1, 0, 2], 3, -1), ([[0, 1], [3, 0]], 1, 9),
                                            ([1, 1], 0, -1), ([[0, 0], [0, 0]], 2, 5)])
def test_nonzero_static(data, size, fill):
    compare(lambda lib, x: lib.nonzero_static(x, size=size, fill_value=fill), np.array(data),
            grad=False)
    compare(lambda lib, x: x.nonzero_static(size=size), np.array(data), grad=False)
