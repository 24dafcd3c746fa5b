"""torch.sgn on real tensors: the sign (NaN and -0.0 give 0), in the input's dtype, with its own
node (SgnBackward0, which keeps self and the result) and a zero gradient that needs no grad."""
import math

import numpy as np
import pytest
import torch
from conftest import saved_log

import hookgrad

VALUES = [-2.5, -0.0, 0.0, 3.0, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int32", "int64", "bool"])
@pytest.mark.parametrize("spelling", ["function", "method"])
def test_values_and_dtype(dtype, spelling):
    data = np.array(VALUES if dtype.startswith("float") else [-3, 0, 2, 7], dtype=dtype)

    def run(lib):
        x = lib.tensor(data)
        result = lib.sgn(x) if spelling == "function" else x.sgn()
        return result.numpy(), result.dtype

    ours, theirs = run(hookgrad), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert str(ours[1]) == str(theirs[1])


def test_node_and_what_it_saves():
    def run(lib):
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        log = saved_log(lib, lambda t: t.sgn(), x)
        y = x.sgn()
        return (y.grad_fn.name(), len(log), y.grad_fn._saved_self is x,
                y.grad_fn._saved_result.tolist())

    assert run(hookgrad) == run(torch)


def test_gradient_is_zero_and_needs_no_grad():
    def run(lib):
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        (grad,) = lib.autograd.grad(x.sgn().sum(), x, create_graph=True)
        return (grad + 0).tolist(), grad.requires_grad  # torch's is a ZeroTensor: read via + 0

    assert run(hookgrad) == run(torch)


def test_second_derivative_through_a_product():
    def run(lib):
        x = lib.tensor([-1.5, 0.5, 2.0], requires_grad=True)
        (grad,) = lib.autograd.grad((x.sgn() * x * x).sum(), x, create_graph=True)
        (second,) = lib.autograd.grad(grad.sum(), x)
        return grad.tolist(), second.tolist()

    assert run(hookgrad) == run(torch)


def test_inplace():
    def run(lib):
        x = lib.tensor([-1.5, 0.0, 2.0], requires_grad=True)
        y = x * 1
        y.sgn_()
        (grad,) = lib.autograd.grad((y * x).sum(), x)
        return y.tolist(), y.grad_fn.name(), grad.tolist()

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("op", ["abs", "softsign", "log_abs"])
def test_abs_gradient_is_recorded_through_sgn_as_in_torch(op):
    """|x|' = sgn(x): under create_graph the gradient's graph holds SgnBackward0, as torch's."""
    calls = {"abs": lambda lib, t: t.abs(),
             "softsign": lambda lib, t: lib.nn.functional.softsign(t),
             "log_abs": lambda lib, t: (t.abs() + 1).log()}
    seen = []
    for lib in (hookgrad, torch):
        x = lib.tensor([0.5, -1.2, 2.0], dtype=lib.float64, requires_grad=True)
        (grad,) = lib.autograd.grad(calls[op](lib, x).sum(), x, create_graph=True)
        names, stack = [], [grad.grad_fn]
        while stack:
            node = stack.pop()
            if node is not None:
                names.append(node.name())
                stack.extend(child for child, _ in node.next_functions)
        seen.append((sorted(names), grad.detach().numpy().copy()))
    assert seen[0][0] == seen[1][0]
    np.testing.assert_allclose(seen[0][1], seen[1][1], rtol=1e-15)
