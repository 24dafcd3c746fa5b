"""``finfo``/``iinfo`` report torch's limits: every attribute, exactly, and the same repr."""
from __future__ import annotations

import pytest
import torch

import hookgrad

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    ours, theirs = hookgrad.finfo(getattr(hookgrad, name)), torch.finfo(getattr(torch, name))
    for attribute in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                      "dtype"]:
        value, expected = getattr(ours, attribute), getattr(theirs, attribute)
        assert type(value) is type(expected) and value == expected, attribute
    assert repr(ours) == repr(theirs)


def test_finfo_defaults_to_the_default_dtype():
    assert repr(hookgrad.finfo()) == repr(torch.finfo())
    hookgrad.set_default_dtype(hookgrad.float64)
    try:
        assert hookgrad.finfo().dtype == "float64"
    finally:
        hookgrad.set_default_dtype(hookgrad.float32)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    ours, theirs = hookgrad.iinfo(getattr(hookgrad, name)), torch.iinfo(getattr(torch, name))
    for attribute in ["bits", "min", "max", "dtype"]:
        value, expected = getattr(ours, attribute), getattr(theirs, attribute)
        assert type(value) is type(expected) and value == expected, attribute
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("function, name", [("finfo", "int32"), ("finfo", "bool"),
                                            ("iinfo", "float32"), ("iinfo", "bool"),
                                            ("iinfo", "bfloat16")])
def test_wrong_kind_of_dtype_raises_torchs_error(function, name):
    with pytest.raises(TypeError) as expected:
        getattr(torch, function)(getattr(torch, name))
    with pytest.raises(TypeError) as raised:
        getattr(hookgrad, function)(getattr(hookgrad, name))
    assert str(raised.value) == str(expected.value)


def test_equal_for_the_same_dtype_and_unhashable_as_torch():
    assert hookgrad.finfo(hookgrad.float32) == hookgrad.finfo(hookgrad.float32)
    assert hookgrad.finfo(hookgrad.float32) != hookgrad.finfo(hookgrad.float64)
    assert hookgrad.iinfo(hookgrad.int8) == hookgrad.iinfo(hookgrad.int8)
    with pytest.raises(TypeError):
        hash(torch.finfo(torch.float32))
    with pytest.raises(TypeError):
        hash(hookgrad.finfo(hookgrad.float32))
