"""autograd.functional and gradcheck, compared with torch on the same functions (float64)."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def cubic(lib, x):
    return (x * x * x).sum() + (x.sin() * 2).sum()


def vector_fn(lib, x):
    return x.exp() * x


def two_inputs(lib, x, y):
    return (x * y).tanh()


def _inputs(lib, *arrays):
    return tuple(lib.tensor(a, dtype=lib.float64) for a in arrays)


X = np.array([0.3, -1.2, 2.0])
Y = np.array([1.5, 0.5, -0.7])


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_and_jvp(name):
    results = []
    for lib in (torch, hookgrad):
        fn = getattr(lib.autograd.functional, name)
        x, = _inputs(lib, X)
        v, = _inputs(lib, Y)
        results.append(fn(lambda t: vector_fn(lib, t), x, v))
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs)


def test_jacobian_two_inputs():
    results = []
    for lib in (torch, hookgrad):
        x, y = _inputs(lib, X, Y)
        results.append(lib.autograd.functional.jacobian(lambda a, b: two_inputs(lib, a, b),
                                                        (x, y)))
    for ours, theirs in zip(results[1], results[0]):
        assert_close(ours, theirs)


def test_hessian():
    results = []
    for lib in (torch, hookgrad):
        x, = _inputs(lib, X)
        results.append(lib.autograd.functional.hessian(lambda t: cubic(lib, t), x))
    assert_close(results[1], results[0])


def test_gradcheck_passes_on_correct_and_fails_on_wrong_gradients():
    x = hookgrad.tensor(X, dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: (t.exp() * t).sum(), (x,))
    assert hookgrad.autograd.gradgradcheck(lambda t: (t.exp() * t).sum(), (x,))

    class WrongGrad(hookgrad.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * t

        @staticmethod
        def backward(ctx, grad):
            return grad  # should be 2 t grad

    with pytest.raises(hookgrad.autograd.GradcheckError):
        hookgrad.autograd.gradcheck(WrongGrad.apply, (x,))
    assert hookgrad.autograd.gradcheck(WrongGrad.apply, (x,), raise_exception=False) is False
