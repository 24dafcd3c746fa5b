"""glu's gradient is one node, torch's ``GluBackwardBackward0``, saving the incoming gradient
and the input: its graph, saved values, second and third derivatives and the first gradient's
layout and low-precision values are compared with torch on the same inputs."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import backward_outcome, graph_names

X = np.array([[0.5, -1.2, 0.3, 0.9], [-0.4, 0.2, 1.5, -0.8], [2.0, -3.0, 0.0, 0.7]])
LAYOUTS = {
    "last": (lambda lib: lib.tensor(X), -1),
    "first_of_transposed": (lambda lib: lib.tensor(X).t(), 0),
    "middle": (lambda lib: lib.tensor(np.linspace(-2, 2, 24).reshape(2, 4, 3)), 1),
}




def _run(lib, layout):
    make, dim = LAYOUTS[layout]
    x = make(lib).requires_grad_()
    y = lib.nn.functional.glu(x, dim)
    grad_output = lib.tensor(np.linspace(-1.5, 2.0, y.numel()).reshape(tuple(y.shape)),
                             requires_grad=True)
    (grad,) = lib.autograd.grad(y, x, grad_output, create_graph=True)
    node = grad.grad_fn
    weight = lib.tensor(np.linspace(0.5, 1.5, grad.numel()).reshape(tuple(grad.shape)))
    second = lib.autograd.grad((grad * weight).sum(), [x, grad_output], create_graph=True)
    (third,) = lib.autograd.grad(sum((s * s).sum() for s in second), x)
    return ([graph_names(node, 2), node._saved_dim, grad.stride()],
            [grad, node._saved_grad_output, node._saved_self, *second, third])


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_graph_and_derivatives_match_torch(layout):
    (ours, our_values), (theirs, their_values) = (_run(lib, layout) for lib in (hookgrad, torch))
    assert ours[0] == theirs[0]
    # torch shows the dim as given, a negative one as unsigned; hookgrad shows it normalised
    ndim = our_values[0].ndim
    assert ours[1] == (theirs[1] - 2 ** 64 if theirs[1] >= 2 ** 63 else theirs[1]) % ndim
    assert ours[2] == theirs[2]
    for a, b in zip(our_values, their_values):
        assert (a.grad_fn is None) == (b.grad_fn is None)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                   atol=1e-15)


def test_gradgradcheck():
    x = hookgrad.tensor(X, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.nn.functional.glu(t, 1), (x,))
    assert hookgrad.autograd.gradgradcheck(lambda t: hookgrad.nn.functional.glu(t, 1), (x,))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_first_gradient_in_low_precision(dtype):
    seen = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, dtype=getattr(lib, dtype)).t().requires_grad_()
        lib.nn.functional.glu(x, 0).pow(2).sum().backward()
        seen.append((x.grad.stride(), x.grad.float().numpy().copy()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-6 if dtype == "float32" else 1e-2,
                               atol=1e-6)


def test_inplace_write_to_the_input_refuses():
    outcomes = []
    for lib in (hookgrad, torch):
        x = lib.tensor(X, requires_grad=True)
        hidden = x * 1.0
        (grad,) = lib.autograd.grad(lib.nn.functional.glu(hidden, 1).sum(), x,
                                    create_graph=True)
        with lib.no_grad():
            hidden[0, 0] = 5.0
        outcomes.append(backward_outcome(grad))
    assert outcomes == ["refused", "refused"]
