"""A leaf's first ``.grad`` under ``backward(create_graph=True)`` is always a recorded deep copy
of the gradient, as torch's AccumulateGrad makes it: ``CopyBackwards`` into the leaf's strides
when its memory is dense, a contiguous ``CloneBackward0`` otherwise (expanded or strided
leaves), and a gradient that is itself a leaf needing grad keeps its graph through the copy.
Later gradients add to it out of place. Each case runs in torch and hookgrad."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad


def _leaf(lib, kind):
    data = lib.arange(24, dtype=lib.float64).reshape(4, 6) / 10
    leaf = {
        "dense": lambda: data[:2, :3],
        "transposed": lambda: data.t(),
        "permuted": lambda: data.reshape(2, 3, 4).permute(2, 0, 1),
        "strided": lambda: data[:, ::2],
        "expanded": lambda: data[0, :3].expand(2, 3),
        "scalar": lambda: data[0, 1],
        "half": lambda: data.half(),
    }[kind]()
    return leaf.detach().clone() if kind in ("dense", "half") else leaf.detach()


def _describe(leaf):
    grad = leaf.grad
    node = grad.grad_fn
    children = [n.name() if n is not None else None for n, _ in node.next_functions] \
        if node is not None else None
    return (node.name() if node is not None else None, children, grad.stride(),
            grad.requires_grad, grad.detach().double().numpy().copy())


def _run(lib, kind, program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's warning about backward(create_graph=True)
        leaf = _leaf(lib, kind).requires_grad_()
        program(lib, leaf)
    return _describe(leaf)


PROGRAMS = {
    "square": lambda lib, x: (x * x).sum().backward(create_graph=True),
    "sigmoid": lambda lib, x: x.sigmoid().sum().backward(create_graph=True),
    "constant_grad": lambda lib, x: (x * 2).sum().backward(create_graph=True),
    "twice": lambda lib, x: [(x * x).sum().backward(create_graph=True) for _ in range(2)],
    "leaf_gradient": lambda lib, x: x.backward(
        lib.ones(x.shape, dtype=x.dtype, requires_grad=True), create_graph=True),
    "times_one": lambda lib, x: (x * 1).backward(
        lib.ones(x.shape, dtype=x.dtype, requires_grad=True), create_graph=True),
}
KINDS = ["dense", "transposed", "permuted", "strided", "expanded", "scalar", "half"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_first_grad_under_create_graph_is_torch_s_copy(kind, program):
    ours, theirs = (_run(lib, kind, PROGRAMS[program]) for lib in (hookgrad, torch))
    assert ours[:4] == theirs[:4]
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-12)


def test_the_copy_keeps_the_gradient_differentiable():
    results = []
    for lib in (hookgrad, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = _leaf(lib, "transposed").requires_grad_()
            x.sigmoid().sum().backward(create_graph=True)
            (second,) = lib.autograd.grad((x.grad * x.grad).sum(), x)
        results.append(second.numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
