"""grid_sample and affine_grid against torch: every mode x padding_mode x align_corners in 2-D
(and 3-D where torch has them), grids reaching outside [-1, 1], float64/float32, gradients in
input and grid, double backward, errors and warnings."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error, compare, double_backward


def F(lib):
    return lib.nn.functional


MODES = ["bilinear", "nearest", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


def _grid(rng, shape, reach=1.4):
    return rng.uniform(-reach, reach, shape)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d(rng, mode, padding_mode, align_corners):
    x, grid = rng.standard_normal((2, 3, 5, 4)), _grid(rng, (2, 6, 7, 2), reach=2.6)

    def fn(lib, x, g):
        return F(lib).grid_sample(x, g, mode, padding_mode, align_corners)

    compare(fn, x, grid)
    # float32 grid gradients of bicubic cancel to ~1e-6 where the true value is ~0
    compare(fn, x.astype(np.float32), grid.astype(np.float32), atol=1e-4)
    double_backward(fn, x, grid)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(rng, mode, padding_mode, align_corners):
    x, grid = rng.standard_normal((2, 2, 3, 4, 5)), _grid(rng, (2, 2, 3, 4, 3))

    def fn(lib, x, g):
        return F(lib).grid_sample(x, g, mode, padding_mode, align_corners)

    compare(fn, x, grid)
    double_backward(fn, x, grid)


def test_grid_sample_exact_corners_and_size_one(rng):
    """Grid points exactly on the border (gradients at the clip points) and 1-pixel inputs."""
    lines = np.linspace(-1, 1, 5)
    grid = np.stack(np.meshgrid(lines, lines, indexing="xy"), -1)[None]
    x = rng.standard_normal((1, 2, 5, 5))
    for padding_mode in PADDINGS:
        for align in (False, True):
            compare(lambda lib, x, g: F(lib).grid_sample(x, g, "bilinear", padding_mode, align),
                    x, grid)
    single = rng.standard_normal((1, 1, 1, 1))
    for padding_mode in PADDINGS:
        compare(lambda lib, x, g: F(lib).grid_sample(x, g, "bilinear", padding_mode, True),
                single, _grid(rng, (1, 2, 3, 2)))


def test_grid_sample_nearest_grid_gradient_is_zeros(rng):
    grids = []
    for lib in (hookgrad, torch):
        grid = lib.tensor(_grid(rng, (1, 2, 2, 2)), requires_grad=True)
        F(lib).grid_sample(lib.ones(1, 1, 3, 3, dtype=lib.float64), grid, "nearest",
                           align_corners=True).sum().backward()
        grids.append(grid.grad)
    assert_close(grids[0], grids[1])
    names = [F(lib).grid_sample(lib.ones(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3,
                                                                  requires_grad=True),
                                "nearest", align_corners=True).grad_fn.name()
             for lib in (hookgrad, torch)]
    assert names[0] == names[1]


def test_grid_sample_default_align_corners_warns(rng):
    x, grid = rng.standard_normal((1, 1, 3, 3)), _grid(rng, (1, 2, 2, 2))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        ours = F(hookgrad).grid_sample(hookgrad.tensor(x), hookgrad.tensor(grid))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = F(torch).grid_sample(torch.tensor(x), torch.tensor(grid))
    assert_close(ours, theirs)


GRID_ERRORS = [
    ((1, 2, 3, 3), (1, 2, 2, 2), dict(mode="linear")),
    ((1, 2, 3, 3), (1, 2, 2, 2), dict(padding_mode="circular")),
    ((1, 2, 3, 3), (2, 2, 2, 2), {}),
    ((1, 2, 3, 3), (1, 2, 2, 3), {}),
    ((1, 2, 3, 3), (1, 2, 2, 2, 2), {}),
    ((1, 2, 3, 3, 3), (1, 2, 2, 2, 3), dict(mode="bicubic")),
    ((1, 2, 3), (1, 2, 1), {}),
    ((1, 2, 0, 3), (1, 2, 2, 2), {}),
]


@pytest.mark.parametrize("input_shape,grid_shape,kwargs", GRID_ERRORS)
def test_grid_sample_errors(rng, input_shape, grid_shape, kwargs):
    x, grid = rng.standard_normal(input_shape), rng.standard_normal(grid_shape)
    assert_same_error(lambda lib: F(lib).grid_sample(lib.tensor(x), lib.tensor(grid),
                                                     align_corners=False, **kwargs))


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 4), (2, 1, 3, 4, 2), (1, 2, 1, 1, 5)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(rng, size, align_corners):
    nd = len(size) - 2
    theta = rng.standard_normal((size[0], nd, nd + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, t: F(lib).affine_grid(t, size, align_corners), theta)
        compare(lambda lib, t: F(lib).affine_grid(t, size, align_corners),
                theta.astype(np.float32))
        double_backward(lambda lib, t: F(lib).affine_grid(t, size, align_corners), theta)


def test_affine_grid_then_grid_sample(rng):
    """The usual spatial-transformer pipeline, gradients into theta and the image."""
    x, theta = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((2, 2, 3)) * 0.5

    def fn(lib, x, t):
        grid = F(lib).affine_grid(t, [2, 3, 4, 7], align_corners=False)
        return F(lib).grid_sample(x, grid, align_corners=False)

    compare(fn, x, theta)
    double_backward(fn, x, theta)


AFFINE_ERRORS = [((1, 2, 3), [1, 1, 4], True), ((1, 3, 3), [1, 1, 4, 4], True),
                 ((1, 2, 3), [1, 1, 4, 4, 4], True), ((1, 2, 3), [1, 1, 0, 4], False),
                 ((2, 3), [1, 1, 4, 4], True)]


@pytest.mark.parametrize("theta_shape,size,align_corners", AFFINE_ERRORS)
def test_affine_grid_errors(rng, theta_shape, size, align_corners):
    theta = rng.standard_normal(theta_shape)
    assert_same_error(lambda lib: F(lib).affine_grid(lib.tensor(theta), size, align_corners))
    assert_same_error(lambda lib: F(lib).affine_grid(lib.ones((1, 2, 3), dtype=lib.int64),
                                                     [1, 1, 2, 2], False))
