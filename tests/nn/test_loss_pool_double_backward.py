"""The first gradients of nll_loss (and so cross_entropy) and of average pooling are nodes with
an edge to the input, as torch's ``nll_loss_backward`` and ``avg_pool2d_backward`` take it:
under create_graph the gradient requires grad even though it is constant in the input, its
derivative there is zero (not an error, not None), and the 3-D nodes carry torch's 3-D names.
1-D pooling's squeeze is undone by ``unsqueeze`` as in torch. Every case runs in torch and
hookgrad on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import graph_names


def _target(lib, values):
    return lib.tensor(values, dtype=lib.int64)


CASES = {
    "nll": ((3, 4), lambda lib, t: lib.nn.functional.nll_loss(t, _target(lib, [0, 2, 3]))),
    "nll_weighted_sum": ((3, 4), lambda lib, t: lib.nn.functional.nll_loss(
        t, _target(lib, [0, 2, 3]), weight=lib.tensor([1.0, 2.0, 0.5, 3.0], dtype=lib.float64),
        reduction="sum")),
    "nll_none_ignored": ((3, 4), lambda lib, t: lib.nn.functional.nll_loss(
        t, _target(lib, [0, -100, 3]), reduction="none")),
    "nll_2d": ((2, 3, 2, 2), lambda lib, t: lib.nn.functional.nll_loss(
        t, _target(lib, [[[0, 1], [2, 0]], [[1, 1], [0, 2]]]))),
    "nll_5d": ((2, 3, 2, 1, 2), lambda lib, t: lib.nn.functional.nll_loss(
        t, lib.zeros(2, 2, 1, 2, dtype=lib.int64))),
    "cross_entropy": ((3, 4), lambda lib, t: lib.nn.functional.cross_entropy(
        t, _target(lib, [0, 2, 3]))),
    "avg_pool1d": ((1, 2, 6), lambda lib, t: lib.nn.functional.avg_pool1d(t, 2)),
    "avg_pool2d": ((1, 2, 4, 4), lambda lib, t: lib.nn.functional.avg_pool2d(
        t, 2, 1, 1, ceil_mode=True)),
    "avg_pool3d": ((1, 2, 4, 4, 4), lambda lib, t: lib.nn.functional.avg_pool3d(t, 2)),
    "adaptive_avg_pool1d": ((1, 2, 6), lambda lib, t: lib.nn.functional.adaptive_avg_pool1d(
        t, 4)),
    "adaptive_avg_pool2d": ((1, 2, 5, 5), lambda lib, t: lib.nn.functional.adaptive_avg_pool2d(
        t, 3)),
    "adaptive_avg_pool3d": ((1, 2, 4, 5, 4),
                            lambda lib, t: lib.nn.functional.adaptive_avg_pool3d(t, 3)),
}




def _run(lib, name):
    shape, function = CASES[name]
    count = int(np.prod(shape))
    x = lib.tensor(np.linspace(-1, 1, count).reshape(shape), requires_grad=True)
    y = function(lib, x)
    grad_output = lib.tensor(np.linspace(0.5, 2.0, y.numel()).reshape(tuple(y.shape)),
                             requires_grad=True)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    # the gradient's own derivatives: with respect to x (zero through the node) and to the
    # incoming gradient, then once more through both
    second = lib.autograd.grad((grad * grad * x).sum(), [x, grad_output], create_graph=True)
    (third,) = lib.autograd.grad(sum((s * s).sum() for s in second), x)
    return [graph_names(grad.grad_fn, 2), grad.requires_grad,
            [(graph_names(s.grad_fn, 2), s.detach().numpy().copy()) for s in second],
            third.numpy().copy()]


@pytest.mark.parametrize("name", sorted(CASES))
def test_first_gradient_graph_and_derivatives_match_torch(name):
    ours, theirs = (_run(lib, name) for lib in (hookgrad, torch))
    assert ours[:2] == theirs[:2]
    for (our_graph, our_value), (their_graph, their_value) in zip(ours[2], theirs[2]):
        assert our_graph == their_graph
        np.testing.assert_allclose(our_value, their_value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["nll", "avg_pool2d", "adaptive_avg_pool2d"])
def test_derivative_with_respect_to_the_input_is_zeros(name):
    values = []
    for lib in (hookgrad, torch):
        shape, function = CASES[name]
        x = lib.tensor(np.linspace(-1, 1, int(np.prod(shape))).reshape(shape),
                       requires_grad=True)
        (grad,) = lib.autograd.grad(function(lib, x).sum(), x, create_graph=True)
        (again,) = lib.autograd.grad(grad.sum(), x)
        values.append((grad.requires_grad, again.numpy().copy()))
    assert values[0][0] == values[1][0]
    np.testing.assert_array_equal(values[0][1], values[1][1])
