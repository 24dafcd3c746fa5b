"""Framework detection for the tools: torch objects say "torch", everything else "hookgrad"."""
import pytest
import torch

import hookgrad
from hookgrad.utils._framework import framework_of, is_torch_object


def test_torch_objects_are_recognised():
    assert is_torch_object(torch.zeros(2))
    assert is_torch_object(torch.nn.Linear(2, 2))
    assert framework_of(hookgrad.zeros(2), torch.nn.Linear(2, 2)) == "torch"


def test_hookgrad_objects_and_plain_values_are_hookgrad():
    assert not is_torch_object(hookgrad.zeros(2))
    assert framework_of(hookgrad.nn.Linear(2, 2), 3, None) == "hookgrad"


def test_explicit_framework_wins_and_is_checked():
    assert framework_of(hookgrad.zeros(2), framework="torch") == "torch"
    with pytest.raises(ValueError, match="framework must be one of"):
        framework_of(framework="jax")
