"""torch.grid_sampler / grid_sampler_2d / grid_sampler_3d (integer mode codes),
affine_grid_generator, embedding_bag (the four results) and embedding_renorm_ against torch."""
import numpy as np
import pytest
import torch

import hookgrad
from tests.conftest import assert_close, assert_same_error, compare, compare_double_backward


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align", [True, False])
def test_grid_sampler_2d_codes_match_torch(mode, padding, align):
    rng = np.random.default_rng(0)
    x, grid = rng.standard_normal((2, 2, 4, 5)), rng.uniform(-1.2, 1.2, (2, 3, 3, 2))
    compare(lambda lib, x, g: lib.grid_sampler(x, g, mode, padding, align), x, grid,
            requires_grad=[True, mode != 1])
    compare(lambda lib, x, g: lib.grid_sampler_2d(x, g, mode, padding, align), x, grid,
            requires_grad=[True, mode != 1])


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_3d_codes_match_torch(mode, padding):
    rng = np.random.default_rng(1)
    x, grid = rng.standard_normal((1, 2, 3, 4, 5)), rng.uniform(-1.1, 1.1, (1, 2, 2, 3, 3))
    for name in ("grid_sampler", "grid_sampler_3d"):
        compare(lambda lib, x, g: getattr(lib, name)(x, g, mode, padding, False), x, grid,
                requires_grad=[True, mode != 1])


def test_grid_sampler_double_backward():
    rng = np.random.default_rng(2)
    x, grid = rng.standard_normal((1, 2, 4, 4)), rng.uniform(-1, 1, (1, 2, 3, 2))
    compare_double_backward(lambda lib, x, g: lib.grid_sampler(x, g, 0, 1, False), x, grid)


@pytest.mark.parametrize("call", [
    lambda lib, x, x3, g, g3: lib.grid_sampler_3d(x3, g3, 2, 0, False),
    lambda lib, x, x3, g, g3: lib.grid_sampler_2d(x3, g3, 0, 0, False),
    lambda lib, x, x3, g, g3: lib.grid_sampler_3d(x, g, 0, 0, False),
    lambda lib, x, x3, g, g3: lib.grid_sampler(x, g3, 0, 0, False),
    lambda lib, x, x3, g, g3: lib.grid_sampler(x3, g3[..., :2], 0, 0, False),
])
def test_grid_sampler_errors_match_torch(call):
    def run(lib):
        return call(lib, lib.zeros(1, 2, 4, 5), lib.zeros(1, 2, 3, 4, 5), lib.zeros(1, 3, 3, 2),
                    lib.zeros(1, 2, 2, 2, 3))
    assert_same_error(run)


@pytest.mark.parametrize("size,shape", [([2, 3, 4, 5], (2, 2, 3)), ([2, 1, 3, 4, 5], (2, 3, 4)),
                                        ([1, 1, 1, 3], (1, 2, 3))])
@pytest.mark.parametrize("align", [True, False])
def test_affine_grid_generator_matches_torch(size, shape, align):
    theta = np.random.default_rng(3).standard_normal(shape)
    hg_out, th_out = compare(lambda lib, t: lib.affine_grid_generator(t, size, align), theta)
    hg_node, th_node = hg_out[0].grad_fn, th_out[0].grad_fn
    assert hg_node.name() == th_node.name()
    assert tuple(hg_node._saved_size) == tuple(th_node._saved_size)
    assert hg_node._saved_align_corners == th_node._saved_align_corners
    compare_double_backward(lambda lib, t: lib.affine_grid_generator(t, size, align) ** 2, theta)


@pytest.mark.parametrize("size,shape", [([2, 3, 4], (2, 2, 3)), ([3, 3, 4, 5], (2, 2, 3)),
                                        ([2, 3, 4, 5, 6], (2, 2, 3))])
def test_affine_grid_generator_errors_match_torch(size, shape):
    assert_same_error(lambda lib: lib.affine_grid_generator(lib.zeros(shape), size, False))


INDICES, OFFSETS = [1, 2, 4, 5, 4, 3, 2, 0], [0, 3, 3, 6]


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("include_last", [False, True])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_bag_four_results_match_torch(mode, include_last, padding_idx, dtype):
    weight = np.random.default_rng(4).standard_normal((6, 3)).astype(dtype)

    def run(lib, w):
        return lib.embedding_bag(w, lib.tensor(INDICES), lib.tensor(OFFSETS), False, mode,
                                 False, None, include_last, padding_idx)

    # with include_last_offset, INDICES run on past the final offset: torch's float32 kernels
    # and its generic one treat those differently, and hookgrad follows each
    compare(run, weight)


@pytest.mark.parametrize("mode", [0, 1])
def test_embedding_bag_per_sample_weights_and_freq_scaling(mode):
    rng = np.random.default_rng(5)
    weight, per_sample = rng.standard_normal((6, 3)), rng.standard_normal(8)

    def run(lib, w, p):
        return lib.embedding_bag(w, lib.tensor(INDICES), lib.tensor(OFFSETS), True, mode, False,
                                 p if mode == 0 else None)

    compare(run, weight, per_sample, requires_grad=[True, mode == 0])


def test_embedding_bag_int32_indices():
    weight = np.random.default_rng(6).standard_normal((6, 3))
    compare(lambda lib, w: lib.embedding_bag(w, lib.tensor(INDICES, dtype=lib.int32),
                                             lib.tensor(OFFSETS, dtype=lib.int32), False, 1),
            weight)


@pytest.mark.parametrize("call", [
    lambda lib, w: lib.embedding_bag(w, lib.tensor(INDICES), lib.tensor(OFFSETS), False, 3),
    lambda lib, w: lib.embedding_bag(w, lib.tensor(INDICES), lib.tensor(OFFSETS), False, 1,
                                     False, lib.ones(8)),
    lambda lib, w: lib.embedding_bag(w, lib.tensor(INDICES).view(2, 4), lib.tensor([0, 4]),
                                     False, 0),
    lambda lib, w: lib.embedding_bag(w, lib.tensor(INDICES), None, False, 0),
])
def test_embedding_bag_errors_match_torch(call):
    assert_same_error(lambda lib: call(lib, lib.ones(6, 3)))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
@pytest.mark.parametrize("indices", [[0, 2, 2], [[0, 1], [4, 1]], [-1, 3]])
def test_embedding_renorm_matches_torch(norm_type, indices):
    weight = np.random.default_rng(7).standard_normal((5, 3)) * 2
    results = {}
    for lib in (hookgrad, torch):
        w = lib.tensor(weight.copy())
        result = lib.embedding_renorm_(w, lib.tensor(indices), 1.0, norm_type)
        assert result is w
        results[lib] = w
    assert_close(results[hookgrad], results[torch])


@pytest.mark.parametrize("call", [
    lambda lib: lib.embedding_renorm_(lib.ones(5, 3), lib.tensor([0, 5]), 0.5, 2.0),
    lambda lib: lib.embedding_renorm_(lib.ones(5, 3), lib.tensor([0.0]), 0.5, 2.0),
    lambda lib: lib.embedding_renorm_(lib.ones(5, 3, requires_grad=True), lib.tensor([0]),
                                      0.5, 2.0),
])
def test_embedding_renorm_errors_match_torch(call):
    assert_same_error(call)
