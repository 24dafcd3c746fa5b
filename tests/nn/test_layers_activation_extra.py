"""The activation modules that wrap the extra functional activations: repr, values, gradients."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import compare

CASES = [
    ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 3.0), {}), ("ReLU6", (), {}),
    ("ReLU6", (), {"inplace": True}), ("SELU", (), {}), ("CELU", (0.5,), {}), ("Mish", (), {}),
    ("Hardswish", (), {}), ("Hardsigmoid", (), {}), ("LogSigmoid", (), {}), ("Softsign", (), {}),
    ("Softshrink", (), {}), ("Hardshrink", (0.3,), {}), ("Tanhshrink", (), {}),
]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=lambda c: str(c))
def test_module_matches_torch(name, args, kwargs):
    assert repr(getattr(hookgrad.nn, name)(*args, **kwargs)) == repr(
        getattr(torch.nn, name)(*args, **kwargs))
    data = np.linspace(-7, 7, 29)

    def run(lib, x):
        module = getattr(lib.nn, name)(*args, **kwargs)
        return module(x * 1)  # a non-leaf, so inplace variants are allowed

    compare(run, data)
