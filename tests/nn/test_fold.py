"""unfold (im2col) and fold (col2im) against torch: every geometry option, batched and
unbatched, float64/float32, gradients, double backward, node names, errors, module reprs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward


def F(lib):
    return lib.nn.functional


GEOMETRY = [  # kernel, dilation, padding, stride
    (2, 1, 0, 1), (3, 1, 1, 1), ((2, 3), 1, 0, (2, 1)), (3, 2, 1, 2), ((1, 2), (2, 1), (0, 1), 3),
    (1, 1, 0, 1), ((3, 1), 1, (1, 0), (1, 2)), (4, 1, 2, 3),
]


@pytest.mark.parametrize("kernel,dilation,padding,stride", GEOMETRY)
def test_unfold(rng, kernel, dilation, padding, stride):
    x = rng.standard_normal((2, 3, 7, 6))
    compare(lambda lib, t: F(lib).unfold(t, kernel, dilation, padding, stride), x)
    compare(lambda lib, t: F(lib).unfold(t, kernel, dilation, padding, stride), x[0])
    double_backward(lambda lib, t: F(lib).unfold(t, kernel, dilation, padding, stride), x)


def _columns(kernel, dilation, padding, stride, size, channels=3, batch=2):
    k = (kernel, kernel) if isinstance(kernel, int) else kernel
    pair = [(v, v) if isinstance(v, int) else v for v in (dilation, padding, stride)]
    blocks = [(s + 2 * p - (d * (kk - 1) + 1)) // st + 1
              for s, kk, d, p, st in zip(size, k, *pair)]
    return (batch, channels * k[0] * k[1], blocks[0] * blocks[1])


@pytest.mark.parametrize("kernel,dilation,padding,stride", GEOMETRY)
def test_fold(rng, kernel, dilation, padding, stride):
    size = (7, 6)
    x = rng.standard_normal(_columns(kernel, dilation, padding, stride, size))
    compare(lambda lib, t: F(lib).fold(t, size, kernel, dilation, padding, stride), x)
    compare(lambda lib, t: F(lib).fold(t, size, kernel, dilation, padding, stride), x[1])
    double_backward(lambda lib, t: F(lib).fold(t, size, kernel, dilation, padding, stride), x)


def test_fold_unfold_float32_and_names(rng):
    x = rng.standard_normal((2, 2, 5, 5)).astype(np.float32)
    compare(lambda lib, t: F(lib).fold(F(lib).unfold(t, 3, padding=1), (5, 5), 3, padding=1), x)
    names = []
    for lib in (hookgrad, torch):
        t = lib.tensor(x, requires_grad=True)
        cols = F(lib).unfold(t, 2)
        names.append((cols.grad_fn.name(), F(lib).fold(cols, 5, 2).grad_fn.name()))
    assert names[0] == names[1]


UNFOLD_BAD = [
    dict(kernel_size=(2, 2, 2)), dict(kernel_size=2, stride=(1,)), dict(kernel_size=2.0),
    dict(kernel_size=0), dict(kernel_size=2, dilation=0), dict(kernel_size=2, padding=-1),
    dict(kernel_size=2, stride=0), dict(kernel_size=9),
]


@pytest.mark.parametrize("kwargs", UNFOLD_BAD)
def test_unfold_errors(rng, kwargs):
    x = rng.standard_normal((1, 2, 4, 5))
    assert_same_error(lambda lib: F(lib).unfold(lib.tensor(x), **kwargs))


def test_unfold_rank_errors(rng):
    for shape in ((4, 5), (1, 1, 1, 4, 5), (1, 0, 4, 5)):
        x = rng.standard_normal(shape)
        assert_same_error(lambda lib: F(lib).unfold(lib.tensor(x), 2))


FOLD_BAD = [
    ((1, 8, 12), dict(output_size=(3,), kernel_size=2)),
    ((1, 7, 12), dict(output_size=(4, 5), kernel_size=2)),
    ((1, 8, 11), dict(output_size=(4, 5), kernel_size=2)),
    ((1, 8, 12), dict(output_size=(4, 5), kernel_size=2, stride=0)),
    ((1, 8, 12), dict(output_size=(4, 5), kernel_size=2, padding=-1)),
    ((1, 8, 0), dict(output_size=(1, 1), kernel_size=2)),
    ((8,), dict(output_size=(4, 5), kernel_size=2)),
]


@pytest.mark.parametrize("shape,kwargs", FOLD_BAD)
def test_fold_errors(rng, shape, kwargs):
    x = rng.standard_normal(shape)
    assert_same_error(lambda lib: F(lib).fold(lib.tensor(x), **kwargs))


@pytest.mark.parametrize("name,args", [("Unfold", (2,)), ("Unfold", ((2, 3), 1, (0, 1), 2)),
                                       ("Fold", ((4, 5), 2)), ("Fold", (5, (2, 2), 1, 1, 2))])
def test_fold_modules(rng, name, args):
    modules = [getattr(lib.nn, name)(*args) for lib in (hookgrad, torch)]
    assert repr(modules[0]) == repr(modules[1])
    assert list(modules[0].state_dict()) == list(modules[1].state_dict())
    if name == "Unfold":
        x = rng.standard_normal((2, 3, 4, 5))
    else:
        x = rng.standard_normal(_columns(args[1], *(list(args[2:]) + [1, 0, 1][len(args) - 2:]),
                                         size=(args[0],) * 2 if isinstance(args[0], int)
                                         else args[0]))
    compare(lambda lib, t: modules[lib is torch](t), x)
