"""Conv1d/2d/3d with padding_mode 'reflect', 'replicate' and 'circular' against torch: the layer
pads with F.pad in that mode and convolves without padding, so values, the gradients of input,
weight and bias, and the graph (the pad's node under the convolution's) are torch's; a padding
the mode cannot make raises torch's error type."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, graph_edges, raised

MODES = ("reflect", "replicate", "circular")

# (layer, input shape, in, out, kernel, keyword settings)
LAYERS = {
    "1d": ("Conv1d", (2, 3, 9), 3, 4, 3, {"padding": 2}),
    "1d_stride_dilation": ("Conv1d", (2, 3, 11), 3, 2, 3, {"padding": 3, "stride": 2,
                                                            "dilation": 2}),
    "1d_unbatched": ("Conv1d", (3, 8), 3, 2, 3, {"padding": 1}),
    "2d": ("Conv2d", (2, 3, 7, 6), 3, 4, 3, {"padding": 1}),
    "2d_tuple": ("Conv2d", (1, 2, 7, 8), 2, 3, (3, 2), {"padding": (2, 1), "bias": False}),
    "2d_same_even_kernel": ("Conv2d", (2, 2, 6, 7), 2, 2, (4, 3), {"padding": "same"}),
    "2d_valid": ("Conv2d", (1, 2, 6, 6), 2, 2, 3, {"padding": "valid"}),
    "2d_groups": ("Conv2d", (2, 4, 6, 6), 4, 6, 3, {"padding": 1, "groups": 2}),
    "3d": ("Conv3d", (1, 2, 5, 5, 4), 2, 3, 3, {"padding": 1}),
}


def build(lib, name, mode):
    layer, _, c_in, c_out, kernel, settings = LAYERS[name]
    lib.manual_seed(0)
    return getattr(lib.nn, layer)(c_in, c_out, kernel, padding_mode=mode, dtype=lib.float64,
                                  **settings)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", list(LAYERS))
def test_padding_mode_as_torch(rng, name, mode):
    x = rng.standard_normal(LAYERS[name][1])
    results = []
    for lib in (hookgrad, torch):
        layer = build(lib, name, mode)
        inputs = lib.tensor(x, requires_grad=True)
        out = layer(inputs)
        out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
        grads = [inputs.grad] + [p.grad for p in layer.parameters()]
        results.append((out, grads, graph_edges(out.grad_fn), repr(layer)))
    (ours, our_grads, our_graph, our_repr), (theirs, their_grads, their_graph, their_repr) = \
        results
    assert our_graph == their_graph
    assert our_repr == their_repr
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs)
    assert len(our_grads) == len(their_grads)
    for a, b in zip(our_grads, their_grads):
        assert_close(a, b)


@pytest.mark.parametrize("mode", MODES)
def test_float32_padding_mode(rng, mode):
    x = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
    outs = []
    for lib in (hookgrad, torch):
        lib.manual_seed(0)
        layer = lib.nn.Conv2d(3, 2, 3, padding=1, padding_mode=mode)
        outs.append(layer(lib.tensor(x)))
    assert outs[0].dtype == hookgrad.float32
    assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)


def test_a_padding_too_wide_for_reflect_raises_as_torch():
    def run(lib):
        layer = lib.nn.Conv1d(1, 1, 3, padding=4, padding_mode="reflect")
        return layer(lib.ones(1, 1, 3))
    assert raised(run, hookgrad) == raised(run, torch)
