"""Gradients that apply a mask, a sign or a pattern to ``grad`` (or that torch writes as a
``*_backward`` op of their own) under ``create_graph=True``, against torch: the first-order
gradient requires grad exactly when torch's does, both when the incoming gradient requires grad
and when it does not; its values; and the second derivatives with respect to the inputs and
the incoming gradient (or torch's error, for hardsigmoid, whose backward has no derivative)."""
import numpy as np
import pytest
import torch
from _double_backward_table import OPS

import hookgrad

X = np.array([[-7.0, -1.2, -1.0, -0.6], [-0.3, 0.0, 0.25, 0.5], [0.8, 1.3, 3.0, 6.5]])
OTHER = np.array([[0.3, -0.2, 1.5, -0.6], [0.1, 0.2, -0.9, 0.4], [1.0, -1.1, 2.0, 0.7]])


def _dense(tensor):
    if tensor is None:
        return None
    if isinstance(tensor, torch.Tensor) and tensor._is_zerotensor():
        tensor = torch.zeros(tensor.shape, dtype=tensor.dtype)
    return tensor.detach().numpy()


def _run(lib, name, grad_requires_grad):
    """(first-order gradients with their requires_grad, second derivatives or the error)"""
    rng = np.random.default_rng(0)
    x = lib.tensor(X.copy(), requires_grad=True)
    other = lib.tensor(OTHER.copy(), requires_grad=True)
    out = OPS[name](lib, x, other)
    v = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=grad_requires_grad)
    firsts = lib.autograd.grad(out, (x, other), v, create_graph=True, allow_unused=True)
    flags = [None if g is None else g.requires_grad for g in firsts]
    total = None
    for g in firsts:
        if g is not None and g.requires_grad:
            term = (g * lib.tensor(rng.standard_normal(tuple(g.shape)))).sum()
            total = term if total is None else total + term
    if total is None:
        return flags, [_dense(g) for g in firsts], None
    wrt = (x, other, v) if grad_requires_grad else (x, other)
    try:
        seconds = lib.autograd.grad(total, wrt, allow_unused=True)
    except RuntimeError as error:
        return flags, [_dense(g) for g in firsts], (type(error), str(error))
    return flags, [_dense(g) for g in firsts], [_dense(s) for s in seconds]


def _assert_same(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert (a is None) == (b is None), f"{what} {i}: None in one library only"
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True,
                                       err_msg=f"{what} {i}")


@pytest.mark.parametrize("grad_requires_grad", [False, True], ids=["plain_grad", "grad_with_grad"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_first_and_second_order_match_torch(name, grad_requires_grad):
    their_flags, their_firsts, their_seconds = _run(torch, name, grad_requires_grad)
    our_flags, our_firsts, our_seconds = _run(hookgrad, name, grad_requires_grad)
    assert our_flags == their_flags, "requires_grad of the first-order gradients"
    _assert_same(our_firsts, their_firsts, "first-order gradient")
    if their_seconds is None or isinstance(their_seconds, tuple):
        assert our_seconds == their_seconds
    else:
        assert isinstance(our_seconds, list), our_seconds
        _assert_same(our_seconds, their_seconds, "second derivative")


def test_hardsigmoid_gradient_node_is_not_differentiable():
    def run(lib):
        x = lib.tensor([-4.0, 0.5, 4.0], requires_grad=True)
        (g,) = lib.autograd.grad(lib.nn.functional.hardsigmoid(x).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError) as info:
            g.sum().backward()
        return g.grad_fn.name(), str(info.value)

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("spelling", ["function", "functional", "inplace"])
def test_threshold_values_node_and_saved(spelling):
    def run(lib):
        x = lib.tensor([0.1, float("nan"), 0.5, 2.0], requires_grad=True)
        if spelling == "function":
            y = lib.threshold(x, 0.5, -1.0)
        elif spelling == "functional":
            y = lib.nn.functional.threshold(x, 0.5, -1.0)
        else:
            y = lib.nn.functional.threshold(x * 1, 0.5, -1.0, inplace=True)
        (g,) = lib.autograd.grad(y, x, lib.tensor([1.0, 2.0, 3.0, 4.0]))
        return (y.detach().numpy().tolist(), y.grad_fn.name(), g.tolist(),
                y.grad_fn._saved_threshold)

    ours, theirs = run(hookgrad), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan(name):
    a = [1.0, float("nan"), 2.0, float("nan"), 3.0]
    b = [float("nan"), 1.0, 2.0, float("nan"), 0.0]

    def run(lib):
        x, o = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = getattr(lib, name)(x, o)
        grads = lib.autograd.grad(y.sum(), (x, o))
        ints = getattr(lib.tensor([1, 5]), name)(lib.tensor([3, 2]))
        return (y.detach().numpy(), y.grad_fn.name(), [g.tolist() for g in grads],
                ints.tolist(), str(ints.dtype))

    ours, theirs = run(hookgrad), run(torch)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
