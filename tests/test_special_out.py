"""out= and mode visibility of the torch.special functions added with their own kernels."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close

UNARY = ["entr", "erfcx", "log_ndtr", "ndtri", "spherical_bessel_j0", "modified_bessel_i0",
         "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"]
X = np.array([0.1, 0.5, 0.9])


def _call(lib, name, x, **kwargs):
    fn = getattr(lib.special, name)
    if name in UNARY:
        return fn(x, **kwargs)
    if name in ("xlog1py", "zeta"):
        return fn(x + 1, x, **kwargs)
    return fn(x, 3, **kwargs)


NAMES = UNARY + ["xlog1py", "zeta", "chebyshev_polynomial_t", "legendre_polynomial_p",
                 "hermite_polynomial_he"]


@pytest.mark.parametrize("name", NAMES)
def test_out_is_written_cast_and_resized_as_torch(name):
    for dtype in ("float64", "float32"):
        results = []
        for lib in (hookgrad, torch):
            out = lib.empty(5, dtype=getattr(lib, dtype))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                returned = _call(lib, name, lib.tensor(X), out=out)
            assert returned is out
            results.append((out, len(caught)))
        assert_close(results[0][0], results[1][0])
        assert results[0][1] == results[1][1]


def _outcome(lib, name, requires_grad, out_dtype):
    try:
        out = lib.empty(3, dtype=getattr(lib, out_dtype))
        _call(lib, name, lib.tensor(X, requires_grad=requires_grad), out=out)
    except RuntimeError as error:
        return str(error)
    return out.detach().numpy()


@pytest.mark.parametrize("name", NAMES)
def test_integer_out_and_inputs_requiring_grad_are_handled_as_torch(name):
    """An int64 out is refused; with an input requiring grad, torch refuses out= for the
    differentiable functions and lets the untracked ones write."""
    for requires_grad, out_dtype in ((False, "int64"), (True, "float32")):
        ours = _outcome(hookgrad, name, requires_grad, out_dtype)
        theirs = _outcome(torch, name, requires_grad, out_dtype)
        assert type(ours) is type(theirs)
        if isinstance(theirs, str):
            assert ours == theirs
        else:
            assert_close(ours, theirs)


@pytest.mark.parametrize("name", NAMES)
def test_a_function_mode_sees_the_call(name):
    seen = []

    class Spy(hookgrad.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Spy():
        _call(hookgrad, name, hookgrad.tensor(X))
    assert name in seen
