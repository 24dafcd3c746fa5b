"""Max pooling keeps its workspaces bounded: the general path (padding, dilation, overlapping
windows, ceil_mode) takes window maxima and scatters gradients a slice of planes at a time, and
the tiling path builds its indices without int64 temporaries. Slices give the same values,
indices and gradients as one pass, and both match torch (first and second order)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, compare, compare_double_backward, traced_peak
from hookgrad.nn.ops import conv, pooling

GENERAL = [  # shape, kernel, stride, padding, dilation, ceil_mode: all miss the tiling path
    ((2, 3, 9, 8), 3, 2, 1, 1, False),
    ((2, 3, 9, 8), 3, 2, 1, 1, True),
    ((3, 2, 10, 7), (3, 2), 1, (1, 0), (2, 1), False),
    ((1, 4, 7, 7), 2, 3, 1, 1, True),
    ((2, 5, 6, 11), (2, 4), (1, 3), 0, 1, True),
    ((3, 5, 6), 3, 2, 1, 1, False),  # unbatched
]


@pytest.fixture(params=["one pass", "a plane at a time", "two planes at a time"])
def workspace(request, monkeypatch):
    if request.param == "a plane at a time":
        monkeypatch.setattr(conv, "WORKSPACE_BYTES", 1)
    elif request.param == "two planes at a time":
        monkeypatch.setattr(conv, "WORKSPACE_BYTES", 3000)
    return request.param


def pool(kernel, stride, padding, dilation, ceil_mode):
    return lambda lib, t: lib.nn.functional.max_pool2d(t, kernel, stride, padding, dilation,
                                                       ceil_mode, return_indices=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", GENERAL)
def test_general_path_in_slices_matches_torch(rng, workspace, case, dtype):
    shape, *geometry = case
    compare(pool(*geometry), rng.standard_normal(shape).astype(dtype))


@pytest.mark.parametrize("case", GENERAL[:3])
def test_general_path_in_slices_double_backward(rng, workspace, case):
    shape, *geometry = case
    compare_double_backward(pool(*geometry), rng.standard_normal(shape))


@pytest.mark.parametrize("case", [((2, 3, 8, 8), 2), ((2, 3, 9, 7), (2, 3))])
def test_tiled_path_in_slices_double_backward(rng, workspace, case):
    shape, kernel = case
    compare_double_backward(pool(kernel, kernel, 0, 1, False), rng.standard_normal(shape))


def test_slices_equal_one_pass_exactly(rng, monkeypatch):
    x = rng.standard_normal((4, 3, 11, 9)).astype(np.float32)
    grad = rng.standard_normal((4, 3, 6, 5)).astype(np.float32)

    def run():
        t = hookgrad.tensor(x, requires_grad=True)
        values, indices = hookgrad.nn.functional.max_pool2d(t, 3, 2, 1, ceil_mode=True,
                                                            return_indices=True)
        values.backward(hookgrad.tensor(grad))
        return values.detach().numpy(), indices.numpy(), t.grad.numpy()

    whole = run()
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", 1)
    for ours, reference in zip(run(), whole):
        np.testing.assert_array_equal(ours, reference)


def test_nan_and_ties_in_slices_match_torch(workspace):
    x = np.array([[[[np.nan, 5, 1, 0, np.nan, 2], [np.nan, 0, 2, np.nan, np.nan, 1],
                    [1, np.nan, 3, 4, 0, 0], [0, 1, 2, 3, 4, 5]]]] * 2)
    x[1, 0] = np.arange(24).reshape(4, 6) % 2  # the second sample: ties only
    compare(pool(3, 1, 1, 1, False), x)
    compare(pool(2, 1, 0, 2, True), x)


def test_general_path_backward_workspace_is_bounded(rng, monkeypatch):
    # a 3x3 stride-1 window copy is 9x the output, bincount's float64 sums 2x a float32 input:
    # with a small bound the step stays near input + output + gradients
    x = hookgrad.tensor(rng.standard_normal((16, 16, 32, 32)).astype(np.float32),
                        requires_grad=True)
    monkeypatch.setattr(conv, "WORKSPACE_BYTES", 1 << 16)

    def step():
        x.grad = None
        values = hookgrad.nn.functional.max_pool2d(x, 3, 1, 1)
        values.backward(hookgrad.ones_like(values))

    step()
    input_bytes = x.detach().numpy().nbytes
    # output, int64 indices, incoming gradient and input gradient: 5x the input; the window
    # copy of one pass alone would be 9x
    assert traced_peak(step) < 5.3 * input_bytes


def test_tiled_forward_makes_one_int64_array(rng):
    x = rng.standard_normal((8, 16, 64, 64)).astype(np.float32)
    peak = traced_peak(lambda: pooling._tile_max(x, (32, 32), (2, 2)))
    output = x.size // 4
    # values (4 bytes), indices (8 bytes), one-byte winners and one boolean mask at a time
    assert peak < output * (4 + 8 + 1 + 1) * 1.05


def test_channels_last_input_in_slices(rng, workspace):
    x = rng.standard_normal((2, 7, 9, 3))
    compare(lambda lib, t: pool(3, 2, 1, 1, False)(lib, t.permute(0, 3, 1, 2)), x)
    t = hookgrad.tensor(x).permute(0, 3, 1, 2)  # channels-last
    reference = torch.tensor(x).permute(0, 3, 1, 2)
    ours = hookgrad.nn.functional.max_pool2d(t, 3, 2, 1, return_indices=True)
    theirs = torch.nn.functional.max_pool2d(reference, 3, 2, 1, return_indices=True)
    for a, b in zip(ours, theirs):
        assert_close(a, b)
        assert a.stride() == b.stride()
