"""Convolutions without a bias against torch: ConvolutionBackward0 keeps three edges (input,
weight, bias) with ``(None, 0)`` for the missing bias, a node hook sees three gradients, and
values, gradients and second derivatives are torch's."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, graph_edges

CALLS = {
    "conv2d": (lambda F, x, w: F.conv2d(x, w), (2, 3, 5, 5), (4, 3, 3, 3)),
    "conv2d_same": (lambda F, x, w: F.conv2d(x, w, padding="same"), (2, 3, 5, 5), (4, 3, 3, 3)),
    "conv1d": (lambda F, x, w: F.conv1d(x, w, stride=2), (2, 3, 7), (4, 3, 3)),
    "conv1d_unbatched": (lambda F, x, w: F.conv1d(x, w), (3, 7), (4, 3, 3)),
    "conv3d_groups": (lambda F, x, w: F.conv3d(x, w, groups=2), (1, 4, 3, 3, 3), (2, 2, 2, 2, 2)),
    "conv_transpose2d": (lambda F, x, w: F.conv_transpose2d(x, w), (2, 3, 4, 4), (3, 2, 3, 3)),
}


@pytest.mark.parametrize("weight_grad", [True, False])
@pytest.mark.parametrize("name", list(CALLS))
def test_convolution_without_bias_keeps_an_empty_bias_edge(rng, name, weight_grad):
    call, x_shape, w_shape = CALLS[name]
    x_array, w_array = rng.standard_normal(x_shape), rng.standard_normal(w_shape)
    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(x_array, requires_grad=True)
        w = lib.tensor(w_array, requires_grad=weight_grad)
        out = call(lib.nn.functional, x, w)
        node = out.grad_fn
        while node.name() != "ConvolutionBackward0":  # unbatched: under a squeeze
            node = node.next_functions[0][0]
        seen = []
        node.register_hook(lambda grad_inputs, grad_outputs: seen.append(
            tuple(g is not None for g in grad_inputs)))
        graph = graph_edges(out.grad_fn)
        v = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), requires_grad=True)
        grads = lib.autograd.grad((out * v).sum(), [x], create_graph=True)
        second = lib.autograd.grad(grads[0].pow(2).sum(),
                                   [x, v] + ([w] if weight_grad else []), allow_unused=True)
        results.append((graph, seen, out, grads[0], second))
    (h_graph, h_seen, h_out, h_grad, h_second), (t_graph, t_seen, t_out, t_grad,
                                                 t_second) = results
    assert h_graph == t_graph
    assert h_seen == t_seen
    assert_close(h_out, t_out, rtol=1e-10, atol=1e-12)
    assert_close(h_grad, t_grad, rtol=1e-9, atol=1e-11)
    for h, t in zip(h_second, t_second):
        if t is None:
            assert h is None or not np.any(h.detach().numpy())
        else:
            assert_close(h, t, rtol=1e-9, atol=1e-10)


def test_conv_module_without_bias_matches_torch_graph(rng):
    x_array = rng.standard_normal((2, 3, 5, 5))
    graphs = []
    for lib in (hookgrad, torch):
        lib.manual_seed(0)
        conv = lib.nn.Conv2d(3, 2, 3, bias=False, dtype=lib.float64)
        graphs.append(graph_edges(conv(lib.tensor(x_array, requires_grad=True)).grad_fn))
    assert graphs[0] == graphs[1]
