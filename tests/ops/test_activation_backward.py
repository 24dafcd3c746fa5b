"""softplus's and the elu family's gradients under ``create_graph`` are one node each, torch's
``SoftplusBackwardBackward0`` and ``EluBackwardBackward0``, that save the incoming gradient and
the activation's input (or an in-place elu's result): an in-place write to either makes a later
backward through the gradient refuse, and its derivatives with respect to both are torch's.
Every case runs in torch and hookgrad on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import backward_outcome

X = [[0.687, -1.112, 0.199], [0.35, -1.117, 0.129], [-0.227, 0.5, 12.0], [-0.276, 0.664, -30.0]]
GRAD_OUTPUT = [[1.0, -0.5, 2.0], [0.3, 1.5, -1.0], [0.25, 0.75, 1.25], [-2.0, 0.5, 1.0]]
# beta x == threshold at x = 0.5 (beta 2, threshold 1): the first gradient takes the sigmoid
# there, its derivative with respect to x is already zero
SETTINGS = [(1.0, 20.0), (2.0, 1.0), (0.5, 3.0), (-1.5, 2.0)]


def _graph(lib, beta, threshold):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=lib.float64, requires_grad=True)
    y = lib.nn.functional.softplus(x, beta=beta, threshold=threshold)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    return x, grad_output, grad


@pytest.mark.parametrize("beta, threshold", SETTINGS)
def test_first_gradient_is_one_node_saving_both(beta, threshold):
    for lib in (hookgrad, torch):
        x, grad_output, grad = _graph(lib, beta, threshold)
        node = grad.grad_fn
        assert node.name() == "SoftplusBackwardBackward0"
        assert [type(n).__name__ for n, _ in node.next_functions] == ["AccumulateGrad"] * 2
        assert (node._saved_beta, node._saved_threshold) == (beta, threshold)
        assert node._saved_self is not None and node._saved_grad_output is not None


@pytest.mark.parametrize("beta, threshold", SETTINGS)
def test_second_derivatives_match_torch(beta, threshold):
    results = []
    for lib in (hookgrad, torch):
        x, grad_output, grad = _graph(lib, beta, threshold)
        weight = lib.tensor([[0.5, -1.0, 2.0]] * 4, dtype=lib.float64)
        pair = lib.autograd.grad(grad, [grad_output, x], weight, create_graph=True)
        results.append([(p.requires_grad, p.detach().numpy().copy()) for p in pair]
                       + [grad.detach().numpy().copy()])
    ours, theirs = results
    for a, b in zip(ours[:2], theirs[:2]):
        assert a[0] == b[0]
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("target", ["input", "grad_output"])
def test_inplace_write_to_a_saved_operand_refuses(target):
    """The fuzzer's program: after the first gradient, softplus's input (or the incoming
    gradient) is rewritten in place; a backward through the gradient must then refuse."""
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, dtype=lib.float64, requires_grad=True)
        hidden = lib.nn.functional.gelu(x)
        y = lib.nn.functional.softplus(hidden)
        grad_output = lib.ones(4, 3, dtype=lib.float64, requires_grad=True) * 1.0
        (grad,) = lib.autograd.grad(y, [x], grad_output, create_graph=True)
        written = hidden if target == "input" else grad_output
        written[0:1] = lib.tensor([-0.427, -1.23, -1.5], dtype=lib.float64)
        try:
            grad.select(1, 2).sum().backward()
            outcomes.append("ok")
        except RuntimeError as error:
            assert "modified by an inplace operation" in str(error)
            outcomes.append("refused")
    assert outcomes == ["refused", "refused"]


@pytest.mark.parametrize("beta, threshold", [(1.0, 20.0), (2.0, 1.0)])
def test_gradgradcheck(beta, threshold):
    x = hookgrad.tensor([[0.3, -0.7, 1.1], [-2.0, 0.05, 0.9]], dtype=hookgrad.float64,
                        requires_grad=True)

    def function(t):
        return hookgrad.nn.functional.softplus(t, beta=beta, threshold=threshold)

    assert hookgrad.autograd.gradcheck(function, (x,))
    assert hookgrad.autograd.gradgradcheck(function, (x,))


def test_layout_and_dtype_of_the_gradient_follow_torch():
    for dtype in ("float32", "float64"):
        strides = []
        for lib in (hookgrad, torch):
            x = lib.tensor(X, dtype=getattr(lib, dtype)).t().requires_grad_()
            lib.nn.functional.softplus(x).sum().backward()
            strides.append((x.grad.stride(), str(x.grad.dtype).split(".")[-1]))
        assert strides[0] == strides[1]


ELUS = {
    "elu": lambda lib, t: lib.nn.functional.elu(t, 1.3),
    "elu_": lambda lib, t: lib.nn.functional.elu_(t * 1.0, 0.7),
    "celu": lambda lib, t: lib.nn.functional.celu(t, 0.7),
    "celu_": lambda lib, t: lib.nn.functional.celu_(t * 1.0, 1.9),
    "selu": lambda lib, t: lib.nn.functional.selu(t),
    "selu_": lambda lib, t: lib.nn.functional.selu_(t * 1.0),
}
# 0.0 sits on the branch point: the first gradient takes the exponential branch, the second
# derivative with respect to the input is masked there
X_ELU = [[0.687, -1.112, 0.0], [0.35, -30.0, 0.129], [-0.227, 2.5, -0.852], [-0.276, 0.664, 0.0]]


def _elu_graph(lib, op):
    x = lib.tensor(X_ELU, dtype=lib.float64, requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=lib.float64, requires_grad=True)
    y = ELUS[op](lib, x)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    return x, grad_output, grad


@pytest.mark.parametrize("op", sorted(ELUS))
def test_elu_gradient_is_one_node(op):
    for lib in (hookgrad, torch):
        _, _, grad = _elu_graph(lib, op)
        node = grad.grad_fn
        if op.endswith("_"):  # through the copy ``t * 1.0`` that the in-place op rewrote
            assert node.name() == "MulBackward0"
            node = node.next_functions[0][0]
        assert node.name() == "EluBackwardBackward0"
        assert node._saved_is_result == op.endswith("_")
        assert node._saved_grad_output is not None


@pytest.mark.parametrize("op", sorted(ELUS))
def test_elu_second_derivatives_match_torch(op):
    results = []
    for lib in (hookgrad, torch):
        x, grad_output, grad = _elu_graph(lib, op)
        weight = lib.tensor([[0.5, -1.0, 2.0]] * 4, dtype=lib.float64)
        pair = lib.autograd.grad(grad, [grad_output, x], weight, create_graph=True)
        results.append([(p.requires_grad, p.grad_fn.name(), p.detach().numpy().copy())
                        for p in pair])
    for a, b in zip(*results):
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("op", ["elu", "celu", "selu"])
def test_elu_inplace_write_to_its_input_refuses(op):
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X_ELU, dtype=lib.float64, requires_grad=True)
        hidden = x * 1.0
        y = ELUS[op](lib, hidden)
        (grad,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        hidden[0:1] = 0.5
        outcomes.append(backward_outcome(grad))
    assert outcomes == ["refused", "refused"]


@pytest.mark.parametrize("op", sorted(ELUS))
def test_elu_float32_gradient_and_layout(op):
    results = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X_ELU, dtype=lib.float32).t().requires_grad_()
        ELUS[op](lib, x).sum().backward()
        results.append((x.grad.stride(), x.grad.numpy().copy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)


X_LOGSIGMOID = [[0.3, -0.7, 0.0], [40.0, -50.0, 1.2], [-0.2, 2.5, -3.0], [0.9, 0.1, -1.1]]


def _logsigmoid_graph(lib):
    x = lib.tensor(X_LOGSIGMOID, dtype=lib.float64, requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=lib.float64, requires_grad=True)
    y = lib.nn.functional.logsigmoid(x)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    return x, grad_output, grad


def test_logsigmoid_gradient_is_one_node():
    for lib in (hookgrad, torch):
        _, _, grad = _logsigmoid_graph(lib)
        node = grad.grad_fn
        assert node.name() == "LogSigmoidBackwardBackward0"
        # torch's buffer is no edge; ours is one that leads nowhere
        assert [type(n).__name__ for n, _ in node.next_functions[:2]] == ["AccumulateGrad"] * 2
        assert node._saved_buffer is not None and node._saved_grad_output is not None


def test_logsigmoid_second_derivatives_match_torch():
    results = []
    for lib in (hookgrad, torch):
        x, grad_output, grad = _logsigmoid_graph(lib)
        weight = lib.tensor([[0.5, -1.0, 2.0]] * 4, dtype=lib.float64)
        pair = lib.autograd.grad(grad, [grad_output, x], weight, create_graph=True)
        results.append([(p.requires_grad, p.grad_fn.name(), p.detach().numpy().copy())
                        for p in pair])
    for a, b in zip(*results):
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-300)
        np.testing.assert_array_equal(np.signbit(a[2]), np.signbit(b[2]))


def test_logsigmoid_inplace_write_to_its_input_refuses():
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X_LOGSIGMOID, dtype=lib.float64, requires_grad=True)
        hidden = x * 1.0
        y = lib.nn.functional.logsigmoid(hidden)
        (grad,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
        hidden[0:1] = 0.5
        outcomes.append(backward_outcome(grad))
    assert outcomes == ["refused", "refused"]


# the kinks at -3 and 3 sit in the data: the first gradient is 0 and 1 there, the second
# derivative with respect to x is 0 on both
X_HARDSWISH = [[-3.0, -1.2, 0.0], [3.0, 2.9, -2.9], [4.5, -4.5, 1.1], [0.3, -0.6, 2.0]]


def _hardswish_graph(lib):
    x = lib.tensor(X_HARDSWISH, dtype=lib.float64, requires_grad=True)
    grad_output = lib.tensor(GRAD_OUTPUT, dtype=lib.float64, requires_grad=True)
    y = lib.nn.functional.hardswish(x)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    return x, grad_output, grad


def test_hardswish_gradient_is_one_node():
    for lib in (hookgrad, torch):
        _, _, grad = _hardswish_graph(lib)
        node = grad.grad_fn
        assert node.name() == "HardswishBackwardBackward0"
        assert [type(n).__name__ for n, _ in node.next_functions] == ["AccumulateGrad"] * 2
        assert node._saved_self is not None and node._saved_grad_output is not None


def test_hardswish_second_derivatives_match_torch():
    results = []
    for lib in (hookgrad, torch):
        x, grad_output, grad = _hardswish_graph(lib)
        weight = lib.tensor([[0.5, -1.0, 2.0]] * 4, dtype=lib.float64)
        pair = lib.autograd.grad(grad, [grad_output, x], weight, create_graph=True)
        results.append([(p.requires_grad, p.grad_fn.name(), p.detach().numpy().copy())
                        for p in pair] + [grad.detach().numpy().copy()])
    for a, b in zip(results[0][:2], results[1][:2]):
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=1e-12, atol=1e-15)


def test_hardswish_inplace_write_to_its_input_refuses():
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X_HARDSWISH, dtype=lib.float64, requires_grad=True)
        hidden = x * 1.0
        (grad,) = lib.autograd.grad(lib.nn.functional.hardswish(hidden).sum(), [x],
                                    create_graph=True)
        hidden[0:1] = 0.5
        outcomes.append(backward_outcome(grad))
    assert outcomes == ["refused", "refused"]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_hardswish_gradient_in_low_precision(dtype):
    grads = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X_HARDSWISH, dtype=getattr(lib, dtype)).t().requires_grad_()
        lib.nn.functional.hardswish(x).sum().backward()
        grads.append((x.grad.stride(), x.grad.float().numpy()))
    assert grads[0][0] == grads[1][0]
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-2 if dtype != "float32" else 1e-6)
