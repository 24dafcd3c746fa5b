"""nn.Module.to_empty against torch: same objects, new uninitialised storage of the same shape,
dtype and layout, recurse, gradients, and torch's device and argument errors."""
import numpy as np
import pytest
import torch

import hookgrad
from conftest import assert_same_error


def _model(lib):
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4))
    model.register_buffer("steps", lib.tensor([7]))
    return model


def _state(model):
    return [(name, tuple(t.shape), str(t.dtype), t.stride(), type(t).__name__,
             getattr(t, "requires_grad", None))
            for name, t in list(model.named_parameters()) + list(model.named_buffers())]


@pytest.mark.parametrize("recurse", [True, False])
def test_storage_is_replaced_in_place_as_torch(recurse):
    states = []
    for lib in (hookgrad, torch):
        model = _model(lib).double()
        weight = model[0].weight
        with lib.no_grad():
            weight.fill_(5.0)
        returned = model.to_empty(device="cpu", recurse=recurse)
        assert returned is model and model[0].weight is weight
        states.append(_state(model))
    assert states[0] == states[1]


def test_memory_is_new_and_the_old_values_are_untouched():
    model = hookgrad.nn.Linear(4, 4)
    storage = model.weight._data
    before = storage.copy()
    model.to_empty(device="cpu")
    assert model.weight._data is not storage and tuple(model.weight.shape) == (4, 4)
    np.testing.assert_array_equal(storage, before)


def test_recurse_false_leaves_children_alone():
    model = hookgrad.nn.Sequential(hookgrad.nn.Linear(2, 2))
    model.register_buffer("own", hookgrad.ones(3))
    child = model[0].weight._data
    own = model.own._data
    model.to_empty(device="cpu", recurse=False)
    assert model[0].weight._data is child and model.own._data is not own


def test_gradients_get_new_storage_of_their_shape():
    states = []
    for lib in (hookgrad, torch):
        model = lib.nn.Linear(2, 3)
        model.weight.grad = lib.ones(3, 2)
        grad = model.weight.grad
        model.to_empty(device=lib.device("cpu"))
        states.append((tuple(model.weight.grad.shape), model.weight.grad is grad))
    assert states[0] == states[1]


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.Linear(2, 2).to_empty(),
    lambda lib: lib.nn.Linear(2, 2).to_empty("cpu"),
    lambda lib: lib.nn.Linear(2, 2).to_empty(device="cuda"),
    lambda lib: lib.nn.Linear(2, 2).to_empty(device="foo"),
    lambda lib: lib.nn.Linear(2, 2).to_empty(device=0),
])
def test_errors_match_torch(call):
    assert_same_error(call)
