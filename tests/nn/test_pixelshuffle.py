"""pixel_shuffle / pixel_unshuffle and their modules against torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error, compare, double_backward


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("shape,factor", [((1, 4, 2, 3), 2), ((2, 18, 3, 2), 3), ((8, 5, 1), 1),
                                          ((2, 3, 9, 2, 2), 3), ((4, 2, 2), 2)])
def test_pixel_shuffle(rng, shape, factor):
    x = rng.standard_normal(shape)
    compare(lambda lib, t: F(lib).pixel_shuffle(t, factor), x)
    compare(lambda lib, t: F(lib).pixel_shuffle(t, factor), x.astype(np.float32))
    double_backward(lambda lib, t: F(lib).pixel_shuffle(t, factor), x)


@pytest.mark.parametrize("shape,factor", [((1, 1, 4, 6), 2), ((2, 2, 6, 3), 3), ((3, 5, 2), 1),
                                          ((2, 1, 3, 4, 4), 2)])
def test_pixel_unshuffle(rng, shape, factor):
    x = rng.standard_normal(shape)
    compare(lambda lib, t: F(lib).pixel_unshuffle(t, factor), x)
    double_backward(lambda lib, t: F(lib).pixel_unshuffle(t, factor), x)


def test_pixel_shuffle_integer_and_names(rng):
    x = rng.integers(0, 9, (1, 8, 2, 2))
    compare(lambda lib, t: F(lib).pixel_shuffle(t, 2), x, grad=False)
    names = []
    for lib in (hookgrad, torch):
        t = lib.tensor(rng.standard_normal((1, 4, 2, 2)), requires_grad=True)
        names.append((F(lib).pixel_shuffle(t, 2).grad_fn.name(),
                      F(lib).pixel_unshuffle(t, 2).grad_fn.name()))
    assert names[0] == names[1]


@pytest.mark.parametrize("fn,shape,factor", [
    ("pixel_shuffle", (4, 2), 2), ("pixel_shuffle", (1, 6, 2, 2), 2),
    ("pixel_shuffle", (1, 4, 2, 2), 0), ("pixel_shuffle", (1, 4, 2, 2), -1),
    ("pixel_unshuffle", (4, 2), 2), ("pixel_unshuffle", (1, 1, 3, 4), 2),
    ("pixel_unshuffle", (1, 1, 4, 3), 2), ("pixel_unshuffle", (1, 1, 4, 4), 0),
    ("pixel_shuffle", (1, 4, 2, 2), 2.0)])
def test_pixel_shuffle_errors(rng, fn, shape, factor):
    x = rng.standard_normal(shape)
    assert_same_error(lambda lib: getattr(F(lib), fn)(lib.tensor(x), factor))


@pytest.mark.parametrize("name,factor", [("PixelShuffle", 2), ("PixelUnshuffle", 2)])
def test_pixel_shuffle_modules(rng, name, factor):
    modules = [getattr(lib.nn, name)(factor) for lib in (hookgrad, torch)]
    assert repr(modules[0]) == repr(modules[1])
    compare(lambda lib, t: modules[lib is torch](t), rng.standard_normal((2, 4, 4, 6)))
