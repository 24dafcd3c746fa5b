"""conv3d / conv_transpose3d, max_pool3d / avg_pool3d / adaptive_avg_pool3d and their modules
against torch: values, gradients, double backward, node names, init draws, reprs, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward, init_draws


def F(lib):
    return lib.nn.functional


CONV = [  # stride, padding, dilation, groups
    (1, 0, 1, 1), (2, 1, 1, 1), ((1, 2, 1), (0, 1, 1), (2, 1, 1), 1), (1, 1, 1, 2),
]


@pytest.mark.parametrize("stride,padding,dilation,groups", CONV)
def test_conv3d(rng, stride, padding, dilation, groups):
    x = rng.standard_normal((2, 4, 5, 4, 6))
    w = rng.standard_normal((6, 4 // groups, 2, 3, 2))
    b = rng.standard_normal(6)
    compare(lambda lib, x, w, b: F(lib).conv3d(x, w, b, stride, padding, dilation, groups),
            x, w, b)
    double_backward(lambda lib, x, w: F(lib).conv3d(x, w, None, stride, padding, dilation,
                                                    groups), x, w)


TRANSPOSED = [  # stride, padding, output_padding, dilation, groups
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 1), ((2, 1, 3), (0, 1, 1), (1, 0, 2), 1, 2),
    (1, 0, 0, (1, 2, 1), 1),
]


@pytest.mark.parametrize("stride,padding,output_padding,dilation,groups", TRANSPOSED)
def test_conv_transpose3d(rng, stride, padding, output_padding, dilation, groups):
    x = rng.standard_normal((2, 4, 3, 4, 3))
    w = rng.standard_normal((4, 6 // groups, 2, 3, 3))
    b = rng.standard_normal(6)

    def fn(lib, x, w, b):
        return F(lib).conv_transpose3d(x, w, b, stride, padding, output_padding, groups,
                                       dilation)

    compare(fn, x, w, b)
    compare(fn, x[0], w, b)
    double_backward(fn, x, w, b)


MAX = [(2, None, 0, 1, False), (3, 2, 1, 1, True), ((3, 2, 2), (1, 2, 1), (1, 1, 0), (1, 1, 2),
                                                     False), (2, 1, 1, 2, True)]


@pytest.mark.parametrize("kernel,stride,padding,dilation,ceil_mode", MAX)
def test_max_pool3d(rng, kernel, stride, padding, dilation, ceil_mode):
    x = rng.standard_normal((2, 2, 5, 6, 5))

    def fn(lib, t):
        return F(lib).max_pool3d(t, kernel, stride, padding, dilation, ceil_mode, True)

    compare(fn, x)
    compare(fn, x[0].astype(np.float32))
    double_backward(fn, x)


AVG = [(2, None, 0, False, True, None), (3, 2, 1, True, False, None),
       ((3, 2, 2), (1, 2, 1), (1, 1, 0), False, True, 5), (2, 1, 1, True, True, None)]


@pytest.mark.parametrize("kernel,stride,padding,ceil_mode,count_include_pad,divisor", AVG)
def test_avg_pool3d(rng, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    x = rng.standard_normal((2, 2, 5, 6, 5))

    def fn(lib, t):
        return F(lib).avg_pool3d(t, kernel, stride, padding, ceil_mode, count_include_pad,
                                 divisor)

    compare(fn, x)
    compare(fn, x[0].astype(np.float32))
    double_backward(fn, x)


@pytest.mark.parametrize("size", [2, (3, 1, 4), 1, (None, 2, 5)])
def test_adaptive_avg_pool3d(rng, size):
    x = rng.standard_normal((2, 3, 5, 4, 6))
    compare(lambda lib, t: F(lib).adaptive_avg_pool3d(t, size), x)
    compare(lambda lib, t: F(lib).adaptive_avg_pool3d(t, size), x[0])


def test_node_names(rng):
    names = []
    for lib in (hookgrad, torch):
        x = lib.tensor(rng.standard_normal((1, 2, 4, 4, 4)), requires_grad=True)
        names.append([F(lib).max_pool3d(x, 2).grad_fn.name(),
                      F(lib).avg_pool3d(x, 2).grad_fn.name(),
                      F(lib).adaptive_avg_pool3d(x, 3).grad_fn.name(),
                      F(lib).adaptive_avg_pool3d(x, 1).grad_fn.name()])
    assert names[0] == names[1]


ERRORS = [
    lambda lib, x: F(lib).max_pool3d(x, 2, padding=2),
    lambda lib, x: F(lib).avg_pool3d(x, 2, padding=2),
    lambda lib, x: F(lib).max_pool3d(x, 3, stride=0),
    lambda lib, x: F(lib).avg_pool3d(x, 3, stride=0),
    lambda lib, x: F(lib).max_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).avg_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).max_pool3d(x, 7),
    lambda lib, x: F(lib).avg_pool3d(x, 7),
    lambda lib, x: F(lib).avg_pool3d(x, (5, 2, 2), padding=(2, 0, 0)),
    lambda lib, x: F(lib).max_pool3d(x, (3, 3, 3), padding=(1, 2, 1), dilation=2),
    lambda lib, x: F(lib).avg_pool3d(x, 2, divisor_override=0),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).avg_pool3d(x, 2, stride=(1, 2)),
    lambda lib, x: F(lib).max_pool3d(x, (2, 2)),
    lambda lib, x: F(lib).conv3d(x, lib.ones(3, 3, 2, 2, 2, dtype=lib.float64)),
    lambda lib, x: F(lib).conv_transpose3d(x, lib.ones(2, 3, 2, 2, 2, dtype=lib.float64),
                                           stride=2, output_padding=2),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors(rng, index):
    x = rng.standard_normal((1, 2, 4, 5, 6))
    assert_same_error(lambda lib: ERRORS[index](lib, lib.tensor(x)))


MODULES = [("Conv3d", (2, 4, 3), {}), ("Conv3d", (2, 4, (1, 2, 3)), dict(stride=2, padding=1,
                                                                         bias=False)),
           ("Conv3d", (4, 4, 2), dict(groups=2, dilation=(1, 2, 1), padding="same")),
           ("Conv3d", (2, 2, 3), dict(padding=1, padding_mode="reflect")),
           ("Conv3d", (2, 2, (3, 1, 2)), dict(padding=(1, 0, 1), padding_mode="replicate")),
           ("Conv3d", (2, 2, 2), dict(padding="same", padding_mode="circular", dilation=2)),
           ("ConvTranspose3d", (2, 4, 2), dict(stride=2)),
           ("ConvTranspose3d", (4, 2, (2, 1, 3)), dict(groups=2, padding=1, output_padding=1,
                                                       stride=2))]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_conv3d_modules(rng, name, args, kwargs):
    modules = []
    for lib in (hookgrad, torch):
        lib.manual_seed(0)
        modules.append(getattr(lib.nn, name)(*args, **kwargs))
    assert repr(modules[0]) == repr(modules[1])
    theirs = modules[1].state_dict()
    assert list(modules[0].state_dict()) == list(theirs)
    for key, value in theirs.items():
        assert modules[0].state_dict()[key].shape == tuple(value.shape)
    with torch.no_grad():  # the same weights, so the layers can be compared on one input
        for key, value in modules[0].state_dict().items():
            theirs[key].copy_(torch.from_numpy(value.numpy().copy()))
    x = rng.standard_normal((2, args[0], 4, 5, 4)).astype(np.float32)
    compare(lambda lib, t: modules[lib is torch](t), x)


@pytest.mark.parametrize("name,args", [("Conv3d", (2, 6, (2, 1, 3))),
                                       ("ConvTranspose3d", (4, 6, 2, 1, 0, 0, 2))])
def test_conv3d_init_draws_like_torch(name, args):
    """Default initialisation makes torch's draws (shapes and bounds) in torch's order."""
    draws = [init_draws(lib, lambda: getattr(lib.nn, name)(*args))[1]
             for lib in (hookgrad, torch)]
    assert draws[0] == draws[1] and len(draws[0]) == 2


@pytest.mark.parametrize("name,args,kwargs", [
    ("MaxPool3d", (2,), {}), ("MaxPool3d", (3, 2, 1), dict(ceil_mode=True, return_indices=True)),
    ("AvgPool3d", (2,), {}), ("AvgPool3d", ((2, 3, 2), 1, (1, 1, 0)),
                              dict(count_include_pad=False)),
    ("AdaptiveAvgPool3d", ((2, 3, 1),), {}), ("AdaptiveAvgPool3d", (1,), {})])
def test_pool3d_modules(rng, name, args, kwargs):
    modules = [getattr(lib.nn, name)(*args, **kwargs) for lib in (hookgrad, torch)]
    assert repr(modules[0]) == repr(modules[1])
    compare(lambda lib, t: modules[lib is torch](t), rng.standard_normal((2, 2, 5, 6, 5)))
