"""prelu's graph as torch records it: the weight viewed to the input's rank, both first
gradients from one ``PreluKernelBackwardBackward0`` node (saving grad_output, the input and the
weight), and its derivatives with torch's branches (x >= 0 takes the first; an undefined
incoming gradient gives zeros, not None). Every case runs in torch and hookgrad."""
import numpy as np
import pytest
import torch

import hookgrad

# a zero on purpose: the first gradients take the slope there, their derivatives the other
# branch, as torch's formulas do
X = [[0.5, -1.0, 0.0], [-0.3, 0.7, -2.0]]
GRAD_OUTPUT = [[1.0, -0.5, 2.0], [0.3, 1.5, -1.0]]
WEIGHTS = {"one": [0.25], "per_channel": [0.25, -0.5, 1.5], "scalar": 0.3}
SHAPES = [(), (3,), (2, 3), (2, 3, 4), (1, 3, 2, 2)]


def _nodes(node, depth):
    if node is None:
        return None
    if depth == 0:
        return node.name()
    return [node.name(), [_nodes(child, depth - 1) for child, _ in node.next_functions]]


# one slope per channel needs a channel dimension
@pytest.mark.parametrize("shape, weight", [(shape, weight) for shape in SHAPES
                                           for weight in sorted(WEIGHTS)
                                           if weight != "per_channel" or len(shape) >= 2])
def test_forward_views_the_weight_as_torch(shape, weight):
    seen = []
    for lib in (hookgrad, torch):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        w = lib.tensor(WEIGHTS[weight], dtype=lib.float64, requires_grad=True)
        node = lib.nn.functional.prelu(x, w).grad_fn
        edge = node.next_functions[1][0]
        sizes = getattr(edge, "_saved_self_sym_sizes", None)
        seen.append((_nodes(node, 2), tuple(node._saved_weight.shape),
                     None if sizes is None else tuple(sizes)))
    assert seen[0] == seen[1]


def _first(lib, weight, dtype="float64"):
    x = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
    w = lib.tensor(WEIGHTS[weight], dtype=getattr(lib, dtype), requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.nn.functional.prelu(x, w)
    grad_x, grad_w = lib.autograd.grad(y, [x, w], grad_output, create_graph=True)
    return (x, w, grad_output), (grad_x, grad_w)


@pytest.mark.parametrize("weight", sorted(WEIGHTS))
def test_first_gradients_are_one_node(weight):
    seen = []
    for lib in (hookgrad, torch):
        _, (grad_x, grad_w) = _first(lib, weight)
        node = grad_x.grad_fn
        saved = [node._saved_grad_output, node._saved_self, node._saved_weight]
        seen.append((_nodes(grad_x.grad_fn, 3), _nodes(grad_w.grad_fn, 4),
                     [s.detach().numpy().copy() for s in saved],
                     grad_x.detach().numpy().copy(), grad_w.detach().numpy().copy()))
    ours, theirs = seen
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2] + list(ours[3:]), theirs[2] + list(theirs[3:])):
        np.testing.assert_allclose(a, b, rtol=1e-15, atol=1e-15)


def _describe(tensors):
    return [None if t is None else (t.requires_grad, t.grad_fn.name() if t.grad_fn else None,
                                    t.detach().numpy().copy()) for t in tensors]


def _second(lib, weight, used):
    inputs, (grad_x, grad_w) = _first(lib, weight)
    a = lib.tensor([[0.3, 0.7, 1.1], [-0.2, 0.4, 0.9]], dtype=lib.float64)
    b = lib.tensor(np.linspace(2.0, 5.0, grad_w.numel()).reshape(tuple(grad_w.shape)))
    loss = {"both": (grad_x * a).sum() + (grad_w * b).sum(), "grad_x": (grad_x * a).sum(),
            "grad_w": (grad_w * b).sum()}[used]
    second = lib.autograd.grad(loss, list(inputs), allow_unused=True, create_graph=True)
    # third order, through whichever second derivatives carry a graph
    carried = [s for s in second if s is not None and s.requires_grad]
    third = []
    if carried:
        total = sum((s * s).sum() for s in carried)
        third = lib.autograd.grad(total, list(inputs), allow_unused=True)
    return _describe(second) + _describe(third)


@pytest.mark.parametrize("weight", sorted(WEIGHTS))
@pytest.mark.parametrize("used", ["both", "grad_x", "grad_w"])
def test_second_and_third_derivatives_match_torch(weight, used):
    ours, theirs = (_second(lib, weight, used) for lib in (hookgrad, torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("weight", sorted(WEIGHTS))
def test_gradcheck_and_gradgradcheck(weight):
    # away from the kink at 0, where the derivatives are one-sided
    x = hookgrad.tensor([[0.5, -1.0, 0.2], [-0.3, 0.7, -2.0]], dtype=hookgrad.float64,
                        requires_grad=True)
    w = hookgrad.tensor(WEIGHTS[weight], dtype=hookgrad.float64, requires_grad=True)
    function = hookgrad.nn.functional.prelu
    assert hookgrad.autograd.gradcheck(function, (x, w))
    assert hookgrad.autograd.gradgradcheck(function, (x, w))


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_gradient_layouts_and_values_follow_torch(dtype, create_graph):
    seen = []
    for lib in (hookgrad, torch):
        data = lib.tensor(np.array(X).T.copy(), dtype=getattr(lib, dtype))
        x = data.t().requires_grad_()  # a transposed input
        w = lib.tensor([0.25, -0.5, 1.5], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.prelu(x, w)
        grad_x, grad_w = lib.autograd.grad((y * y).sum(), [x, w], create_graph=create_graph)
        seen.append([(g.stride(), str(g.dtype), g.detach().float().numpy().copy())
                     for g in (grad_x, grad_w)])
    for a, b in zip(*seen):
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-2 if dtype == "bfloat16" else 1e-6)
