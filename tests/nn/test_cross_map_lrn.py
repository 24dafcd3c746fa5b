"""nn.CrossMapLRN2d against torch: the legacy kernel's values and its hand-written gradient
(which is not the exact derivative of its forward), node name, errors, repr."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close, assert_same_error

R = np.random.default_rng(3)


def _run(lib, x, g, *args):
    input = lib.tensor(x, requires_grad=True)
    output = lib.nn.CrossMapLRN2d(*args)(input)
    output.backward(lib.tensor(g))
    return output, input.grad


@pytest.mark.parametrize("size", [2, 3, 4, 5, 8, 11])
@pytest.mark.parametrize("channels", [1, 2, 3, 7])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_and_gradients_match_torch(size, channels, dtype):
    x = R.standard_normal((2, channels, 3, 4)).astype(dtype)
    g = R.standard_normal((2, channels, 3, 4)).astype(dtype)
    args = (size, 0.3, 0.75, 1.5)
    ours, theirs = _run(hookgrad, x, g, *args), _run(torch, x, g, *args)
    for a, b in zip(ours, theirs):
        assert a.dtype == getattr(hookgrad, dtype)
        assert_close(a, b)


def test_default_parameters_and_repr():
    x = R.standard_normal((1, 5, 2, 2))
    g = R.standard_normal((1, 5, 2, 2))
    for a, b in zip(_run(hookgrad, x, g, 3), _run(torch, x, g, 3)):
        assert_close(a, b)
    assert repr(hookgrad.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    assert repr(hookgrad.nn.CrossMapLRN2d(4, 1e-3, 0.5, 2.0)) == repr(
        torch.nn.CrossMapLRN2d(4, 1e-3, 0.5, 2.0))
    assert list(hookgrad.nn.CrossMapLRN2d(3).state_dict()) == []


def test_node_name_and_no_node_without_grad():
    ours = hookgrad.nn.CrossMapLRN2d(3)(hookgrad.ones(1, 3, 2, 2, requires_grad=True))
    theirs = torch.nn.CrossMapLRN2d(3)(torch.ones(1, 3, 2, 2, requires_grad=True))
    assert ours.grad_fn.name() == type(theirs.grad_fn).__name__
    assert hookgrad.nn.CrossMapLRN2d(3)(hookgrad.ones(1, 3, 2, 2)).grad_fn is None


@pytest.mark.parametrize("shape", [(5, 3, 3), (2, 5, 3, 3, 1), (4,)])
def test_input_must_be_4d(shape):
    assert_same_error(lambda lib: lib.nn.CrossMapLRN2d(3)(lib.ones(*shape)))


def test_size_one_backward_fails_as_torch():
    assert_same_error(lambda lib: lib.nn.CrossMapLRN2d(1)(
        lib.ones(1, 4, 2, 2, requires_grad=True)).sum().backward())


def test_no_double_backward_as_torch():
    def second(lib):
        x = lib.tensor(R.standard_normal((1, 3, 2, 2)), requires_grad=True)
        return lib.autograd.grad(lib.nn.CrossMapLRN2d(3)(x).sum(), x, create_graph=True)
    assert_same_error(second)


def test_result_is_row_major_for_a_transposed_input():
    x = R.standard_normal((3, 2, 2, 4))
    ours = hookgrad.nn.CrossMapLRN2d(3)(hookgrad.tensor(x).transpose(0, 1))
    theirs = torch.nn.CrossMapLRN2d(3)(torch.tensor(x).transpose(0, 1))
    assert ours.stride() == theirs.stride()
    assert_close(ours, theirs)


@pytest.mark.parametrize("make", [lambda lib: lib.ones(1, 3, 1, 2, dtype=lib.int64),
                                  lambda lib: lib.ones(1, 0, 1, 2)])
def test_integer_and_channel_less_inputs_fail_as_torch(make):
    assert_same_error(lambda lib: lib.nn.CrossMapLRN2d(3)(make(lib)))


def test_an_empty_batch_passes_through():
    assert tuple(hookgrad.nn.CrossMapLRN2d(3)(hookgrad.ones(0, 3, 1, 2)).shape) == (0, 3, 1, 2)
