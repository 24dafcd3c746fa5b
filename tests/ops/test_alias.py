"""Tensor.as_subclass against torch: an alias of the same data and version counter that stays
attached to the graph through AliasBackward0, as an instance of the given subclass."""
import numpy as np
import pytest
import torch

import hookgrad


def subclass_of(lib):
    class Wrapped(lib.Tensor):
        pass

    return Wrapped


def describe(lib, requires_grad, non_leaf):
    wrapped = subclass_of(lib)
    x = lib.tensor(np.array([1.0, -2.0, 3.0]), requires_grad=requires_grad)
    source = x * 2 if non_leaf else x
    alias = source.as_subclass(wrapped)
    facts = [type(alias) is wrapped, alias.requires_grad, alias.is_leaf,
             None if alias.grad_fn is None else alias.grad_fn.name(), alias.output_nr,
             alias.dtype == source.dtype, tuple(alias.shape)]
    with lib.no_grad():
        source.mul_(3)  # same data and version counter
    facts += [alias._version == source._version, alias.detach().numpy().tolist()]
    if requires_grad:
        (alias * alias).sum().backward()
        facts.append(x.grad.numpy().tolist())
    return facts


@pytest.mark.parametrize("requires_grad, non_leaf", [(False, False), (True, False),
                                                      (True, True)])
def test_as_subclass_matches_torch(requires_grad, non_leaf):
    assert describe(hookgrad, requires_grad, non_leaf) == describe(torch, requires_grad,
                                                                   non_leaf)


@pytest.mark.parametrize("cls", [int, object, np.ndarray])
def test_as_subclass_of_a_non_tensor_class_is_a_type_error(cls):
    errors = []
    for lib in (torch, hookgrad):
        with pytest.raises(TypeError) as caught:
            lib.ones(2).as_subclass(cls)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
