"""typename, get_device, is_storage and is_distributed against torch: a tensor's legacy type
name per dtype, -1 for the CPU, and torch's TypeError for anything but a tensor."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_typename_of_tensors(dtype):
    names = [lib.typename(lib.ones(2, dtype=getattr(lib, dtype)).t())
             for lib in (torch, hookgrad)]
    assert names[1] == names[0]


@pytest.mark.parametrize("make", [lambda lib: 1, lambda lib: "a", lambda lib: None,
                                  lambda lib: np.ones(2), lambda lib: int, lambda lib: object(),
                                  lambda lib: [1], lambda lib: 2.5])
def test_typename_of_other_objects(make):
    assert hookgrad.typename(make(hookgrad)) == torch.typename(make(torch))


def test_typename_of_parameters_and_modules():
    assert hookgrad.typename(hookgrad.nn.Parameter(hookgrad.ones(2))) == "torch.FloatTensor"
    assert hookgrad.typename(hookgrad.nn.Linear(1, 1)) == "hookgrad.nn.modules.linear.Linear"


def test_get_device_and_is_distributed_of_a_tensor():
    for dtype in ("float32", "int64"):
        answers = [(lib.get_device(lib.ones(2, dtype=getattr(lib, dtype))),
                    lib.is_distributed(lib.ones(2))) for lib in (torch, hookgrad)]
        assert answers[1] == answers[0] == (-1, False)


@pytest.mark.parametrize("value", [1, "a", None, [1.0]])
@pytest.mark.parametrize("name", ["get_device", "is_distributed"])
def test_non_tensors_raise_type_error(name, value):
    assert_same_error(lambda lib: getattr(lib, name)(value))


@pytest.mark.parametrize("make", [lambda lib: lib.ones(2).untyped_storage(),
                                  lambda lib: lib.ones(2), lambda lib: 1,
                                  lambda lib: np.ones(2), lambda lib: None])
def test_is_storage(make):
    assert hookgrad.is_storage(make(hookgrad)) == torch.is_storage(make(torch))


def test_tensor_is_distributed_method():
    assert hookgrad.ones(2).is_distributed() is torch.ones(2).is_distributed() is False
