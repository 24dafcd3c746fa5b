"""autograd.functional.hvp and vhp against torch: values, several inputs, create_graph, errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

X = np.array([0.3, -1.2, 2.0])
Y = np.array([[1.5, 0.5], [-0.7, 0.25]])
V = np.array([0.5, 2.0, -1.0])
W = np.array([[0.1, -0.3], [0.7, 1.1]])


def scalar_two(lib, x, y):
    return (x.sin() * x).sum() * (y * y).sum() + (y.exp() ** 2).sum()


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_one_input(name):
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor(X)
        fn = getattr(lib.autograd.functional, name)
        results.append(fn(lambda t: (t ** 3).sum() + t.prod(), x, lib.tensor(V)))
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_two_inputs_and_create_graph(name):
    results = []
    for lib in (torch, hookgrad):
        x, y = lib.tensor(X, requires_grad=True), lib.tensor(Y, requires_grad=True)
        fn = getattr(lib.autograd.functional, name)
        out, (gx, gy) = fn(lambda a, b: scalar_two(lib, a, b), (x, y),
                           (lib.tensor(V), lib.tensor(W)), create_graph=True)
        assert gx.requires_grad and gy.requires_grad
        (gx.sum() + gy.sum()).backward()
        results.append((out, gx, gy, x.grad, y.grad))
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_v_may_be_left_out_only_for_one_element(name):
    values = []
    for lib in (torch, hookgrad):
        fn = getattr(lib.autograd.functional, name)
        values.append(fn(lambda t: (t ** 4).sum(), lib.tensor([1.5]))[1])
        with pytest.raises(RuntimeError, match="can only be None"):
            fn(lambda t: (t ** 4).sum(), lib.tensor(X))
        with pytest.raises(RuntimeError, match="should contain a single element"):
            fn(lambda t: t * 2, lib.tensor(X), lib.tensor(V))
        with pytest.raises(RuntimeError, match="v has invalid size"):
            fn(lambda t: t.sum(), lib.tensor(X), lib.tensor([1.0]))
    assert_close(values[1], values[0])


def test_hessian_independent_input_gives_zeros():
    results = []
    for lib in (torch, hookgrad):
        x, y = lib.tensor(X), lib.tensor(Y)
        results.append(lib.autograd.functional.hvp(lambda a, b: (a * a).sum(), (x, y),
                                                   (lib.tensor(V), lib.tensor(W)))[1])
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs)
