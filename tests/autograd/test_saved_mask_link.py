"""Under ``create_graph``, the gradient a masking formula (relu's ``threshold_backward``,
hardtanh's, leaky_relu's, max pooling's) sends to the saved tensor its mask was read from is
torch's ``zeros_like(grad)``: a zero that never requires grad, even when the gradient arriving
there does. It reaches a view's base after ``relu_`` through the view, so the base's gradient
must not require grad either. And the masked gradient itself depends on the saved tensor (it
requires grad through it), except for max pooling, whose second derivative reads the indices.
Every case runs in torch and hookgrad on the same inputs."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad

X = [[0.81, -0.263, 0.558], [-0.885, -1.052, 0.758], [-1.616, 1.168, 0.365]]
W = [[1.5, -2.0, 0.5]] * 3

VIEWS = {
    "whole": lambda t: t,
    "diagonal": lambda t: t.diagonal(),
    "row": lambda t: t[0],
    "transpose": lambda t: t.t(),
    "flat": lambda t: t.view(9),
    "columns": lambda t: t[:, 1:],
}

INPLACE = {
    "relu_": lambda lib, t: t.relu_(),
    "threshold_": lambda lib, t: lib.nn.functional.threshold_(t, 0.1, 2.0),
    "hardtanh_": lambda lib, t: lib.nn.functional.hardtanh_(t, -0.5, 0.5),
    "leaky_relu_": lambda lib, t: lib.nn.functional.leaky_relu_(t, 0.1),
    "sigmoid_": lambda lib, t: t.sigmoid_(),  # its formula reads the result: grad stays linked
}


def _summary(tensor):
    if tensor is None:
        return None
    return tensor.requires_grad, tensor.detach().numpy().copy()


def _base_gradient_after_view_inplace(lib, view, op):
    """The seed program's shape: an in-place activation on a view of h, a first-order
    gradient for an input of h, then the gradient of that reaching h itself."""
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    s = x.sin()
    h = x * (s.abs() + 1)
    part = VIEWS[view](h)
    INPLACE[op](lib, part)
    (grad,) = lib.autograd.grad(part.sum(), [s], create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note about backward(create_graph=True)
        grad.sum().backward(create_graph=True, inputs=[h])
    return _summary(grad), _summary(h.grad)


def _check(ours, theirs):
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if b is not None:
            assert a[0] == b[0], f"requires_grad hookgrad {a[0]} != torch {b[0]}"
            np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", sorted(INPLACE))
@pytest.mark.parametrize("view", sorted(VIEWS))
def test_gradient_reaching_the_base_through_a_mask(view, op):
    _check(_base_gradient_after_view_inplace(hookgrad, view, op),
           _base_gradient_after_view_inplace(torch, view, op))


ACTIVATIONS = {
    "relu": lambda lib, v: v.relu(),
    "relu_": lambda lib, v: v.relu_(),
    "threshold": lambda lib, v: lib.nn.functional.threshold(v, 0.1, 2.0),
    "hardtanh": lambda lib, v: lib.nn.functional.hardtanh(v, -0.5, 0.5),
    "hardtanh_": lambda lib, v: lib.nn.functional.hardtanh_(v, -0.5, 0.5),
    "relu6": lambda lib, v: lib.nn.functional.relu6(v),
    "hardshrink": lambda lib, v: lib.nn.functional.hardshrink(v, 0.5),
    "softshrink": lambda lib, v: lib.nn.functional.softshrink(v, 0.5),
    "leaky_relu": lambda lib, v: lib.nn.functional.leaky_relu(v, 0.1),
    "leaky_relu_": lambda lib, v: lib.nn.functional.leaky_relu_(v, 0.1),
    "max_pool1d": lambda lib, v: lib.nn.functional.max_pool1d(v[None], 2, 1)[0].repeat(1, 2)[:, :3],
    "adaptive_max_pool1d": lambda lib, v: lib.nn.functional.adaptive_max_pool1d(v[None], 3)[0],
}


def _second_order(lib, name):
    """The gradient of a masked first-order gradient with respect to the input (through the
    saved tensor: a zero) and to a weight the incoming gradient was scaled by (through the mask:
    it requires grad when torch's formula reads the saved tensor)."""
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(W, dtype=lib.float64, requires_grad=True)
    y = ACTIVATIONS[name](lib, x * 2)
    (grad,) = lib.autograd.grad((y * w).sum(), [x], create_graph=True)
    gx, gw = lib.autograd.grad((grad * grad.detach()).sum(), [x, w], create_graph=True,
                               allow_unused=True)
    return _summary(grad), _summary(gx), _summary(gw)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_second_order_requires_grad_as_torch(name):
    _check(_second_order(hookgrad, name), _second_order(torch, name))


def _recorded_gradient(lib, name, input_requires_grad):
    """The first-order gradient's node, its edges and what it saves (seen by pack hooks),
    with the saved tensor requiring grad or only the incoming gradient doing so."""
    x = lib.tensor([[0.5, -1.0, 2.0], [-3.0, 0.25, 0.0]], dtype=lib.float64,
                   requires_grad=input_requires_grad)
    v = lib.ones(2, 3, dtype=lib.float64, requires_grad=True)
    source = x * 1 if input_requires_grad else x * v
    y = ACTIVATIONS[name](lib, source.clone())  # in-place ones leave source as it was
    packs = []

    def pack(tensor):
        packs.append(tuple(tensor.shape))
        return tensor

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        (grad,) = lib.autograd.grad(y, source if input_requires_grad else v, lib.ones_like(y),
                                    create_graph=True)
    node = grad.grad_fn
    edges = [None if edge is None else edge.name() for edge, _ in node.next_functions]
    return node.name(), edges, packs


@pytest.mark.parametrize("input_requires_grad", [True, False], ids=["input", "weight"])
@pytest.mark.parametrize("name", sorted(set(ACTIVATIONS) - {"max_pool1d",
                                                            "adaptive_max_pool1d"}))
def test_recorded_gradient_node_as_torch(name, input_requires_grad):
    assert _recorded_gradient(hookgrad, name, input_requires_grad) == \
        _recorded_gradient(torch, name, input_requires_grad)
