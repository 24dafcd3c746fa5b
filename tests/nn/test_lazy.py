"""LazyLinear against torch: the same draws for the same seed, reprs before and after, the
class it becomes, state_dict keys and the uninitialised parameters."""
import warnings

import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_close


def _build(lib, *args, **kwargs):
    return lib.nn.LazyLinear(*args, **kwargs)


@pytest.mark.parametrize("bias", [True, False])
def test_lazy_linear_matches_torch(bias):
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    results = []
    for lib in (torch, hookgrad):
        lib.manual_seed(7)
        module = _build(lib, 4, bias=bias)
        before = (repr(module), list(module.state_dict()), module.has_uninitialized_params(),
                  repr(module.weight), module.in_features)
        inputs = lib.tensor(x, requires_grad=True)
        out = module(inputs)
        out.sum().backward()
        after = (repr(module), type(module).__name__, type(module.weight).__name__,
                 module.in_features, list(module.state_dict()))
        results.append((before, after, out, module.weight, module.weight.grad, inputs.grad))
    (before_t, after_t, *tensors_t), (before_h, after_h, *tensors_h) = results
    assert before_h == before_t and after_h == after_t
    for ours, theirs in zip(tensors_h, tensors_t):
        assert_close(ours, theirs)


def test_lazy_linear_keeps_its_dtype_quietly():
    for lib in (torch, hookgrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = lib.nn.LazyLinear(2, dtype=lib.float64)
        assert not caught
        module(lib.ones(3, 5, dtype=lib.float64))
        assert module.weight.dtype == lib.float64 and tuple(module.weight.shape) == (2, 5)
        assert isinstance(module, lib.nn.Linear) and not isinstance(module, lib.nn.LazyLinear)
    assert isinstance(hookgrad.nn.UninitializedParameter(), hookgrad.nn.Parameter)
