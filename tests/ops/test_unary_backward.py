"""sigmoid's, tanh's and gelu's gradients under ``create_graph`` are one node each, as in torch
(``SigmoidBackwardBackward0``, ``TanhBackwardBackward0``, ``GeluBackwardBackward0``; tanhshrink
is composed, so its gradient holds tanh's node), saving the incoming gradient and the result
(or gelu's input): the graph's nodes, the saved values, second and third derivatives, in-place
writes to a saved operand and the first gradient's low-precision values are compared with torch
on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import backward_outcome, graph_names

X = [[0.687, -1.112, 0.0], [0.35, -3.5, 0.129], [-0.227, 2.5, -0.852], [-0.276, 0.664, 6.0]]
GRAD_OUTPUT = [[1.0, -0.5, 2.0], [0.3, 1.5, -1.0], [0.25, 0.75, 1.25], [-2.0, 0.5, 1.0]]
WEIGHT = [[0.5, -1.0, 2.0]] * 4

OPS = {
    "sigmoid": lambda lib, t: lib.sigmoid(t),
    "sigmoid_": lambda lib, t: (t * 1.0).sigmoid_(),
    "tanh": lambda lib, t: lib.tanh(t),
    "tanh_": lambda lib, t: (t * 1.0).tanh_(),
    "tanhshrink": lambda lib, t: lib.nn.functional.tanhshrink(t),
    "gelu": lambda lib, t: lib.nn.functional.gelu(t),
    "gelu_tanh": lambda lib, t: lib.nn.functional.gelu(t, approximate="tanh"),
}


def _graph(lib, op):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=lib.float64, requires_grad=True)
    (grad,) = lib.autograd.grad(OPS[op](lib, x), x, grad_output, create_graph=True)
    return x, grad_output, grad




@pytest.mark.parametrize("op", sorted(OPS))
def test_first_gradient_graph_matches_torch(op):
    graphs = [graph_names(_graph(lib, op)[2].grad_fn, 3) for lib in (hookgrad, torch)]
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu", "gelu_tanh"])
def test_saved_values_match_torch(op):
    saved = []
    for lib in (hookgrad, torch):
        x, _, grad = _graph(lib, op)
        node = grad.grad_fn
        if op.startswith("gelu"):
            assert node._saved_self is x
            values = [node._saved_approximate, node._saved_self.detach().numpy().copy()]
        else:
            values = [node._saved_output.detach().numpy().copy()]
        saved.append(values + [node._saved_grad_output.detach().numpy().copy()])
    for ours, theirs in zip(*saved):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def _derivatives(lib, op):
    """The first gradient, its derivatives with respect to grad_output and x, and the
    derivatives of those with respect to both again."""
    x, grad_output, grad = _graph(lib, op)
    weight = lib.tensor(WEIGHT, dtype=lib.float64)
    second = lib.autograd.grad(grad, [grad_output, x], weight, create_graph=True)
    third = lib.autograd.grad((second[0] * second[1]).sum(), [grad_output, x], allow_unused=True)
    return [grad, *second, *third]


@pytest.mark.parametrize("op", sorted(OPS))
def test_second_and_third_derivatives_match_torch(op):
    ours, theirs = (_derivatives(lib, op) for lib in (hookgrad, torch))
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert a.requires_grad == b.requires_grad
        assert (a.grad_fn.name() if a.grad_fn else None) == \
            (b.grad_fn.name() if b.grad_fn else None)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                   atol=1e-15)


@pytest.mark.parametrize("op", sorted(OPS))
def test_gradcheck_and_gradgradcheck(op):
    x = hookgrad.tensor(X, dtype=hookgrad.float64, requires_grad=True)
    grad_output = hookgrad.tensor(GRAD_OUTPUT, dtype=hookgrad.float64, requires_grad=True)

    def first_gradient(t, g):
        return hookgrad.autograd.grad(OPS[op](hookgrad, t), t, g, create_graph=True)[0]

    assert hookgrad.autograd.gradcheck(first_gradient, (x, grad_output))
    assert hookgrad.autograd.gradgradcheck(first_gradient, (x, grad_output))


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu"])
@pytest.mark.parametrize("target", ["activation", "grad_output"])
def test_inplace_write_to_a_saved_operand_refuses(op, target):
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        hidden = x * 1.0
        y = OPS[op](lib, hidden)
        grad_output = lib.ones(4, 3, dtype=lib.float64, requires_grad=True) * 1.0
        (grad,) = lib.autograd.grad(y, [x], grad_output, create_graph=True)
        # the saved operand: gelu's input, or sigmoid's and tanh's result
        written = grad_output if target == "grad_output" else hidden if op == "gelu" else y
        with lib.no_grad():
            written[0:1] = 0.5
        outcomes.append(backward_outcome(grad))
    assert outcomes == ["refused", "refused"]


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_first_gradient_in_low_precision(op, dtype, create_graph):
    grads = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, dtype=getattr(lib, dtype)).t().requires_grad_()
        (grad,) = lib.autograd.grad(OPS[op](lib, x).sum(), x, create_graph=create_graph)
        grads.append((grad.stride(), grad.dtype, grad.detach().float().numpy()))
    assert grads[0][0] == grads[1][0]
    assert str(grads[0][1]) == str(grads[1][1])
    np.testing.assert_allclose(grads[0][2], grads[1][2], rtol=1e-6 if dtype == "float32" else 1e-2,
                               atol=1e-6)
